//! Which finished games count for ratings, and the Glicko-2 update the store applies.

use crate::{RatedGame, RatingRow};
use weiqi_game::{EndReason, Game, Seat};
use weiqi_rating::{Period, Rating, continuous::Side};
use weiqi_rules::Color;

/// The rated game `game` makes, now that it is over; none when it does not count: not
/// rated, anonymous seats, a forfeit, no result, or cancelled before move 2.
pub fn rated_game(game_id: &str, game: &Game, at_ms: u64) -> Option<RatedGame> {
    let settings = game.settings()?;
    let result = game.result()?;
    if !settings.rated || game.move_number() < 2 {
        return None;
    }
    let black_score = match (result.reason, result.winner) {
        (EndReason::Forfeit | EndReason::DoubleForfeit | EndReason::NoResult | EndReason::Cancelled, _) => return None,
        (_, Some(Color::Black)) => 1.0,
        (_, Some(Color::White)) => 0.0,
        (_, None) => 0.5,
    };
    let player = |c: Color| -> Option<String> {
        let seat: Seat = game.seat_of(c)?;
        Some(game.player(seat)?.id.clone())
    };
    Some(RatedGame {
        game_id: game_id.to_string(),
        board_size: settings.size as u32,
        at_ms,
        black: player(Color::Black)?,
        white: player(Color::White)?,
        black_score,
    })
}

fn side(row: Option<RatingRow>) -> Side {
    match row {
        Some(r) => Side {
            rating: Rating {
                rating: r.rating,
                deviation: r.deviation,
                volatility: r.volatility,
            },
            last_ms: Some(r.last_ms),
        },
        None => Side {
            rating: Rating::default(),
            last_ms: None,
        },
    }
}

/// A rating's deviation above which it is provisional, as OGS draws the line: apps show
/// its rank with a "?". (Glicko-2 starts at 350; two or three games against settled
/// players bring it under.)
pub const PROVISIONAL_DEVIATION: f64 = 160.0;

/// Whether a rating with this deviation is still provisional.
pub fn provisional(deviation: f64) -> bool {
    deviation > PROVISIONAL_DEVIATION
}

/// The store's [`crate::RateFn`]: each game is its own rating period (see
/// `weiqi_rating::continuous`).
pub fn rate(black: Option<RatingRow>, white: Option<RatingRow>, g: &RatedGame) -> [(f64, RatingRow); 2] {
    let (b, w) = (side(black), side(white));
    let (nb, nw) = weiqi_rating::rate_game(b, w, g.black_score, g.at_ms, &Period::default());
    let row = |before: Option<RatingRow>, r: Rating| RatingRow {
        board_size: g.board_size,
        rating: r.rating,
        deviation: r.deviation,
        volatility: r.volatility,
        games: before.map_or(0, |b| b.games) + 1,
        last_ms: g.at_ms,
    };
    [(b.rating.rating, row(black, nb)), (w.rating.rating, row(white, nw))]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(black_score: f64) -> RatedGame {
        RatedGame {
            game_id: "g".into(),
            board_size: 9,
            at_ms: 1_000,
            black: "a".into(),
            white: "b".into(),
            black_score,
        }
    }

    /// Two new players: the winner goes up, the loser down by as much, both less uncertain.
    #[test]
    fn a_first_game_moves_both_ratings() {
        let [(b0, b), (w0, w)] = rate(None, None, &game(1.0));
        assert_eq!((b0, w0), (1500.0, 1500.0));
        assert!(b.rating > 1500.0 && w.rating < 1500.0);
        assert!(((b.rating - 1500.0) + (w.rating - 1500.0)).abs() < 1e-6);
        assert!(b.deviation < 350.0 && w.deviation < 350.0);
        assert_eq!((b.games, w.games, b.last_ms), (1, 1, 1_000));
    }

    #[test]
    fn a_draw_between_equals_changes_no_rating() {
        let [(_, b), (_, w)] = rate(None, None, &game(0.5));
        assert!((b.rating - 1500.0).abs() < 1e-6 && (w.rating - 1500.0).abs() < 1e-6);
    }
}

#[cfg(test)]
mod provisional_tests {
    use super::*;

    #[test]
    fn a_new_rating_is_provisional_until_its_deviation_falls_to_the_cutoff() {
        assert!(provisional(Rating::default().deviation));
        assert!(provisional(160.5));
        assert!(!provisional(PROVISIONAL_DEVIATION));
        assert!(!provisional(60.0));
    }
}
