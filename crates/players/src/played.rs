//! A player's finished games, as their profile lists them: one row per signed-in seat of a
//! game, written when the game ends, read newest first a page at a time.

use weiqi_game::{Game, PlayerRef, Seat};
use weiqi_rules::Color;

use crate::Refusal;

/// One finished game as one of its players played it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlayedGame {
    pub player_id: String,
    pub game_id: String,
    pub board_size: u32,
    pub color: Color,
    /// None when the opponent did not sign in.
    pub opponent: Option<PlayerRef>,
    /// As SGF writes it ("B+R", "W+3.5", "0", "Void").
    pub result: String,
    /// 1 win, 0.5 draw, 0 loss (0 without a result).
    pub score: f64,
    pub rated: bool,
    pub ended_ms: u64,
}

/// The rows a finished game makes: one per seat a signed-in player held (none for a game
/// that never had colours, such as one cancelled before anyone joined).
pub fn played_games(game_id: &str, game: &Game, ended_ms: u64) -> Vec<PlayedGame> {
    let (Some(settings), Some(result)) = (game.settings(), game.result()) else {
        return Vec::new();
    };
    [Seat::Host, Seat::Guest]
        .into_iter()
        .filter_map(|seat| {
            let me = game.player(seat)?;
            let color = game.color_of(seat)?;
            let score = match result.winner {
                Some(w) if w == color => 1.0,
                Some(_) => 0.0,
                None if result.sgf() == "0" => 0.5,
                None => 0.0,
            };
            Some(PlayedGame {
                player_id: me.id.clone(),
                game_id: game_id.to_string(),
                board_size: settings.size as u32,
                color,
                opponent: game.player(seat.other()).cloned(),
                result: result.sgf(),
                score,
                rated: settings.rated,
                ended_ms,
            })
        })
        .collect()
}

/// Where a page of a player's games starts: after the game that ended at `ended_ms` with
/// this id (the order is newest first, ties by id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageAfter {
    pub ended_ms: u64,
    pub game_id: String,
}

impl PageAfter {
    /// The opaque token a client sends back for the next page.
    pub fn token(&self) -> String {
        hex::encode(format!("{}:{}", self.ended_ms, self.game_id))
    }

    /// A token this service gave; none for the first page (an empty token).
    pub fn from_token(token: &str) -> Result<Option<PageAfter>, Refusal> {
        if token.is_empty() {
            return Ok(None);
        }
        let bad = || Refusal::BadPageToken;
        let text = String::from_utf8(hex::decode(token).map_err(|_| bad())?).map_err(|_| bad())?;
        let (ms, id) = text.split_once(':').ok_or_else(bad)?;
        Ok(Some(PageAfter {
            ended_ms: ms.parse().map_err(|_| bad())?,
            game_id: id.to_string(),
        }))
    }
}

/// A page's size: 20 when 0, at most 100.
pub fn page_size(asked: u32) -> Result<usize, Refusal> {
    match asked {
        0 => Ok(20),
        1..=100 => Ok(asked as usize),
        _ => Err(Refusal::bad("page_size", "at most 100")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_token_round_trips_and_a_forged_one_is_refused() {
        let after = PageAfter {
            ended_ms: 1_700_000_000_123,
            game_id: "g:1".into(),
        };
        assert_eq!(PageAfter::from_token(&after.token()), Ok(Some(after)));
        assert_eq!(PageAfter::from_token(""), Ok(None));
        for forged in ["zz", "6162", &hex::encode("x:g"), &hex::encode([0xff, 0xfe])] {
            assert_eq!(PageAfter::from_token(forged), Err(Refusal::BadPageToken), "{forged}");
        }
        assert_eq!(page_size(0), Ok(20));
        assert!(page_size(101).is_err());
    }
}
