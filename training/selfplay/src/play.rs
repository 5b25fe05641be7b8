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
    /// The opponent's reply to the move played in each position: its policy index (the
    /// move after the recorded one, pass included), or -1 when the game ended first. The
    /// target of KataGo's opponent-reply head; known from the game's moves even where the
    /// reply's own position was not recorded (playout cap randomization).
    pub next_move: Vec<i16>,
    /// The record, when asked for.
    pub sgf: Option<String>,
    /// White minus Black at the end (komi included; at resignation for resigned games).
    pub white_minus_black: f64,
    /// The winner (None for a draw).
    pub winner: Option<Color>,
    /// Who resigned, if the game ended by resignation.
    pub resigned: Option<Color>,
    /// Whether the game ended by two passes (or the move cap) and was scored: `ownership`
    /// and `score` are then the scored result.
    pub scored: bool,
    /// In the no-resign audit set: the game was played out whatever the value said.
    pub resign_audit: bool,
    /// An audit game in which a player fell below the resignation threshold and then did
    /// not lose (a resignation would have been wrong).
    pub false_resign: bool,
    /// The variant's opening (seat stones and bids), for variant games.
    pub opening: Option<crate::variant::Opening>,
}

/// Writes the 17 AlphaGo Zero planes for the player to move into `out`
/// (`17 * area` bytes): planes 0..8 the mover's stones in `history` (newest last in the
/// slice, newest first in the planes), 8..16 the opponent's, 16 all ones when Black moves.
pub fn encode_planes(history: &[Vec<u8>], black_to_move: bool, area: usize, out: &mut [u8]) {
    let out = &mut out[..crate::PLANES * area];
    crate::env::write_planes(
        history.iter().rev().map(Vec::as_slice),
        black_to_move,
        crate::env::Layout::Planes,
        out,
    );
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
    let state = State::new(size, rules).expect("size checked by the caller");
    play_policy_from(state, policy, seed, game_id, max_moves, sgf)
}

/// [`play_game`] from a given position (the variant's seat stones).
pub fn play_policy_from(
    state: State,
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
    play_game_from(state, seed, game_id, max_moves, sgf, &mut |s, _, rng| {
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
    let state = State::new(size, rules).expect("size checked by the caller");
    play_game_from(state, seed, game_id, max_moves, sgf, choose)
}

/// [`play_game_with`] from a given position (the variant's seat stones), Black or White
/// to move as `state` says.
pub fn play_game_from(
    mut state: State,
    seed: u64,
    game_id: u64,
    max_moves: usize,
    sgf: bool,
    choose: &mut Chooser<'_>,
) -> GameData {
    let size = state.board().width();
    state.reserve(max_moves.min(4 * size as usize * size as usize));
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut rec = Recorder::new(&state, game_id);
    while !state.is_over() && state.move_number() < max_moves {
        rec.begin(&state);
        let (mv, target) = choose(&mut state, rec.history(), &mut rng);
        let mv = if state.is_legal(mv) { mv } else { Move::Pass };
        rec.end(&state, mv, target.as_deref());
        state.play(mv).expect("chosen moves are legal");
        rec.push(&state);
    }
    rec.finish(&state, None, sgf)
}

/// Records one game's positions and targets: features and legal moves before each move,
/// the policy target, and at the end the outcome from every mover's view.
pub(crate) struct Recorder {
    d: GameData,
    /// The last 8 boards, current last.
    history: Vec<Vec<u8>>,
    movers: Vec<Color>,
    n: usize,
}

impl Recorder {
    pub(crate) fn new(state: &State, game_id: u64) -> Recorder {
        let n = state.board().width() as usize;
        let area = n * n;
        let mut d = GameData {
            game_id,
            ..GameData::default()
        };
        // Room for a typical game, so the buffers rarely grow.
        let expect = area + area / 2;
        d.features.reserve(expect * PLANES * area);
        d.legal.reserve(expect * (area + 1));
        d.policy.reserve(expect * (area + 1));
        Recorder {
            d,
            history: vec![cells(state, n)],
            movers: Vec::new(),
            n,
        }
    }

    /// The last boards (up to 8), current last.
    pub(crate) fn history(&self) -> &[Vec<u8>] {
        &self.history
    }

    /// Features and legal moves of the position about to be played from.
    pub(crate) fn begin(&mut self, state: &State) {
        let area = self.n * self.n;
        // Features: 8 positions of mine, 8 of theirs, newest first; then colour to move.
        let base = self.d.features.len();
        self.d.features.resize(base + PLANES * area, 0);
        encode_planes(
            &self.history,
            state.to_move() == Color::Black,
            area,
            &mut self.d.features[base..],
        );
        // Legal moves (pass always).
        let lbase = self.d.legal.len();
        self.d.legal.resize(lbase + area + 1, 0);
        let current = self.history.last().expect("start position");
        for (i, p) in state.board().points().enumerate() {
            if current[i] == 0 && state.is_legal(Move::Place(p)) {
                self.d.legal[lbase + i] = 1;
            }
        }
        self.d.legal[lbase + area] = 1;
    }

    /// The move chosen in the position of the last [`Recorder::begin`] and its policy
    /// target (one-hot of the move when `None`).
    pub(crate) fn end(&mut self, state: &State, mv: Move, target: Option<&[f32]>) {
        let area = self.n * self.n;
        let pbase = self.d.policy.len();
        match target {
            Some(t) if t.len() == area + 1 => self.d.policy.extend_from_slice(t),
            _ => {
                self.d.policy.resize(pbase + area + 1, 0.0);
                self.d.policy[pbase + move_index(mv, self.n)] = 1.0;
            }
        }
        self.d
            .move_number
            .push(state.move_number().min(u16::MAX as usize) as u16);
        self.movers.push(state.to_move());
    }

    /// The board after the move.
    pub(crate) fn push(&mut self, state: &State) {
        self.history.push(cells(state, self.n));
        if self.history.len() > 8 {
            self.history.remove(0);
        }
    }

    /// Targets from the final position, scored by area with every stone alive; or, when
    /// `resigned` names the player who resigned, the win goes to the other and `ownership`
    /// and `score` are the area count at resignation, marked `scored` = 0.
    pub(crate) fn finish(mut self, state: &State, resigned: Option<Color>, sgf: bool) -> GameData {
        let d = &mut self.d;
        let white_minus_black = state.tromp_taylor_score().white_minus_black;
        let owner: Vec<i8> = ownership(state.board());
        let winner = match resigned {
            Some(loser) => Some(loser.opponent()),
            None => weiqi_rules::Outcome::from_white_minus_black(white_minus_black).winner(),
        };
        for &mover in &self.movers {
            let sign: f64 = if mover == Color::White { 1.0 } else { -1.0 };
            d.value.push(outcome_value(winner, mover));
            d.score.push((sign * white_minus_black) as f32);
            let s = if mover == Color::Black { 1 } else { -1 };
            d.ownership.extend(owner.iter().map(|&o| o * s));
        }
        // (A row's move number is the plies before its position: its move is `moves[m]`,
        // the reply `moves[m + 1]`.)
        let moves = state.moves();
        d.next_move = d
            .move_number
            .iter()
            .map(|&m| {
                moves
                    .get(m as usize + 1)
                    .map_or(-1, |&(_, mv)| move_index(mv, self.n) as i16)
            })
            .collect();
        d.scored = resigned.is_none();
        d.winner = winner;
        d.positions = self.movers.len();
        d.white_minus_black = white_minus_black;
        d.resigned = resigned;
        if sgf {
            let mut rec = GameRecord::from_state(state);
            rec.result = Some(match resigned {
                Some(Color::Black) => "W+R".to_string(),
                Some(Color::White) => "B+R".to_string(),
                None => weiqi_rules::Outcome::from_white_minus_black(white_minus_black)
                    .to_string()
                    .replace("Draw", "0"),
            });
            rec.comment = Some(format!("weiqi self-play, game {:016x}", d.game_id));
            d.sgf = Some(rec.to_sgf());
        }
        self.d
    }
}

/// A finished game's result from `mover`'s view: 1 won, -1 lost, 0 drawn.
pub(crate) fn outcome_value(winner: Option<Color>, mover: Color) -> f32 {
    match winner {
        Some(w) if w == mover => 1.0,
        Some(_) => -1.0,
        None => 0.0,
    }
}

/// The move at `index` of a policy vector on a board `width` wide and `height` high (the
/// inverse of [`move_index`]: points row by row from the top, the pass last); None outside
/// `0..=width*height`.
pub fn index_move(index: i64, width: u8, height: u8) -> Option<Move> {
    let (w, area) = (width as i64, width as i64 * height as i64);
    match index {
        i if i == area => Some(Move::Pass),
        i if (0..area).contains(&i) => Some(Move::Place(weiqi_rules::Point::new((i % w) as u8, (i / w) as u8))),
        _ => None,
    }
}

/// The boards of `state`'s last `k` positions, oldest first and the current one last (the
/// search's history, the planes' input), replayed once from the game's start: the history
/// of a game known only by its moves.
pub fn recent_boards(state: &State, k: usize) -> Vec<Vec<u8>> {
    let n = state.board().width() as usize;
    let mut s = State::from_board(state.initial_board().clone(), state.initial_to_move(), *state.rules());
    let mut boards = std::collections::VecDeque::with_capacity(k + 1);
    boards.push_back(cells(&s, n));
    for &(color, mv) in state.moves() {
        // (The game's own moves: a state's history always replays.)
        if s.play_color(color, mv).is_err() {
            break;
        }
        boards.push_back(cells(&s, n));
        if boards.len() > k {
            boards.pop_front();
        }
    }
    boards.into()
}

/// Index of a move in the N*N+1 policy vector (pass last).
pub fn move_index(mv: Move, n: usize) -> usize {
    match mv {
        Move::Place(p) => p.y as usize * n + p.x as usize,
        Move::Pass => n * n,
    }
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
