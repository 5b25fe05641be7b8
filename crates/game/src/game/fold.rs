//! Folding events into a game: `Created` makes one, every other event changes one. Events
//! are trusted to follow the rules (`decide` made them); only what would make the fold
//! itself impossible is refused as [`Corrupt`].

use std::collections::HashMap;

use weiqi_clock::{Clock, ClockError, Ms, TimeControl};
use weiqi_rules::{Color, KoRule, Move, State};

use super::{Corrupt, Created, MoveClock, Sealed, seat_index};
use crate::types::*;

fn corrupt(seq: u64, why: &str) -> Corrupt {
    Corrupt {
        seq,
        why: why.to_string(),
    }
}

impl Created {
    /// The game the first event, `Created`, makes.
    pub(super) fn from_first(e: &Event) -> Result<Created, Corrupt> {
        let bad = |why: &str| corrupt(e.seq, why);
        if e.seq != 1 {
            return Err(bad("out of sequence"));
        }
        let EventKind::Created {
            settings,
            nigiri_commitment,
            host,
        } = &e.kind
        else {
            return Err(bad("the first event must be Created"));
        };
        let state = if settings.free_handicap {
            State::new(settings.size, settings.rules).map_err(|err| bad(&err.to_string()))?
        } else {
            State::with_handicap(settings.size, settings.handicap, settings.rules)
                .map_err(|err| bad(&err.to_string()))?
        };
        Ok(Created {
            settings: settings.clone(),
            state,
            clock: Clock::new(settings.time, settings.lag),
            open: Phase::WaitingForOpponent,
            seq: e.seq,
            last_at: e.at,
            black: None,
            nigiri_commitment: nigiri_commitment.clone(),
            players: [host.clone(), None],
            nigiri_guess: None,
            checked_in: [false; 2],
            warnings: [0; 2],
            pending_undo: None,
            pending_draw: None,
            proposal: None,
            accepted: [false; 2],
            sealed: None,
            result: None,
            repetitions: HashMap::new(),
            last_announced: 0,
            move_clocks: Vec::new(),
            seat_stones: 0,
            bids: [None, None],
            step_at: e.at,
        })
    }

    /// Folds one event in. Events must come in sequence.
    pub(super) fn apply(&mut self, e: &Event) -> Result<(), Corrupt> {
        let bad = |why: &str| corrupt(e.seq, why);
        if e.seq != self.seq + 1 {
            return Err(bad("out of sequence"));
        }
        let at = e.at;
        match &e.kind {
            EventKind::Created { .. } => return Err(bad("the game already exists")),
            EventKind::Joined { player } => {
                self.players[1] = player.clone();
                if !self.settings.variant.is_standard() {
                    self.open = Phase::SeatStones;
                    self.step_at = at;
                }
            }
            EventKind::SeatStonePlaced { color, point } => {
                if self.phase() != Phase::SeatStones {
                    return Err(bad("a seat stone outside the seat-stone phase"));
                }
                // Setup, not a move: the position restarts from the board with the stone.
                let mut s = self.state.clone();
                s.play_color(*color, Move::Place(*point))
                    .map_err(|err| bad(&format!("seat stone: {err}")))?;
                self.state = State::from_board(s.board().clone(), color.opponent(), self.settings.rules);
                self.seat_stones += 1;
                self.step_at = at;
                if self.seat_stones == 4 {
                    self.open = Phase::Bidding;
                }
            }
            EventKind::BidCommitted { seat, commitment } => {
                self.bids[seat_index(*seat)] = Some(super::Bid {
                    commitment: commitment.clone(),
                    revealed: None,
                });
                if self.bids.iter().all(Option::is_some) {
                    self.step_at = at;
                }
            }
            EventKind::BidRevealed { seat, komi, nonce } => {
                let bid = self.bids[seat_index(*seat)]
                    .as_mut()
                    .ok_or_else(|| bad("a bid revealed before it was sealed"))?;
                bid.revealed = Some(((komi * 2.0).round() as i64, nonce.clone()));
            }
            EventKind::KomiAgreed { komi, .. } => {
                self.settings.rules = self.settings.rules.with_komi(*komi);
                self.state.set_komi(*komi);
            }
            EventKind::NigiriRevealed { .. } => {}
            EventKind::NigiriGuessed { guess } => {
                self.nigiri_guess = Some((*guess, at));
                self.open = Phase::Nigiri;
            }
            EventKind::ColorsAssigned { black } => {
                self.black = Some(*black);
                let s = &self.settings;
                self.open = if s.scheduled_start.is_some() {
                    Phase::Scheduled
                } else if s.free_handicap && s.handicap >= 2 {
                    Phase::PlacingHandicap
                } else {
                    Phase::Playing
                };
            }
            EventKind::CheckedIn { seat, lateness_ms } => {
                let c = self.color_of(*seat).ok_or_else(|| bad("colours unknown"))?;
                self.checked_in[seat_index(*seat)] = true;
                self.clock.deduct(c, *lateness_ms);
                let s = &self.settings;
                if self.checked_in == [true, true] && s.free_handicap && s.handicap >= 2 {
                    self.open = Phase::PlacingHandicap;
                }
            }
            EventKind::PlacementStarted => {
                if self.phase() != Phase::PlacingHandicap {
                    return Err(bad("placement started outside the handicap phase"));
                }
                self.clock.start(Color::Black, at);
            }
            EventKind::HandicapPlaced { points } => {
                let s = &self.settings;
                self.state = State::with_free_handicap(s.size, points, s.rules).map_err(|err| bad(&err.to_string()))?;
                // The placement is charged to Black's clock like a move (a clock that was
                // never started, in an older log, charges nothing).
                if let Err(ClockError::Flagged { .. }) = self.clock.press(Color::Black, at, 0) {
                    return Err(bad("handicap placed after the flag"));
                }
            }
            EventKind::PlayStarted { first } => {
                self.open = Phase::Playing;
                self.clock.start(*first, at);
            }
            EventKind::MovePlayed {
                color, point, lag_ms, ..
            } => {
                self.state
                    .play_as(*color, Move::Place(*point))
                    .map_err(|err| bad(&err.to_string()))?;
                if self.state.rules().ko == KoRule::Simple {
                    // Cycles are only possible, and only counted, under simple ko (C7).
                    *self.repetitions.entry(self.state.key()).or_insert(0) += 1;
                }
                self.after_move(*color, at, *lag_ms).map_err(bad)?;
            }
            EventKind::Passed { color, lag_ms, .. } | EventKind::MoveVoided { color, lag_ms, .. } => {
                self.state
                    .play_as(*color, Move::Pass)
                    .map_err(|err| bad(&err.to_string()))?;
                self.after_move(*color, at, *lag_ms).map_err(bad)?;
            }
            EventKind::Warning { color, count } => self.warnings[color.index()] = *count,
            EventKind::UndoRequested { by } => self.pending_undo = Some(*by),
            EventKind::UndoDeclined { .. } => self.pending_undo = None,
            EventKind::MoveTakenBack { color, .. } => {
                let key = self.state.key();
                self.state.undo().ok_or_else(|| bad("nothing to take back"))?;
                // The board is replayed from its moves, which forgets a dispute's resumption:
                // two passes before the dispute would end play again. Play goes on (C6).
                if self.phase() == Phase::Playing && self.state.is_over() {
                    self.state.resume();
                }
                if let Some(n) = self.repetitions.get_mut(&key) {
                    *n = n.saturating_sub(1);
                }
                self.move_clocks.pop();
                self.pending_undo = None;
                // Time until the answer is charged to the clock that ran; the mover then
                // moves again.
                let _ = self.clock.pause(at);
                self.clock.start(*color, at);
            }
            EventKind::DrawOffered { by } => self.pending_draw = Some(*by),
            EventKind::DrawDeclined { .. } => self.pending_draw = None,
            EventKind::ScoringStarted { proposal } => {
                // (Scoring: the proposal makes the phase.)
                self.clock.stop();
                self.proposal = Some(proposal.clone());
                self.accepted = [false; 2];
            }
            EventKind::DeadStonesProposed { stones, .. } => {
                // A new proposal is nobody's acceptance, its proposer's included: both
                // accept it explicitly (a click on a stone is not an agreement).
                self.proposal = Some(stones.clone());
                self.accepted = [false; 2];
            }
            EventKind::ScoreAccepted { by } => self.accepted[by.index()] = true,
            EventKind::ScoreDisputed { .. } => {
                self.state.resume();
                self.open = Phase::Playing;
                self.proposal = None;
                self.accepted = [false; 2];
                self.clock.start(self.state.to_move(), at);
            }
            EventKind::MoveSealed { by, commitment, sealed } => {
                let mv = sealed
                    .clone()
                    .ok_or_else(|| bad("sealed move missing (redacted log?)"))?;
                self.sealed = Some(Sealed {
                    by: *by,
                    commitment: commitment.clone(),
                    mv,
                });
                // Sealing after the flag was decided as a loss on time instead (C3).
                let _ = self.clock.pause(at);
            }
            EventKind::Resumed { .. } => {
                let sealed = self.sealed.take().ok_or_else(|| bad("nothing sealed"))?;
                self.open = Phase::Playing;
                // The sealer's move is played at once, at no cost: its time was charged.
                self.clock.start(sealed.by, at);
            }
            EventKind::Announcement { due, .. } => self.last_announced = *due,
            EventKind::TimeCredited { ms } => {
                self.clock.credit(*ms);
                self.last_announced += *ms;
            }
            EventKind::GameEnded { result } => {
                match (result.reason, result.winner) {
                    (EndReason::Time, Some(winner)) => self.clock.flag(winner.opponent()),
                    (EndReason::Time, None) => {}
                    _ => self.clock.stop(),
                }
                // (Finished: the result makes the phase.)
                self.result = Some(result.clone());
                self.pending_draw = None;
                self.pending_undo = None;
            }
        }
        self.seq = e.seq;
        self.last_at = at;
        Ok(())
    }

    /// The clocks and the standing offers after `color` moved (a stone, a pass, a void).
    fn after_move(&mut self, color: Color, at: Ms, lag_ms: Ms) -> Result<(), &'static str> {
        match self.clock.press(color, at, lag_ms) {
            Ok(()) => {}
            Err(ClockError::Flagged { .. }) => return Err("move after the flag"),
            // The mover's clock was not running: a timed game starts the opponent's now.
            Err(ClockError::NotRunning { .. }) => {
                if self.settings.time != TimeControl::None {
                    self.clock.start(color.opponent(), at);
                }
            }
        }
        let t = self.clock.reading(color, at);
        self.move_clocks.push(MoveClock {
            time_left_ms: t.main_ms,
            periods: t.periods,
        });
        self.pending_undo = None;
        if self.pending_draw == Some(color.opponent()) {
            // Playing on declines a standing draw offer.
            self.pending_draw = None;
        }
        Ok(())
    }
}
