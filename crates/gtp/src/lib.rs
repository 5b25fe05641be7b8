//! # weiqi-gtp
//!
//! weiqi as a GTP engine (Go Text Protocol, version 2): what GUIs (Sabaki, GoGui, Lizzie),
//! referees (gogui-twogtp, `weiqi match`) and server bridges (gtp2ogs, kgsGtp, `weiqi
//! bot`) speak to Go programs.
//!
//! - `protocol` — the framing: lines in (ids, comments, empty lines), `=`/`?` answers out;
//! - `engine` — the board the controller sets up and the commands that change or read it;
//! - `timing` — the controller's time settings and what is left, as a per-move budget;
//! - `player`, `mcts` — who chooses the moves (`genmove`): random playout policies, or a
//!   Monte Carlo tree search over them, optionally advised by a network (`hybrid`);
//! - `analysis` — live analysis for GUIs (`lz-analyze`, `kata-analyze`);
//! - `review` — a finished game judged move by move by the tree search (`weiqi review`);
//! - `client`, `engine_player`, `referee` — the other side: engines in child processes,
//!   an engine as a player, and the one referee of matches between any two players
//!   (`weiqi match`, the trainer's arena).
//!
//! The rules are the engine's own (`weiqi-rules`): positional superko by default, so a
//! `play` that repeats a position answers `? illegal move`.

mod analysis;
mod client;
mod engine;
mod engine_player;
mod hybrid;
mod mcts;
mod player;
mod protocol;
mod referee;
mod review;
mod timing;

pub use analysis::{Candidate, Dialect, Request as AnalysisRequest};
pub use client::{Client, ClientError};
pub use engine::{COMMANDS, GtpEngine};
pub use engine_player::EnginePlayer;
pub use hybrid::{Advice, Advisor, HybridSettings};
pub use mcts::{DEFAULT_SHAPE_PRIOR, MctsPlayer, MctsSettings, ShapeCounts, ShapeTable, ShapeTableError};
pub use player::{Choice, Player, PlayerKind, RandomPlayer, to_move};
pub use protocol::{Line, Reply};
pub use referee::{Ending, GameOutcome, MatchSettings, PlayedGame, Tally, UNTIMED_BUDGET, play_out};
pub use review::{GameReview, MISTAKE_LOSS, MISTAKES, MoveReview, mistakes, review, review_until};
pub use timing::{Budget, TimeSettings};

use std::io::{BufRead, Write};
use std::sync::mpsc;

/// Where commands come from: lines, and whether one is waiting (a live analysis runs
/// until the controller sends anything).
pub trait Input {
    /// The next line; none at the end of the input.
    fn next_line(&mut self) -> Option<std::io::Result<String>>;
    /// Whether a line (or the end of the input) is there to read without waiting.
    fn waiting(&mut self) -> bool;
}

/// Lines of a reader whose data is all there (a script, a test's transcript): a line is
/// waiting whenever any input is left.
pub struct ReadInput<R>(pub R);

impl<R: BufRead> Input for ReadInput<R> {
    fn next_line(&mut self) -> Option<std::io::Result<String>> {
        let mut line = String::new();
        match self.0.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) => Some(Ok(line.trim_end_matches(['\n', '\r']).to_string())),
            Err(e) => Some(Err(e)),
        }
    }

    fn waiting(&mut self) -> bool {
        self.0.fill_buf().map_or(true, |b| !b.is_empty())
    }
}

/// Standard input, read on a thread of its own so that a live analysis can look for the
/// controller's next line without blocking.
pub struct StdinInput {
    lines: mpsc::Receiver<std::io::Result<String>>,
    peeked: Option<Option<std::io::Result<String>>>,
}

impl StdinInput {
    pub fn new() -> StdinInput {
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::stdin().lines() {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        StdinInput { lines, peeked: None }
    }
}

impl Default for StdinInput {
    fn default() -> StdinInput {
        StdinInput::new()
    }
}

impl Input for StdinInput {
    fn next_line(&mut self) -> Option<std::io::Result<String>> {
        match self.peeked.take() {
            Some(line) => line,
            None => self.lines.recv().ok(),
        }
    }

    fn waiting(&mut self) -> bool {
        if self.peeked.is_none() {
            match self.lines.try_recv() {
                Ok(line) => self.peeked = Some(Some(line)),
                Err(mpsc::TryRecvError::Disconnected) => self.peeked = Some(None),
                Err(mpsc::TryRecvError::Empty) => {}
            }
        }
        self.peeked.is_some()
    }
}

/// Serves GTP on `input`/`output` until `quit` or the end of the input (see
/// [`serve_input`]).
pub fn serve(engine: &mut GtpEngine, input: impl BufRead, output: impl Write) -> std::io::Result<()> {
    serve_input(engine, &mut ReadInput(input), output)
}

/// Serves GTP until `quit` or the end of the input. Every answer is flushed at once: a
/// controller waits for it before it sends the next command. A live analysis
/// (`lz-analyze`, `kata-analyze`) answers `=`, then a line every interval until the
/// controller sends anything, then the empty line that ends an answer; what it sent is
/// then read as the next command (an empty line as none).
pub fn serve_input(engine: &mut GtpEngine, input: &mut dyn Input, mut output: impl Write) -> std::io::Result<()> {
    while let Some(line) = input.next_line() {
        let Some(cmd) = Line::parse(&line?) else { continue };
        if let Some(request) = GtpEngine::analysis(&cmd) {
            let first = request.and_then(|r| engine.analysis_line(&r).map(|line| (r, line)));
            let (request, mut line) = match first {
                Ok(started) => started,
                Err(why) => {
                    output.write_all(Reply::err(why).format(cmd.id).as_bytes())?;
                    output.flush()?;
                    continue;
                }
            };
            let id = cmd.id.map(|i| i.to_string()).unwrap_or_default();
            output.write_all(format!("={id}\n").as_bytes())?;
            loop {
                output.write_all(format!("{line}\n").as_bytes())?;
                output.flush()?;
                if input.waiting() {
                    break;
                }
                line = engine.analysis_line(&request).unwrap_or_default();
            }
            output.write_all(b"\n")?;
            output.flush()?;
            continue;
        }
        let reply = engine.handle(&cmd);
        output.write_all(reply.format(cmd.id).as_bytes())?;
        output.flush()?;
        if cmd.name == "quit" {
            break;
        }
    }
    Ok(())
}
