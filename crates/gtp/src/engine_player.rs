//! A GTP engine in a child process as a [`Player`]: `weiqi match`'s engines, the arena's
//! `gtp:COMMAND` players and the yardsticks of the training loop.
//!
//! The engine is kept in step with the referee's game: before each `genmove`, the moves it
//! has not seen are sent with `play`, and a new game (the moves so far are not an extension
//! of what it saw) starts with `boardsize`, `clear_board`, `komi` and, with a clock per
//! move, `time_settings` (and `time_left` before each move). Whatever goes wrong (the
//! engine exits, answers `?`, not at all within the deadline, with no vertex, or refuses a
//! legal move it is told) is [`Choice::Fail`]: the referee forfeits the game, and
//! [`Player::failure`] keeps the first reason.

use std::time::Duration;

use weiqi_rules::{Color, Move, Point, State};

use crate::client::{Client, ClientError};
use crate::player::{Choice, Player};
use crate::protocol::Reply;
use crate::timing::Budget;

/// A GTP engine as a player.
pub struct EnginePlayer {
    client: Client,
    name: String,
    /// The deadline for each answer.
    timeout: Duration,
    /// A clock of this long for every move, told to the engine (`time_settings 0 S 1` and
    /// `time_left`); the referee enforces it, with `lag` beyond it.
    per_move: Option<Duration>,
    lag: Duration,
    /// The moves the engine has been told (or has played) in the current game, once it has
    /// been set up for one.
    known: Option<Vec<(Color, Move)>>,
    failure: Option<String>,
}

impl EnginePlayer {
    /// Starts `command` (a program and its arguments, e.g. `gnugo --mode gtp --level 1`),
    /// checking that it speaks GTP.
    pub fn spawn(command: &str, timeout: Duration) -> Result<EnginePlayer, ClientError> {
        let mut client = Client::spawn(command)?;
        client.expect("protocol_version", timeout)?;
        Ok(EnginePlayer::new(client, format!("gtp:{command}"), timeout))
    }

    /// An engine already started, named `name` in reports.
    pub fn new(client: Client, name: String, timeout: Duration) -> EnginePlayer {
        EnginePlayer {
            client,
            name,
            timeout,
            per_move: None,
            lag: Duration::ZERO,
            known: None,
            failure: None,
        }
    }

    /// With a clock of `seconds` for every move, told to the engine; its answer is awaited
    /// until the clock and `lag` run out (the referee then declares the loss on time).
    pub fn with_clock(mut self, seconds: Option<Duration>, lag: Duration) -> EnginePlayer {
        self.per_move = seconds;
        self.lag = lag;
        self
    }

    /// The engine's `name` and `version`, when it has them.
    pub fn engine_name(&mut self) -> Option<String> {
        let mut ask = |what: &str| match self.client.send(what, self.timeout) {
            Ok(Reply::Ok(v)) if !v.is_empty() => Some(v),
            _ => None,
        };
        match (ask("name"), ask("version")) {
            (Some(n), Some(v)) => Some(format!("{n} {v}")),
            (Some(n), None) => Some(n),
            _ => None,
        }
    }

    fn sync(&mut self, state: &State) -> Result<(), String> {
        let moves = state.moves();
        let height = state.board().height();
        let mut known = match self.known.take() {
            Some(known) if moves.starts_with(&known) => known,
            _ => {
                let setup = [
                    format!("boardsize {}", state.board().width()),
                    "clear_board".into(),
                    format!("komi {}", state.rules().komi),
                ];
                for command in setup {
                    self.client.expect(&command, self.timeout).map_err(|e| e.to_string())?;
                }
                if let Some(t) = self.per_move {
                    // Engines that keep no clock may refuse it; the referee enforces it.
                    let _ = self
                        .client
                        .send(&format!("time_settings 0 {} 1", t.as_secs_f64()), self.timeout);
                }
                Vec::new()
            }
        };
        // (Extended move by move: a sync with nothing new, as after `prepare`, copies
        // nothing.)
        for &(colour, mv) in &moves[known.len()..] {
            let vertex = mv.to_gtp(height);
            match self.client.send(&format!("play {colour} {vertex}"), self.timeout) {
                Ok(Reply::Ok(_)) => known.push((colour, mv)),
                Ok(Reply::Err(e)) => return Err(format!("refused the legal move {colour} {vertex}: {e}")),
                Err(e) => return Err(e.to_string()),
            }
        }
        self.known = Some(known);
        Ok(())
    }

    fn ask(&mut self, state: &State, colour: Color) -> Result<Choice, String> {
        // (Nothing to send when the referee prepared the engine.)
        self.sync(state)?;
        // With a clock, the clock bounds the wait: an engine still thinking after its time
        // and the lag loses on time (the referee measures it), not by forfeit.
        let wait = self.per_move.map_or(self.timeout, |t| t + self.lag + LATE);
        let answer = match self.client.send(&format!("genmove {colour}"), wait) {
            Ok(Reply::Ok(v)) => v,
            Ok(Reply::Err(e)) => return Err(format!("genmove failed: {e}")),
            Err(e) => return Err(e.to_string()),
        };
        if answer.trim().eq_ignore_ascii_case("resign") {
            return Ok(Choice::Resign);
        }
        let mv = Move::from_gtp(&answer, state.board().height()).ok_or_else(|| format!("not a vertex: {answer:?}"))?;
        if let Some(known) = &mut self.known {
            known.push((colour, mv));
        }
        Ok(Choice::Play(mv))
    }
}

/// How long past its clock an engine's answer is awaited, so that a late one is measured
/// late.
const LATE: Duration = Duration::from_millis(50);

impl Player for EnginePlayer {
    fn prepare(&mut self, state: &State, colour: Color) -> Result<(), String> {
        let ready = self.sync(state).map(|()| {
            if let Some(t) = self.per_move {
                let _ = self
                    .client
                    .send(&format!("time_left {colour} {} 1", t.as_secs_f64()), self.timeout);
            }
        });
        if let Err(why) = &ready {
            self.failure.get_or_insert_with(|| format!("{}: {why}", self.name));
        }
        ready
    }

    fn genmove(&mut self, state: &State, colour: Color, _budget: Budget, _cleanup: bool) -> Choice {
        match self.ask(state, colour) {
            Ok(choice) => choice,
            Err(why) => {
                self.failure.get_or_insert_with(|| format!("{}: {why}", self.name));
                Choice::Fail(why)
            }
        }
    }

    fn name(&self) -> String {
        self.name.clone()
    }

    fn failure(&self) -> Option<String> {
        self.failure.clone()
    }

    /// `final_status_list dead`, once the engine has seen the whole game.
    fn dead_stones(&mut self, state: &State) -> Option<Vec<Point>> {
        self.sync(state).ok()?;
        let size = state.board().width();
        match self.client.send("final_status_list dead", self.timeout) {
            Ok(Reply::Ok(text)) => {
                let mut list = text
                    .split_whitespace()
                    .map(|v| Point::from_gtp(v, size))
                    .collect::<Option<Vec<Point>>>()?;
                list.sort_by_key(|p| (p.y, p.x));
                Some(list)
            }
            _ => None,
        }
    }
}
