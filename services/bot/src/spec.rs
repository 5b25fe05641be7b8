//! What games a bot takes: the settings of the games it seeks (`--seek SPEC`) and the
//! filters an open game must pass before it joins one (`--join`).

use weiqi_proto::v1 as pb;
use weiqi_proto::v1::time_control::{Absolute, ByoYomi, Canadian, Fischer, Kind, NoClock};

/// A seek spec that cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("seek spec {spec:?}: {why}")]
pub struct BadSpec {
    pub spec: String,
    pub why: String,
}

/// Reads `key=value` pairs, comma-separated: `size=9,komi=7.5,time=byoyomi:600+3x30`,
/// with `rules=chinese`, `color=black|white|random`, `handicap=N` and `mode=casual|tournament`.
/// Times are in seconds. `time` is one of `none`, `absolute:MAIN`, `byoyomi:MAIN+PERIODSxSECONDS`,
/// `fischer:MAIN+INCREMENT`, `canadian:MAIN+STONES/SECONDS`.
pub fn parse_seek(spec: &str) -> Result<pb::GameSettings, BadSpec> {
    let bad = |why: String| BadSpec {
        spec: spec.to_string(),
        why,
    };
    let mut s = pb::GameSettings {
        board_size: 19,
        rules: "chinese".into(),
        color_choice: pb::ColorChoice::Random as i32,
        mode: pb::RefereeMode::Casual as i32,
        time_control: Some(time(Kind::None(NoClock {}))),
        ..Default::default()
    };
    for pair in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| bad(format!("{pair:?} is not key=value")))?;
        let number = |v: &str| {
            v.parse::<f64>()
                .map_err(|_| bad(format!("{key}: {v:?} is not a number")))
        };
        match key {
            "size" => s.board_size = number(value)? as u32,
            "komi" => s.komi = Some(number(value)?),
            "handicap" => s.handicap = number(value)? as u32,
            "rules" => s.rules = value.to_string(),
            "color" => {
                s.color_choice = match value {
                    "black" => pb::ColorChoice::HostBlack,
                    "white" => pb::ColorChoice::HostWhite,
                    "random" => pb::ColorChoice::Random,
                    _ => return Err(bad(format!("color {value:?} (black, white or random)"))),
                } as i32
            }
            "mode" => {
                s.mode = match value {
                    "casual" => pb::RefereeMode::Casual,
                    "tournament" => pb::RefereeMode::Tournament,
                    _ => return Err(bad(format!("mode {value:?} (casual or tournament)"))),
                } as i32
            }
            "time" => s.time_control = Some(time(parse_time(value).map_err(bad)?)),
            _ => return Err(bad(format!("unknown key {key:?}"))),
        }
    }
    Ok(s)
}

fn time(kind: Kind) -> pb::TimeControl {
    pb::TimeControl { kind: Some(kind) }
}

fn parse_time(v: &str) -> Result<Kind, String> {
    let ms = |t: &str| -> Result<u64, String> {
        let s: f64 = t
            .parse()
            .map_err(|_| format!("time: {t:?} is not a number of seconds"))?;
        if !(s.is_finite() && s >= 0.0) {
            return Err(format!("time: {t:?} is not a number of seconds"));
        }
        Ok((s * 1000.0).round() as u64)
    };
    let count = |t: &str| t.parse::<u32>().map_err(|_| format!("time: {t:?} is not a count"));
    let (kind, rest) = v.split_once(':').unwrap_or((v, ""));
    let split = |r: &str, sep: char| {
        r.split_once(sep)
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .ok_or_else(|| format!("time {v:?}: expected {sep:?}"))
    };
    Ok(match kind {
        "none" => Kind::None(NoClock {}),
        "absolute" => Kind::Absolute(Absolute { main_ms: ms(rest)? }),
        "byoyomi" => {
            let (main, periods) = split(rest, '+')?;
            let (n, secs) = split(&periods, 'x')?;
            Kind::ByoYomi(ByoYomi {
                main_ms: ms(&main)?,
                periods: count(&n)?,
                period_ms: ms(&secs)?,
            })
        }
        "fischer" => {
            let (main, inc) = split(rest, '+')?;
            Kind::Fischer(Fischer {
                main_ms: ms(&main)?,
                increment_ms: ms(&inc)?,
                cap_ms: None,
            })
        }
        "canadian" => {
            let (main, period) = split(rest, '+')?;
            let (stones, secs) = split(&period, '/')?;
            Kind::Canadian(Canadian {
                main_ms: ms(&main)?,
                stones: count(&stones)?,
                period_ms: ms(&secs)?,
            })
        }
        _ => {
            return Err(format!(
                "time kind {kind:?} (none, absolute, byoyomi, fischer or canadian)"
            ));
        }
    })
}

/// Which open games a joining bot accepts.
#[derive(Debug, Clone, PartialEq)]
pub struct JoinFilter {
    pub sizes: Vec<u32>,
    pub komi: (f64, f64),
    pub rules: Vec<String>,
    pub handicap: bool,
    /// Longest main time accepted, seconds (correspondence games have none and pass).
    pub max_main_s: f64,
    /// Shortest time per move (byo-yomi period, Fischer increment, Canadian period per
    /// stone) accepted, seconds: an engine needs time to think.
    pub min_move_s: f64,
}

/// Why a bot refuses a game: the reason a challenge is declined with, and words for the
/// log.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub reason: pb::DeclineReason,
    pub why: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.why)
    }
}

impl JoinFilter {
    /// Why the game is not for this bot, or `None` when it is.
    pub fn refuses(&self, s: &pb::GameSettings) -> Option<Refusal> {
        use pb::DeclineReason as R;
        let no = |reason: R, why: String| Some(Refusal { reason, why });
        let size = if s.board_size == 0 { 19 } else { s.board_size };
        if !self.sizes.contains(&size) {
            return no(R::BoardSize, format!("board size {size} not in {:?}", self.sizes));
        }
        let komi = s.komi.unwrap_or(7.5);
        if komi < self.komi.0 || komi > self.komi.1 {
            return no(R::Komi, format!("komi {komi} outside {:?}", self.komi));
        }
        let rules = if s.rules.is_empty() { "chinese" } else { &s.rules };
        if !self.rules.iter().any(|r| r == rules) {
            return no(R::Rules, format!("rules {rules} not in {:?}", self.rules));
        }
        if s.handicap > 0 && (!self.handicap || s.free_handicap) {
            return no(R::Handicap, "handicap games not taken (free placement never)".into());
        }
        if s.color_choice == pb::ColorChoice::Nigiri as i32 || s.scheduled_start_ms.is_some() {
            return no(R::Generic, "nigiri and scheduled games need a person".into());
        }
        let (main, per_move) = time_shape(s.time_control.as_ref());
        if main > self.max_main_s {
            return no(
                R::TimeControl,
                format!("main time {main} s above {} s", self.max_main_s),
            );
        }
        if per_move < self.min_move_s {
            return no(
                R::TimeControl,
                format!("{per_move} s per move below {} s", self.min_move_s),
            );
        }
        None
    }
}

/// Main time and the time a player gets per move once it is spent, in seconds (infinite
/// for no clock; an absolute clock gives nothing per move).
fn time_shape(tc: Option<&pb::TimeControl>) -> (f64, f64) {
    let s = |ms: u64| ms as f64 / 1000.0;
    match tc.and_then(|t| t.kind.as_ref()) {
        None | Some(Kind::None(_)) => (0.0, f64::INFINITY),
        Some(Kind::Absolute(a)) => (s(a.main_ms), 0.0),
        Some(Kind::Fischer(f)) => (s(f.main_ms), s(f.increment_ms)),
        Some(Kind::ByoYomi(b)) => (s(b.main_ms), s(b.period_ms)),
        Some(Kind::Canadian(c)) => (s(c.main_ms), s(c.period_ms) / c.stones.max(1) as f64),
        Some(Kind::GamePlusMove(g)) => (s(g.main_ms), s(g.per_move_ms)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seek_specs_read_every_time_control() {
        let s = parse_seek("size=9,komi=7.5,time=byoyomi:600+3x30").unwrap();
        assert_eq!((s.board_size, s.komi), (9, Some(7.5)));
        let Some(Kind::ByoYomi(b)) = s.time_control.unwrap().kind else {
            panic!()
        };
        assert_eq!((b.main_ms, b.periods, b.period_ms), (600_000, 3, 30_000));
        let s = parse_seek("time=canadian:300+25/600,color=black,mode=tournament").unwrap();
        let Some(Kind::Canadian(c)) = s.time_control.unwrap().kind else {
            panic!()
        };
        assert_eq!((c.main_ms, c.stones, c.period_ms), (300_000, 25, 600_000));
        assert_eq!(s.color_choice, pb::ColorChoice::HostBlack as i32);
        assert!(matches!(
            parse_seek("time=fischer:60+5").unwrap().time_control.unwrap().kind,
            Some(Kind::Fischer(_))
        ));
        assert!(matches!(
            parse_seek("time=absolute:60").unwrap().time_control.unwrap().kind,
            Some(Kind::Absolute(_))
        ));
    }

    #[test]
    fn bad_seek_specs_say_why() {
        for spec in [
            "size",
            "size=x",
            "colour=black",
            "time=byoyomi:600",
            "time=hourglass:5",
            "color=red",
            "time=absolute:-1",
        ] {
            let e = parse_seek(spec).unwrap_err();
            assert_eq!(e.spec, spec);
            assert!(!e.why.is_empty());
        }
    }

    #[test]
    fn filters_refuse_with_a_reason() {
        let f = JoinFilter {
            sizes: vec![9, 13],
            komi: (5.5, 7.5),
            rules: vec!["chinese".into()],
            handicap: false,
            max_main_s: 1200.0,
            min_move_s: 5.0,
        };
        let ok = parse_seek("size=9,komi=7.5,time=byoyomi:600+3x30").unwrap();
        assert_eq!(f.refuses(&ok), None);
        use pb::DeclineReason as R;
        for (spec, reason) in [
            ("size=19", R::BoardSize),
            ("size=9,komi=0.5", R::Komi),
            ("size=9,rules=japanese", R::Rules),
            ("size=9,handicap=2", R::Handicap),
            ("size=9,time=absolute:60", R::TimeControl),
            ("size=9,time=byoyomi:3600+3x30", R::TimeControl),
            ("size=9,time=fischer:60+1", R::TimeControl),
        ] {
            let refusal = f.refuses(&parse_seek(spec).unwrap());
            assert_eq!(refusal.map(|r| r.reason), Some(reason), "{spec}");
        }
    }
}
