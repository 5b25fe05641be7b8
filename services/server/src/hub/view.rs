//! What a client sees of a game at a moment, in domain types: built under the game's lock
//! (or once per event for watchers, shared by all of them), put on the wire by convert.rs.

use weiqi_game::{Game, GameResult, Ms, Parity, Phase, PlayerRef, PlayerTime, Seat, Settings};
use weiqi_rules::{Color, Move, Point, score};

use super::presence::SeatPresence;

/// A game as its players and watchers see it at `server_time_ms`.
#[derive(Debug, Clone, PartialEq)]
pub struct GameView {
    pub game_id: String,
    pub seq: u64,
    pub phase: Phase,
    /// None before the game is created (never, for a game the hub holds).
    pub settings: Option<Settings>,
    /// The board's points, row by row from the top, `board_width` to a row (empty before
    /// the board exists): one string, split into rows only for an answer that carries the
    /// board.
    pub board: String,
    pub board_width: u8,
    pub to_move: Option<Color>,
    pub move_number: u32,
    pub black_seat: Option<Seat>,
    /// By colour: black, then white.
    pub captures: [u32; 2],
    pub clocks: [PlayerTime; 2],
    pub warnings: [u32; 2],
    pub accepted: [bool; 2],
    pub result: Option<GameResult>,
    pub pending_undo_from: Option<Color>,
    pub pending_draw_from: Option<Color>,
    pub dead_stones: Vec<Point>,
    pub sealed_commitment: String,
    pub last_move: Option<Point>,
    pub ko_point: Option<Point>,
    pub nigiri_commitment: String,
    pub nigiri_guess: Option<Parity>,
    /// The variant's bids by seat: sealed, and the komi once revealed.
    pub bids: [(bool, Option<f64>); 2],
    /// The signed-in players in the host's and the guest's seats.
    pub players: [Option<PlayerRef>; 2],
    /// Before play: when the step now due is forfeited if still owed.
    pub forfeit_at: Option<Ms>,
    pub server_time_ms: Ms,
    /// The seats' presence (host, guest), where the view was built with the game's entry
    /// at hand; none in a view folded from the log.
    pub presence: Option<[SeatPresence; 2]>,
    /// In the scoring phase: the count under the dead stones on the table.
    pub scoring: Option<Scoring>,
}

/// The area count under a dead-stone proposal, point by point.
#[derive(Debug, Clone, PartialEq)]
pub struct Scoring {
    /// Who each point counts for, row by row from the top as `board` is.
    pub owners: Vec<Option<Color>>,
    pub score: weiqi_rules::Score,
}

impl Scoring {
    /// The count of the game's position under its proposal; none outside scoring.
    fn of(g: &Game) -> Option<Scoring> {
        if g.phase() != Phase::Scoring {
            return None;
        }
        let state = g.state()?;
        let dead = g.proposal().unwrap_or_default();
        let score = state.score(dead).ok()?;
        Some(Scoring {
            owners: score::owners_with_dead(state.board(), dead).ok()?,
            score,
        })
    }
}

impl GameView {
    pub fn of(game_id: &str, g: &Game, now: Ms) -> GameView {
        let state = g.state();
        let by_color = |f: &dyn Fn(Color) -> u32| [f(Color::Black), f(Color::White)];
        GameView {
            game_id: game_id.to_string(),
            seq: g.seq(),
            phase: g.phase(),
            settings: g.settings().cloned(),
            board: state.map(|s| s.board().points_text()).unwrap_or_default(),
            board_width: state.map_or(0, |s| s.board().width()),
            to_move: g.to_move(),
            move_number: g.move_number() as u32,
            black_seat: g.seat_of(Color::Black),
            captures: by_color(&|c| state.map_or(0, |s| s.captures(c))),
            clocks: g.clocks(now),
            warnings: by_color(&|c| g.warnings(c)),
            accepted: g.accepted(),
            result: g.result().cloned(),
            pending_undo_from: g.pending_undo(),
            pending_draw_from: g.pending_draw(),
            dead_stones: g.proposal().unwrap_or_default().to_vec(),
            sealed_commitment: g.sealed_commitment().unwrap_or_default().to_string(),
            last_move: state.and_then(|s| match s.moves().last() {
                Some((_, Move::Place(p))) => Some(*p),
                _ => None,
            }),
            ko_point: state.and_then(|s| s.ko_point()),
            nigiri_commitment: g.nigiri_commitment().unwrap_or_default().to_string(),
            nigiri_guess: g.nigiri_guess(),
            bids: g.bids(),
            players: [g.player(Seat::Host).cloned(), g.player(Seat::Guest).cloned()],
            forfeit_at: g.forfeit_at(),
            server_time_ms: now,
            presence: None,
            scoring: Scoring::of(g),
        }
    }
}

/// What a command did: its events, as its caller may see them, and the game after them.
#[derive(Debug, Clone)]
pub struct Applied {
    pub events: Vec<weiqi_game::Event>,
    pub game: GameView,
}
