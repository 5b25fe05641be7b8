//! The tournament: its state (the fold of its events) and its decisions.

use std::collections::BTreeSet;

use serde::Serialize;
use weiqi_game::{ColorChoice, RefereeMode, Settings};

use crate::bracket;
use crate::error::TournamentError;
use crate::events::{Entrant, Round, RoundGame, Seeding, Stage, TournamentEvent, TournamentPhase, TournamentSettings};
use crate::limits;
use crate::schedule::{deal, round_robin, shuffle};
use crate::standings::{BoardResult, Played, Standing, standings};

/// The game id a board's game gets (the server derives it from the pairing id).
pub trait GameIds {
    fn game_id(&self, pairing_id: &str) -> String;
}

impl<F: Fn(&str) -> String> GameIds for F {
    fn game_id(&self, pairing_id: &str) -> String {
        self(pairing_id)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tournament {
    pub id: String,
    pub settings: TournamentSettings,
    pub organizer: String,
    pub created_ms: u64,
    /// Registration order; a withdrawal before the start removes the entrant.
    pub entrants: Vec<Entrant>,
    /// Withdrawn after the start: their remaining games are walkovers.
    pub withdrawn: BTreeSet<String>,
    pub phase: TournamentPhase,
    pub seed: u64,
    /// Each group's players in the draw's order (Berger numbers).
    pub groups: Vec<Vec<String>>,
    pub rounds: Vec<Round>,
    pub champion: Option<String>,
    pub finished_ms: Option<u64>,
    /// Events folded so far: the next append expects this many stored.
    pub version: u64,
}

type Decided = Result<Vec<TournamentEvent>, TournamentError>;

impl Tournament {
    /// Checks the settings and makes the first event.
    pub fn create(
        id: &str,
        settings: TournamentSettings,
        organizer: &str,
        now_ms: u64,
    ) -> Result<TournamentEvent, TournamentError> {
        validate(&settings)?;
        Ok(TournamentEvent::Created {
            id: id.to_string(),
            settings,
            organizer: organizer.to_string(),
            at_ms: now_ms,
        })
    }

    /// The state after `events` (the first must be `Created`).
    pub fn fold<'a>(events: impl IntoIterator<Item = &'a TournamentEvent>) -> Result<Tournament, TournamentError> {
        let mut events = events.into_iter();
        let Some(TournamentEvent::Created {
            id,
            settings,
            organizer,
            at_ms,
        }) = events.next()
        else {
            return Err(TournamentError::Corrupt("the first event is not `created`".into()));
        };
        let mut t = Tournament {
            id: id.clone(),
            settings: settings.clone(),
            organizer: organizer.clone(),
            created_ms: *at_ms,
            entrants: Vec::new(),
            withdrawn: BTreeSet::new(),
            phase: TournamentPhase::Registration,
            seed: 0,
            groups: Vec::new(),
            rounds: Vec::new(),
            champion: None,
            finished_ms: None,
            version: 1,
        };
        for e in events {
            t.apply(e)?;
        }
        Ok(t)
    }

    /// Folds one more event.
    pub fn apply(&mut self, e: &TournamentEvent) -> Result<(), TournamentError> {
        let corrupt = |what: &str| Err(TournamentError::Corrupt(format!("{what} in tournament {}", self.id)));
        match e {
            TournamentEvent::Created { .. } => return corrupt("a second `created`"),
            TournamentEvent::Registered { entrant } => self.entrants.push(entrant.clone()),
            TournamentEvent::Withdrawn { player_id, .. } => {
                if self.phase == TournamentPhase::Registration {
                    self.entrants.retain(|x| &x.player_id != player_id);
                } else {
                    self.withdrawn.insert(player_id.clone());
                }
            }
            TournamentEvent::Started { seed, groups, .. } => {
                self.phase = TournamentPhase::Running;
                self.seed = *seed;
                self.groups = groups.clone();
            }
            TournamentEvent::RoundPaired { round } => self.rounds.push(round.clone()),
            TournamentEvent::Recorded {
                game_id,
                outcome,
                forfeit,
            } => {
                let Some(board) = self
                    .rounds
                    .last_mut()
                    .and_then(|r| r.boards.iter_mut().find(|b| &b.game_id == game_id))
                else {
                    return corrupt(&format!("a result for unknown game {game_id}"));
                };
                board.result = Some(*outcome);
                board.forfeit = *forfeit;
            }
            TournamentEvent::Replayed { round, board } => {
                let Some(r) = self.rounds.get_mut(*round as usize - 1) else {
                    return corrupt(&format!("a replay in unknown round {round}"));
                };
                r.boards.push(board.clone());
            }
            TournamentEvent::Finished { champion, at_ms } => {
                self.phase = TournamentPhase::Finished;
                self.champion = champion.clone();
                self.finished_ms = Some(*at_ms);
            }
        }
        self.version += 1;
        Ok(())
    }

    fn need(&self, phase: TournamentPhase) -> Result<(), TournamentError> {
        if self.phase == phase {
            Ok(())
        } else {
            Err(TournamentError::WrongPhase {
                needed: phase,
                actual: self.phase,
            })
        }
    }

    pub fn entrant(&self, player_id: &str) -> Option<&Entrant> {
        self.entrants.iter().find(|e| e.player_id == player_id)
    }

    pub fn register(&self, entrant: Entrant) -> Decided {
        self.need(TournamentPhase::Registration)?;
        if self.entrant(&entrant.player_id).is_some() {
            return Err(TournamentError::AlreadyRegistered(entrant.player_id));
        }
        let capacity = self.settings.capacity();
        if self.entrants.len() as u32 >= capacity {
            return Err(TournamentError::Full { capacity });
        }
        Ok(vec![TournamentEvent::Registered { entrant }])
    }

    /// Before the start the entrant leaves; after it they forfeit what is left to play.
    pub fn withdraw(&self, player_id: &str, now_ms: u64) -> Decided {
        if self.phase == TournamentPhase::Finished {
            return Err(TournamentError::WrongPhase {
                needed: TournamentPhase::Running,
                actual: self.phase,
            });
        }
        if self.entrant(player_id).is_none() || self.withdrawn.contains(player_id) {
            return Err(TournamentError::NotRegistered(player_id.to_string()));
        }
        Ok(vec![TournamentEvent::Withdrawn {
            player_id: player_id.to_string(),
            at_ms: now_ms,
        }])
    }

    /// The draw, by the organizer: `seed` is published with it (random draws are redone
    /// from it; it also picks the knockout's colours).
    pub fn start(&self, by: &str, seed: u64, now_ms: u64) -> Decided {
        if by != self.organizer {
            return Err(TournamentError::NotOrganizer);
        }
        self.need(TournamentPhase::Registration)?;
        let need = 2 * self.settings.groups;
        let have = self.entrants.len() as u32;
        if have < need {
            return Err(TournamentError::TooFewPlayers { need, have });
        }
        let mut order: Vec<&Entrant> = self.entrants.iter().collect();
        let snake = match self.settings.seeding {
            Seeding::Random => {
                shuffle(&mut order, seed);
                false
            }
            Seeding::Rating => {
                order.sort_by(|a, b| b.rating.total_cmp(&a.rating));
                true
            }
        };
        let ids: Vec<String> = order.iter().map(|e| e.player_id.clone()).collect();
        Ok(vec![TournamentEvent::Started {
            seed,
            groups: deal(&ids, self.settings.groups as usize, snake),
            at_ms: now_ms,
        }])
    }

    /// Records an open game's result; a result that must be played again (no result; a
    /// draw in the knockout) comes with the replay, colours swapped.
    /// A game's result; `forfeit` when it was not played out (an absent or withdrawn
    /// player, C4/C9), which the cross-table marks as a walkover is marked.
    pub fn record(
        &self,
        game_id: &str,
        outcome: BoardResult,
        forfeit: bool,
        ids: &dyn GameIds,
        now_ms: u64,
    ) -> Decided {
        self.need(TournamentPhase::Running)?;
        let not_ours = || TournamentError::NotOurGame(game_id.to_string());
        let round = self.rounds.last().ok_or_else(not_ours)?;
        let board = round
            .current_boards()
            .find(|b| !b.is_walkover() && b.game_id == game_id && b.result.is_none())
            .ok_or_else(not_ours)?;
        let mut out = vec![TournamentEvent::Recorded {
            game_id: game_id.to_string(),
            outcome,
            forfeit,
        }];
        let replay = match outcome {
            BoardResult::NoResult => true,
            BoardResult::Draw => round.stage == Stage::Knockout,
            _ => false,
        };
        if replay && board.attempt < limits::MAX_REPLAYS {
            let mut again = RoundGame {
                attempt: board.attempt + 1,
                black: board.white.clone(),
                white: board.black.clone(),
                starts_ms: now_ms + self.settings.round_break_ms,
                result: None,
                forfeit: false,
                ..board.clone()
            };
            again.pairing_id = self.pairing_id(round.number, board.group, board.slot, again.attempt);
            again.game_id = ids.game_id(&again.pairing_id);
            out.push(TournamentEvent::Replayed {
                round: round.number,
                board: again,
            });
        }
        Ok(out)
    }

    /// What happens next by itself: the first round after the start, the next round when
    /// one is complete, the end after the last. Nothing while games are on.
    pub fn advance(&self, now_ms: u64, ids: &dyn GameIds) -> Decided {
        if self.phase != TournamentPhase::Running {
            return Ok(Vec::new());
        }
        let group_rounds = self.group_rounds();
        let Some(last) = self.rounds.last() else {
            return Ok(vec![self.pair_group_round(1, now_ms, ids)]);
        };
        if !last.current_boards().all(|b| b.result.is_some()) {
            return Ok(Vec::new());
        }
        let next = last.number + 1;
        let event = match last.stage {
            Stage::Groups if (last.number as usize) < group_rounds => self.pair_group_round(next, now_ms, ids),
            Stage::Groups if self.settings.knockout => {
                let qualifiers: Vec<[Option<String>; 2]> = (0..self.groups.len())
                    .map(|g| {
                        let mut q = self
                            .group_standings(g)
                            .into_iter()
                            .filter(|s| !self.withdrawn.contains(&s.player_id))
                            .map(|s| Some(s.player_id));
                        [q.next().flatten(), q.next().flatten()]
                    })
                    .collect();
                self.pair_knockout(next, bracket::first_round(&qualifiers), now_ms, ids)
            }
            Stage::Groups => TournamentEvent::Finished {
                champion: (self.groups.len() == 1)
                    .then(|| self.group_standings(0).first().map(|s| s.player_id.clone()))
                    .flatten(),
                at_ms: now_ms,
            },
            Stage::Knockout => {
                let mut boards: Vec<&RoundGame> = last.current_boards().collect();
                boards.sort_by_key(|b| b.slot);
                let goes_on: Vec<Option<String>> = boards.iter().map(|b| self.goes_on(last.number, b)).collect();
                if goes_on.len() == 1 {
                    TournamentEvent::Finished {
                        champion: goes_on[0].clone(),
                        at_ms: now_ms,
                    }
                } else {
                    self.pair_knockout(next, goes_on, now_ms, ids)
                }
            }
        };
        Ok(vec![event])
    }

    /// Who goes on from a finished knockout board: its winner; after the last replay
    /// still without one, the lots from the seed decide (limits::MAX_REPLAYS).
    fn goes_on(&self, round: u32, b: &RoundGame) -> Option<String> {
        match b.result {
            Some(BoardResult::Draw | BoardResult::NoResult) => {
                if bracket::coin(self.seed, round, b.slot, bracket::LOTS) {
                    b.black.clone()
                } else {
                    b.white.clone()
                }
            }
            _ => b.winner().cloned(),
        }
    }

    /// The group stage's length: the largest group's Berger table.
    pub fn group_rounds(&self) -> usize {
        self.groups
            .iter()
            .map(|g| round_robin(g.len()).len())
            .max()
            .unwrap_or(0)
    }

    fn pairing_id(&self, round: u32, group: Option<u32>, slot: u32, attempt: u32) -> String {
        let g = group.map_or("k".to_string(), |g| format!("g{g}"));
        format!("t:{}:r{round}:{g}:b{slot}:a{attempt}", self.id)
    }

    fn round_start(&self, number: u32, now_ms: u64) -> u64 {
        let planned = self
            .settings
            .round_starts_ms
            .get(number as usize - 1)
            .copied()
            .unwrap_or(0);
        planned.max(now_ms + self.settings.round_break_ms)
    }

    /// A board (`[black, white]`), a walkover when a side is missing or has withdrawn.
    fn board(
        &self,
        (round, group, slot): (u32, Option<u32>, u32),
        [black, white]: [Option<String>; 2],
        starts_ms: u64,
        ids: &dyn GameIds,
    ) -> RoundGame {
        let gone = |p: &Option<String>| p.as_ref().is_none_or(|p| self.withdrawn.contains(p));
        let walkover = match (gone(&black), gone(&white)) {
            (false, false) => None,
            (true, false) => Some(BoardResult::WhiteWins),
            (false, true) => Some(BoardResult::BlackWins),
            (true, true) => Some(BoardResult::BothLose),
        };
        let pairing_id = self.pairing_id(round, group, slot, 0);
        RoundGame {
            game_id: if walkover.is_some() {
                String::new()
            } else {
                ids.game_id(&pairing_id)
            },
            pairing_id,
            group,
            slot,
            attempt: 0,
            starts_ms,
            black,
            white,
            result: walkover,
            forfeit: false,
        }
    }

    fn pair_group_round(&self, number: u32, now_ms: u64, ids: &dyn GameIds) -> TournamentEvent {
        let starts_ms = self.round_start(number, now_ms);
        let mut boards = Vec::new();
        for (g, players) in self.groups.iter().enumerate() {
            let table = round_robin(players.len());
            let Some(pairs) = table.get(number as usize - 1) else {
                continue;
            };
            for (slot, &(b, w)) in pairs.iter().enumerate() {
                boards.push(self.board(
                    (number, Some(g as u32), slot as u32),
                    [Some(players[b].clone()), Some(players[w].clone())],
                    starts_ms,
                    ids,
                ));
            }
        }
        TournamentEvent::RoundPaired {
            round: Round {
                number,
                stage: Stage::Groups,
                starts_ms,
                boards,
            },
        }
    }

    fn pair_knockout(
        &self,
        number: u32,
        places: Vec<Option<String>>,
        now_ms: u64,
        ids: &dyn GameIds,
    ) -> TournamentEvent {
        let starts_ms = self.round_start(number, now_ms);
        let boards = places
            .chunks(2)
            .enumerate()
            .map(|(slot, pair)| {
                let (x, y) = (pair[0].clone(), pair.get(1).cloned().flatten());
                let (black, white) = if bracket::coin(self.seed, number, slot as u32, bracket::COLOURS) {
                    (x, y)
                } else {
                    (y, x)
                };
                self.board((number, None, slot as u32), [black, white], starts_ms, ids)
            })
            .collect();
        TournamentEvent::RoundPaired {
            round: Round {
                number,
                stage: Stage::Knockout,
                starts_ms,
                boards,
            },
        }
    }

    /// The group's finished games (replays superseded; a last attempt still without a
    /// result counts as a draw).
    pub fn group_games(&self, group: usize) -> Vec<&RoundGame> {
        self.rounds
            .iter()
            .filter(|r| r.stage == Stage::Groups)
            .flat_map(|r| r.current_boards())
            .filter(|b| b.group == Some(group as u32) && b.result.is_some())
            .collect()
    }

    /// A group's standings (C9; tie-breaks in [`crate::standings`]).
    pub fn group_standings(&self, group: usize) -> Vec<Standing> {
        let Some(players) = self.groups.get(group) else {
            return Vec::new();
        };
        let games: Vec<Played<'_>> = self
            .group_games(group)
            .into_iter()
            .filter_map(|b| {
                Some(Played {
                    black: b.black.as_deref()?,
                    white: b.white.as_deref()?,
                    outcome: match b.result? {
                        BoardResult::NoResult => BoardResult::Draw,
                        o => o,
                    },
                })
            })
            .collect();
        standings(players, &games)
    }

    /// The settings of a board's game: the tournament's game settings with the referee
    /// mode, colours, seat and start the tournament fixes.
    pub fn game_settings(&self, round: &Round, board: &RoundGame) -> Settings {
        let mut s = self.settings.game.clone();
        s.mode = RefereeMode::Tournament;
        s.allow_undo = false;
        s.colors = ColorChoice::HostBlack;
        s.handicap = 0;
        s.free_handicap = false;
        s.scheduled_start = Some(board.starts_ms);
        s.max_lateness_ms = self.settings.check_in_window_ms;
        s.reserved_guest = board.white.clone();
        if round.stage == Stage::Knockout {
            s.rules = s.rules.with_komi(bracket::half_point_komi(s.rules.komi));
        }
        s
    }

    /// Every game still to be played or under way, with its round.
    pub fn open_boards(&self) -> Vec<(&Round, &RoundGame)> {
        self.rounds
            .last()
            .map(|r| {
                r.current_boards()
                    .filter(|b| !b.is_walkover() && b.result.is_none())
                    .map(|b| (r, b))
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn validate(s: &TournamentSettings) -> Result<(), TournamentError> {
    let bad = |m: String| Err(TournamentError::InvalidSettings(m));
    let name = s.name.trim();
    if name.is_empty() || name.chars().count() > limits::MAX_NAME_CHARS {
        return bad(format!("the name must have 1 to {} characters", limits::MAX_NAME_CHARS));
    }
    if !(1..=limits::MAX_GROUPS).contains(&s.groups) {
        return bad(format!("groups must be 1 to {}, not {}", limits::MAX_GROUPS, s.groups));
    }
    if s.knockout && !s.groups.is_power_of_two() {
        return bad(format!("a knockout needs 1, 2, 4, 8 or 16 groups, not {}", s.groups));
    }
    if !(2..=limits::MAX_GROUP_SIZE).contains(&s.group_size) {
        return bad(format!(
            "a group has 2 to {} players, not {}",
            limits::MAX_GROUP_SIZE,
            s.group_size
        ));
    }
    if s.round_starts_ms.len() > limits::MAX_PLANNED_ROUNDS {
        return bad(format!("at most {} planned round starts", limits::MAX_PLANNED_ROUNDS));
    }
    if s.round_break_ms > limits::MAX_ROUND_BREAK_MS {
        return bad(format!(
            "the break between rounds is at most {} ms",
            limits::MAX_ROUND_BREAK_MS
        ));
    }
    if s.game.handicap != 0 {
        return bad("tournament games are even: no handicap".into());
    }
    if !s.game.rules.komi.is_finite() {
        return bad("komi must be a finite number".into());
    }
    Ok(())
}
