//! The engine: the board the controller sets up, and every command it answers.

use std::time::Duration;

use weiqi_rules::sgf::GameRecord;
use weiqi_rules::{Color, DeadEstimate, MAX_SIZE, MIN_SIZE, Move, Point, Preset, Rules, State};

use crate::analysis::{Dialect, Request as AnalysisRequest};
use crate::player::{Choice, Player};
use crate::protocol::{Line, Reply};
use crate::timing::{Left, TimeSettings};

/// Every command the engine knows, as `list_commands` gives them.
pub const COMMANDS: &[&str] = &[
    "protocol_version",
    "name",
    "version",
    "known_command",
    "list_commands",
    "quit",
    "boardsize",
    "clear_board",
    "komi",
    "play",
    "genmove",
    "reg_genmove",
    "kgs-genmove_cleanup",
    "undo",
    "showboard",
    "final_score",
    "final_status_list",
    "time_settings",
    "kgs-time_settings",
    "time_left",
    "fixed_handicap",
    "place_free_handicap",
    "set_free_handicap",
    "loadsgf",
    "printsgf",
    "kgs-rules",
    "lz-analyze",
    "kata-analyze",
];

/// A GTP engine over the rules crate.
pub struct GtpEngine {
    state: State,
    preset: Preset,
    komi: f64,
    player: Box<dyn Player>,
    time: TimeSettings,
    left: [Option<Left>; 2],
    /// The engine's own limit on a move's time (`--seconds`).
    move_cap: Duration,
    /// How dead stones are judged.
    dead_estimate: DeadEstimate,
}

type Answer = Result<String, String>;

fn syntax(what: &str) -> String {
    format!("syntax error: {what}")
}

fn arg<'a>(cmd: &'a Line, k: usize, what: &str) -> Result<&'a str, String> {
    cmd.args.get(k).map(String::as_str).ok_or_else(|| syntax(what))
}

fn number<T: std::str::FromStr>(cmd: &Line, k: usize, what: &str) -> Result<T, String> {
    arg(cmd, k, what)?.parse().map_err(|_| syntax(what))
}

fn color(cmd: &Line, k: usize) -> Result<Color, String> {
    Color::parse(arg(cmd, k, "a colour")?).ok_or_else(|| syntax("a colour (black or white)"))
}

/// Points as GTP vertices, joined by `sep` (a space in one line, or one a line).
fn vertices(points: &[Point], height: u8, sep: &str) -> String {
    points.iter().map(|p| p.to_gtp(height)).collect::<Vec<_>>().join(sep)
}

impl GtpEngine {
    /// A 19x19 engine under `preset` (komi as the preset has it), choosing moves with
    /// `player`, taking at most `move_cap` per move.
    pub fn new(preset: Preset, player: Box<dyn Player>, move_cap: Duration) -> GtpEngine {
        let rules = preset.rules();
        GtpEngine {
            state: State::new(19, rules).expect("19x19 is a board size"),
            preset,
            komi: rules.komi,
            player,
            time: TimeSettings::None,
            left: [None, None],
            move_cap,
            dead_estimate: DeadEstimate::default(),
        }
    }

    /// Judges dead stones with this estimate (playouts at least 1, threshold 0..=1).
    pub fn with_dead_estimate(mut self, estimate: DeadEstimate) -> GtpEngine {
        self.dead_estimate = DeadEstimate {
            playouts: estimate.playouts.max(1),
            threshold: estimate.threshold.clamp(0.0, 1.0),
            ..estimate
        };
        self
    }

    pub fn state(&self) -> &State {
        &self.state
    }

    fn size(&self) -> u8 {
        self.state.board().height()
    }

    fn rules(&self) -> Rules {
        let mut r = self.preset.rules();
        r.komi = self.komi;
        r
    }

    /// An empty board of `size` under the rules and komi in force.
    fn fresh(&self, size: u8) -> State {
        State::new(size, self.rules()).expect("sizes are checked before")
    }

    /// An analyze command's request (`lz-analyze`, `kata-analyze`); `None` for any other
    /// command. Its answer is streamed by [`crate::serve`].
    pub fn analysis(cmd: &Line) -> Option<Result<AnalysisRequest, String>> {
        let dialect = match cmd.name.as_str() {
            "lz-analyze" => Dialect::Lz,
            "kata-analyze" => Dialect::Kata,
            _ => return None,
        };
        Some(AnalysisRequest::parse(&cmd.args, dialect))
    }

    /// One line of a live analysis: the player searches `req.interval` longer and tells
    /// its candidates (and the ownership, when asked for, from the analyzed colour's point
    /// of view); an error when the player does not search.
    pub fn analysis_line(&mut self, req: &AnalysisRequest) -> Result<String, String> {
        let color = req.color.unwrap_or(self.state.to_move());
        let candidates = self
            .player
            .analyze(&self.state, color, req.interval)
            .ok_or_else(|| format!("player {} does not search: use --player mcts", self.player.name()))?;
        let ownership = req
            .ownership
            .then(|| weiqi_rules::estimate::estimate(&self.state).ok())
            .flatten()
            .map(|e| {
                let sign = if color == Color::Black { 1.0 } else { -1.0 };
                e.ownership.iter().map(|v| sign * v).collect::<Vec<f32>>()
            });
        Ok(req.line(&candidates, ownership.as_deref(), self.size()))
    }

    /// Answers one command.
    pub fn handle(&mut self, cmd: &Line) -> Reply {
        match self.dispatch(cmd) {
            Ok(text) => Reply::Ok(text),
            Err(text) => Reply::Err(text),
        }
    }

    fn dispatch(&mut self, cmd: &Line) -> Answer {
        match cmd.name.as_str() {
            "protocol_version" => Ok("2".into()),
            "name" => Ok("weiqi".into()),
            "version" => Ok(env!("CARGO_PKG_VERSION").into()),
            "known_command" => Ok(COMMANDS.contains(&arg(cmd, 0, "a command name")?).to_string()),
            "list_commands" => Ok(COMMANDS.join("\n")),
            "quit" => Ok(String::new()),
            "boardsize" => self.boardsize(cmd),
            "clear_board" => {
                self.state = self.fresh(self.size());
                Ok(String::new())
            }
            "komi" => {
                self.komi = number(cmd, 0, "komi (a number)")?;
                self.state.set_komi(self.komi);
                Ok(String::new())
            }
            "kgs-rules" => self.kgs_rules(cmd),
            "play" => self.play(cmd),
            "genmove" => self.genmove(cmd, true, false),
            "reg_genmove" => self.genmove(cmd, false, false),
            "kgs-genmove_cleanup" => self.genmove(cmd, true, true),
            "undo" => match self.state.undo() {
                Some(_) => Ok(String::new()),
                None => Err("cannot undo".into()),
            },
            "showboard" => Ok(self.showboard()),
            "final_score" => Ok(self.final_score()),
            "final_status_list" => self.final_status_list(cmd),
            "time_settings" => {
                let main = number(cmd, 0, "main time")?;
                let period = number(cmd, 1, "byo-yomi time")?;
                let stones = number(cmd, 2, "byo-yomi stones")?;
                self.set_time(TimeSettings::from_gtp(main, period, stones))
            }
            "kgs-time_settings" => self.kgs_time_settings(cmd),
            "time_left" => {
                let c = color(cmd, 0)?;
                let seconds = number(cmd, 1, "seconds left")?;
                let stones = number(cmd, 2, "stones left")?;
                self.left[c.index()] = Some(Left { seconds, stones });
                Ok(String::new())
            }
            "fixed_handicap" => self.fixed_handicap(cmd),
            "place_free_handicap" => self.place_free_handicap(cmd),
            "set_free_handicap" => self.set_free_handicap(cmd),
            "loadsgf" => self.loadsgf(cmd),
            "printsgf" => self.printsgf(cmd),
            _ => Err("unknown command".into()),
        }
    }

    fn boardsize(&mut self, cmd: &Line) -> Answer {
        let n: u32 = number(cmd, 0, "a board size")?;
        if !(MIN_SIZE as u32..=MAX_SIZE as u32).contains(&n) {
            return Err("unacceptable size".into());
        }
        self.state = self.fresh(n as u8);
        Ok(String::new())
    }

    /// The rule set for the game (KGS sends it before the first move). A game already
    /// under way is replayed under the new rules from its starting position, and refused
    /// if a move of it is illegal there. Komi stays as set.
    fn kgs_rules(&mut self, cmd: &Line) -> Answer {
        let name = arg(cmd, 0, "a rule set")?.to_ascii_lowercase().replace('_', "-");
        let preset: Preset = name.parse().map_err(|_| format!("unknown rules {name:?}"))?;
        let mut rules = preset.rules();
        rules.komi = self.komi;
        let mut s = State::from_board(self.state.initial_board().clone(), self.state.initial_to_move(), rules);
        s.set_handicap(self.state.handicap());
        for &(c, m) in self.state.moves() {
            if s.is_over() {
                s.resume();
            }
            s.play_color(c, m)
                .map_err(|e| format!("the game is illegal under {name}: {e}"))?;
        }
        self.preset = preset;
        self.state = s;
        Ok(String::new())
    }

    fn play(&mut self, cmd: &Line) -> Answer {
        let c = color(cmd, 0)?;
        let m = Move::from_gtp(arg(cmd, 1, "a vertex")?, self.size()).ok_or_else(|| syntax("a vertex"))?;
        // A controller may play on after two passes (a cleanup phase).
        if self.state.is_over() {
            self.state.resume();
        }
        self.state.play_color(c, m).map_err(|_| "illegal move".to_string())?;
        Ok(String::new())
    }

    fn genmove(&mut self, cmd: &Line, play: bool, cleanup: bool) -> Answer {
        let c = color(cmd, 0)?;
        let budget = self.time.budget(self.left[c.index()], self.move_cap);
        let choice = self.player.genmove(&self.state, c, budget, cleanup);
        let m = match choice {
            Choice::Resign => return Ok("resign".into()),
            Choice::Play(m) => m,
            Choice::Fail(why) => return Err(why),
        };
        if play {
            if self.state.is_over() {
                self.state.resume();
            }
            self.state
                .play_color(c, m)
                .map_err(|e| format!("the player chose an illegal move: {e}"))?;
        }
        Ok(m.to_gtp(self.size()))
    }

    fn showboard(&self) -> String {
        let board = self.state.board();
        let letters: String = (0..board.width())
            .map(|x| Point::new(x, 0).to_gtp(board.height()).chars().next().unwrap_or('?'))
            .map(|l| format!(" {l}"))
            .collect();
        let mut out = format!("\n  {letters}\n");
        for (k, row) in board.rows().iter().enumerate() {
            let n = board.height() as usize - k;
            let cells: String = row.chars().map(|c| format!(" {}", c.to_ascii_uppercase())).collect();
            out.push_str(&format!("{n:>2}{cells} {n}\n"));
        }
        out.push_str(&format!(
            "  {letters}\nB captures {}, W captures {}, {} to move",
            self.state.captures(Color::Black),
            self.state.captures(Color::White),
            if self.state.to_move() == Color::Black {
                "black"
            } else {
                "white"
            }
        ));
        out
    }

    fn dead(&self) -> Vec<Point> {
        self.dead_estimate.estimate(&self.state)
    }

    fn final_score(&self) -> String {
        self.state
            .score(&self.dead())
            .map_or_else(|_| "0".into(), |s| s.outcome.sgf())
    }

    fn final_status_list(&self, cmd: &Line) -> Answer {
        let dead = self.dead();
        let board = self.state.board();
        let stones = board.points().filter(|&p| board.get(p).is_some());
        // Seki as the rules crate's test finds it (chains living on shared liberties), never
        // a stone the estimate calls dead; alive is every other stone.
        let seki: Vec<Point> = weiqi_rules::seki_stones(board)
            .into_iter()
            .filter(|p| !dead.contains(p))
            .collect();
        let listed: Vec<Point> = match arg(cmd, 0, "a status (alive, dead or seki)")? {
            "dead" => dead,
            "alive" => stones.filter(|p| !dead.contains(p) && !seki.contains(p)).collect(),
            "seki" => seki,
            other => return Err(syntax(&format!("unknown status {other:?}"))),
        };
        Ok(vertices(&listed, board.height(), "\n"))
    }

    fn set_time(&mut self, t: TimeSettings) -> Answer {
        self.time = t;
        self.left = [None, None];
        Ok(String::new())
    }

    fn kgs_time_settings(&mut self, cmd: &Line) -> Answer {
        let t = match arg(cmd, 0, "a time system")? {
            "none" => TimeSettings::None,
            "absolute" => TimeSettings::Absolute {
                main: number(cmd, 1, "main time")?,
            },
            "byoyomi" => TimeSettings::ByoYomi {
                main: number(cmd, 1, "main time")?,
                period: number(cmd, 2, "period time")?,
                periods: number(cmd, 3, "periods")?,
            },
            "canadian" => TimeSettings::Canadian {
                main: number(cmd, 1, "main time")?,
                period: number(cmd, 2, "period time")?,
                stones: number(cmd, 3, "stones")?,
            },
            other => return Err(syntax(&format!("unknown time system {other:?}"))),
        };
        self.set_time(t)
    }

    /// Handicap stones are set on an empty board only.
    fn empty_board(&self) -> Result<(), String> {
        if self.state.board().empty_count() as u32 != self.state.board().area() || self.state.move_number() > 0 {
            return Err("board not empty".into());
        }
        Ok(())
    }

    fn with_handicap(&mut self, points: &[Point]) -> Answer {
        self.state = State::with_free_handicap(self.size(), points, self.rules())
            .map_err(|e| format!("invalid handicap: {e}"))?;
        Ok(vertices(points, self.size(), " "))
    }

    fn fixed_handicap(&mut self, cmd: &Line) -> Answer {
        let n: u32 = number(cmd, 0, "a number of stones")?;
        self.empty_board()?;
        if n < 2 {
            return Err("invalid number of stones".into());
        }
        let points = weiqi_rules::fixed_handicap(self.size(), n).map_err(|_| "invalid number of stones".to_string())?;
        self.with_handicap(&points)
    }

    fn place_free_handicap(&mut self, cmd: &Line) -> Answer {
        let n: u32 = number(cmd, 0, "a number of stones")?;
        self.empty_board()?;
        let area = self.state.board().area();
        if n < 2 || n >= area {
            return Err("invalid number of stones".into());
        }
        // The standard points as far as they go; then the points nearest the centre.
        let size = self.size();
        let fixed = n.min(weiqi_rules::max_fixed_handicap(size));
        let mut points = weiqi_rules::fixed_handicap(size, fixed).unwrap_or_default();
        let centre = (size as i32 - 1) as f64 / 2.0;
        let mut rest: Vec<Point> = self.state.board().points().filter(|p| !points.contains(p)).collect();
        rest.sort_by(|a, b| {
            let d = |p: &Point| (p.x as f64 - centre).powi(2) + (p.y as f64 - centre).powi(2);
            d(a).total_cmp(&d(b))
        });
        points.extend(rest.into_iter().take(n as usize - points.len()));
        self.with_handicap(&points)
    }

    fn set_free_handicap(&mut self, cmd: &Line) -> Answer {
        self.empty_board()?;
        let size = self.size();
        let points = cmd
            .args
            .iter()
            .map(|v| Point::from_gtp(v, size).ok_or_else(|| syntax("a vertex")))
            .collect::<Result<Vec<_>, _>>()?;
        if points.len() < 2 || points.len() as u32 >= self.state.board().area() {
            return Err("invalid number of stones".into());
        }
        self.with_handicap(&points).map(|_| String::new())
    }

    fn loadsgf(&mut self, cmd: &Line) -> Answer {
        let path = arg(cmd, 0, "a file name")?;
        let upto: Option<usize> = cmd.args.get(1).map(|_| number(cmd, 1, "a move number")).transpose()?;
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot load file: {e}"))?;
        let mut record = GameRecord::parse(&text).map_err(|e| format!("cannot load file: {e}"))?;
        // "loadsgf FILE N": the position before move N (1-based).
        if let Some(n) = upto {
            record.moves.truncate(n.saturating_sub(1));
        }
        let mut rules = record.named_rules().unwrap_or_else(|| self.preset.rules());
        if let Some(k) = record.komi {
            rules.komi = k;
        }
        let replay = record.replay(rules).map_err(|e| format!("cannot load file: {e}"))?;
        if let Some((n, _, why)) = replay.first_illegal {
            return Err(format!("cannot load file: move {n} is illegal ({why})"));
        }
        self.komi = rules.komi;
        self.state = replay.state;
        Ok(String::new())
    }

    fn printsgf(&mut self, cmd: &Line) -> Answer {
        let sgf = GameRecord::from_state(&self.state).to_sgf();
        match cmd.args.first() {
            Some(path) => std::fs::write(path, sgf)
                .map(|_| String::new())
                .map_err(|e| format!("cannot write file: {e}")),
            None => Ok(sgf),
        }
    }
}
