//! The tree search player: stronger than the playouts it searches with, and it ends a won
//! game by passing.

use std::time::Duration;

use weiqi_gtp::{Budget, Choice, Ending, MatchSettings, MctsPlayer, MctsSettings, Player, RandomPlayer, play_out};
use weiqi_rules::rng::SplitMix64;
use weiqi_rules::{Board, Color, Move, Policy, Preset, State};

fn mcts(playouts: u32, seed: u64) -> MctsPlayer {
    MctsPlayer::new(MctsSettings {
        playouts,
        threads: 1,
        seed,
        policy: Policy::Light,
        resign_below: 0.0,
        shape_prior: weiqi_gtp::DEFAULT_SHAPE_PRIOR,
    })
}

const BUDGET: Budget = Budget {
    time: Duration::from_secs(30),
};

/// Plays one game through the referee (`play_out`, the one match runner); returns the
/// winner. Players here never forfeit: they choose legal moves.
fn game(black: &mut dyn Player, white: &mut dyn Player, size: u8) -> Option<Color> {
    let mut rules = Preset::Chinese.rules();
    rules.komi = 0.5;
    let m = MatchSettings {
        max_moves: 300,
        opening: 0,
        seconds_per_move: Some(BUDGET.time),
        lag: Duration::from_secs(600),
    };
    let played = play_out(black, white, State::new(size, rules).unwrap(), &m, &mut SplitMix64(7));
    assert!(!matches!(played.ending, Ending::Forfeit(_)), "{:?}", played.ending);
    played.winner
}

#[test]
fn search_beats_the_light_playouts_it_searches_with() {
    let mut wins = 0;
    for k in 0..4u64 {
        let mut m = mcts(400, k);
        let mut light = RandomPlayer::new(Policy::Light, 100 + k);
        let mcts_black = k % 2 == 0;
        let winner = if mcts_black {
            game(&mut m, &mut light, 7)
        } else {
            game(&mut light, &mut m, 7)
        };
        if winner == Some(if mcts_black { Color::Black } else { Color::White }) {
            wins += 1;
        }
    }
    assert_eq!(wins, 4, "400 playouts a move win every game against light play");
}

#[test]
fn passes_after_the_opponent_when_the_game_is_won() {
    let board = Board::from_rows(&[".x.x.", "xxxxx", ".....", "xxxxx", ".x.x."]).unwrap();
    let mut rules = Preset::Chinese.rules();
    rules.komi = 0.5;
    let mut s = State::from_board(board, Color::White, rules);
    s.pass();
    assert_eq!(
        mcts(200, 1).genmove(&s, Color::Black, BUDGET, false),
        Choice::Play(Move::Pass)
    );
    // In cleanup (play it out) it does not pass while it has a move that fills no eye.
    assert_ne!(
        mcts(200, 1).genmove(&s, Color::Black, BUDGET, true),
        Choice::Play(Move::Pass)
    );
}

/// The tree kept between moves serves only the game it was grown in: after a new board
/// size, or a new game whose moves only share a tail with the old one's, the search starts
/// over (a kept tree would offer the old board's moves).
#[test]
fn a_kept_tree_is_used_only_in_its_own_game() {
    let mut m = mcts(100, 5);
    let mut rules = Preset::Chinese.rules();
    rules.komi = 0.5;
    let nine = State::new(9, rules).unwrap();
    assert!(matches!(m.genmove(&nine, Color::Black, BUDGET, false), Choice::Play(_)));
    let five = State::new(5, rules).unwrap();
    for _ in 0..3 {
        let Choice::Play(mv) = m.genmove(&five, Color::Black, BUDGET, false) else {
            panic!("no resignation on an empty board")
        };
        assert!(five.is_legal(mv), "{mv:?} on 5x5");
    }
    // Another 5x5 game that reached a move number the tree has seen, by other moves.
    let mut other = five.clone();
    other.play(Move::Place(weiqi_rules::Point::new(4, 4))).unwrap();
    let Choice::Play(mv) = m.genmove(&other, Color::White, BUDGET, false) else {
        panic!()
    };
    assert!(other.is_legal(mv));
}

/// An advisor with a fixed opinion: all its probability on one point, and a value.
struct Insists {
    point: weiqi_rules::Point,
    value: f32,
    calls: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    fail: bool,
}

impl weiqi_gtp::Advisor for Insists {
    fn advise(&mut self, state: &State) -> Result<weiqi_gtp::Advice, String> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if self.fail {
            return Err("the network is gone".into());
        }
        let w = state.board().width() as usize;
        let mut priors = vec![0.0; state.board().area() as usize + 1];
        priors[self.point.y as usize * w + self.point.x as usize] = 1.0;
        Ok(weiqi_gtp::Advice {
            priors,
            value: self.value,
        })
    }
}

/// The hybrid engine (issue 48): the advisor's favourite move gets its virtual wins, so
/// with few playouts the search plays the corner point it insists on, which the search
/// alone never picks on an empty board; only nodes with enough visits are advised; an
/// advisor that fails is reported and the search goes on with playouts alone.
#[test]
fn the_hybrid_follows_its_advisor_and_survives_one_that_fails() {
    let mut rules = Preset::Chinese.rules();
    rules.komi = 7.5;
    let empty = State::new(9, rules).unwrap();
    let corner = weiqi_rules::Point::new(0, 0);
    let advised = |fail: bool, advice_visits: u32| {
        let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let advisor = Insists {
            point: corner,
            value: 0.0,
            calls: calls.clone(),
            fail,
        };
        let hybrid = weiqi_gtp::HybridSettings {
            advice_visits,
            prior_visits: 2000.0,
            ..Default::default()
        };
        (mcts(300, 3).with_advisors(vec![Box::new(advisor)], hybrid), calls)
    };
    assert_ne!(
        mcts(300, 3).genmove(&empty, Color::Black, BUDGET, false),
        Choice::Play(Move::Place(corner))
    );
    let (mut h, calls) = advised(false, 8);
    assert_eq!(h.name(), "mcts+net");
    assert_eq!(
        h.genmove(&empty, Color::Black, BUDGET, false),
        Choice::Play(Move::Place(corner))
    );
    let few = calls.load(std::sync::atomic::Ordering::Relaxed);
    assert!((1..300).contains(&few), "{few} advised nodes in 300 simulations");
    // Advising every expanded node asks more often.
    let (mut eager, eager_calls) = advised(false, 0);
    eager.genmove(&empty, Color::Black, BUDGET, false);
    assert!(eager_calls.load(std::sync::atomic::Ordering::Relaxed) > few);
    assert!(h.failure().is_none());

    let (mut broken, calls) = advised(true, 8);
    assert!(matches!(
        broken.genmove(&empty, Color::Black, BUDGET, false),
        Choice::Play(Move::Place(_))
    ));
    assert_eq!(
        calls.load(std::sync::atomic::Ordering::Relaxed),
        1,
        "asked once, then never again"
    );
    assert!(broken.failure().unwrap().contains("the network is gone"));
}
