//! The training loop's record (`loop.json` in the run's directory): its settings, and per
//! generation what each step produced. The loop goes on from it after a kill at any step:
//! a generation's first missing entry is the step to run, and each step's output is
//! written before its entry (self-play additionally resumes shard by shard).
//!
//! Layout of a run, as minigo and KataGo lay theirs out:
//! `gen=<n>/selfplay/` (the generation's shards and manifest), `gen=<n>/model.safetensors`
//! (the network trained in generation n, with `.json` and `.csv` beside it), `loop.json`,
//! and `report/` (SVG plots, `elo.json`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use weiqi_rating::elo::{HeadToHead, fit};

use crate::Error;
use crate::arena::ArenaResult;
use crate::schedule::LrSchedule;

/// The loop's settings; a run goes on only with the settings it started with (apart from
/// `generations`, which may be raised to go further).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopConfig {
    pub size: u8,
    pub komi: f64,
    /// Rules preset (chinese, tromp-taylor, ...).
    pub rules: String,
    /// Stop once this many generations are complete (generation 0 included).
    pub generations: u32,
    /// Self-play games per generation.
    pub games: u64,
    /// PUCT visits per move in self-play with the best network.
    pub visits: u32,
    /// Train on the data of the last `window` generations.
    pub window: u32,
    pub steps: usize,
    pub batch: usize,
    pub lr: f64,
    /// How the rate moves over each generation's steps (constant in a record without it).
    #[serde(default, skip_serializing_if = "LrSchedule::is_constant")]
    pub lr_schedule: LrSchedule,
    /// The network's shape (generation 0; later ones continue from the best).
    pub blocks: i64,
    pub channels: i64,
    /// Gate: the candidate plays the best this many games, colours alternating...
    pub gate_games: u32,
    /// ...with this many visits a move...
    pub gate_visits: u32,
    /// ...and is promoted at this score rate or more (draws count half).
    pub promote_at: f64,
    /// Games of each generation's network against each fixed player (Elo anchors).
    pub anchor_games: u32,
    /// GTP engines among the fixed players (command lines such as `gnugo --mode gtp
    /// --level 1`), after uniform and light random play.
    #[serde(default)]
    pub gtp_anchors: Vec<String>,
    pub threads: usize,
    pub seed: u64,
    /// Gumbel AlphaZero's root over this many moves, in self-play, gates and anchors,
    /// instead of PUCT's (issue 48). The options below are off in a record without them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gumbel: Option<u32>,
    /// KataGo's playout cap randomization in self-play (`visits` for the full searches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub playout_cap: Option<weiqi_selfplay::PlayoutCap>,
    /// KataGo's forced playouts and policy target pruning in self-play.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forced_playouts: bool,
    /// KataGo's global pooling in the residual blocks (generation 0's network on).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub global_pooling: bool,
    /// A score head trained on the final margin (an auxiliary target).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub score_head: bool,
    /// An opponent-reply head trained on the move the opponent played next (an auxiliary
    /// target, KataGo's).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub opponent_head: bool,
    /// Generation 0 plays the project's tree search with this many playouts a move
    /// (`crate::teacher`) instead of light playouts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teacher: Option<u32>,
}

impl LoopConfig {
    /// Refuses settings the loop cannot run, naming the setting.
    pub fn validate(&self) -> Result<(), Error> {
        let bad = |why: &str| Err(Error::Invalid(why.to_string()));
        if !(weiqi_rules::MIN_SIZE..=weiqi_rules::MAX_SIZE).contains(&self.size) {
            return bad("size: 2..=25");
        }
        if self.generations == 0 || self.games == 0 || self.window == 0 || self.visits == 0 || self.gate_visits == 0 {
            return bad("generations, games, window, visits and gate visits must be at least 1");
        }
        if self.gate_games == 0 || !(0.0..=1.0).contains(&self.promote_at) {
            return bad("gate games: at least 1; promote-at: a score rate in 0..1");
        }
        if self.steps == 0
            || self.batch == 0
            || self.lr.is_nan()
            || self.lr <= 0.0
            || self.blocks < 1
            || self.channels < 1
        {
            return bad("steps, batch, blocks and channels: at least 1; lr: above 0");
        }
        if self.gumbel == Some(0) {
            return bad("gumbel: at least 1 root move");
        }
        if self.teacher == Some(0) || self.teacher.is_some_and(|p| p > 1_000_000) {
            return bad("teacher: 1 to 1000000 playouts a move");
        }
        if let Some(cap) = &self.playout_cap {
            cap.validate()
                .map_err(|e| Error::Invalid(format!("playout cap: {e}")))?;
            if cap.cheap_visits > self.visits {
                return bad("playout cap: cheap visits above the full searches' visits");
            }
        }
        Ok(())
    }
}

/// What one generation's self-play produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelfplayRecord {
    /// `light` (generation 0) or the best network's generation, `gen=<n>`.
    pub player: String,
    pub games: u64,
    pub positions: u64,
    pub seconds: f64,
}

/// One generation's training.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainingRecord {
    /// The generations whose data it read (the window).
    pub data: Vec<u32>,
    /// The network it started from (`None`: random weights).
    pub init: Option<u32>,
    /// Mean losses at each logging point.
    pub losses: Vec<crate::Losses>,
    pub seconds: f64,
}

/// One generation: filled in step by step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Generation {
    pub number: u32,
    pub selfplay: Option<SelfplayRecord>,
    pub training: Option<TrainingRecord>,
    /// The candidate against the best (generation 0 has no gate: its network is the first
    /// best).
    pub gate: Option<ArenaResult>,
    pub promoted: Option<bool>,
    /// The candidate against each fixed player.
    pub anchors: Option<Vec<ArenaResult>>,
}

/// The step a generation is at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    SelfPlay,
    Train,
    Gate,
    Anchors,
    Done,
}

impl Generation {
    pub fn new(number: u32) -> Generation {
        Generation {
            number,
            selfplay: None,
            training: None,
            gate: None,
            promoted: None,
            anchors: None,
        }
    }

    pub fn step(&self) -> Step {
        if self.selfplay.is_none() {
            Step::SelfPlay
        } else if self.training.is_none() {
            Step::Train
        } else if self.promoted.is_none() {
            Step::Gate
        } else if self.anchors.is_none() {
            Step::Anchors
        } else {
            Step::Done
        }
    }
}

/// The whole record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopState {
    pub config: LoopConfig,
    /// The generation whose network is the best so far.
    pub best: Option<u32>,
    pub generations: Vec<Generation>,
}

/// The fixed players every generation's network meets, in Elo order of the table: the
/// first is the anchor at 0.
pub const ANCHORS: [&str; 2] = ["uniform", "light"];

/// One player's fitted Elo.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EloEntry {
    pub player: String,
    pub elo: f64,
}

impl LoopState {
    pub const FILE: &'static str = "loop.json";

    /// The record in `dir`, or a new one for `config`. A record of other settings is an
    /// error naming the file.
    pub fn open(dir: &Path, config: &LoopConfig) -> Result<LoopState, Error> {
        config.validate()?;
        let path = dir.join(Self::FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(LoopState {
                    config: config.clone(),
                    best: None,
                    generations: Vec::new(),
                });
            }
            Err(e) => return Err(e.into()),
        };
        let mut state: LoopState = serde_json::from_str(&text)
            .map_err(|e| Error::Invalid(format!("{}: not a loop record: {e}", path.display())))?;
        let same = LoopConfig {
            generations: config.generations,
            ..state.config.clone()
        };
        if same != *config {
            // Name the settings that differ (a machine with other cores: --threads).
            let (was, now) = (serde_json::to_value(&same)?, serde_json::to_value(config)?);
            // (An option left out of the record was off: a key only `now` has.)
            let unset = now
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, _)| was.get(k.as_str()).is_none())
                .map(|(k, _)| format!("{k} was off"));
            let differ: Vec<String> = was
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, v)| now.get(k.as_str()) != Some(v))
                .map(|(k, v)| format!("{k} was {v}"))
                .chain(unset)
                .collect();
            return Err(Error::Invalid(format!(
                "{} is a loop with other settings ({}): give the same ones, or use another directory \
                 (only --generations may change)",
                path.display(),
                differ.join(", ")
            )));
        }
        state.config.generations = config.generations;
        Ok(state)
    }

    /// Writes the record whole or not at all (a temporary file renamed into place).
    pub fn save(&self, dir: &Path) -> Result<(), Error> {
        let tmp = dir.join("loop.json.partial");
        std::fs::write(&tmp, serde_json::to_vec_pretty(self)?)?;
        std::fs::rename(&tmp, dir.join(Self::FILE))?;
        Ok(())
    }

    /// The generation to work on: the last one until it is done, then a new one, or
    /// `None` once `generations` are done.
    pub fn current(&mut self) -> Option<&mut Generation> {
        let next = match self.generations.last() {
            Some(g) if g.step() != Step::Done => None,
            Some(g) => Some(g.number + 1),
            None => Some(0),
        };
        if let Some(n) = next {
            if n >= self.config.generations {
                return None;
            }
            self.generations.push(Generation::new(n));
        }
        self.generations.last_mut()
    }

    /// Elo of the fixed players and of every generation's network, fitted to all the
    /// games recorded (gates and anchor games), with the first fixed player at 0.
    pub fn elo(&self) -> Vec<EloEntry> {
        elo_of_runs(&[("", self)]).0
    }
}

/// Elo of the fixed players and of the networks of several runs, fitted to all their
/// games at once, so that the runs' curves share one scale: the fixed players (uniform
/// and light random play, the GTP engines) are the same players in every run, and a run's
/// network is named with its label before it (`label/gen=3`; a label "" keeps
/// `gen=3`). The first fixed player is at 0. Returns the table, fixed players first, and
/// how many fixed players there are.
pub fn elo_of_runs(runs: &[(&str, &LoopState)]) -> (Vec<EloEntry>, usize) {
    let mut names: Vec<String> = ANCHORS.iter().map(|s| s.to_string()).collect();
    for (_, run) in runs {
        for c in &run.config.gtp_anchors {
            let name = format!("gtp:{c}");
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    let fixed = names.len();
    for (label, run) in runs {
        names.extend(run.generations.iter().map(|g| labelled(label, &model_name(g.number))));
    }
    let mut table = Vec::new();
    for (label, run) in runs {
        // A player is a fixed one, or this run's network.
        let index = |name: &str| {
            names[..fixed]
                .iter()
                .position(|n| n == name)
                .or_else(|| names.iter().position(|n| *n == labelled(label, name)))
        };
        let mut add = |r: &ArenaResult| {
            if let (Some(a), Some(b)) = (index(&r.a), index(&r.b)) {
                table.push(HeadToHead {
                    a,
                    b,
                    a_score: r.a_wins as f64 + 0.5 * r.draws as f64,
                    games: r.games as f64,
                });
            }
        };
        for g in &run.generations {
            g.gate.iter().for_each(&mut add);
            g.anchors.iter().flatten().for_each(&mut add);
        }
    }
    let table = fit(names.len(), &table, 0)
        .into_iter()
        .zip(names)
        .map(|(elo, player)| EloEntry { player, elo })
        .collect();
    (table, fixed)
}

/// A run's network `name` in a fit of several runs ([`elo_of_runs`]): `label/name`, or
/// `name` alone for the label "".
pub fn labelled(label: &str, name: &str) -> String {
    match label {
        "" => name.to_string(),
        l => format!("{l}/{name}"),
    }
}

/// How a generation's network is named in arena results and the Elo table.
pub fn model_name(number: u32) -> String {
    format!("gen={number}")
}

/// A generation's folder in the run.
pub fn gen_dir(run: &Path, number: u32) -> PathBuf {
    run.join(format!("gen={number}"))
}

/// A generation's network.
pub fn model_path(run: &Path, number: u32) -> PathBuf {
    gen_dir(run, number).join("model.safetensors")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn config() -> LoopConfig {
        LoopConfig {
            size: 5,
            komi: 0.5,
            rules: "chinese".into(),
            generations: 3,
            games: 8,
            visits: 4,
            window: 2,
            steps: 10,
            batch: 16,
            lr: 1e-3,
            lr_schedule: LrSchedule::Constant,
            blocks: 1,
            channels: 8,
            gate_games: 4,
            gate_visits: 4,
            promote_at: 0.55,
            anchor_games: 2,
            gtp_anchors: vec![],
            threads: 1,
            seed: 1,
            gumbel: None,
            playout_cap: None,
            forced_playouts: false,
            global_pooling: false,
            score_head: false,
            opponent_head: false,
            teacher: None,
        }
    }

    pub fn result(a: &str, b: &str, a_wins: u32, b_wins: u32) -> ArenaResult {
        let games = a_wins + b_wins;
        ArenaResult {
            a: a.into(),
            b: b.into(),
            games,
            a_wins,
            b_wins,
            draws: 0,
            a_rate: a_wins as f64 / games as f64,
            ci95: weiqi_rating::wilson95(a_wins as f64, games as f64),
        }
    }

    #[test]
    fn steps_follow_the_record_and_resume_where_it_stops() {
        let dir = std::env::temp_dir().join(format!("weiqi-loop-state-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut s = LoopState::open(&dir, &config()).unwrap();
        let g = s.current().unwrap();
        assert_eq!((g.number, g.step()), (0, Step::SelfPlay));
        g.selfplay = Some(SelfplayRecord {
            player: "light".into(),
            games: 8,
            positions: 100,
            seconds: 1.0,
        });
        s.save(&dir).unwrap();
        // A restart reads the record and is at the same generation's next step.
        let mut again = LoopState::open(&dir, &config()).unwrap();
        assert_eq!(again, s);
        let g = again.current().unwrap();
        assert_eq!((g.number, g.step()), (0, Step::Train));
        g.training = Some(TrainingRecord {
            data: vec![0],
            init: None,
            losses: vec![],
            seconds: 1.0,
        });
        g.promoted = Some(true);
        g.anchors = Some(vec![]);
        assert_eq!(g.step(), Step::Done);
        assert_eq!(again.current().unwrap().number, 1, "a done generation opens the next");
        // Other settings are refused; more generations are not.
        let mut other = config();
        other.games = 9;
        let err = LoopState::open(&dir, &other).unwrap_err().to_string();
        assert!(err.contains("loop.json") && err.contains("games was 8"), "{err}");
        let mut more = config();
        more.generations = 10;
        assert_eq!(LoopState::open(&dir, &more).unwrap().config.generations, 10);
        // A record written before issue 48's options has none of their keys: it reads as
        // with them off, and turning one on is refused by name.
        let text = std::fs::read_to_string(dir.join(LoopState::FILE)).unwrap();
        for key in [
            "gumbel",
            "playout_cap",
            "forced_playouts",
            "global_pooling",
            "teacher",
            "score_head",
            "lr_schedule",
        ] {
            assert!(!text.contains(key), "{key} in {text}");
        }
        let mut forced = config();
        forced.forced_playouts = true;
        let err = LoopState::open(&dir, &forced).unwrap_err().to_string();
        assert!(err.contains("forced_playouts was off"), "{err}");
        let mut cosine = config();
        cosine.lr_schedule = LrSchedule::Cosine;
        let err = LoopState::open(&dir, &cosine).unwrap_err().to_string();
        assert!(err.contains("lr_schedule was off"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The options' settings are checked, naming the one that is wrong.
    #[test]
    fn options_are_validated() {
        let with = |f: &dyn Fn(&mut LoopConfig)| {
            let mut c = config();
            f(&mut c);
            c.validate().map_err(|e| e.to_string())
        };
        assert!(with(&|_| {}).is_ok());
        assert!(with(&|c| c.gumbel = Some(0)).unwrap_err().contains("gumbel"));
        let cap = |full_fraction, cheap_visits| {
            Some(weiqi_selfplay::PlayoutCap {
                full_fraction,
                cheap_visits,
            })
        };
        assert!(with(&|c| c.playout_cap = cap(0.25, 2)).is_ok());
        assert!(
            with(&|c| c.playout_cap = cap(0.0, 2))
                .unwrap_err()
                .contains("full fraction")
        );
        assert!(
            with(&|c| c.playout_cap = cap(1.5, 2))
                .unwrap_err()
                .contains("full fraction")
        );
        assert!(
            with(&|c| c.playout_cap = cap(0.25, 0))
                .unwrap_err()
                .contains("cheap visits")
        );
        assert!(with(&|c| c.playout_cap = cap(0.25, 5)).unwrap_err().contains("above"));
    }

    #[test]
    fn elo_is_anchored_and_orders_the_players() {
        let mut s = LoopState::open(Path::new("/nonexistent"), &config()).unwrap();
        let mut g0 = Generation::new(0);
        g0.anchors = Some(vec![
            result("gen=0", "uniform", 15, 5),
            result("gen=0", "light", 10, 10),
        ]);
        let mut g1 = Generation::new(1);
        g1.gate = Some(result("gen=1", "gen=0", 15, 5));
        g1.anchors = Some(vec![result("gen=1", "uniform", 19, 1), result("gen=1", "light", 15, 5)]);
        s.generations = vec![g0, g1];
        let elo = s.elo();
        let of = |p: &str| elo.iter().find(|e| e.player == p).unwrap().elo;
        assert_eq!(of("uniform"), 0.0);
        assert!(of("light") > 100.0, "{elo:?}");
        assert!(of("gen=1") > of("gen=0") && of("gen=0") > of("uniform"), "{elo:?}");
    }

    /// Two runs on one scale: the fixed players appear once, each run's networks under
    /// its label, the one that scored better against the same players above the other
    /// (though the two never met), and a run fitted alone keeps its plain names.
    #[test]
    fn runs_share_one_scale_through_the_fixed_players() {
        let run = |wins: u32, gnugo: bool| {
            let mut c = config();
            if gnugo {
                c.gtp_anchors = vec!["gnugo --level 1".into()];
            }
            let mut s = LoopState::open(Path::new("/nonexistent"), &c).unwrap();
            let mut g = Generation::new(0);
            g.anchors = Some(vec![
                result("gen=0", "uniform", wins, 20 - wins),
                result("gen=0", "light", wins / 2, 20 - wins / 2),
                result("gen=0", "gtp:gnugo --level 1", 1, 19),
            ]);
            s.generations = vec![g];
            s
        };
        let (a, b) = (run(12, true), run(18, true));
        let (elo, fixed) = elo_of_runs(&[("a", &a), ("b", &b)]);
        assert_eq!(fixed, 3);
        let names: Vec<&str> = elo.iter().map(|e| e.player.as_str()).collect();
        assert_eq!(names, ["uniform", "light", "gtp:gnugo --level 1", "a/gen=0", "b/gen=0"]);
        let of = |p: &str| elo.iter().find(|e| e.player == p).unwrap().elo;
        assert_eq!(of("uniform"), 0.0);
        assert!(of("b/gen=0") > of("a/gen=0") + 50.0, "{elo:?}");
        // A run that does not list the GTP anchor still counts its games against it, as
        // against the same player: its network lands where b's (same games) does.
        let c = run(18, false);
        let (elo_c, _) = elo_of_runs(&[("a", &a), ("c", &c)]);
        assert_eq!(elo_c.len(), 5, "{elo_c:?}");
        let of_c = |p: &str| elo_c.iter().find(|e| e.player == p).unwrap().elo;
        assert!((of_c("c/gen=0") - of("b/gen=0")).abs() < 1.0, "{elo_c:?} {elo:?}");
        assert_eq!(
            a.elo().iter().map(|e| e.player.as_str()).collect::<Vec<_>>()[3],
            "gen=0"
        );
    }

    #[test]
    fn bad_settings_are_named() {
        let mut c = config();
        c.promote_at = 1.5;
        assert!(c.validate().unwrap_err().to_string().contains("promote-at"));
        c = config();
        c.size = 1;
        assert!(c.validate().unwrap_err().to_string().contains("size"));
    }
}
