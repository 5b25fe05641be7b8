//! A tournament's settings and events: what is stored, in order, and folded into a
//! [`crate::Tournament`].

use serde::{Deserialize, Serialize};
use weiqi_game::Settings;

use crate::standings::BoardResult;

/// How players are drawn into groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Seeding {
    /// Shuffled with the published seed (anyone can redo the draw), dealt in turn.
    Random,
    /// By rating, strongest first, dealt snaking so every group gets strong and weak
    /// players; equal ratings by registration order.
    Rating,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TournamentSettings {
    pub name: String,
    pub groups: u32,
    pub group_size: u32,
    /// The games' settings: board size, rules and komi, time control, rated. The
    /// tournament sets the rest on every game: the tournament referee mode (C5's
    /// penalties), Black and White by the pairing, no handicap, the White seat kept for
    /// its player, the round's start and the check-in window (C4).
    pub game: Settings,
    pub seeding: Seeding,
    /// The top two of each group go on to a knockout.
    pub knockout: bool,
    /// Planned start of each round (ms since the epoch). A round starts at its planned
    /// time, or `round_break_ms` after the previous round ended if that is later; rounds
    /// past the list start after the break.
    #[serde(default)]
    pub round_starts_ms: Vec<u64>,
    pub round_break_ms: u64,
    /// C4: how late past the round's start a player may check in to a game; later
    /// forfeits it, and both absent both lose.
    pub check_in_window_ms: u64,
}

impl TournamentSettings {
    pub fn capacity(&self) -> u32 {
        self.groups * self.group_size
    }
}

/// A registered player.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entrant {
    pub player_id: String,
    pub name: String,
    #[serde(default)]
    pub bot: bool,
    /// For seeding by rating.
    pub rating: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TournamentPhase {
    Registration,
    Running,
    Finished,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Groups,
    Knockout,
}

/// One game of a round, or a walkover.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundGame {
    /// Unique in the tournament: `t:{tournament}:r{round}:b{slot}:a{attempt}`.
    pub pairing_id: String,
    /// Empty for a walkover (no game is played).
    pub game_id: String,
    /// The group (0-based) in the group stage.
    pub group: Option<u32>,
    /// The board's place in its round: in the knockout, its winner takes place `slot` of
    /// the next round.
    pub slot: u32,
    /// 0 for the first game; a replay (no result, a knockout draw) is the next attempt.
    pub attempt: u32,
    /// When its game starts (C4: lateness counts from here): the round's start, or a
    /// replay's.
    pub starts_ms: u64,
    /// `None`: nobody (in the knockout, the place of a player eliminated by a double
    /// forfeit; after a withdrawal).
    pub black: Option<String>,
    pub white: Option<String>,
    /// Set by a walkover at pairing time, or when the game's result is recorded.
    pub result: Option<BoardResult>,
    /// The game's result was a forfeit, not play (an absent or withdrawn player).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forfeit: bool,
}

impl RoundGame {
    pub fn is_walkover(&self) -> bool {
        self.game_id.is_empty()
    }

    /// Decided without play: a walkover, or a game forfeited (C4, C9).
    pub fn is_unplayed(&self) -> bool {
        self.is_walkover() || self.forfeit
    }

    /// The player who goes on: the winner, or nobody.
    pub fn winner(&self) -> Option<&String> {
        match self.result? {
            BoardResult::BlackWins => self.black.as_ref(),
            BoardResult::WhiteWins => self.white.as_ref(),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// 1-based, across both stages.
    pub number: u32,
    pub stage: Stage,
    /// When its games start (C4: check-in opens; lateness counts from here).
    pub starts_ms: u64,
    /// Every attempt, in the order they were paired.
    pub boards: Vec<RoundGame>,
}

impl Round {
    /// The latest attempt on each slot.
    pub fn current_boards(&self) -> impl Iterator<Item = &RoundGame> {
        self.boards.iter().filter(|b| {
            !self
                .boards
                .iter()
                .any(|o| o.slot == b.slot && o.group == b.group && o.attempt > b.attempt)
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TournamentEvent {
    Created {
        id: String,
        settings: TournamentSettings,
        organizer: String,
        at_ms: u64,
    },
    Registered {
        entrant: Entrant,
    },
    Withdrawn {
        player_id: String,
        at_ms: u64,
    },
    /// The draw: `groups` lists each group's players in the draw's order.
    Started {
        seed: u64,
        groups: Vec<Vec<String>>,
        at_ms: u64,
    },
    RoundPaired {
        round: Round,
    },
    /// A game's result; `forfeit` when it was not played out (C4, C9).
    Recorded {
        game_id: String,
        outcome: BoardResult,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        forfeit: bool,
    },
    /// A game played again (no result; a knockout draw), colours swapped.
    Replayed {
        round: u32,
        board: RoundGame,
    },
    Finished {
        champion: Option<String>,
        at_ms: u64,
    },
}
