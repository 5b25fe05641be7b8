//! Deciding a command: the checks and events of each concern live in their own module;
//! this one runs a decision (creation, then time, then the command) and holds what they
//! share.

mod adjournment;
mod agreements;
mod play;
mod scoring;
mod seating;
mod timing;
mod variant;

use weiqi_clock::{Ms, PlayerTime};
use weiqi_rules::{Color, State};

use super::{Created, Game, Stage};
use crate::types::*;

pub use scoring::propose_dead;

/// Decides `cmd` on `game`, applying each event to `game` as it is emitted; returns the
/// events. On a refusal, `game` holds whatever was emitted before it: for a move or pass
/// in play with no flag due, byo-yomi calls at most, which [`Game::decide_in_place`] takes
/// back; anything else is decided on a copy.
pub(super) fn run(game: &mut Game, by: Actor, cmd: &Command, now: Ms) -> Result<Vec<Event>, Rejection> {
    match &mut game.stage {
        Stage::Created(g) => Tx::run(g, by, cmd, now),
        Stage::NotCreated => {
            let Command::Create {
                host,
                settings,
                nigiri_commitment,
            } = cmd
            else {
                return Err(Rejection::NotPermitted("the game has not been created".into()));
            };
            let kind = seating::create(by, settings, nigiri_commitment.as_deref(), host.as_ref(), now)?;
            let mut e = Event {
                seq: 1,
                at: now,
                clocks: [PlayerTime::default(); 2],
                kind,
            };
            let created = Created::from_first(&e).expect("decided events apply");
            e.clocks = created.clock.snapshot(now);
            game.stage = Stage::Created(Box::new(created));
            Ok(vec![e])
        }
    }
}

/// A decision in progress on a created game: events emitted so far, each applied to the
/// game as it is emitted (a copy, or the game itself when only byo-yomi calls can come
/// before a refusal).
struct Tx<'g> {
    g: &'g mut Created,
    out: Vec<Event>,
    /// The decision's time: every event it emits is stamped with it.
    now: Ms,
}

impl Tx<'_> {
    fn run(g: &mut Created, by: Actor, cmd: &Command, now: Ms) -> Result<Vec<Event>, Rejection> {
        let now = now.max(g.last_at);
        let mut tx = Tx {
            g,
            out: Vec::new(),
            now,
        };
        if let Command::Create { .. } = cmd {
            return Err(Rejection::NotPermitted("the game already exists".into()));
        }
        if tx.g.phase() == Phase::Finished {
            return Err(Rejection::WrongPhase(Phase::Finished));
        }
        if let Command::CreditTime { ms } = cmd {
            // Settled before time: the outage must not flag anyone.
            tx.credit_time(by, *ms)?;
            return Ok(tx.out);
        }
        tx.settle_time();
        if tx.g.phase() == Phase::Finished || matches!(cmd, Command::Tick | Command::ClaimTimeout) {
            return Ok(tx.out);
        }
        // Commands are checked against the state after the time events.
        tx.command(by, cmd)?;
        Ok(tx.out)
    }

    /// Hands a command to its concern.
    fn command(&mut self, by: Actor, cmd: &Command) -> Result<(), Rejection> {
        match cmd {
            Command::Create { .. } | Command::Tick | Command::ClaimTimeout | Command::CreditTime { .. } => {
                unreachable!("handled by run")
            }
            Command::Join {
                player,
                nigiri_guess,
                entropy,
            } => self.join(by, player.as_ref(), *nigiri_guess, *entropy),
            Command::RevealNigiri { stones, nonce } => self.reveal_nigiri(by, *stones, nonce),
            Command::CheckIn => self.check_in(by),
            Command::PlaceSeatStone { point } => self.place_seat_stone(by, *point),
            Command::CommitBid { commitment } => self.commit_bid(by, commitment),
            Command::RevealBid { komi, nonce } => self.reveal_bid(by, *komi, nonce),
            Command::PlaceHandicap { points } => self.place_handicap(by, points),
            Command::Play { point, lag_ms } => self.play(by, *point, *lag_ms),
            Command::Pass { lag_ms } => self.pass(by, *lag_ms),
            Command::Cancel => self.cancel(by),
            Command::Resign => self.resign(by),
            Command::RequestUndo => self.request_undo(by),
            Command::AnswerUndo { accept } => self.answer_undo(by, *accept),
            Command::OfferDraw => self.offer_draw(by),
            Command::AnswerDraw { accept } => self.answer_draw(by, *accept),
            Command::Seal { mv, nonce } => self.seal(by, *mv, nonce),
            Command::Resume => self.resume(),
            Command::DeclareEnd => self.declare_end(by),
            Command::ProposeDead { stones } => self.propose_dead(by, stones),
            Command::AcceptScore => self.accept_score(by),
            Command::DisputeScore => self.dispute_score(by),
            Command::Forfeit { seat } => self.forfeit(by, *seat),
            Command::ClaimAbandoned { draw } => self.claim_abandoned(by, *draw),
        }
    }

    /// Emits an event: it is applied at once, so what follows sees its effect.
    fn emit(&mut self, kind: EventKind) {
        let mut e = Event {
            seq: self.g.seq + 1,
            at: self.now,
            clocks: [PlayerTime::default(); 2],
            kind,
        };
        self.g.apply(&e).expect("decided events apply");
        e.clocks = self.g.clock.snapshot(self.now);
        self.out.push(e);
    }

    fn end(&mut self, winner: Option<Color>, reason: EndReason) {
        self.emit(EventKind::GameEnded {
            result: GameResult {
                winner,
                reason,
                score: None,
            },
        });
    }

    fn settings(&self) -> &Settings {
        &self.g.settings
    }

    fn state(&self) -> &State {
        &self.g.state
    }

    fn seat(&self, by: Actor) -> Result<Seat, Rejection> {
        by.seat()
            .ok_or_else(|| Rejection::NotPermitted("only a player can do this".into()))
    }

    fn color(&self, by: Actor) -> Result<Color, Rejection> {
        let seat = self.seat(by)?;
        self.g.color_of(seat).ok_or(Rejection::WrongPhase(self.g.phase()))
    }

    fn phase_is(&self, p: &[Phase]) -> Result<(), Rejection> {
        if p.contains(&self.g.phase()) {
            Ok(())
        } else {
            Err(Rejection::WrongPhase(self.g.phase()))
        }
    }

    /// The player to move may act; `Err` otherwise.
    fn my_turn(&self, by: Actor) -> Result<Color, Rejection> {
        self.phase_is(&[Phase::Playing])?;
        let c = self.color(by)?;
        if self.state().to_move() != c {
            return Err(Rejection::NotYourTurn);
        }
        Ok(c)
    }
}
