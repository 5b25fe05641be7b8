//! The referee as a type: a [`Game`] is the fold of its events. `decide` (in [`decide`])
//! checks a command and returns the events it causes; `apply` (in [`fold`]) folds one in.

mod decide;
mod fold;
mod park;
mod sgf;

use std::collections::HashMap;

use weiqi_clock::{Clock, Ms, PlayerTime};
use weiqi_rules::{Color, Point, State};

use crate::types::*;

pub use decide::propose_dead;
pub use park::ParkedGame;

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
///
/// Valid by construction: a game is either not created yet (no event, nothing to hold) or
/// created, and only a created game holds settings, a board and a clock, all together in
/// one `Created`. Every rule after creation works on a `Created`, so none of them can
/// meet a game without settings or a board, and none needs to check. Inside a created
/// game, finished, adjourned and scoring are made by their data (the result, the sealed
/// move, the proposal), so none of them can be had without it; the other phases stay a
/// plain [`Phase`] beside data that spans several of them (the revealed bids, the
/// check-ins), and [`Game::check_invariants`] keeps the two in agreement.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Game {
    stage: Stage,
}

#[derive(Debug, Clone, PartialEq, Default)]
enum Stage {
    /// No event yet: only `Create` is decided, only `Created` applies.
    #[default]
    NotCreated,
    /// Boxed: a game is moved and copied whole, and most of it is the created part.
    Created(Box<Created>),
}

/// What folding byo-yomi calls changes in a game, kept to take them back when the move
/// they came before is refused ([`Game::decide_in_place`]).
#[derive(Debug, Clone, Copy)]
struct CallsMark {
    seq: u64,
    last_at: Ms,
    last_announced: Ms,
}

/// A created game: its settings, board and clocks, and the referee's bookkeeping.
///
/// Generic over the position only so that a parked game ([`ParkedGame`]) holds the same
/// fields with the position packed; every rule works on the live `State`.
#[derive(Debug, Clone, PartialEq)]
struct Created<P = State> {
    settings: Settings,
    state: P,
    clock: Clock,
    /// The phase a game is in when it is not scoring, adjourned or finished. Those three
    /// are what the game holds (a proposal, a sealed move, a result: see
    /// [`Created::phase`]), so that none of them can be had without its data.
    open: Phase,
    /// Sequence number of the last event.
    seq: u64,
    /// Time of the last event: decisions never go back before it.
    last_at: Ms,
    /// The seat playing Black, once colours are assigned.
    black: Option<Seat>,
    /// The signed-in players in the host's and the guest's seats (none: anonymous).
    players: [Option<PlayerRef>; 2],
    nigiri_commitment: Option<String>,
    /// The guest's guess and when it was made (the host's reveal is due by a timeout).
    nigiri_guess: Option<(Parity, Ms)>,
    /// By seat: `[host, guest]` (C4).
    checked_in: [bool; 2],
    /// By colour (C5).
    warnings: [u32; 2],
    pending_undo: Option<Color>,
    pending_draw: Option<Color>,
    proposal: Option<Vec<Point>>,
    /// By colour: who accepted the current proposal.
    accepted: [bool; 2],
    sealed: Option<Sealed>,
    result: Option<GameResult>,
    /// Occurrences of each position key after placements (cycle detection under simple ko).
    repetitions: HashMap<u128, u32>,
    /// Due time of the last byo-yomi call made (C2): the next is after it.
    last_announced: Ms,
    move_clocks: Vec<MoveClock>,
    /// The variant: seat stones placed so far (4 in all).
    seat_stones: u32,
    /// The variant: each seat's sealed bid, by seat `[host, guest]`.
    bids: [Option<Bid>; 2],
    /// The variant: when the step now due began (a stone, the bids, their reveal); it is
    /// due `nigiri_timeout_ms` later.
    step_at: Ms,
}

/// A sealed bid (the variant), and once revealed its half points and nonce.
#[derive(Debug, Clone, PartialEq)]
struct Bid {
    commitment: String,
    revealed: Option<(i64, String)>,
}

/// The sealed move of an adjourned game (C3), hidden until resumption.
#[derive(Debug, Clone, PartialEq)]
struct Sealed {
    by: Color,
    commitment: String,
    mv: SealedMove,
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
            host: None,
            settings: Settings::casual(size),
            nigiri_commitment: None,
        };
        g.decide_in_place(Actor::Host, &create, 0)?;
        let join = Command::Join {
            player: None,
            nigiri_guess: None,
            entropy: 0,
        };
        g.decide_in_place(Actor::Guest, &join, 0)?;
        Ok(g)
    }

    /// A game that does not exist yet: only `Create` is accepted.
    pub fn new() -> Game {
        Game::default()
    }

    /// Rebuilds a game from its events.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a Event>) -> Result<Game, Corrupt> {
        let mut g = Game::new();
        for e in events {
            g.apply(e)?;
        }
        Ok(g)
    }

    fn created(&self) -> Option<&Created> {
        match &self.stage {
            Stage::NotCreated => None,
            Stage::Created(g) => Some(g),
        }
    }

    // ---- read access -------------------------------------------------------------------

    /// Time of the last event (none before creation).
    pub fn last_event_at(&self) -> Option<Ms> {
        Some(self.created()?.last_at)
    }

    /// The signed-in player in `seat`, if any.
    pub fn player(&self, seat: Seat) -> Option<&PlayerRef> {
        self.created()?.players[seat as usize].as_ref()
    }

    pub fn settings(&self) -> Option<&Settings> {
        self.created().map(|g| &g.settings)
    }
    /// The phase (`WaitingForOpponent` before creation too: nobody is seated).
    pub fn phase(&self) -> Phase {
        self.created().map_or(Phase::WaitingForOpponent, |g| g.phase())
    }
    /// Sequence number of the last event (0 before creation).
    pub fn seq(&self) -> u64 {
        self.created().map_or(0, |g| g.seq)
    }
    /// The rules state (board, history), once the game is created.
    pub fn state(&self) -> Option<&State> {
        self.created().map(|g| &g.state)
    }
    /// Plies played (passes and voided moves included).
    pub fn move_number(&self) -> usize {
        self.created().map_or(0, |g| g.state.move_number())
    }
    /// The colour a seat plays, once colours are assigned.
    pub fn color_of(&self, seat: Seat) -> Option<Color> {
        self.created()?.color_of(seat)
    }
    /// The seat playing a colour, once colours are assigned.
    pub fn seat_of(&self, c: Color) -> Option<Seat> {
        self.created()?.seat_of(c)
    }
    /// The player to move while play is on.
    pub fn to_move(&self) -> Option<Color> {
        self.created()?.to_move()
    }
    /// Both clocks, `[black, white]`, as they read at `now` (zeros before creation).
    pub fn clocks(&self, now: Ms) -> [PlayerTime; 2] {
        self.created()
            .map_or([PlayerTime::default(); 2], |g| g.clock.snapshot(now))
    }
    /// When the player to move loses on time, for the server's single timer.
    pub fn deadline(&self) -> Option<Ms> {
        self.created()?.deadline()
    }
    /// The next time something happens without a command (a byo-yomi call, a timeout, a
    /// forfeit): when the server should send `Tick`.
    pub fn next_wakeup(&self) -> Option<Ms> {
        self.created()?.next_wakeup()
    }
    /// When the step now due is forfeited if still owed (the nigiri reveal, a variant
    /// step, a scheduled game's check-in): the first millisecond of the forfeit, for a
    /// client's countdown. None in play, where the clocks say it.
    pub fn forfeit_at(&self) -> Option<Ms> {
        self.created()?.forfeit_at()
    }
    pub fn result(&self) -> Option<&GameResult> {
        self.created()?.result.as_ref()
    }
    pub fn warnings(&self, c: Color) -> u32 {
        self.created().map_or(0, |g| g.warnings[c.index()])
    }
    pub fn pending_undo(&self) -> Option<Color> {
        self.created()?.pending_undo
    }
    pub fn pending_draw(&self) -> Option<Color> {
        self.created()?.pending_draw
    }
    /// The dead stones on the table in the scoring phase.
    pub fn proposal(&self) -> Option<&[Point]> {
        self.created()?.proposal.as_deref()
    }
    /// Which colours have accepted the current proposal (`[black, white]`).
    pub fn accepted(&self) -> [bool; 2] {
        self.created().map_or([false; 2], |g| g.accepted)
    }
    /// The commitment of the sealed move while adjourned.
    pub fn sealed_commitment(&self) -> Option<&str> {
        Some(self.created()?.sealed.as_ref()?.commitment.as_str())
    }
    /// Nigiri: the host's commitment (from creation on).
    pub fn nigiri_commitment(&self) -> Option<&str> {
        self.created()?.nigiri_commitment.as_deref()
    }
    /// Nigiri: the guest's guess, once made.
    pub fn nigiri_guess(&self) -> Option<Parity> {
        self.created()?.nigiri_guess.map(|(p, _)| p)
    }
    /// The variant's bids by seat `[host, guest]`: whether sealed, and the komi once
    /// revealed.
    pub fn bids(&self) -> [(bool, Option<f64>); 2] {
        let Some(g) = self.created() else {
            return [(false, None); 2];
        };
        g.bids.each_ref().map(|b| match b {
            None => (false, None),
            Some(b) => (true, b.revealed.as_ref().map(|(h, _)| *h as f64 / 2.0)),
        })
    }
    /// Clock readings after each move, for records.
    pub fn move_clocks(&self) -> &[MoveClock] {
        self.created().map_or(&[], |g| &g.move_clocks)
    }
    /// The game record as SGF (FF 4), once the game is created: rules, komi, handicap,
    /// result, time settings, and the clock after every move (`BL`/`WL`, `OB`/`OW`).
    pub fn to_sgf(&self) -> Option<String> {
        Some(self.created()?.to_sgf())
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
        let events = decide::run(&mut next, by, cmd, now)?;
        Ok((events, next))
    }

    /// [`Game::decide_next`] on this game itself: on success the events are applied to it,
    /// on a rejection it is unchanged. A move or pass in play with no flag due (nearly every
    /// call) is decided without copying the game: every way it can be refused comes before
    /// its first event, or after byo-yomi calls only, which are then taken back. Anything
    /// else is decided on a copy that then replaces this game.
    pub fn decide_in_place(&mut self, by: Actor, cmd: &Command, now: Ms) -> Result<Vec<Event>, Rejection> {
        let Some(calls) = self.created().and_then(|g| g.calls_mark(cmd, now)) else {
            let (events, next) = self.decide_next(by, cmd, now)?;
            *self = next;
            return Ok(events);
        };
        // (Debug builds check the take-back against the game as it was.)
        #[cfg(debug_assertions)]
        let before = self.clone();
        let decided = decide::run(self, by, cmd, now);
        if decided.is_err()
            && let Stage::Created(g) = &mut self.stage
        {
            g.take_back_calls(calls);
            #[cfg(debug_assertions)]
            debug_assert!(*self == before, "a refusal changed more than the byo-yomi calls");
        }
        decided
    }

    // ---- apply --------------------------------------------------------------------------

    /// Folds one event in. Events must come in sequence, `Created` first. (In debug
    /// builds every fold is followed by [`Game::check_invariants`]; a log that breaks them
    /// is corrupt.)
    pub fn apply(&mut self, e: &Event) -> Result<(), Corrupt> {
        match &mut self.stage {
            Stage::NotCreated => self.stage = Stage::Created(Box::new(Created::from_first(e)?)),
            Stage::Created(g) => g.apply(e)?,
        }
        // (A log that breaks them is corrupt: refused as any other, not a panic.)
        #[cfg(debug_assertions)]
        if let Err(why) = self.check_invariants() {
            return Err(Corrupt {
                seq: e.seq,
                why: format!("the game's parts disagree: {why}"),
            });
        }
        Ok(())
    }

    /// Whether a created game's parts agree: the open phase, the dead-stone proposal and
    /// its acceptances, the pending offers, the nigiri guess, the variant's seat stones and
    /// bids, and the colours. (Finished, adjourned and scoring are made by the result, the
    /// sealed move and the proposal, so those cannot disagree.) The data of several phases
    /// sits beside the phase (see [`Game`]); this keeps them from contradicting each other,
    /// as `State::check_consistency` does for the board. Run after every fold in debug
    /// builds and by the property tests; cheap, but kept off release builds' moves.
    pub fn check_invariants(&self) -> Result<(), String> {
        match &self.stage {
            Stage::NotCreated => Ok(()),
            Stage::Created(g) => g.check_invariants(),
        }
    }
}

impl<P> Created<P> {
    /// The phase: finished once there is a result, adjourned while a sealed move waits,
    /// scoring while dead stones are proposed, and otherwise the open phase the folds set.
    fn phase(&self) -> Phase {
        if self.result.is_some() {
            Phase::Finished
        } else if self.sealed.is_some() {
            Phase::Adjourned
        } else if self.proposal.is_some() {
            Phase::Scoring
        } else {
            self.open
        }
    }

    fn check_invariants(&self) -> Result<(), String> {
        use Phase::*;
        let p = self.phase();
        let rules: [(bool, &str); 9] = [
            (self.seq >= 1, "a created game has its Created event"),
            (
                !matches!(self.open, Scoring | Adjourned | Finished),
                "the open phase is none of those the game's data makes",
            ),
            (
                self.proposal.is_none() || matches!(p, Scoring | Finished),
                "a dead-stone proposal only while scoring (or as it ended)",
            ),
            (
                !self.accepted.contains(&true) || self.proposal.is_some(),
                "an acceptance only of a proposal",
            ),
            (
                (self.pending_undo.is_none() && self.pending_draw.is_none()) || p != Finished,
                "no offer stands in a finished game",
            ),
            (
                p != Nigiri || self.nigiri_guess.is_some(),
                "the nigiri phase has the guess",
            ),
            (
                self.seat_stones <= 4
                    && (p != SeatStones || self.seat_stones < 4)
                    && (p != Bidding || self.seat_stones == 4),
                "four seat stones, placed before the bids",
            ),
            (
                self.bids.iter().all(Option::is_none) || !self.settings.variant.is_standard(),
                "bids only in the variant",
            ),
            (
                self.black.is_some() || !matches!(p, Scheduled | PlacingHandicap | Playing | Adjourned | Scoring),
                "colours are known once play is near",
            ),
        ];
        match rules.iter().find(|(holds, _)| !holds) {
            None => Ok(()),
            Some((_, rule)) => Err(format!("{rule} (phase {p:?}, seq {})", self.seq)),
        }
    }
}

impl Created {
    fn color_of(&self, seat: Seat) -> Option<Color> {
        let black = self.black?;
        Some(if seat == black { Color::Black } else { Color::White })
    }

    fn seat_of(&self, c: Color) -> Option<Seat> {
        let black = self.black?;
        Some(if c == Color::Black { black } else { black.other() })
    }

    fn to_move(&self) -> Option<Color> {
        match self.phase() {
            Phase::Playing | Phase::Adjourned => Some(self.state.to_move()),
            Phase::PlacingHandicap => Some(Color::Black),
            _ => None,
        }
    }

    fn deadline(&self) -> Option<Ms> {
        if matches!(self.phase(), Phase::Playing | Phase::PlacingHandicap) {
            self.clock.deadline()
        } else {
            None
        }
    }

    /// The first time a server tick changes the game: a tick at or after it always emits
    /// an event, one before it never does (the property tests check both). The timer
    /// sleeps until exactly this, so it must agree with what `settle_time` decides: the
    /// forfeits read [`Created::forfeit_at`] and the start [`Created::scheduled_play_at`],
    /// as this does.
    fn next_wakeup(&self) -> Option<Ms> {
        match self.phase() {
            Phase::PlacingHandicap => self.clock.deadline(),
            Phase::Playing => {
                let ann = self.clock.next_announcement(self.last_announced).map(|a| a.due);
                match (ann, self.clock.deadline()) {
                    (Some(a), Some(d)) => Some(a.min(d)),
                    (a, d) => a.or(d),
                }
            }
            Phase::Scheduled => self.scheduled_play_at().or_else(|| self.forfeit_at()),
            _ => self.forfeit_at(),
        }
    }

    /// When whoever owes the step now due forfeits if it is still owed: the host's nigiri
    /// reveal (C1), a step of the variant, an absent player's check-in (C4). None in play
    /// (the clocks decide) and at a scheduled start both players reached.
    fn forfeit_at(&self) -> Option<Ms> {
        let timeout = self.settings.nigiri_timeout_ms;
        match self.phase() {
            Phase::Nigiri => self.nigiri_guess.map(|(_, at)| at.saturating_add(timeout)),
            Phase::SeatStones | Phase::Bidding => Some(self.step_at.saturating_add(timeout)),
            // Lateness of exactly `max_lateness_ms` is allowed (C4: "later than the
            // allowed lateness" forfeits): the forfeit is the millisecond after.
            Phase::Scheduled if self.checked_in != [true, true] => self
                .settings
                .scheduled_start
                .map(|t| t.saturating_add(self.settings.max_lateness_ms).saturating_add(1)),
            _ => None,
        }
    }

    /// A scheduled game both players checked in to before its start: play starts at the
    /// start, not at the second check-in (C4 charges lateness to the late player only, and
    /// being early earns nothing).
    fn scheduled_play_at(&self) -> Option<Ms> {
        if self.phase() == Phase::Scheduled && self.checked_in == [true, true] {
            self.settings.scheduled_start
        } else {
            None
        }
    }

    /// Where deciding `cmd` at `now` can be taken back cheaply: a move or pass in play with
    /// no flag due, whose refusals come before any event but the byo-yomi calls now due (C2:
    /// at a human pace in byo-yomi, nearly every move). Those calls change only what the
    /// mark holds; anything else is decided on a copy of the game.
    fn calls_mark(&self, cmd: &Command, now: Ms) -> Option<CallsMark> {
        let now = now.max(self.last_at);
        let cheap = matches!(cmd, Command::Play { .. } | Command::Pass { .. })
            && self.phase() == Phase::Playing
            && self.clock.flagged_at(now).is_none();
        cheap.then_some(CallsMark {
            seq: self.seq,
            last_at: self.last_at,
            last_announced: self.last_announced,
        })
    }

    /// Undoes the byo-yomi calls a refused move or pass emitted (folding an announcement
    /// changes these three fields and nothing else).
    fn take_back_calls(&mut self, mark: CallsMark) {
        self.seq = mark.seq;
        self.last_at = mark.last_at;
        self.last_announced = mark.last_announced;
    }
}

#[cfg(test)]
mod invariant_tests {
    use super::*;

    fn created(g: &mut Game) -> &mut Created {
        match &mut g.stage {
            Stage::Created(c) => c,
            Stage::NotCreated => panic!("created"),
        }
    }

    /// A result, a sealed move and a proposal make their phases: a game cannot be finished
    /// without a result, adjourned without its sealed move, or scoring without a proposal.
    #[test]
    fn the_data_makes_the_finished_adjourned_and_scoring_phases() {
        let g = Game::casual_in_play(9).expect("a game");
        assert_eq!(g.phase(), Phase::Playing);
        let mut ended = g.clone();
        created(&mut ended).result = Some(GameResult {
            winner: Some(Color::Black),
            reason: EndReason::Resignation,
            score: None,
        });
        assert_eq!((ended.phase(), ended.check_invariants()), (Phase::Finished, Ok(())));
        let mut proposing = g.clone();
        created(&mut proposing).proposal = Some(Vec::new());
        assert_eq!(proposing.phase(), Phase::Scoring);
        let mut sealed = g.clone();
        created(&mut sealed).sealed = Some(Sealed {
            by: Color::Black,
            commitment: String::new(),
            mv: SealedMove {
                mv: weiqi_rules::Move::Pass,
                nonce: String::new(),
            },
        });
        assert_eq!(sealed.phase(), Phase::Adjourned);
    }

    /// Each rule that data cannot make true by itself can fail: a game whose parts
    /// disagree is named, a consistent one passes.
    #[test]
    fn contradictions_are_caught() {
        let g = Game::casual_in_play(9).expect("a game");
        assert_eq!(g.check_invariants(), Ok(()));
        let mut stray = g.clone();
        created(&mut stray).open = Phase::Adjourned;
        assert!(stray.check_invariants().unwrap_err().contains("open phase"));
        let mut accepting = g.clone();
        created(&mut accepting).accepted = [true, false];
        assert!(accepting.check_invariants().unwrap_err().contains("acceptance"));
        let mut nigiri = g.clone();
        created(&mut nigiri).open = Phase::Nigiri;
        assert!(nigiri.check_invariants().unwrap_err().contains("nigiri"));
        let mut bidding = g.clone();
        created(&mut bidding).bids[0] = Some(Bid {
            commitment: String::new(),
            revealed: None,
        });
        assert!(bidding.check_invariants().unwrap_err().contains("bids"));
    }
}
