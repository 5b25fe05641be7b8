//! One GTP engine process as the bot uses it: kept in step with the server's record of a
//! game (replaying only what it lacks, or the whole game into a fresh process), asked for a
//! move with the clock it has, and for its dead stones at the end.
//!
//! Calls block (the engine is a child process read with deadlines); the game driver runs
//! them on a blocking thread.

use std::time::Duration;

use weiqi_gtp::{Client, ClientError, Reply};
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::time_control::Kind;
use weiqi_rules::sgf::GameRecord;
use weiqi_rules::{Color, Move, Point};

/// A game as the server records it: what an engine must hold before it moves.
#[derive(Debug, Clone, PartialEq)]
pub struct Position {
    pub game_id: String,
    pub size: u8,
    pub komi: f64,
    pub handicap_stones: Vec<Point>,
    pub moves: Vec<(Color, Move)>,
}

impl Position {
    /// From the server's SGF export (`ExportSgf`).
    pub fn from_sgf(game_id: &str, sgf: &str) -> Result<Position, String> {
        let r = GameRecord::parse(sgf).map_err(|e| format!("the server's SGF: {e}"))?;
        if r.width != r.height {
            return Err(format!(
                "a {}x{} board (GTP engines play square ones)",
                r.width, r.height
            ));
        }
        Ok(Position {
            game_id: game_id.to_string(),
            size: r.width,
            komi: r.komi.unwrap_or(7.5),
            handicap_stones: r.setup_black,
            moves: r.moves.iter().map(|m| (m.color, m.mv)).collect(),
        })
    }
}

/// What an engine answered to `genmove`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Answer {
    Play(Point),
    Pass,
    Resign,
}

/// Why an engine could not give a usable answer: the process is restarted and the game
/// replayed into it.
#[derive(Debug, thiserror::Error)]
pub enum EngineFailure {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("the engine refused {command:?}: {answer}")]
    Refused { command: String, answer: String },
    #[error("the engine answered {0:?}, not a move")]
    NotAMove(String),
}

/// The clock the engine is told about, in GTP terms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clock {
    /// Seconds and stones (or periods) left, after the lag margin.
    pub seconds: f64,
    pub stones: u32,
    /// Until when a move still counts (`None`: no clock).
    pub deadline: Option<Duration>,
}

/// A GTP engine process and what it holds.
pub struct EngineProcess {
    command: String,
    timeout: Duration,
    client: Option<Client>,
    /// The game loaded into the process, and the GTP time settings sent to it.
    loaded: Option<Position>,
    time_settings: Vec<String>,
    /// Lines of the transcript not yet handed to a game.
    pending: Vec<String>,
}

impl EngineProcess {
    /// An engine for `command` (started on first use); `timeout` bounds commands other
    /// than `genmove`, whose bound is the clock.
    pub fn new(command: &str, timeout: Duration) -> EngineProcess {
        EngineProcess {
            command: command.to_string(),
            timeout,
            client: None,
            loaded: None,
            time_settings: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Ends the process (it is started again, and the game replayed, on next use).
    pub fn restart(&mut self) {
        self.take_client_transcript();
        self.pending.push("# engine restarted".into());
        self.client = None;
        self.loaded = None;
    }

    /// The transcript lines since the last call.
    pub fn take_transcript(&mut self) -> Vec<String> {
        self.take_client_transcript();
        std::mem::take(&mut self.pending)
    }

    fn take_client_transcript(&mut self) {
        if let Some(c) = &mut self.client {
            self.pending.append(&mut c.transcript);
        }
    }

    fn client(&mut self) -> Result<&mut Client, EngineFailure> {
        if self.client.is_none() {
            self.client = Some(Client::spawn(&self.command)?);
            self.loaded = None;
        }
        Ok(self.client.as_mut().expect("just started"))
    }

    fn ok(&mut self, command: &str) -> Result<String, EngineFailure> {
        let timeout = self.timeout;
        match self.client()?.send(command, timeout)? {
            Reply::Ok(v) => Ok(v),
            Reply::Err(answer) => Err(EngineFailure::Refused {
                command: command.into(),
                answer,
            }),
        }
    }

    /// Brings the engine to `pos` with these time settings: only the missing moves when it
    /// holds the start of the same game, else the whole game from a cleared board.
    pub fn sync(&mut self, pos: &Position, settings: Option<&pb::TimeControl>) -> Result<(), EngineFailure> {
        self.client()?;
        let wanted = time_commands(settings);
        let continues = self.loaded.as_ref().is_some_and(|l| {
            l.game_id == pos.game_id
                && l.size == pos.size
                && l.handicap_stones == pos.handicap_stones
                && pos.moves.starts_with(&l.moves)
        });
        if !continues || self.time_settings != wanted {
            self.loaded = None;
            self.ok(&format!("boardsize {}", pos.size))?;
            self.ok("clear_board")?;
            self.ok(&format!("komi {}", pos.komi))?;
            if !pos.handicap_stones.is_empty() {
                let stones: Vec<String> = pos.handicap_stones.iter().map(|p| p.to_gtp(pos.size)).collect();
                self.ok(&format!("set_free_handicap {}", stones.join(" ")))?;
            }
            self.time_settings.clear();
            for (k, alternatives) in wanted.iter().enumerate() {
                // The first form the engine knows (kgs-time_settings, then time_settings).
                let known = alternatives.split('|').any(|cmd| self.ok(cmd).is_ok());
                if !known {
                    self.pending
                        .push(format!("# no time settings the engine knows: {}", wanted[k]));
                }
            }
            self.time_settings = wanted;
            self.loaded = Some(Position {
                moves: Vec::new(),
                ..pos.clone()
            });
        }
        let done = self.loaded.as_ref().map_or(0, |l| l.moves.len());
        for &(c, mv) in &pos.moves[done..] {
            self.ok(&format!("play {} {}", gtp_color(c), mv.to_gtp(pos.size)))?;
            if let Some(l) = &mut self.loaded {
                l.moves.push((c, mv));
            }
        }
        Ok(())
    }

    /// Asks for `c`'s move with `clock` left; `genmove` may take until the clock runs out
    /// (or `timeout` without one).
    pub fn genmove(&mut self, c: Color, size: u8, clock: Option<Clock>) -> Result<Answer, EngineFailure> {
        if let Some(k) = clock {
            let cmd = format!("time_left {} {} {}", gtp_color(c), k.seconds.floor().max(0.0), k.stones);
            // An engine without time_left still plays, by its own settings.
            let _ = self.ok(&cmd);
        }
        let limit = clock.and_then(|k| k.deadline).unwrap_or(self.timeout);
        let command = format!("genmove {}", gtp_color(c));
        let answer = match self.client()?.send(&command, limit)? {
            Reply::Ok(v) => v,
            Reply::Err(answer) => return Err(EngineFailure::Refused { command, answer }),
        };
        // The engine played the move on its own board: it holds it from now on.
        let parsed = if answer.eq_ignore_ascii_case("resign") {
            Answer::Resign
        } else {
            match Move::from_gtp(&answer, size) {
                Some(Move::Pass) => Answer::Pass,
                Some(Move::Place(p)) => Answer::Play(p),
                None => return Err(EngineFailure::NotAMove(answer)),
            }
        };
        if let (Some(l), Answer::Play(_) | Answer::Pass) = (&mut self.loaded, parsed) {
            l.moves.push((
                c,
                if let Answer::Play(p) = parsed {
                    Move::Place(p)
                } else {
                    Move::Pass
                },
            ));
        }
        Ok(parsed)
    }

    /// The engine's dead stones (`final_status_list dead`), `None` when it cannot say.
    pub fn dead_stones(&mut self, size: u8) -> Option<Vec<Point>> {
        let text = self.ok("final_status_list dead").ok()?;
        let mut list: Vec<Point> = text
            .split_whitespace()
            .map(|v| Point::from_gtp(v, size))
            .collect::<Option<_>>()?;
        list.sort_by_key(|p| (p.y, p.x));
        Some(list)
    }
}

fn gtp_color(c: Color) -> &'static str {
    match c {
        Color::Black => "b",
        Color::White => "w",
    }
}

/// The time settings to send, each as alternatives separated by `|` (KGS's command first:
/// standard GTP cannot say "N byo-yomi periods").
fn time_commands(tc: Option<&pb::TimeControl>) -> Vec<String> {
    let s = |ms: u64| ms / 1000;
    let one = match tc.and_then(|t| t.kind.as_ref()) {
        None | Some(Kind::None(_)) => "kgs-time_settings none|time_settings 0 1 0".to_string(),
        Some(Kind::Absolute(a)) => format!("kgs-time_settings absolute {0}|time_settings {0} 0 0", s(a.main_ms)),
        // GTP has no increment: the engine hears absolute time, and time_left keeps it true.
        Some(Kind::Fischer(f)) => format!("kgs-time_settings absolute {0}|time_settings {0} 0 0", s(f.main_ms)),
        Some(Kind::GamePlusMove(g)) => format!("kgs-time_settings absolute {0}|time_settings {0} 0 0", s(g.main_ms)),
        Some(Kind::ByoYomi(b)) => format!(
            "kgs-time_settings byoyomi {} {} {}|time_settings {} {} 1",
            s(b.main_ms),
            s(b.period_ms),
            b.periods,
            s(b.main_ms),
            s(b.period_ms)
        ),
        Some(Kind::Canadian(c)) => format!(
            "kgs-time_settings canadian {0} {1} {2}|time_settings {0} {1} {2}",
            s(c.main_ms),
            s(c.period_ms),
            c.stones
        ),
    };
    vec![one]
}

/// What the engine is told is left on `clock` (less `margin` for the network), and until
/// when a move still counts.
pub fn clock_of(tc: Option<&pb::TimeControl>, clock: Option<&pb::ClockState>, margin: Duration) -> Option<Clock> {
    let kind = tc.and_then(|t| t.kind.as_ref())?;
    let k = clock?;
    let ms = |v: u64| Duration::from_millis(v);
    let (left, stones, total) = match kind {
        Kind::None(_) => return None,
        Kind::Absolute(_) | Kind::Fischer(_) => (ms(k.main_ms), 0, ms(k.main_ms)),
        Kind::GamePlusMove(g) => (ms(k.main_ms.min(g.per_move_ms)), 0, ms(k.main_ms.min(g.per_move_ms))),
        Kind::ByoYomi(_) if k.main_ms > 0 => (ms(k.main_ms), 0, ms(k.main_ms + k.period_ms * k.periods as u64)),
        Kind::ByoYomi(_) => (ms(k.period_ms), k.periods, ms(k.period_ms * k.periods as u64)),
        Kind::Canadian(_) if k.main_ms > 0 => (ms(k.main_ms), 0, ms(k.main_ms + k.period_ms)),
        Kind::Canadian(_) => (ms(k.period_ms), k.stones, ms(k.period_ms)),
    };
    Some(Clock {
        seconds: left.saturating_sub(margin).as_secs_f64(),
        stones,
        deadline: Some(total.saturating_sub(margin)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use weiqi_proto::v1::time_control::ByoYomi;

    #[test]
    fn byo_yomi_clocks_tell_main_time_then_periods() {
        let tc = pb::TimeControl {
            kind: Some(Kind::ByoYomi(ByoYomi {
                main_ms: 60_000,
                periods: 3,
                period_ms: 30_000,
            })),
        };
        let mut k = pb::ClockState {
            main_ms: 10_000,
            periods: 3,
            period_ms: 30_000,
            ..Default::default()
        };
        let c = clock_of(Some(&tc), Some(&k), Duration::from_secs(1)).unwrap();
        assert_eq!((c.seconds, c.stones), (9.0, 0));
        assert_eq!(c.deadline, Some(Duration::from_secs(99)));
        k.main_ms = 0;
        k.periods = 2;
        let c = clock_of(Some(&tc), Some(&k), Duration::from_secs(1)).unwrap();
        assert_eq!((c.seconds, c.stones), (29.0, 2));
        assert_eq!(
            time_commands(Some(&tc)),
            vec!["kgs-time_settings byoyomi 60 30 3|time_settings 60 30 1"]
        );
        assert_eq!(clock_of(None, Some(&k), Duration::ZERO), None);
    }

    #[test]
    fn positions_come_from_the_servers_sgf() {
        let sgf = "(;GM[1]FF[4]SZ[9]KM[7.5]AB[cc][gg];W[ee];B[];W[dd])";
        let p = Position::from_sgf("g1", sgf).unwrap();
        assert_eq!((p.size, p.komi, p.handicap_stones.len(), p.moves.len()), (9, 7.5, 2, 3));
        assert_eq!(p.moves[1], (Color::Black, Move::Pass));
        assert!(Position::from_sgf("g1", "(;SZ[9:7])").is_err());
    }
}
