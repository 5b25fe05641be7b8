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
