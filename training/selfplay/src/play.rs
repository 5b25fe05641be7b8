//! Playing one game and recording its positions with targets.

use rand::SeedableRng;
use rand::rngs::SmallRng;
use weiqi_rules::sgf::GameRecord;
use weiqi_rules::{Color, Move, Point, Policy, Rules, State, score};

use crate::PLANES;

/// How self-play picks moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlayPolicy {
    /// Uniform over legal moves and pass.
    Uniform,
    /// Uniform over moves that do not fill one's own single-point eye; pass when none.
    Light,
}

impl std::str::FromStr for PlayPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<PlayPolicy, String> {
        match s {
            "uniform" => Ok(PlayPolicy::Uniform),
            "light" => Ok(PlayPolicy::Light),
            other if other.starts_with("net:") => {
                Err("net:PATH needs the trainer (cargo feature `tch`), which is not built yet".into())
            }
            other => Err(format!("unknown policy {other:?} (uniform, light)")),
        }
    }
}

/// One game's positions and targets, in the shard layout.
#[derive(Debug, Clone, Default)]
pub struct GameData {
    pub game_id: u64,
    pub positions: usize,
    pub features: Vec<u8>,
    pub policy: Vec<f32>,
    pub legal: Vec<u8>,
    pub value: Vec<f32>,
    pub ownership: Vec<i8>,
    pub score: Vec<f32>,
    pub move_number: Vec<u16>,
    /// The record, when asked for.
    pub sgf: Option<String>,
    /// White minus Black at the end (komi included).
    pub white_minus_black: f64,
}

/// Writes the 17 AlphaGo Zero planes for the player to move into `out`
/// (`17 * area` bytes): planes 0..8 the mover's stones in `history` (newest last in the
/// slice, newest first in the planes), 8..16 the opponent's, 16 all ones when Black moves.
pub fn encode_planes(history: &[Vec<u8>], black_to_move: bool, area: usize, out: &mut [u8]) {
    let (me, opp) = if black_to_move { (1u8, 2u8) } else { (2u8, 1u8) };
    out.fill(0);
    for (k, h) in history.iter().rev().take(8).enumerate() {
        for (i, &c) in h.iter().enumerate() {
            out[k * area + i] = (c == me) as u8;
            out[(8 + k) * area + i] = (c == opp) as u8;
        }
    }
    if black_to_move {
        out[16 * area..17 * area].fill(1);
    }
}

/// Cells of a board as bytes: 0 empty, 1 Black, 2 White, row by row.
pub fn cells(state: &State, _n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    state.board().write_cells(&mut out);
    out
}

/// Plays one game from the empty board and records every position before each move.
pub fn play_game(
    size: u8,
    rules: Rules,
    policy: PlayPolicy,
    seed: u64,
    game_id: u64,
    max_moves: usize,
    sgf: bool,
) -> GameData {
    let pol = match policy {
        PlayPolicy::Uniform => Policy::Uniform,
        PlayPolicy::Light => Policy::Light,
    };
    play_game_with(size, rules, seed, game_id, max_moves, sgf, &mut |s, _, rng| {
        (s.choose_random(pol, rng), None)
    })
}

/// Picks a move for the player to move, given the boards so far (current last), and
/// optionally the search's policy target over the N*N+1 moves (one-hot of the move when
/// `None`).
pub type Chooser<'a> = dyn FnMut(&mut State, &[Vec<u8>], &mut SmallRng) -> (Move, Option<Vec<f32>>) + 'a;

/// [`play_game`] with any move chooser (a network with search, a bot): the recording,
/// legality and targets are the same.
pub fn play_game_with(
    size: u8,
    rules: Rules,
    seed: u64,
    game_id: u64,
    max_moves: usize,
    sgf: bool,
    choose: &mut Chooser<'_>,
) -> GameData {
    let n = size as usize;
    let area = n * n;
    let mut state = State::new(size, rules).expect("size checked by the caller");
    state.reserve(max_moves.min(4 * area));
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut history: Vec<Vec<u8>> = vec![cells(&state, n)];
    let mut d = GameData {
        game_id,
        ..GameData::default()
    };
    // Room for a typical game, so the buffers rarely grow.
    let expect = area + area / 2;
    d.features.reserve(expect * PLANES * area);
    d.legal.reserve(expect * (area + 1));
    d.policy.reserve(expect * (area + 1));
    let mut movers: Vec<Color> = Vec::new();
    while !state.is_over() && state.move_number() < max_moves {
        let mover = state.to_move();
        // Features: 8 positions of mine, 8 of theirs, newest first; then colour to move.
        let base = d.features.len();
        d.features.resize(base + PLANES * area, 0);
        encode_planes(&history, mover == Color::Black, area, &mut d.features[base..]);
        // Legal moves (pass always).
        let lbase = d.legal.len();
        d.legal.resize(lbase + area + 1, 0);
        let current = history.last().expect("start position");
        for (i, p) in state.board().points().enumerate() {
            if current[i] == 0 && state.is_legal(Move::Place(p)) {
                d.legal[lbase + i] = 1;
            }
        }
        d.legal[lbase + area] = 1;
        let (mv, target) = choose(&mut state, &history, &mut rng);
        let mv = if state.is_legal(mv) { mv } else { Move::Pass };
        let idx = match mv {
            Move::Place(p) => p.y as usize * n + p.x as usize,
            Move::Pass => area,
        };
        let pbase = d.policy.len();
        match target {
            Some(t) if t.len() == area + 1 => d.policy.extend_from_slice(&t),
            _ => {
                d.policy.resize(pbase + area + 1, 0.0);
                d.policy[pbase + idx] = 1.0;
            }
        }
        d.move_number.push(state.move_number().min(u16::MAX as usize) as u16);
        movers.push(mover);
        state.play(mv).expect("chosen moves are legal");
        history.push(cells(&state, n));
        if history.len() > 8 {
            history.remove(0);
        }
    }
    // Targets from the final position: area, every stone alive.
    let final_board = state.board();
    let white_minus_black = state.tromp_taylor_score().white_minus_black;
    let reach_owner: Vec<i8> = ownership(final_board);
    for &mover in &movers {
        let sign: f64 = if mover == Color::White { 1.0 } else { -1.0 };
        let margin = sign * white_minus_black;
        d.value.push(if margin > 0.0 {
            1.0
        } else if margin < 0.0 {
            -1.0
        } else {
            0.0
        });
        d.score.push(margin as f32);
        let s = if mover == Color::Black { 1 } else { -1 };
        d.ownership.extend(reach_owner.iter().map(|&o| o * s));
    }
    d.positions = movers.len();
    d.white_minus_black = white_minus_black;
    if sgf {
        let mut rec = GameRecord::from_state(&state);
        rec.result = Some(
            weiqi_rules::Outcome::from_white_minus_black(white_minus_black)
                .to_string()
                .replace("Draw", "0"),
        );
        rec.comment = Some(format!("weiqi self-play, game {game_id:016x}"));
        d.sgf = Some(rec.to_sgf());
    }
    d
}

/// Area owner of every point (+1 Black, -1 White, 0 neutral), every stone alive.
fn ownership(board: &weiqi_rules::Board) -> Vec<i8> {
    let n = board.width() as usize;
    let mut out = vec![0i8; n * board.height() as usize];
    let owners = score::owners(board);
    for (i, p) in board.points().enumerate() {
        let _: Point = p;
        out[i] = match owners[i] {
            Some(Color::Black) => 1,
            Some(Color::White) => -1,
            None => 0,
        };
    }
    out
}
