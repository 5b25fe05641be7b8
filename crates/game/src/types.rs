//! Settings, commands, events, results and rejections: the game's vocabulary.

use serde::{Deserialize, Serialize};
use weiqi_clock::{LagComp, Ms, PlayerTime, TimeControl};
use weiqi_rules::{Color, Illegal, Move, Point, Rules, Score};

/// The two seats: the player who created the game and the one who joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Seat {
    Host,
    Guest,
}

impl Seat {
    /// 0 for the host, 1 for the guest (arrays by seat).
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn other(self) -> Seat {
        match self {
            Seat::Host => Seat::Guest,
            Seat::Guest => Seat::Host,
        }
    }
}

/// Who sends a command: a seated player, or the server (timers, scheduled resumption).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    Host,
    Guest,
    Server,
}

impl Actor {
    pub fn seat(self) -> Option<Seat> {
        match self {
            Actor::Host => Some(Seat::Host),
            Actor::Guest => Some(Seat::Guest),
            Actor::Server => None,
        }
    }
}

impl From<Seat> for Actor {
    fn from(s: Seat) -> Actor {
        match s {
            Seat::Host => Actor::Host,
            Seat::Guest => Actor::Guest,
        }
    }
}

/// How colours are decided (C1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ColorChoice {
    /// The creator takes Black.
    HostBlack,
    /// The creator takes White.
    HostWhite,
    /// Random, from entropy the server supplies at join.
    Random,
    /// Nigiri with commit-reveal: the host commits to a hidden number of stones, the guest
    /// guesses odd or even, the host reveals; a right guess takes Black.
    Nigiri,
}

/// Referee mode (C5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefereeMode {
    /// Illegal moves are rejected and the player is still to move; undo may be allowed.
    Casual,
    /// Illegal moves are void and count as a pass, with a warning; the second warning
    /// loses; no undo.
    Tournament,
}

/// Odd or even, for nigiri.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Parity {
    Odd,
    Even,
}

fn default_true() -> bool {
    true
}
fn default_nigiri_timeout() -> Ms {
    300_000
}

/// Everything fixed when a game is created.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub size: u8,
    /// Rated: both seats held by identified, different players; the result updates their
    /// ratings.
    #[serde(default, skip_serializing_if = "is_false")]
    pub rated: bool,
    #[serde(default)]
    pub rules: Rules,
    /// Handicap stones (0 or 2..9).
    #[serde(default)]
    pub handicap: u32,
    /// Black places the handicap stones freely instead of on the star points (R9 option).
    #[serde(default)]
    pub free_handicap: bool,
    #[serde(default = "no_clock")]
    pub time: TimeControl,
    #[serde(default)]
    pub lag: LagComp,
    pub colors: ColorChoice,
    pub mode: RefereeMode,
    /// Casual games may allow taking back a move with the opponent's consent (C8).
    #[serde(default = "default_true")]
    pub allow_undo: bool,
    /// Scheduled start (C4): players must check in; lateness is deducted, beyond
    /// `max_lateness_ms` it forfeits.
    #[serde(default)]
    pub scheduled_start: Option<Ms>,
    #[serde(default)]
    pub max_lateness_ms: Ms,
    /// How long the host has to reveal the nigiri before forfeiting.
    #[serde(default = "default_nigiri_timeout")]
    pub nigiri_timeout_ms: Ms,
    /// The guest seat is kept for this player (by id): games the server pairs (an
    /// accepted challenge, automatch) are not open to whoever joins first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved_guest: Option<String>,
    /// The game's opening: the standard one, or the variant of seed 002 (free seat stones
    /// and an agreed komi).
    #[serde(default, skip_serializing_if = "Variant::is_standard")]
    pub variant: Variant,
}

/// Seed 002's variant (see [`crate::variant`]): instead of a fixed komi and colours, the
/// four seat stones are placed freely (开局阶段的自由座子), then each player bids the komi
/// they would give as Black, sealed (预判阶段的协定胜负).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Variant {
    #[default]
    Standard,
    FreeSeats {
        /// The seat stones may not go on the first line (the author's count: about
        /// 3x10^8 openings away from the edge against 7x10^8).
        #[serde(default)]
        no_first_line: bool,
        /// Bids must be n + 0.5: the game cannot end in a draw (for games that must
        /// produce a winner). Otherwise any multiple of 0.5, and a draw can happen.
        #[serde(default)]
        half_point_bids: bool,
    },
}

impl Variant {
    pub fn is_standard(&self) -> bool {
        *self == Variant::Standard
    }
}

fn no_clock() -> TimeControl {
    TimeControl::None
}

impl Settings {
    /// A casual even game: Chinese rules, host Black, no clock.
    pub fn casual(size: u8) -> Settings {
        Settings {
            size,
            rated: false,
            rules: Rules::default(),
            handicap: 0,
            free_handicap: false,
            time: TimeControl::None,
            lag: LagComp::default(),
            colors: ColorChoice::HostBlack,
            mode: RefereeMode::Casual,
            allow_undo: true,
            scheduled_start: None,
            max_lateness_ms: 0,
            nigiri_timeout_ms: default_nigiri_timeout(),
            reserved_guest: None,
            variant: Variant::Standard,
        }
    }
}

/// The setting a [`Rejection::BadSetting`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SettingField {
    BoardSize,
    Komi,
    Handicap,
    /// A value of the time control.
    Time {
        control: TimeControl,
        field: weiqi_clock::ClockField,
    },
    LagAllowance,
    ScheduledStart,
    MaxLateness,
    NigiriTimeout,
    NigiriCommitment,
    /// The variant and what it rules out (handicap, a scheduled start, nigiri).
    Variant,
}

/// Bounds of the settings outside the clock (the clock's are `weiqi_clock::limits`).
pub mod limits {
    use crate::Ms;
    /// Allowed lateness at a scheduled start (C4): at most 1 day.
    pub const MAX_LATENESS_MS: Ms = 86_400_000;
    /// A scheduled start is at most 30 days ahead of the game's creation.
    pub const MAX_SCHEDULE_AHEAD_MS: Ms = 30 * 86_400_000;
    /// The host's time to reveal the nigiri: 1 s to 1 day.
    pub const MIN_NIGIRI_TIMEOUT_MS: Ms = 1_000;
    pub const MAX_NIGIRI_TIMEOUT_MS: Ms = 86_400_000;
}

/// A sealed move and the nonce that hides it (C3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SealedMove {
    pub mv: Move,
    pub nonce: String,
}

/// A signed-in player as a game records them in its seat (the service's identity: a
/// platform's `sub` or a guest account).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerRef {
    pub id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub bot: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// What a player (or the server) asks the game to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    /// Creates the game (host). With nigiri, the host's commitment
    /// `hex(sha256("<stones>:<nonce>"))`.
    Create {
        /// The identified player who creates it (none: an anonymous casual game).
        #[serde(default)]
        host: Option<PlayerRef>,
        settings: Settings,
        nigiri_commitment: Option<String>,
    },
    /// Takes the second seat. `entropy` decides random colours (supplied by the server).
    Join {
        /// The identified player who joins (none: anonymous).
        #[serde(default)]
        player: Option<PlayerRef>,
        #[serde(default)]
        nigiri_guess: Option<Parity>,
        #[serde(default)]
        entropy: u64,
    },
    /// The host reveals the nigiri stones and nonce.
    RevealNigiri {
        stones: u32,
        nonce: String,
    },
    /// The variant: places the next seat stone (its colour is the turn's: B, W, B, W).
    PlaceSeatStone {
        point: Point,
    },
    /// The variant: seals a komi bid, `hex(sha256("<half points>:<nonce>"))` (see
    /// [`crate::bid_commitment`]).
    CommitBid {
        commitment: String,
    },
    /// The variant: reveals the sealed bid (komi in points, a multiple of 0.5).
    RevealBid {
        komi: f64,
        nonce: String,
    },
    /// Presence at a scheduled start (C4).
    CheckIn,
    /// Black's free handicap placement.
    PlaceHandicap {
        points: Vec<Point>,
    },
    /// Places a stone. `lag_ms`: network lag measured by the client, refunded within quota.
    Play {
        point: Point,
        #[serde(default)]
        lag_ms: Ms,
    },
    Pass {
        #[serde(default)]
        lag_ms: Ms,
    },
    Resign,
    /// Withdraws an open game before anyone joins (the host, or the server when it has
    /// waited too long): it ends with no result.
    Cancel,
    /// Declares play complete (C6): counts as a pass; the opponent may play on.
    DeclareEnd,
    /// Proposes the set of dead stones (one stone marks its chain).
    ProposeDead {
        stones: Vec<Point>,
    },
    AcceptScore,
    /// Disagrees about life and death: play resumes to settle it (C6).
    DisputeScore,
    RequestUndo,
    AnswerUndo {
        accept: bool,
    },
    OfferDraw,
    AnswerDraw {
        accept: bool,
    },
    /// Adjourns with a sealed move (C3). The nonce should be random and secret.
    Seal {
        mv: Move,
        nonce: String,
    },
    /// Resumes an adjourned game: the sealed move is revealed and played.
    Resume,
    /// Claims a win on time (or any time-driven ending): same as `Tick`.
    ClaimTimeout,
    /// Time passes: emits due byo-yomi calls, timeouts, forfeits.
    Tick,
    /// The server was down for `ms`: that time is not charged to the player to move.
    /// Only the server may send it.
    CreditTime {
        ms: Ms,
    },
    /// A seat forfeits: its player withdrew from the tournament the game belongs to, and
    /// the other seat wins (C9). Only the server may send it; any phase before the end.
    Forfeit {
        seat: Seat,
    },
    /// The player who stayed ends a game in play whose opponent has left: a win, or a
    /// draw. Whether the opponent has been gone long enough is the service's to decide
    /// (presence is not part of the game); the game checks only who may claim, and when.
    ClaimAbandoned {
        #[serde(default)]
        draw: bool,
    },
}

impl Command {
    /// The command that plays `mv`: a stone, or a pass.
    pub fn of_move(mv: Move, lag_ms: Ms) -> Command {
        match mv {
            Move::Place(point) => Command::Play { point, lag_ms },
            Move::Pass => Command::Pass { lag_ms },
        }
    }
}

/// Why a game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    Score,
    Resignation,
    Time,
    Forfeit,
    /// Both players forfeited (C4).
    DoubleForfeit,
    DrawByAgreement,
    /// Lost by penalty: second warning (C5).
    Penalty,
    /// A repetition cycle under simple ko (C7).
    NoResult,
    /// An open game withdrawn before anyone joined: by its host, or by the server when
    /// nobody joined in time. SGF `Void`.
    Cancelled,
    /// The opponent left, and the player who stayed claimed the game: a win (SGF `B+F`)
    /// or a draw (`0`).
    Abandoned,
}

/// A finished game's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GameResult {
    /// `None` for a draw, no result or double forfeit.
    pub winner: Option<Color>,
    pub reason: EndReason,
    /// The counted score, for `EndReason::Score`.
    pub score: Option<Score>,
}

impl GameResult {
    /// SGF `RE` text: `B+3.5`, `W+R`, `B+T`, `W+F`, `0` (draw), `Void`.
    pub fn sgf(&self) -> String {
        let Some(w) = self.winner else {
            return match self.reason {
                EndReason::DrawByAgreement | EndReason::Score | EndReason::Abandoned => "0".into(),
                _ => "Void".into(),
            };
        };
        let how = match self.reason {
            EndReason::Score => self.score.as_ref().map_or("?".to_string(), |s| {
                let m = s.white_minus_black.abs();
                format!("{m}")
            }),
            EndReason::Resignation => "R".into(),
            EndReason::Time => "T".into(),
            _ => "F".into(),
        };
        format!("{}+{how}", w.letter())
    }
}

/// The game's phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Created, waiting for a second player.
    WaitingForOpponent,
    /// The variant: the four seat stones are being placed (Black, White, Black, White;
    /// the host places Black's, the guest White's).
    SeatStones,
    /// The variant: sealed komi bids, then their reveal.
    Bidding,
    /// Nigiri guessed, waiting for the host's reveal.
    Nigiri,
    /// Colours known, waiting for both players to check in (C4).
    Scheduled,
    /// Black places free handicap stones.
    PlacingHandicap,
    Playing,
    /// Adjourned with a sealed move (C3); both clocks stopped.
    Adjourned,
    /// Play ended by two passes; agreeing on dead stones (C6).
    Scoring,
    Finished,
}

impl Phase {
    /// Every phase, in the order a game goes through them.
    pub const ALL: [Phase; 10] = [
        Phase::WaitingForOpponent,
        Phase::SeatStones,
        Phase::Bidding,
        Phase::Nigiri,
        Phase::Scheduled,
        Phase::PlacingHandicap,
        Phase::Playing,
        Phase::Adjourned,
        Phase::Scoring,
        Phase::Finished,
    ];
}

/// Everything that can happen to a game. A game is the fold of its events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    Created {
        settings: Settings,
        nigiri_commitment: Option<String>,
        /// Who holds the host seat, when the host signed in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<PlayerRef>,
    },
    Joined {
        /// Who holds the guest seat, when the guest signed in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        player: Option<PlayerRef>,
    },
    NigiriGuessed {
        guess: Parity,
    },
    NigiriRevealed {
        stones: u32,
        nonce: String,
        guess_correct: bool,
    },
    /// The variant: a seat stone, placed as setup (no move, no clock).
    SeatStonePlaced {
        color: Color,
        point: Point,
    },
    BidCommitted {
        seat: Seat,
        commitment: String,
    },
    BidRevealed {
        seat: Seat,
        komi: f64,
        nonce: String,
    },
    /// Both bids revealed: the higher plays Black and gives its komi; equal bids go by
    /// lot (`by_lot`), drawn from both players' nonces.
    KomiAgreed {
        komi: f64,
        black: Seat,
        by_lot: bool,
    },
    ColorsAssigned {
        black: Seat,
    },
    CheckedIn {
        seat: Seat,
        lateness_ms: Ms,
    },
    /// Free handicap: Black's clock starts for placing the stones. (Logs written before
    /// this event existed have none, and such a placement is untimed.)
    PlacementStarted,
    HandicapPlaced {
        points: Vec<Point>,
    },
    /// Clocks start; `first` is to move.
    PlayStarted {
        first: Color,
    },
    MovePlayed {
        color: Color,
        point: Point,
        captures: u32,
        lag_ms: Ms,
    },
    Passed {
        color: Color,
        declared_end: bool,
        lag_ms: Ms,
    },
    /// An illegal move that counts as a pass (tournament mode, or a sealed move, C3/C5).
    MoveVoided {
        color: Color,
        mv: Move,
        reason: Illegal,
        lag_ms: Ms,
    },
    Warning {
        color: Color,
        count: u32,
    },
    UndoRequested {
        by: Color,
    },
    UndoDeclined {
        by: Color,
    },
    MoveTakenBack {
        color: Color,
        mv: Move,
    },
    DrawOffered {
        by: Color,
    },
    DrawDeclined {
        by: Color,
    },
    /// Two passes: scoring begins with the referee's proposal of dead stones.
    ScoringStarted {
        proposal: Vec<Point>,
    },
    DeadStonesProposed {
        by: Color,
        stones: Vec<Point>,
    },
    ScoreAccepted {
        by: Color,
    },
    /// Play resumes to settle a dispute; the pass count restarts.
    ScoreDisputed {
        by: Color,
    },
    /// The player to move sealed a move and the game is adjourned. `sealed` must be
    /// hidden from everyone but the sealer until resumption ([`Event::redacted_for`]).
    MoveSealed {
        by: Color,
        commitment: String,
        sealed: Option<SealedMove>,
    },
    /// Play resumes; the sealed move and nonce are revealed for verification.
    Resumed {
        revealed: SealedMove,
    },
    /// A referee call (C2): seconds used in the byo-yomi period, or the final count.
    Announcement {
        color: Color,
        due: Ms,
        seconds: u32,
        count: Option<u32>,
        periods_left: u32,
    },
    GameEnded {
        result: GameResult,
    },
    /// The running clock was stopped for `ms` by a service outage (not charged).
    TimeCredited {
        ms: Ms,
    },
}

/// An event with its sequence number (1-based), the time, and both clocks after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub seq: u64,
    pub at: Ms,
    /// `[black, white]` after the event (zeros before colours are known).
    pub clocks: [PlayerTime; 2],
    pub kind: EventKind,
}

/// Why a command was refused. Nothing changes when a command is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "code", content = "detail", rename_all = "snake_case")]
pub enum Rejection {
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A setting out of its bounds or inconsistent with the others, naming it.
    #[error("invalid setting {field:?}: {message}")]
    BadSetting { field: SettingField, message: String },
    #[error("not allowed in phase {0:?}")]
    WrongPhase(Phase),
    #[error("it is not your turn")]
    NotYourTurn,
    #[error("illegal move: {0}")]
    Illegal(Illegal),
    #[error("not permitted: {0}")]
    NotPermitted(String),
    /// Taking back a move is not allowed in this game (tournament mode, C8, or undo
    /// turned off in its settings).
    #[error("undo not allowed: {0}")]
    UndoNotAllowed(String),
    #[error("nothing to answer: {0}")]
    NothingPending(String),
    #[error("the revealed value does not match the commitment")]
    CommitmentMismatch,
    /// The variant: a seat stone on the first line of a game that keeps them off it.
    #[error("{0} is on the first line: this game keeps the seat stones off it")]
    FirstLine(weiqi_rules::Point),
    /// The variant: a bid revealed before both bids are sealed.
    #[error("the bids are revealed once both are sealed: the opponent's is not yet")]
    BidsNotSealed,
}
