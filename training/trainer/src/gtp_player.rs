//! Any GTP engine (GNU Go, KataGo, Leela Zero, `weiqi gtp`) as an arena player: the fixed
//! players of the Elo curve beyond random play, and the yardstick of issue 19's goal
//! (a network against GNU Go).
//!
//! The engine is kept in step with the arena's game: before each `genmove`, the moves it
//! has not seen are sent with `play`, and a new game (the moves so far are not an
//! extension of what it saw) starts with `boardsize`, `clear_board` and `komi`. An
//! engine's `resign` is a resignation (the referee's rule, as in `weiqi match`). A failing
//! engine (it exits, answers `?` or not at all within the deadline) passes from then on,
//! and [`Player::failure`] says why: a run that uses it checks it and reports the engine's
//! error instead of a result.

use std::time::Duration;

use weiqi_gtp::{Budget, Choice, Client, Player};
use weiqi_rules::{Color, Move, State};

use crate::Error;

/// A GTP engine in a child process.
pub struct GtpPlayer {
    client: Client,
    command: String,
    /// The moves the engine has been told (or has played) in the current game, once it
    /// has been set up for one.
    known: Option<Vec<(Color, Move)>>,
    /// The deadline for each answer.
    timeout: Duration,
    failure: Option<String>,
}

impl GtpPlayer {
    /// Starts `command` (a program and its arguments, e.g. `gnugo --mode gtp --level 1`),
    /// checking that it speaks GTP.
    pub fn spawn(command: &str, timeout: Duration) -> Result<GtpPlayer, Error> {
        let failed = |e: weiqi_gtp::ClientError| Error::Invalid(format!("{command}: {e}"));
        let mut client = Client::spawn(command).map_err(failed)?;
        client.expect("protocol_version", timeout).map_err(failed)?;
        Ok(GtpPlayer {
            client,
            command: command.to_string(),
            known: None,
            timeout,
            failure: None,
        })
    }

    fn sync(&mut self, state: &State) -> Result<(), weiqi_gtp::ClientError> {
        let moves = state.moves();
        let height = state.board().height();
        let known = match self.known.take() {
            Some(known) if moves.starts_with(&known) => known,
            _ => {
                self.client
                    .expect(&format!("boardsize {}", state.board().width()), self.timeout)?;
                self.client.expect("clear_board", self.timeout)?;
                self.client
                    .expect(&format!("komi {}", state.rules().komi), self.timeout)?;
                Vec::new()
            }
        };
        for &(colour, mv) in &moves[known.len()..] {
            self.client
                .expect(&format!("play {colour} {}", mv.to_gtp(height)), self.timeout)?;
        }
        self.known = Some(moves.to_vec());
        Ok(())
    }

    fn ask(&mut self, state: &State, colour: Color) -> Result<Choice, String> {
        self.sync(state).map_err(|e| e.to_string())?;
        let answer = self
            .client
            .expect(&format!("genmove {colour}"), self.timeout)
            .map_err(|e| e.to_string())?;
        if answer.trim().eq_ignore_ascii_case("resign") {
            return Ok(Choice::Resign);
        }
        let mv =
            Move::from_gtp(&answer, state.board().height()).ok_or_else(|| format!("genmove answered {answer:?}"))?;
        if let Some(known) = &mut self.known {
            known.push((colour, mv));
        }
        Ok(Choice::Play(mv))
    }
}

impl Player for GtpPlayer {
    fn genmove(&mut self, state: &State, colour: Color, _budget: Budget, _cleanup: bool) -> Choice {
        if self.failure.is_some() {
            return Choice::Play(Move::Pass);
        }
        match self.ask(state, colour) {
            Ok(choice) => choice,
            Err(why) => {
                self.failure = Some(format!("{}: {why}", self.command));
                Choice::Play(Move::Pass)
            }
        }
    }

    fn name(&self) -> String {
        format!("gtp:{}", self.command)
    }

    fn failure(&self) -> Option<String> {
        self.failure.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::{RandomPlayer, arena};
    use weiqi_rules::{Policy, Rules};

    /// GNU Go (CI installs it) against uniform random play on 7x7: whole games, every
    /// move in step, and GNU Go wins.
    #[test]
    fn a_gtp_engine_plays_whole_games_in_step_with_the_arena() {
        let Some(gnugo) = ["/usr/games/gnugo", "/usr/bin/gnugo"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())
        else {
            assert!(
                std::env::var_os("WEIQI_REQUIRE_GNUGO").is_none(),
                "WEIQI_REQUIRE_GNUGO is set but gnugo is not installed"
            );
            eprintln!("SKIPPED: gnugo not installed");
            return;
        };
        let mut engine = GtpPlayer::spawn(&format!("{gnugo} --mode gtp --level 0"), Duration::from_secs(30)).unwrap();
        let r = arena(
            &mut engine,
            &mut RandomPlayer::new(Policy::Uniform, 3),
            4,
            7,
            Rules::default().with_komi(0.5),
            3,
            2,
        );
        assert_eq!(engine.failure(), None);
        assert_eq!(r.games, 4);
        assert!(r.a_wins >= 3, "GNU Go loses to uniform random play: {r:?}");
        // A command that is not a GTP engine is an error naming it.
        let err = GtpPlayer::spawn("true", Duration::from_secs(5))
            .err()
            .unwrap()
            .to_string();
        assert!(err.starts_with("true:"), "{err}");
    }
}
