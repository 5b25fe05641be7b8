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
//!   Monte Carlo tree search over them;
//! - `client`, `engine_player`, `referee` — the other side: engines in child processes,
//!   an engine as a player, and the one referee of matches between any two players
//!   (`weiqi match`, the trainer's arena).
//!
//! The rules are the engine's own (`weiqi-rules`): positional superko by default, so a
//! `play` that repeats a position answers `? illegal move`.

mod client;
mod engine;
mod engine_player;
mod mcts;
mod player;
mod protocol;
mod referee;
mod timing;

pub use client::{Client, ClientError};
pub use engine::{COMMANDS, GtpEngine};
pub use engine_player::EnginePlayer;
pub use mcts::{MctsPlayer, MctsSettings};
pub use player::{Choice, Player, PlayerKind, RandomPlayer};
pub use protocol::{Line, Reply};
pub use referee::{Ending, GameOutcome, MatchSettings, PlayedGame, Tally, UNTIMED_BUDGET, play_out};
pub use timing::{Budget, TimeSettings};

use std::io::{BufRead, Write};

/// Serves GTP on `input`/`output` until `quit` or the end of the input. Every answer is
/// flushed at once: a controller waits for it before it sends the next command.
pub fn serve(engine: &mut GtpEngine, input: impl BufRead, mut output: impl Write) -> std::io::Result<()> {
    for line in input.lines() {
        let Some(cmd) = Line::parse(&line?) else { continue };
        let reply = engine.handle(&cmd);
        output.write_all(reply.format(cmd.id).as_bytes())?;
        output.flush()?;
        if cmd.name == "quit" {
            break;
        }
    }
    Ok(())
}
