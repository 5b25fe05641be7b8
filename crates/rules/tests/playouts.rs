//! The playout runner agrees with the exact engine: every move it plays is legal when
//! replayed through `State::play`, the end position and area are the same, light and heavy
//! moves never fill the mover's own eye, and they pass only when nothing else is left.
//!
//! Simple-ko mode may play a move that recreates an earlier position: legal under simple
//! ko, refused by the exact engine as `Illegal::Superko` under positional or situational
//! superko. That is the only difference these tests allow. The runner stops at such a
//! repetition when it follows a capture (`Playout::cycled`); the exact engine under simple
//! ko agrees (`State::cycle_detected`).

use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::SmallRng;
use weiqi_rules::{
    Board, Color, Illegal, KoCheck, KoRule, Move, Playout, PlayoutOptions, Point, Policy, Rules, State, score,
};

const POLICIES: [Policy; 3] = [Policy::Uniform, Policy::Light, Policy::Heavy];

fn rules_for(k: u8) -> Rules {
    Rules::default()
        .with_ko([KoRule::Positional, KoRule::Situational, KoRule::Simple][k as usize % 3])
        .with_suicide(k % 2 == 1)
}

/// A start position a few uniform moves into a game (so ko points and passes carry over).
fn start(size: u8, plies: usize, seed: u64, rules: Rules) -> State {
    let mut s = State::new(size, rules).unwrap();
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x5EED);
    s.play_random_game(Policy::Uniform, &mut rng, plies);
    s
}

/// Whether `p` is a single-point eye of `c`: every neighbour on the board is a `c` stone.
fn is_own_eye(b: &Board, p: Point, c: Color) -> bool {
    let (x, y) = (p.x as i32, p.y as i32);
    [(0, -1), (-1, 0), (1, 0), (0, 1)].iter().all(|&(dx, dy)| {
        let (nx, ny) = (x + dx, y + dy);
        if nx < 0 || ny < 0 || nx >= b.width() as i32 || ny >= b.height() as i32 {
            return true;
        }
        b.get(Point::new(nx as u8, ny as u8)) == Some(c)
    })
}

fn run(from: &State, policy: Policy, ko: KoCheck, seed: u64) -> Playout {
    let mut p = Playout::new(PlayoutOptions {
        policy,
        ko,
        max_moves: 600,
        record: true,
    });
    let mut rng = SmallRng::seed_from_u64(seed);
    let n = p.run(from, &mut rng);
    assert_eq!(n, p.moves().len());
    p
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Simple-ko playouts replay move for move through the exact engine under simple ko,
    /// and through the game's own rule until a superko repetition, if any.
    #[test]
    fn simple_ko_playouts_replay_exactly(size in 2u8..=9, plies in 0usize..30, seed: u64, k in 0u8..6, pol in 0usize..3) {
        let rules = rules_for(k);
        let policy = POLICIES[pol];
        let from = start(size, plies, seed, rules);
        let p = run(&from, policy, KoCheck::Simple, seed);
        p.board().check_consistency().unwrap();
        // The same start under simple ko: the reference the playout must match exactly.
        let mut simple = replay_start(&from, rules.with_ko(KoRule::Simple)).expect("simple ko allows more");
        let mut exact = Some(from.clone());
        for &m in p.moves() {
            let me = simple.to_move();
            if policy != Policy::Uniform {
                match m {
                    Move::Place(pt) => prop_assert!(!is_own_eye(simple.board(), pt, me), "filled own eye at {pt}"),
                    Move::Pass => {
                        let left = simple.legal_moves().into_iter().any(|l| match l {
                            Move::Place(pt) => !is_own_eye(simple.board(), pt, me),
                            Move::Pass => false,
                        });
                        prop_assert!(!left, "passed with a move left");
                    }
                }
            }
            if let Err(e) = simple.play(m) {
                prop_assert!(false, "{m:?} illegal under simple ko: {e}");
            }
            if let Some(s) = &mut exact {
                match s.play(m) {
                    Ok(_) => {}
                    Err(Illegal::Superko) => exact = None,
                    Err(e) => prop_assert!(false, "{m:?} illegal under {:?}: {e}", rules.ko),
                }
            }
        }
        prop_assert_eq!(simple.board(), p.board());
        prop_assert_eq!(score::area(simple.board()), score::area(p.board()));
        prop_assert!(simple.is_over() || p.cycled() || p.moves().len() == 600);
        if p.cycled() {
            // It stopped on a real repetition: the exact engine under simple ko saw it too.
            prop_assert!(simple.cycle_detected());
        }
        if let Some(s) = exact {
            prop_assert_eq!(s.board(), p.board());
        }
    }

    /// Exact-mode playouts are the exact engine's own random games, seed for seed.
    #[test]
    fn exact_playouts_are_the_engines_games(size in 2u8..=9, plies in 0usize..30, seed: u64, k in 0u8..6, pol in 0usize..3) {
        let rules = rules_for(k);
        let policy = POLICIES[pol];
        let from = start(size, plies, seed, rules);
        let p = run(&from, policy, KoCheck::Exact, seed);
        let mut s = from.clone();
        let mut rng = SmallRng::seed_from_u64(seed);
        s.play_random_game(policy, &mut rng, from.move_number() + 600);
        s.check_consistency().unwrap();
        let played: Vec<Move> = s.moves()[from.move_number()..].iter().map(|&(_, m)| m).collect();
        prop_assert_eq!(p.moves(), &played[..]);
        prop_assert_eq!(p.board(), s.board());
        // And they replay through `State::play` from the start.
        let mut again = from.clone();
        for &m in p.moves() {
            prop_assert!(again.play(m).is_ok());
        }
    }
}

/// `from`'s start position and moves replayed under other rules (`None` if a move is
/// illegal there, which cannot happen when only the ko rule is loosened).
fn replay_start(from: &State, rules: Rules) -> Option<State> {
    let mut s = State::from_board(from.initial_board().clone(), from.initial_to_move(), rules);
    for &(c, m) in from.moves() {
        s.play_color(c, m).ok()?;
    }
    Some(s)
}

/// Long games on the full sizes: light and heavy simple-ko playouts stay legal and end.
#[test]
fn full_size_playouts_replay() {
    for size in [9u8, 13, 19] {
        for policy in POLICIES {
            for seed in 0..4 {
                let from = State::new(size, Rules::default()).unwrap();
                let p = run(&from, policy, KoCheck::Simple, seed);
                let mut s = State::new(size, Rules::default().with_ko(KoRule::Simple)).unwrap();
                for &m in p.moves() {
                    s.play(m).unwrap();
                }
                assert_eq!(s.board(), p.board(), "{size} {policy:?} {seed}");
                if policy != Policy::Uniform {
                    assert!(
                        s.is_over() || p.cycled(),
                        "{size} {policy:?} {seed}: no end in 600 plies"
                    );
                }
            }
        }
    }
}
