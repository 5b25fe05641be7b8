//! A game reviewed by the tree search, as players ask for after a game: for every move,
//! Black's win rate before and after it, the search's preferred move with its win rate,
//! and how much the move played lost for its player. The win rates are the search's own
//! (the share of its simulations won), the same search `weiqi gtp` plays with.

use weiqi_rules::{Color, Move, State};

use crate::mcts::MctsPlayer;

/// One move of a review.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveReview {
    /// From 1.
    pub number: usize,
    pub color: Color,
    pub played: Move,
    /// Black's win rate in the position before the move, and after it.
    pub black_before: f64,
    pub black_after: f64,
    /// The search's choice in the position before the move, and Black's win rate after it.
    pub best: Move,
    pub black_after_best: f64,
    /// What the move cost its player, in win rate: the best move's rate minus the played
    /// one's (0 for the best move itself, never below 0).
    pub loss: f64,
}

/// A whole game's review as the service keeps it: every move judged, by a search of
/// `visits` simulations a position.
#[derive(Debug, Clone, PartialEq)]
pub struct GameReview {
    pub visits: u32,
    pub moves: Vec<MoveReview>,
}

/// Reviews every move of the game that led to `end`, searching each position with
/// `player` (its playouts per position); `progress` hears `(positions done, positions)`.
pub fn review(end: &State, player: &mut MctsPlayer, progress: impl FnMut(usize, usize)) -> Vec<MoveReview> {
    review_until(end, player, progress, || false).unwrap_or_default()
}

/// [`review`], given up (none) as soon as `stop` says so between two positions (a
/// server that stops, within one position's search), or if the game's own moves do not
/// replay (never for a game the rules engine played).
pub fn review_until(
    end: &State,
    player: &mut MctsPlayer,
    mut progress: impl FnMut(usize, usize),
    stop: impl Fn() -> bool,
) -> Option<Vec<MoveReview>> {
    // Every position of the game, the start first, replayed forward and judged one at a
    // time (a long game costs its positions' searches, never a copy of each position).
    let mut position = weiqi_rules::State::from_board(end.initial_board().clone(), end.initial_to_move(), *end.rules());
    position.set_handicap(end.handicap());
    let total = end.moves().len() + 1;
    // Black's win rate in each position, and the search's best move there.
    let mut judged: Vec<(f64, Option<Move>, f64)> = Vec::with_capacity(total);
    for k in 0..total {
        if stop() {
            return None;
        }
        judged.push(judge(&position, player));
        progress(k + 1, total);
        if let Some(&(color, mv)) = end.moves().get(k) {
            // (The game's own moves: legal where they were played.)
            position.play_color(color, mv).ok()?;
        }
    }
    let moves = end
        .moves()
        .iter()
        .enumerate()
        .map(|(i, &(color, played))| {
            let (before, best, best_rate) = judged[i];
            let after = judged[i + 1].0;
            let best = best.unwrap_or(played);
            // The best move's rate for its player, against the played move's.
            let mine = |black: f64| if color == Color::Black { black } else { 1.0 - black };
            let black_after_best = if best == played { after } else { best_rate };
            MoveReview {
                number: i + 1,
                color,
                played,
                black_before: before,
                black_after: after,
                best,
                black_after_best,
                loss: (mine(black_after_best) - mine(after)).max(0.0),
            }
        })
        .collect();
    Some(moves)
}

/// A position's verdict: Black's win rate, the best move for the player to move, and
/// Black's win rate after it. A finished game's is its count.
fn judge(position: &State, player: &mut MctsPlayer) -> (f64, Option<Move>, f64) {
    if position.is_over() {
        let dead = weiqi_rules::DeadEstimate::default().estimate(position);
        let black = match position.area_score(&dead).ok().and_then(|s| s.outcome.winner()) {
            Some(Color::Black) => 1.0,
            Some(Color::White) => 0.0,
            None => 0.5,
        };
        return (black, None, black);
    }
    let color = position.to_move();
    let candidates = player.candidates(position, color);
    let Some(top) = candidates.first() else {
        return (0.5, None, 0.5);
    };
    let black = if color == Color::Black {
        top.winrate
    } else {
        1.0 - top.winrate
    };
    (black, Some(top.mv), black)
}

/// The mistakes a review lists: at most this many, each losing at least this much win
/// rate (the CLI's table and the service's review).
pub const MISTAKES: usize = 5;
pub const MISTAKE_LOSS: f64 = 0.1;

/// The moves that cost their player most, biggest first (at most `n`, each at least
/// `min_loss`).
pub fn mistakes(review: &[MoveReview], n: usize, min_loss: f64) -> Vec<&MoveReview> {
    let mut worst: Vec<&MoveReview> = review.iter().filter(|m| m.loss >= min_loss).collect();
    worst.sort_by(|a, b| b.loss.total_cmp(&a.loss));
    worst.truncate(n);
    worst
}
