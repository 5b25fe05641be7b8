//! Property tests: undo, replay and symmetry round trips, exact superko, scoring invariants.

use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::SmallRng;
use weiqi_rules::sgf::GameRecord;
use weiqi_rules::{Board, KoRule, Move, Point, Policy, Rules, State, Symmetry, score};

fn rules_for(k: u8) -> Rules {
    Rules::default()
        .with_ko([KoRule::Positional, KoRule::Situational, KoRule::Simple][k as usize % 3])
        .with_suicide(k % 2 == 1)
}

/// A random game of up to `plies` moves.
fn random_game(size: u8, plies: usize, seed: u64, rules: Rules, policy: Policy) -> State {
    let mut s = State::new(size, rules).unwrap();
    let mut rng = SmallRng::seed_from_u64(seed);
    s.play_random_game(policy, &mut rng, plies);
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The legal-move mask marks exactly the moves `legal_moves` lists (row-major, pass
    /// last), and nothing once the game is over.
    #[test]
    fn legal_mask_is_legal_moves(size in 2u8..=9, plies in 0usize..120, seed: u64, k in 0u8..6) {
        let rules = rules_for(k);
        let s = random_game(size, plies, seed, rules, Policy::Uniform);
        let w = s.board().width() as usize;
        let area = s.board().area() as usize;
        let mut mask = vec![7u8; area + 1];
        s.write_legal(&mut mask);
        let mut expected = vec![0u8; area + 1];
        for m in s.legal_moves() {
            match m {
                Move::Place(p) => expected[p.y as usize * w + p.x as usize] = 1,
                Move::Pass => expected[area] = 1,
            }
        }
        prop_assert_eq!(mask, expected);
    }

    /// Play then undo restores the position, the hash and the player to move.
    #[test]
    fn undo_restores(size in 2u8..=9, plies in 0usize..120, seed: u64, k in 0u8..6) {
        let rules = rules_for(k);
        let s = random_game(size, plies, seed, rules, Policy::Uniform);
        let mut next = s.clone();
        let mut rng = SmallRng::seed_from_u64(seed ^ 1);
        if !next.is_over() {
            next.play_random(Policy::Uniform, &mut rng);
            next.check_consistency().unwrap();
            next.undo().unwrap();
            prop_assert!(next == s);
            prop_assert_eq!(next.board().hash(), s.board().hash());
            prop_assert_eq!(next.key(), s.key());
            prop_assert_eq!(next.ko_point(), s.ko_point());
            prop_assert_eq!(next.captures(weiqi_rules::Color::Black), s.captures(weiqi_rules::Color::Black));
            next.check_consistency().unwrap();
        }
    }

    /// Replaying a game's moves from its start gives the same position, and the incremental
    /// bookkeeping always matches a recount.
    #[test]
    fn replay_reproduces(size in 2u8..=9, plies in 0usize..200, seed: u64, k in 0u8..6) {
        let rules = rules_for(k);
        let s = random_game(size, plies, seed, rules, Policy::Uniform);
        s.check_consistency().unwrap();
        let mut again = State::new(size, rules).unwrap();
        for &(c, m) in s.moves() {
            again.play_color(c, m).unwrap();
        }
        prop_assert!(again == s);
        prop_assert_eq!(again.key(), s.key());
        // Through SGF and back.
        let rec = GameRecord::parse(&GameRecord::from_state(&s).to_sgf()).unwrap();
        let rep = rec.replay(rules).unwrap();
        prop_assert!(rep.first_illegal.is_none());
        prop_assert_eq!(rep.state.board(), s.board());
    }

    /// The 8 symmetries commute with play: transforming the game equals transforming the
    /// board, and legal moves map onto legal moves.
    #[test]
    fn symmetries_commute(size in 2u8..=7, plies in 0usize..80, seed: u64, sym in 0usize..8) {
        let s = random_game(size, plies, seed, Rules::default(), Policy::Light);
        let sym = Symmetry::ALL[sym];
        let t = s.transformed(sym);
        for p in s.board().points() {
            prop_assert_eq!(t.board().get(sym.apply(p, size, size)), s.board().get(p));
        }
        let mut a: Vec<Move> = s.legal_moves().into_iter().map(|m| sym.apply_move(m, size, size)).collect();
        let mut b = t.legal_moves();
        let key = |m: &Move| match m { Move::Place(p) => (0, p.y, p.x), Move::Pass => (1, 0, 0) };
        a.sort_by_key(key);
        b.sort_by_key(key);
        prop_assert_eq!(a, b);
    }

    /// Area: Black + White + neutral = board points; split halves sum to the board (R8);
    /// removing dead stones keeps the sum; the result is the same whichever side is counted.
    #[test]
    fn area_invariants(size in 2u8..=9, plies in 0usize..150, seed: u64, dead_mask: u64) {
        let s = random_game(size, plies, seed, Rules::default(), Policy::Light);
        let b = s.board();
        let a = score::area(b);
        prop_assert_eq!(a.black + a.white + a.neutral, b.area());
        prop_assert_eq!(a.black_points() + a.white_points(), b.area() as f64);
        let stones: Vec<Point> = b.points().filter(|&p| b.get(p).is_some()).collect();
        let dead: Vec<Point> = stones.iter().enumerate().filter(|(i, _)| dead_mask >> (i % 64) & 1 == 1).map(|(_, &p)| p).collect();
        let sc = s.area_score(&dead).unwrap();
        prop_assert_eq!(sc.black + sc.white, b.area() as f64);
        // Counting Black alone decides: white = total - black.
        let from_black = (b.area() as f64 - sc.black) - sc.black + s.white_bonus();
        prop_assert_eq!(from_black, sc.white_minus_black);
    }

    /// Superko is exact: the engine agrees with a brute-force oracle that remembers every
    /// earlier board in full.
    #[test]
    fn superko_matches_oracle(size in 2u8..=4, plies in 0usize..60, seed: u64, k in 0u8..4) {
        let rules = rules_for(k);
        let mut s = State::new(size, rules).unwrap();
        let mut seen: Vec<(Vec<String>, weiqi_rules::Color)> = vec![(s.board().rows(), s.to_move())];
        let mut rng = SmallRng::seed_from_u64(seed);
        for _ in 0..plies {
            if s.is_over() { break; }
            for p in s.board().points() {
                let engine = s.check(Move::Place(p));
                // Oracle: play on a copy without superko, compare with every earlier board.
                let loose_rules = rules.with_ko(KoRule::Simple);
                let mut loose = State::from_board(s.board().clone(), s.to_move(), loose_rules);
                let basic = loose.play(Move::Place(p));
                let repeat = basic.is_ok() && seen.iter().any(|(rows, to_move)| {
                    *rows == loose.board().rows() && (rules.ko == KoRule::Positional || *to_move == loose.to_move())
                });
                match (engine, basic) {
                    (Err(e), Err(b)) => prop_assert_eq!(e, b),
                    (Ok(()), Ok(_)) => prop_assert!(rules.ko == KoRule::Simple || !repeat, "missed repetition at {p}"),
                    (Err(e), Ok(_)) => {
                        let is_ko_rule = matches!(e, weiqi_rules::Illegal::Ko | weiqi_rules::Illegal::Superko);
                        prop_assert!(is_ko_rule, "{e:?}");
                        if rules.ko == KoRule::Simple {
                            prop_assert_eq!(e, weiqi_rules::Illegal::Ko);
                        } else {
                            prop_assert!(repeat, "false superko at {p}");
                        }
                    }
                    (Ok(()), Err(b)) => prop_assert!(false, "engine allows what the board forbids: {b:?}"),
                }
            }
            s.play_random(Policy::Uniform, &mut rng);
            seen.push((s.board().rows(), s.to_move()));
        }
    }
}

/// Boards of every size 2..25 and rectangles are accepted; 1 and 26 are not (R1).
#[test]
fn sizes_r1() {
    for n in 2..=25 {
        let mut s = State::new(n, Rules::default()).unwrap();
        let mut rng = SmallRng::seed_from_u64(n as u64);
        s.play_random_game(Policy::Light, &mut rng, 10_000);
        s.check_consistency().unwrap();
    }
    assert!(Board::new(26).is_err());
    assert!(Board::new(0).is_err());
    assert!(Board::rect(19, 9).is_ok());
}
