//! The referee: `decide` checks a command against the rules, the clock and the referee
//! policy and returns the events it causes; `apply` folds one event in.

use std::collections::HashMap;

use weiqi_clock::{Clock, Ms, PlayerTime};
use weiqi_rules::{Color, Illegal, KoRule, Move, Point, State};

use crate::commit;
use crate::settings::validate_settings;
use crate::types::*;

/// An event that cannot be applied to this game (a corrupt or foreign log).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event {seq} cannot be applied: {why}")]
pub struct Corrupt {
    pub seq: u64,
    pub why: String,
}

/// Clock readings after a move, for SGF `BL`/`WL`/`OB`/`OW`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoveClock {
    pub time_left_ms: Ms,
    pub periods: u32,
}

/// One game: the fold of its events.
#[derive(Debug, Clone, PartialEq)]
pub struct Game {
    settings: Option<Settings>,
    phase: Phase,
    seq: u64,
    last_at: Ms,
    state: Option<State>,
    black: Option<Seat>,
    clock: Clock,
    nigiri_commitment: Option<String>,
    nigiri_guess: Option<(Parity, Ms)>,
    checked_in: [bool; 2],
    warnings: [u32; 2],
    pending_undo: Option<Color>,
    pending_draw: Option<Color>,
    proposal: Option<Vec<Point>>,
    accepted: [bool; 2],
    sealed: Option<(Color, String, SealedMove)>,
    result: Option<GameResult>,
    /// Occurrences of each position key after placements (cycle detection under simple ko).
    repetitions: HashMap<u128, u32>,
    last_announced: Ms,
    move_clocks: Vec<MoveClock>,
}

impl Default for Game {
    fn default() -> Game {
        Game::new()
    }
}

fn seat_index(s: Seat) -> usize {
    match s {
        Seat::Host => 0,
        Seat::Guest => 1,
    }
}

impl Game {
    /// A casual game on a `size` board, created and joined at time 0 with the host as
    /// Black: the start of benchmarks and examples that only play moves.
    pub fn casual_in_play(size: u8) -> Result<Game, Rejection> {
        let mut g = Game::new();
        let create = Command::Create {
            settings: Settings::casual(size),
            nigiri_commitment: None,
        };
        g.decide_in_place(Actor::Host, &create, 0)?;
        let join = Command::Join {
            nigiri_guess: None,
            entropy: 0,
        };
        g.decide_in_place(Actor::Guest, &join, 0)?;
        Ok(g)
    }

    /// A game that does not exist yet: only `Create` is accepted.
    pub fn new() -> Game {
        Game {
            settings: None,
            phase: Phase::WaitingForOpponent,
            seq: 0,
            last_at: 0,
            state: None,
            black: None,
            clock: Clock::new(weiqi_clock::TimeControl::None, weiqi_clock::LagComp::OFF),
            nigiri_commitment: None,
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
        }
    }

    /// Rebuilds a game from its events.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a Event>) -> Result<Game, Corrupt> {
        let mut g = Game::new();
        for e in events {
            g.apply(e)?;
        }
        Ok(g)
    }

    // ---- read access -------------------------------------------------------------------

    pub fn settings(&self) -> Option<&Settings> {
        self.settings.as_ref()
    }
    pub fn phase(&self) -> Phase {
        self.phase
    }
    /// Sequence number of the last event (0 before creation).
    pub fn seq(&self) -> u64 {
        self.seq
    }
    /// The rules state (board, history), once the game is created.
    pub fn state(&self) -> Option<&State> {
        self.state.as_ref()
    }
    /// Plies played (passes and voided moves included).
    pub fn move_number(&self) -> usize {
        self.state.as_ref().map_or(0, State::move_number)
    }
    /// The colour a seat plays, once colours are assigned.
    pub fn color_of(&self, seat: Seat) -> Option<Color> {
        let black = self.black?;
        Some(if seat == black { Color::Black } else { Color::White })
    }
    /// The seat playing a colour, once colours are assigned.
    pub fn seat_of(&self, c: Color) -> Option<Seat> {
        let black = self.black?;
        Some(if c == Color::Black { black } else { black.other() })
    }
    /// The player to move while play is on.
    pub fn to_move(&self) -> Option<Color> {
        match self.phase {
            Phase::Playing | Phase::Adjourned => self.state.as_ref().map(State::to_move),
            Phase::PlacingHandicap => Some(Color::Black),
            _ => None,
        }
    }
    pub fn clocks(&self, now: Ms) -> [PlayerTime; 2] {
        self.clock.snapshot(now)
    }
    /// When the player to move loses on time, for the server's single timer.
    pub fn deadline(&self) -> Option<Ms> {
        if matches!(self.phase, Phase::Playing | Phase::PlacingHandicap) {
            self.clock.deadline()
        } else {
            None
        }
    }
    /// The next time something happens without a command (a byo-yomi call, a timeout, a
    /// forfeit): when the server should send `Tick`.
    pub fn next_wakeup(&self) -> Option<Ms> {
        match self.phase {
            Phase::PlacingHandicap => self.clock.deadline(),
            Phase::Playing => {
                let ann = self.clock.next_announcement(self.last_announced).map(|a| a.due);
                match (ann, self.clock.deadline()) {
                    (Some(a), Some(d)) => Some(a.min(d)),
                    (a, d) => a.or(d),
                }
            }
            Phase::Nigiri => self
                .nigiri_guess
                .map(|(_, at)| at + self.settings.as_ref().map_or(0, |s| s.nigiri_timeout_ms)),
            Phase::Scheduled => self
                .settings
                .as_ref()
                .and_then(|s| s.scheduled_start.map(|t| t + s.max_lateness_ms)),
            _ => None,
        }
    }
    pub fn result(&self) -> Option<&GameResult> {
        self.result.as_ref()
    }
    pub fn warnings(&self, c: Color) -> u32 {
        self.warnings[c.index()]
    }
    pub fn pending_undo(&self) -> Option<Color> {
        self.pending_undo
    }
    pub fn pending_draw(&self) -> Option<Color> {
        self.pending_draw
    }
    /// The dead stones on the table in the scoring phase.
    pub fn proposal(&self) -> Option<&[Point]> {
        self.proposal.as_deref()
    }
    /// Which colours have accepted the current proposal (`[black, white]`).
    pub fn accepted(&self) -> [bool; 2] {
        self.accepted
    }
    /// The commitment of the sealed move while adjourned.
    pub fn sealed_commitment(&self) -> Option<&str> {
        self.sealed.as_ref().map(|s| s.1.as_str())
    }
    /// Nigiri: the host's commitment (from creation on).
    pub fn nigiri_commitment(&self) -> Option<&str> {
        self.nigiri_commitment.as_deref()
    }
    /// Nigiri: the guest's guess, once made.
    pub fn nigiri_guess(&self) -> Option<Parity> {
        self.nigiri_guess.map(|(p, _)| p)
    }
    /// Clock readings after each move, for records.
    pub fn move_clocks(&self) -> &[MoveClock] {
        &self.move_clocks
    }

    /// The game record as SGF FF[4]: rules, komi, handicap, result, time settings, and the
    /// clock after every move (`BL`/`WL`, `OB`/`OW`).
    pub fn to_sgf(&self) -> Option<String> {
        let state = self.state.as_ref()?;
        let settings = self.settings.as_ref()?;
        let mut rec = weiqi_rules::sgf::GameRecord::from_state(state);
        rec.result = self.result.as_ref().map(GameResult::sgf);
        let (main, ot) = match settings.time {
            weiqi_clock::TimeControl::None => (None, None),
            weiqi_clock::TimeControl::Absolute { main_ms } => (Some(main_ms), None),
            weiqi_clock::TimeControl::Fischer {
                main_ms, increment_ms, ..
            } => (
                Some(main_ms),
                Some(format!("Fischer {} s", increment_ms as f64 / 1000.0)),
            ),
            weiqi_clock::TimeControl::ByoYomi {
                main_ms,
                periods,
                period_ms,
            } => (
                Some(main_ms),
                Some(format!("{periods}x{} byo-yomi", period_ms as f64 / 1000.0)),
            ),
            weiqi_clock::TimeControl::Canadian {
                main_ms,
                stones,
                period_ms,
            } => (
                Some(main_ms),
                Some(format!("{stones}/{} Canadian", period_ms as f64 / 1000.0)),
            ),
            weiqi_clock::TimeControl::GamePlusMove { main_ms, per_move_ms } => (
                Some(main_ms),
                Some(format!("{} s per move", per_move_ms as f64 / 1000.0)),
            ),
        };
        rec.time_limit = main.map(|m| m as f64 / 1000.0);
        rec.overtime = ot;
        if main.is_some() {
            for (m, c) in rec.moves.iter_mut().zip(&self.move_clocks) {
                m.time_left = Some(c.time_left_ms as f64 / 1000.0);
                if matches!(settings.time, weiqi_clock::TimeControl::ByoYomi { .. }) && c.time_left_ms == 0 {
                    m.overtime_left = Some(c.periods as i64);
                }
            }
        }
        Some(rec.to_sgf())
    }

    // ---- decide -------------------------------------------------------------------------

    /// Checks `cmd` sent by `by` at time `now` and returns the events it causes, in order,
    /// numbered from `seq() + 1`. Time is settled first: if the player to move has run out
    /// of time at `now` (or a forfeit is due), the result is that ending and the command
    /// itself is not carried out.
    pub fn decide(&self, by: Actor, cmd: &Command, now: Ms) -> Result<Vec<Event>, Rejection> {
        self.decide_next(by, cmd, now).map(|(events, _)| events)
    }

    /// [`Game::decide`], also returning the game with the events applied (which `decide`
    /// builds anyway), so a caller that will apply them need not fold them again.
    pub fn decide_next(&self, by: Actor, cmd: &Command, now: Ms) -> Result<(Vec<Event>, Game), Rejection> {
        let mut next = self.clone();
        let events = Tx::run(&mut next, by, cmd, now)?;
        Ok((events, next))
    }

    /// [`Game::decide_next`] on this game itself: on success the events are applied to it,
    /// on a rejection it is unchanged. A move or pass with no clock event due (nearly every
    /// call) is decided without copying the game: every way it can be refused comes before
    /// its first event. Anything else is decided on a copy that then replaces this game.
    pub fn decide_in_place(&mut self, by: Actor, cmd: &Command, now: Ms) -> Result<Vec<Event>, Rejection> {
        if !self.refusals_come_first(cmd, now) {
            let (events, next) = self.decide_next(by, cmd, now)?;
            *self = next;
            return Ok(events);
        }
        let seq = self.seq;
        let decided = Tx::run(self, by, cmd, now);
        debug_assert!(decided.is_ok() || self.seq == seq, "refused after an event");
        decided
    }

    /// Whether deciding `cmd` at `now` can refuse it only before emitting any event: a move
    /// or pass in play with no byo-yomi call or flag due (those events come first, and the
    /// move may then still be refused).
    fn refusals_come_first(&self, cmd: &Command, now: Ms) -> bool {
        let now = now.max(self.last_at);
        matches!(cmd, Command::Play { .. } | Command::Pass { .. })
            && self.settings.is_some()
            && self.phase == Phase::Playing
            && self.clock.flagged_at(now).is_none()
            && !self
                .clock
                .next_announcement(self.last_announced)
                .is_some_and(|a| a.due <= now && self.clock.flagged_at(a.due).is_none())
    }

    // ---- apply --------------------------------------------------------------------------

    /// Folds one event in. Events must come in sequence.
    pub fn apply(&mut self, e: &Event) -> Result<(), Corrupt> {
        let bad = |why: &str| Corrupt {
            seq: e.seq,
            why: why.to_string(),
        };
        if e.seq != self.seq + 1 {
            return Err(bad("out of sequence"));
        }
        if self.settings.is_none() && !matches!(e.kind, EventKind::Created { .. }) {
            return Err(bad("the first event must be Created"));
        }
        let at = e.at;
        match &e.kind {
            EventKind::Created {
                settings,
                nigiri_commitment,
            } => {
                let state = if settings.free_handicap {
                    State::new(settings.size, settings.rules).map_err(|err| bad(&err.to_string()))?
                } else {
                    State::with_handicap(settings.size, settings.handicap, settings.rules)
                        .map_err(|err| bad(&err.to_string()))?
                };
                self.state = Some(state);
                self.clock = Clock::new(settings.time, settings.lag);
                self.settings = Some(settings.clone());
                self.nigiri_commitment = nigiri_commitment.clone();
                self.phase = Phase::WaitingForOpponent;
            }
            EventKind::Joined => {}
            EventKind::NigiriGuessed { guess } => {
                self.nigiri_guess = Some((*guess, at));
                self.phase = Phase::Nigiri;
            }
            EventKind::NigiriRevealed { .. } => {}
            EventKind::ColorsAssigned { black } => {
                self.black = Some(*black);
                let s = self.settings.as_ref().expect("created");
                self.phase = if s.scheduled_start.is_some() {
                    Phase::Scheduled
                } else if s.free_handicap && s.handicap >= 2 {
                    Phase::PlacingHandicap
                } else {
                    Phase::Playing
                };
            }
            EventKind::CheckedIn { seat, lateness_ms } => {
                self.checked_in[seat_index(*seat)] = true;
                let c = self.color_of(*seat).ok_or_else(|| bad("colours unknown"))?;
                self.clock.deduct(c.index(), *lateness_ms);
                let s = self.settings.as_ref().expect("created");
                if self.checked_in == [true, true] && s.free_handicap && s.handicap >= 2 {
                    self.phase = Phase::PlacingHandicap;
                }
            }
            EventKind::PlacementStarted => {
                if self.phase != Phase::PlacingHandicap {
                    return Err(bad("placement started outside the handicap phase"));
                }
                self.clock.start(Color::Black.index(), at);
            }
            EventKind::HandicapPlaced { points } => {
                let s = self.settings.as_ref().expect("created");
                let state = State::with_free_handicap(s.size, points, s.rules).map_err(|err| bad(&err.to_string()))?;
                self.state = Some(state);
                // The placement is charged to Black's clock like a move (a clock that was
                // never started, in an older log, charges nothing).
                self.clock
                    .press(at, 0)
                    .map_err(|_| bad("handicap placed after the flag"))?;
            }
            EventKind::PlayStarted { first } => {
                self.phase = Phase::Playing;
                self.clock.start(first.index(), at);
            }
            EventKind::MovePlayed {
                color, point, lag_ms, ..
            } => {
                let state = self.state.as_mut().ok_or_else(|| bad("no board"))?;
                state
                    .play_as(*color, Move::Place(*point))
                    .map_err(|err| bad(&err.to_string()))?;
                if state.rules().ko == KoRule::Simple {
                    // Cycles are only possible, and only counted, under simple ko (C7).
                    let key = state.key();
                    *self.repetitions.entry(key).or_insert(0) += 1;
                }
                self.after_move(*color, at, *lag_ms)?;
            }
            EventKind::Passed { color, lag_ms, .. } | EventKind::MoveVoided { color, lag_ms, .. } => {
                let state = self.state.as_mut().ok_or_else(|| bad("no board"))?;
                state.play_as(*color, Move::Pass).map_err(|err| bad(&err.to_string()))?;
                self.after_move(*color, at, *lag_ms)?;
            }
            EventKind::Warning { color, count } => self.warnings[color.index()] = *count,
            EventKind::UndoRequested { by } => self.pending_undo = Some(*by),
            EventKind::UndoDeclined { .. } => self.pending_undo = None,
            EventKind::MoveTakenBack { color, .. } => {
                let state = self.state.as_mut().ok_or_else(|| bad("no board"))?;
                let key = state.key();
                state.undo().ok_or_else(|| bad("nothing to take back"))?;
                // The board is replayed from its moves, which forgets a dispute's resumption:
                // two passes before the dispute would end play again. Play goes on (C6).
                if self.phase == Phase::Playing && state.is_over() {
                    state.resume();
                }
                if let Some(n) = self.repetitions.get_mut(&key) {
                    *n = n.saturating_sub(1);
                }
                self.move_clocks.pop();
                self.pending_undo = None;
                self.clock.pause(at);
                self.clock.start(color.index(), at);
            }
            EventKind::DrawOffered { by } => self.pending_draw = Some(*by),
            EventKind::DrawDeclined { .. } => self.pending_draw = None,
            EventKind::ScoringStarted { proposal } => {
                self.phase = Phase::Scoring;
                self.clock.stop();
                self.proposal = Some(proposal.clone());
                self.accepted = [false; 2];
            }
            EventKind::DeadStonesProposed { by, stones } => {
                self.proposal = Some(stones.clone());
                self.accepted = [false; 2];
                self.accepted[by.index()] = true;
            }
            EventKind::ScoreAccepted { by } => self.accepted[by.index()] = true,
            EventKind::ScoreDisputed { .. } => {
                let state = self.state.as_mut().ok_or_else(|| bad("no board"))?;
                state.resume();
                let next = state.to_move();
                self.phase = Phase::Playing;
                self.proposal = None;
                self.accepted = [false; 2];
                self.clock.start(next.index(), at);
            }
            EventKind::MoveSealed { by, commitment, sealed } => {
                let sealed = sealed
                    .clone()
                    .ok_or_else(|| bad("sealed move missing (redacted log?)"))?;
                self.sealed = Some((*by, commitment.clone(), sealed));
                self.clock.pause(at);
                self.phase = Phase::Adjourned;
            }
            EventKind::Resumed { .. } => {
                let (by, _, _) = self.sealed.take().ok_or_else(|| bad("nothing sealed"))?;
                self.phase = Phase::Playing;
                // The sealer's move is played at once, at no cost: its time was charged.
                self.clock.start(by.index(), at);
            }
            EventKind::Announcement { due, .. } => self.last_announced = *due,
            EventKind::TimeCredited { ms } => {
                self.clock.credit(*ms);
                self.last_announced += *ms;
            }
            EventKind::GameEnded { result } => {
                if result.reason == EndReason::Time {
                    if let Some(w) = result.winner {
                        self.clock.flag(w.opponent().index());
                    }
                } else {
                    self.clock.stop();
                }
                self.result = Some(result.clone());
                self.phase = Phase::Finished;
                self.pending_draw = None;
                self.pending_undo = None;
            }
        }
        self.seq = e.seq;
        self.last_at = at;
        Ok(())
    }

    fn after_move(&mut self, color: Color, at: Ms, lag_ms: Ms) -> Result<(), Corrupt> {
        if self.clock.running() == Some(color.index()) {
            self.clock.press(at, lag_ms).map_err(|_| Corrupt {
                seq: self.seq + 1,
                why: "move after the flag".into(),
            })?;
        } else if self
            .settings
            .as_ref()
            .is_some_and(|s| s.time != weiqi_clock::TimeControl::None)
        {
            self.clock.start(color.opponent().index(), at);
        }
        let t = self.clock.snapshot(at)[color.index()];
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

/// A decision in progress: events emitted so far, each applied to the game as it is
/// emitted (a copy, or the game itself when no refusal can follow an event).
struct Tx<'g> {
    g: &'g mut Game,
    out: Vec<Event>,
    now: Ms,
}

impl Tx<'_> {
    /// Decides `cmd` on `g`, applying each event to `g` as it is emitted; returns the
    /// events. On a refusal, `g` holds whatever was emitted before it (see
    /// [`Game::decide_in_place`] for when that is nothing).
    fn run(g: &mut Game, by: Actor, cmd: &Command, now: Ms) -> Result<Vec<Event>, Rejection> {
        let now = now.max(g.last_at);
        let mut tx = Tx {
            g,
            out: Vec::new(),
            now,
        };
        if let Command::Create {
            settings,
            nigiri_commitment,
        } = cmd
        {
            if tx.g.settings.is_some() {
                return Err(Rejection::NotPermitted("the game already exists".into()));
            }
            if by != Actor::Host {
                return Err(Rejection::NotPermitted("only the host creates a game".into()));
            }
            validate_settings(settings, nigiri_commitment.as_deref())?;
            if settings
                .scheduled_start
                .is_some_and(|t| t > now.saturating_add(limits::MAX_SCHEDULE_AHEAD_MS))
            {
                return Err(Rejection::BadSetting {
                    field: SettingField::ScheduledStart,
                    message: "a scheduled start is at most 30 days ahead".into(),
                });
            }
            tx.emit(EventKind::Created {
                settings: settings.clone(),
                nigiri_commitment: nigiri_commitment.clone(),
            });
            return Ok(tx.out);
        }
        if tx.g.settings.is_none() {
            return Err(Rejection::NotPermitted("the game has not been created".into()));
        }
        if tx.g.phase == Phase::Finished {
            return Err(Rejection::WrongPhase(Phase::Finished));
        }
        if let Command::CreditTime { ms } = cmd {
            // Settled before time: the outage must not flag anyone.
            if by != Actor::Server {
                return Err(Rejection::NotPermitted("only the server credits time".into()));
            }
            if tx.g.clock.running().is_some() && *ms > 0 {
                tx.emit(EventKind::TimeCredited { ms: *ms });
            }
            return Ok(tx.out);
        }
        if let Some(deadline) = tx.g.deadline().filter(|&d| d <= tx.now) {
            // A loss on time is stamped with the deadline itself, not with when it was
            // noticed (a timer firing late, another replica's claim, a move arriving after
            // it). The whole decision takes that time, so its events still share one.
            tx.now = deadline.max(tx.g.last_at);
        }
        tx.settle_time();
        if tx.g.phase == Phase::Finished || matches!(cmd, Command::Tick | Command::ClaimTimeout) {
            return Ok(tx.out);
        }
        // Commands are checked against the state after the time events.
        tx.command(by, cmd)?;
        Ok(tx.out)
    }

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

    fn settings(&self) -> &Settings {
        self.g.settings.as_ref().expect("created")
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

    /// Time-driven events due at `now`: the flag, forfeits, byo-yomi calls.
    fn settle_time(&mut self) {
        let now = self.now;
        match self.g.phase {
            Phase::Playing => {
                for a in self.g.clock.due_announcements(self.g.last_announced, now) {
                    if self.g.clock.flagged_at(a.due).is_none() {
                        let color = if a.player == 0 { Color::Black } else { Color::White };
                        self.emit(EventKind::Announcement {
                            color,
                            due: a.due,
                            seconds: a.seconds,
                            count: a.count,
                            periods_left: a.periods_left,
                        });
                    }
                }
                if let Some(p) = self.g.clock.flagged_at(now) {
                    let loser = if p == 0 { Color::Black } else { Color::White };
                    self.end(Some(loser.opponent()), EndReason::Time);
                }
            }
            // Black ran out of time placing the stones.
            Phase::PlacingHandicap if self.g.clock.flagged_at(now).is_some() => {
                self.end(Some(Color::White), EndReason::Time);
            }
            Phase::Nigiri => {
                let timeout = self.settings().nigiri_timeout_ms;
                if let Some((_, at)) = self.g.nigiri_guess
                    && now >= at + timeout
                {
                    // Withholding the reveal must never pay: the host forfeits.
                    self.emit(EventKind::ColorsAssigned { black: Seat::Guest });
                    self.end(Some(Color::Black), EndReason::Forfeit);
                }
            }
            Phase::Scheduled => {
                let s = self.settings();
                let limit = s.scheduled_start.unwrap_or(0) + s.max_lateness_ms;
                if now > limit {
                    let [host, guest] = self.g.checked_in;
                    match (host, guest) {
                        (false, false) => self.end(None, EndReason::DoubleForfeit),
                        (true, false) => {
                            let w = self.g.color_of(Seat::Host);
                            self.end(w, EndReason::Forfeit)
                        }
                        (false, true) => {
                            let w = self.g.color_of(Seat::Guest);
                            self.end(w, EndReason::Forfeit)
                        }
                        (true, true) => {}
                    }
                }
            }
            _ => {}
        }
    }

    fn seat(&self, by: Actor) -> Result<Seat, Rejection> {
        by.seat()
            .ok_or_else(|| Rejection::NotPermitted("only a player can do this".into()))
    }

    fn color(&self, by: Actor) -> Result<Color, Rejection> {
        let seat = self.seat(by)?;
        self.g.color_of(seat).ok_or(Rejection::WrongPhase(self.g.phase))
    }

    fn phase_is(&self, p: &[Phase]) -> Result<(), Rejection> {
        if p.contains(&self.g.phase) {
            Ok(())
        } else {
            Err(Rejection::WrongPhase(self.g.phase))
        }
    }

    fn state(&self) -> &State {
        self.g.state.as_ref().expect("created")
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

    /// Would pressing the clock now flag the mover? Then the game ends on time instead.
    fn flags_on_press(&mut self, c: Color, lag_ms: Ms) -> bool {
        let mut clock = self.g.clock.clone();
        if clock.running() == Some(c.index()) && clock.press(self.now, lag_ms).is_err() {
            self.end(Some(c.opponent()), EndReason::Time);
            return true;
        }
        false
    }

    fn start_play_if_ready(&mut self) {
        let s = self.settings();
        let scheduled = s.scheduled_start.is_some();
        let free = s.free_handicap && s.handicap >= 2;
        if scheduled && self.g.checked_in != [true, true] {
            return;
        }
        if free {
            // Black places the stones first, on Black's clock.
            self.emit(EventKind::PlacementStarted);
            return;
        }
        let first = self.state().to_move();
        self.emit(EventKind::PlayStarted { first });
    }

    fn after_pass(&mut self) {
        if self.state().is_over() {
            let proposal = propose_dead(self.state());
            self.emit(EventKind::ScoringStarted { proposal });
        }
    }

    fn command(&mut self, by: Actor, cmd: &Command) -> Result<(), Rejection> {
        match cmd {
            Command::Create { .. } | Command::Tick | Command::ClaimTimeout | Command::CreditTime { .. } => {
                unreachable!("handled by decide")
            }
            Command::Join { nigiri_guess, entropy } => {
                self.phase_is(&[Phase::WaitingForOpponent])?;
                if by != Actor::Guest {
                    return Err(Rejection::NotPermitted("only the guest joins".into()));
                }
                let colors = self.settings().colors;
                if colors == ColorChoice::Nigiri && nigiri_guess.is_none() {
                    return Err(Rejection::InvalidArgument("nigiri needs a guess (odd or even)".into()));
                }
                self.emit(EventKind::Joined);
                let black = match colors {
                    ColorChoice::HostBlack => Seat::Host,
                    ColorChoice::HostWhite => Seat::Guest,
                    ColorChoice::Random => {
                        if entropy & 1 == 0 {
                            Seat::Host
                        } else {
                            Seat::Guest
                        }
                    }
                    ColorChoice::Nigiri => {
                        self.emit(EventKind::NigiriGuessed {
                            guess: nigiri_guess.expect("checked"),
                        });
                        return Ok(());
                    }
                };
                self.emit(EventKind::ColorsAssigned { black });
                self.start_play_if_ready();
            }
            Command::RevealNigiri { stones, nonce } => {
                self.phase_is(&[Phase::Nigiri])?;
                if by != Actor::Host {
                    return Err(Rejection::NotPermitted("only the host reveals the nigiri".into()));
                }
                if self.g.nigiri_commitment.as_deref() != Some(&commit::nigiri_commitment(*stones, nonce)) {
                    return Err(Rejection::CommitmentMismatch);
                }
                let (guess, _) = self.g.nigiri_guess.expect("guessed");
                let odd = stones % 2 == 1;
                let guess_correct = odd == (guess == Parity::Odd);
                self.emit(EventKind::NigiriRevealed {
                    stones: *stones,
                    nonce: nonce.clone(),
                    guess_correct,
                });
                let black = if guess_correct { Seat::Guest } else { Seat::Host };
                self.emit(EventKind::ColorsAssigned { black });
                self.start_play_if_ready();
            }
            Command::CheckIn => {
                self.phase_is(&[Phase::Scheduled])?;
                let seat = self.seat(by)?;
                if self.g.checked_in[seat_index(seat)] {
                    return Err(Rejection::NotPermitted("already checked in".into()));
                }
                let start = self.settings().scheduled_start.unwrap_or(0);
                let lateness_ms = self.now.saturating_sub(start);
                self.emit(EventKind::CheckedIn { seat, lateness_ms });
                self.start_play_if_ready();
            }
            Command::PlaceHandicap { points } => {
                self.phase_is(&[Phase::PlacingHandicap])?;
                if self.color(by)? != Color::Black {
                    return Err(Rejection::NotYourTurn);
                }
                // Placed within the lag allowance but after the clock's own time: lost
                // on time, as a move would be.
                if self.flags_on_press(Color::Black, 0) {
                    return Ok(());
                }
                let s = self.settings();
                if points.len() != s.handicap as usize {
                    return Err(Rejection::InvalidArgument(format!("{} stones expected", s.handicap)));
                }
                State::with_free_handicap(s.size, points, s.rules)
                    .map_err(|e| Rejection::InvalidArgument(e.to_string()))?;
                self.emit(EventKind::HandicapPlaced { points: points.clone() });
                self.emit(EventKind::PlayStarted { first: Color::White });
            }
            Command::Play { point, lag_ms } => {
                let c = self.my_turn(by)?;
                let lag_ms = self.settings().lag.refundable(*lag_ms);
                if self.flags_on_press(c, lag_ms) {
                    return Ok(());
                }
                self.place(c, Move::Place(*point), lag_ms, false)?;
            }
            Command::Pass { lag_ms } => {
                let c = self.my_turn(by)?;
                let lag_ms = self.settings().lag.refundable(*lag_ms);
                if self.flags_on_press(c, lag_ms) {
                    return Ok(());
                }
                self.emit(EventKind::Passed {
                    color: c,
                    declared_end: false,
                    lag_ms,
                });
                self.after_pass();
            }
            Command::DeclareEnd => {
                let c = self.my_turn(by)?;
                if self.flags_on_press(c, 0) {
                    return Ok(());
                }
                self.emit(EventKind::Passed {
                    color: c,
                    declared_end: true,
                    lag_ms: 0,
                });
                self.after_pass();
            }
            Command::Cancel => {
                self.phase_is(&[Phase::WaitingForOpponent])?;
                if !matches!(by, Actor::Host | Actor::Server) {
                    return Err(Rejection::NotPermitted("only the host cancels an open game".into()));
                }
                self.end(None, EndReason::Cancelled);
            }
            Command::Resign => {
                self.phase_is(&[
                    Phase::Nigiri,
                    Phase::Scheduled,
                    Phase::PlacingHandicap,
                    Phase::Playing,
                    Phase::Adjourned,
                    Phase::Scoring,
                ])?;
                let seat = self.seat(by)?;
                match self.g.color_of(seat) {
                    Some(c) => self.end(Some(c.opponent()), EndReason::Resignation),
                    None => {
                        // Before colours are known (nigiri pending): the other seat takes Black.
                        self.emit(EventKind::ColorsAssigned { black: seat.other() });
                        self.end(Some(Color::Black), EndReason::Resignation);
                    }
                }
            }
            Command::RequestUndo => {
                self.phase_is(&[Phase::Playing])?;
                let c = self.color(by)?;
                let s = self.settings();
                if s.mode == RefereeMode::Tournament {
                    return Err(Rejection::UndoNotAllowed(
                        "undo is not allowed in tournament mode (C8)".into(),
                    ));
                }
                if !s.allow_undo {
                    return Err(Rejection::UndoNotAllowed("undo is disabled for this game".into()));
                }
                if self.g.pending_undo.is_some() {
                    return Err(Rejection::NotPermitted("an undo request is already pending".into()));
                }
                match self.state().moves().last() {
                    Some((mover, _)) if *mover == c => {}
                    _ => {
                        return Err(Rejection::NotPermitted(
                            "you can only take back your own last move".into(),
                        ));
                    }
                }
                self.emit(EventKind::UndoRequested { by: c });
            }
            Command::AnswerUndo { accept } => {
                self.phase_is(&[Phase::Playing])?;
                let c = self.color(by)?;
                match self.g.pending_undo {
                    Some(req) if req != c => {
                        if *accept {
                            let (color, mv) = *self.state().moves().last().expect("requested");
                            self.emit(EventKind::MoveTakenBack { color, mv });
                        } else {
                            self.emit(EventKind::UndoDeclined { by: c });
                        }
                    }
                    _ => return Err(Rejection::NothingPending("no undo request from your opponent".into())),
                }
            }
            Command::OfferDraw => {
                self.phase_is(&[Phase::Playing, Phase::Scoring])?;
                let c = self.color(by)?;
                if self.g.pending_draw.is_some() {
                    return Err(Rejection::NotPermitted("a draw offer is already pending".into()));
                }
                self.emit(EventKind::DrawOffered { by: c });
            }
            Command::AnswerDraw { accept } => {
                self.phase_is(&[Phase::Playing, Phase::Scoring])?;
                let c = self.color(by)?;
                match self.g.pending_draw {
                    Some(offerer) if offerer != c => {
                        if *accept {
                            self.end(None, EndReason::DrawByAgreement);
                        } else {
                            self.emit(EventKind::DrawDeclined { by: c });
                        }
                    }
                    _ => return Err(Rejection::NothingPending("no draw offer from your opponent".into())),
                }
            }
            Command::Seal { mv, nonce } => {
                let c = self.my_turn(by)?;
                if let Move::Place(p) = mv
                    && !self.state().board().contains(*p)
                {
                    return Err(Rejection::InvalidArgument(format!("{p} is off the board")));
                }
                if nonce.len() < 8 {
                    return Err(Rejection::InvalidArgument(
                        "the nonce must have at least 8 characters".into(),
                    ));
                }
                // Time spent before sealing is charged (C3): if it runs out, that decides.
                if self.g.clock.clone().pause(self.now) {
                    self.end(Some(c.opponent()), EndReason::Time);
                    return Ok(());
                }
                let commitment = commit::seal_commitment(*mv, nonce);
                self.emit(EventKind::MoveSealed {
                    by: c,
                    commitment,
                    sealed: Some(SealedMove {
                        mv: *mv,
                        nonce: nonce.clone(),
                    }),
                });
            }
            Command::Resume => {
                self.phase_is(&[Phase::Adjourned])?;
                let (sealer, _, sealed) = self.g.sealed.clone().expect("adjourned");
                self.emit(EventKind::Resumed {
                    revealed: sealed.clone(),
                });
                match sealed.mv {
                    Move::Pass => {
                        self.emit(EventKind::Passed {
                            color: sealer,
                            declared_end: false,
                            lag_ms: 0,
                        });
                        self.after_pass();
                    }
                    // An illegal sealed move counts as a pass (C3), in any mode.
                    m => self.place(sealer, m, 0, true)?,
                }
            }
            Command::ProposeDead { stones } => {
                self.phase_is(&[Phase::Scoring])?;
                let c = self.color(by)?;
                let board = self.state().board();
                for p in stones {
                    if board.get(*p).is_none() {
                        return Err(Rejection::InvalidArgument(format!("{p} holds no stone")));
                    }
                }
                let mut stones = stones.clone();
                stones.sort_by_key(|p| (p.y, p.x));
                stones.dedup();
                self.emit(EventKind::DeadStonesProposed { by: c, stones });
            }
            Command::AcceptScore => {
                self.phase_is(&[Phase::Scoring])?;
                let c = self.color(by)?;
                if self.g.accepted[c.index()] {
                    return Err(Rejection::NotPermitted(
                        "you have already accepted this proposal".into(),
                    ));
                }
                self.emit(EventKind::ScoreAccepted { by: c });
                if self.g.accepted == [true, true] {
                    let dead = self.g.proposal.clone().unwrap_or_default();
                    let score = self.state().score(&dead).expect("proposal validated");
                    let winner = score.outcome.winner();
                    self.emit(EventKind::GameEnded {
                        result: GameResult {
                            winner,
                            reason: EndReason::Score,
                            score: Some(score),
                        },
                    });
                }
            }
            Command::DisputeScore => {
                self.phase_is(&[Phase::Scoring])?;
                let c = self.color(by)?;
                self.emit(EventKind::ScoreDisputed { by: c });
            }
        }
        Ok(())
    }

    /// Plays a placement, or handles an illegal one per the referee mode (C5) — a sealed
    /// move (C3) that is illegal always counts as a pass.
    fn place(&mut self, c: Color, mv: Move, lag_ms: Ms, sealed: bool) -> Result<(), Rejection> {
        let Move::Place(point) = mv else {
            unreachable!("placements only")
        };
        // Checked without copying the position (the event's application plays it).
        let checked = if self.state().is_over() {
            Err(Illegal::GameOver)
        } else if self.state().to_move() != c {
            Err(Illegal::NotYourTurn)
        } else {
            self.state().check_captures(mv)
        };
        match checked {
            Ok(captures) => {
                self.emit(EventKind::MovePlayed {
                    color: c,
                    point,
                    captures,
                    lag_ms,
                });
                let s = self.state();
                if s.rules().ko == KoRule::Simple && self.g.repetitions.get(&s.key()).copied().unwrap_or(0) >= 3 {
                    // The same position for the third time: a cycle (triple ko...), C7.
                    self.end(None, EndReason::NoResult);
                }
                Ok(())
            }
            Err(Illegal::OffBoard) => Err(Rejection::InvalidArgument(format!("{point} is off the board"))),
            Err(reason) if sealed => {
                self.emit(EventKind::MoveVoided {
                    color: c,
                    mv,
                    reason,
                    lag_ms,
                });
                self.after_pass();
                Ok(())
            }
            Err(reason @ (Illegal::Suicide | Illegal::Ko | Illegal::Superko))
                if self.settings().mode == RefereeMode::Tournament =>
            {
                self.emit(EventKind::MoveVoided {
                    color: c,
                    mv,
                    reason,
                    lag_ms,
                });
                let count = self.g.warnings[c.index()] + 1;
                self.emit(EventKind::Warning { color: c, count });
                if count >= 2 {
                    self.end(Some(c.opponent()), EndReason::Penalty);
                } else {
                    self.after_pass();
                }
                Ok(())
            }
            Err(reason) => Err(Rejection::Illegal(reason)),
        }
    }
}

/// The referee's proposal of dead stones after two passes: stones inside the opponent's
/// pass-alive territory (Benson, certain), plus chains the opponent owns in at least 90%
/// of 64 random continuations (never a pass-alive chain). Deterministic. Players may
/// change it; nothing is scored without both agreeing.
pub fn propose_dead(state: &State) -> Vec<Point> {
    weiqi_rules::estimate_dead(state, 64, 0.9)
}
