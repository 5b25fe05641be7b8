//! The one place where protobuf meets the domain: settings, states, events, errors.

use std::collections::HashMap;

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};
use weiqi_game::{
    ClockField, ColorChoice, EndReason, Event, EventKind, Game, GameResult, LagComp, Ms, Parity, Phase, PlayerTime,
    RefereeMode, Rejection, SettingField, Settings, TimeControl,
};
use weiqi_proto::v1 as pb;
use weiqi_rules::{Color, Move, Point, Preset};

pub const DOMAIN: &str = "weiqi.v1";
/// Trailing metadata key that carries the current state of a stale call.
pub const STATE_TRAILER: &str = "weiqi-game-state-bin";

/// A client's request id: at most 128 characters, none of them control characters (a
/// NUL cannot even be stored in a PostgreSQL text column).
pub fn request_id(id: &str) -> Result<(), Status> {
    if id.len() > 128 || id.chars().any(char::is_control) {
        return Err(invalid(
            "request_id is at most 128 characters, with no control characters",
        ));
    }
    Ok(())
}

/// A game id as clients may send it: 1 to 64 characters, none of them control characters.
pub fn game_id(id: &str) -> Result<(), Status> {
    if id.is_empty() || id.len() > 64 || id.chars().any(char::is_control) {
        return Err(invalid(
            "a game id is required (at most 64 characters, no control characters)",
        ));
    }
    Ok(())
}

/// INVALID_ARGUMENT naming the request field at fault (`google.rpc.BadRequest`), with
/// an `ErrorInfo` (reason `bad_setting`, the field in its metadata).
pub fn bad_request(field: &str, msg: impl Into<String>) -> Status {
    let msg = msg.into();
    let mut details = ErrorDetails::with_error_info(
        "bad_setting",
        DOMAIN,
        HashMap::from([("field".to_string(), field.to_string())]),
    );
    details.add_bad_request_violation(field, msg.clone());
    Status::with_error_details(Code::InvalidArgument, msg, details)
}

/// The request field a refused setting came from.
pub fn setting_field(f: SettingField) -> String {
    let path = match f {
        SettingField::BoardSize => "settings.board_size",
        SettingField::Komi => "settings.komi",
        SettingField::Handicap => "settings.handicap",
        SettingField::LagAllowance => "settings.lag_allowance_ms",
        SettingField::MaxLateness => "settings.max_lateness_ms",
        SettingField::ScheduledStart => "settings.scheduled_start_ms",
        SettingField::NigiriTimeout => "settings.nigiri_timeout_ms",
        SettingField::NigiriCommitment => "nigiri_commitment",
        SettingField::Time { control, field } => {
            let kind = match control {
                TimeControl::None => "none",
                TimeControl::Absolute { .. } => "absolute",
                TimeControl::Fischer { .. } => "fischer",
                TimeControl::ByoYomi { .. } => "byo_yomi",
                TimeControl::Canadian { .. } => "canadian",
                TimeControl::GamePlusMove { .. } => "game_plus_move",
            };
            let value = match field {
                ClockField::MainTime => "main_ms",
                ClockField::Periods => "periods",
                ClockField::PeriodTime => "period_ms",
                ClockField::Stones => "stones",
                ClockField::Increment => "increment_ms",
                ClockField::Cap => "cap_ms",
                ClockField::PerMove => "per_move_ms",
                ClockField::LagAllowance => return "settings.lag_allowance_ms".into(),
            };
            return format!("settings.time_control.{kind}.{value}");
        }
    };
    path.into()
}

/// A status with an `ErrorInfo` (domain `weiqi.v1`, `reason`, and `meta`): every error
/// this server makes carries one.
pub fn error(code: Code, reason: &str, msg: impl Into<String>, meta: &[(&str, &str)]) -> Status {
    let meta: HashMap<String, String> = meta.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Status::with_error_details(code, msg.into(), ErrorDetails::with_error_info(reason, DOMAIN, meta))
}

pub fn invalid(msg: impl Into<String>) -> Status {
    let msg = msg.into();
    Status::with_error_details(
        Code::InvalidArgument,
        msg.clone(),
        ErrorDetails::with_error_info("invalid_argument", DOMAIN, HashMap::new()),
    )
}

pub fn color_to(c: Option<Color>) -> i32 {
    match c {
        Some(Color::Black) => pb::Color::Black as i32,
        Some(Color::White) => pb::Color::White as i32,
        None => pb::Color::Unspecified as i32,
    }
}

pub fn point_to(p: Point) -> pb::Point {
    pb::Point {
        x: p.x as u32,
        y: p.y as u32,
    }
}

/// A point from the wire, within the largest board (the referee checks it against the
/// game's own).
pub fn point_from(p: Option<&pb::Point>) -> Result<Point, Status> {
    let p = p.ok_or_else(|| invalid("a point is required"))?;
    let max = weiqi_rules::MAX_SIZE as u32;
    if p.x >= max || p.y >= max {
        return Err(invalid(format!("point ({}, {}) is off every board", p.x, p.y)));
    }
    Ok(Point::new(p.x as u8, p.y as u8))
}

pub fn time_from(t: Option<&pb::TimeControl>) -> Result<TimeControl, Status> {
    use pb::time_control::Kind;
    Ok(match t.and_then(|t| t.kind.as_ref()) {
        None | Some(Kind::None(_)) => TimeControl::None,
        Some(Kind::Absolute(a)) => TimeControl::Absolute { main_ms: a.main_ms },
        Some(Kind::Fischer(f)) => TimeControl::Fischer {
            main_ms: f.main_ms,
            increment_ms: f.increment_ms,
            cap_ms: f.cap_ms,
        },
        Some(Kind::ByoYomi(b)) => TimeControl::ByoYomi {
            main_ms: b.main_ms,
            periods: b.periods,
            period_ms: b.period_ms,
        },
        Some(Kind::Canadian(c)) => TimeControl::Canadian {
            main_ms: c.main_ms,
            stones: c.stones,
            period_ms: c.period_ms,
        },
        Some(Kind::GamePlusMove(g)) => TimeControl::GamePlusMove {
            main_ms: g.main_ms,
            per_move_ms: g.per_move_ms,
        },
    })
}

pub fn time_to(t: TimeControl) -> pb::TimeControl {
    use pb::time_control::*;
    let kind = match t {
        TimeControl::None => Kind::None(NoClock {}),
        TimeControl::Absolute { main_ms } => Kind::Absolute(Absolute { main_ms }),
        TimeControl::Fischer {
            main_ms,
            increment_ms,
            cap_ms,
        } => Kind::Fischer(Fischer {
            main_ms,
            increment_ms,
            cap_ms,
        }),
        TimeControl::ByoYomi {
            main_ms,
            periods,
            period_ms,
        } => Kind::ByoYomi(ByoYomi {
            main_ms,
            periods,
            period_ms,
        }),
        TimeControl::Canadian {
            main_ms,
            stones,
            period_ms,
        } => Kind::Canadian(Canadian {
            main_ms,
            stones,
            period_ms,
        }),
        TimeControl::GamePlusMove { main_ms, per_move_ms } => Kind::GamePlusMove(GamePlusMove { main_ms, per_move_ms }),
    };
    pb::TimeControl { kind: Some(kind) }
}

/// Game settings from the wire; `default_lag_ms` is the server's lag allowance for games
/// that do not set one. (Bounds are the game's to check: [`rejection_to`] names the field.)
pub fn settings_from(s: Option<&pb::GameSettings>, default_lag_ms: Ms) -> Result<Settings, Status> {
    let s = s.cloned().unwrap_or_default();
    let size = if s.board_size == 0 { 19 } else { s.board_size };
    let size = u8::try_from(size)
        .map_err(|_| bad_request("settings.board_size", format!("board size {size} is not in 2..=25")))?;
    let preset: Preset = if s.rules.is_empty() {
        Preset::Chinese
    } else {
        s.rules
            .parse()
            .map_err(|e: weiqi_rules::RulesError| bad_request("settings.rules", e.to_string()))?
    };
    let mut rules = preset.rules();
    if let Some(k) = s.komi {
        rules.komi = k;
    }
    // An enum number this server does not know is refused, not read as the default: a
    // client newer than the server must not get, say, Black when it asked for nigiri.
    let colors = match pb::ColorChoice::try_from(s.color_choice)
        .map_err(|_| invalid(format!("unknown color_choice {}", s.color_choice)))?
    {
        pb::ColorChoice::Unspecified | pb::ColorChoice::HostBlack => ColorChoice::HostBlack,
        pb::ColorChoice::HostWhite => ColorChoice::HostWhite,
        pb::ColorChoice::Random => ColorChoice::Random,
        pb::ColorChoice::Nigiri => ColorChoice::Nigiri,
    };
    let mode = match pb::RefereeMode::try_from(s.mode).map_err(|_| invalid(format!("unknown mode {}", s.mode)))? {
        pb::RefereeMode::Unspecified | pb::RefereeMode::Casual => RefereeMode::Casual,
        pb::RefereeMode::Tournament => RefereeMode::Tournament,
    };
    let mut out = Settings::casual(size);
    out.rules = rules;
    out.handicap = s.handicap;
    out.free_handicap = s.free_handicap;
    out.time = time_from(s.time_control.as_ref())?;
    out.lag = LagComp::allowance(s.lag_allowance_ms.unwrap_or(default_lag_ms));
    out.colors = colors;
    out.mode = mode;
    out.allow_undo = s.allow_undo.unwrap_or(true);
    out.scheduled_start = s.scheduled_start_ms;
    out.max_lateness_ms = s.max_lateness_ms;
    Ok(out)
}

pub fn settings_to(s: &Settings) -> pb::GameSettings {
    pb::GameSettings {
        board_size: s.size as u32,
        rules: weiqi_rules::sgf::rules_name(&s.rules),
        komi: Some(s.rules.komi),
        handicap: s.handicap,
        free_handicap: s.free_handicap,
        time_control: Some(time_to(s.time)),
        color_choice: match s.colors {
            ColorChoice::HostBlack => pb::ColorChoice::HostBlack,
            ColorChoice::HostWhite => pb::ColorChoice::HostWhite,
            ColorChoice::Random => pb::ColorChoice::Random,
            ColorChoice::Nigiri => pb::ColorChoice::Nigiri,
        } as i32,
        mode: match s.mode {
            RefereeMode::Casual => pb::RefereeMode::Casual,
            RefereeMode::Tournament => pb::RefereeMode::Tournament,
        } as i32,
        allow_undo: Some(s.allow_undo),
        lag_allowance_ms: Some(s.lag.max_per_move_ms),
        scheduled_start_ms: s.scheduled_start,
        max_lateness_ms: s.max_lateness_ms,
    }
}

pub fn phase_to(p: Phase) -> pb::Phase {
    match p {
        Phase::WaitingForOpponent => pb::Phase::WaitingForOpponent,
        Phase::Nigiri => pb::Phase::Nigiri,
        Phase::Scheduled => pb::Phase::Scheduled,
        Phase::PlacingHandicap => pb::Phase::PlacingHandicap,
        Phase::Playing => pb::Phase::Playing,
        Phase::Adjourned => pb::Phase::Adjourned,
        Phase::Scoring => pb::Phase::Scoring,
        Phase::Finished => pb::Phase::Finished,
    }
}

pub fn phase_name(p: Phase) -> &'static str {
    pb_phase_name(phase_to(p))
}

fn pb_phase_name(p: pb::Phase) -> &'static str {
    p.as_str_name()
}

pub fn clock_to(t: &PlayerTime) -> pb::ClockState {
    pb::ClockState {
        main_ms: t.main_ms,
        periods: t.periods,
        period_ms: t.period_ms,
        stones: t.stones,
        running: t.running,
        flagged: t.flagged,
    }
}

pub fn result_to(r: &GameResult) -> pb::GameResult {
    let reason = match r.reason {
        EndReason::Score => pb::EndReason::Score,
        EndReason::Resignation => pb::EndReason::Resignation,
        EndReason::Time => pb::EndReason::Time,
        EndReason::Forfeit => pb::EndReason::Forfeit,
        EndReason::DoubleForfeit => pb::EndReason::DoubleForfeit,
        EndReason::DrawByAgreement => pb::EndReason::DrawByAgreement,
        EndReason::Penalty => pb::EndReason::Penalty,
        EndReason::NoResult => pb::EndReason::NoResult,
        EndReason::Cancelled => pb::EndReason::Cancelled,
    };
    let (wmb, b, w) = r
        .score
        .as_ref()
        .map_or((0.0, 0.0, 0.0), |s| (s.white_minus_black, s.black, s.white));
    pb::GameResult {
        winner: color_to(r.winner),
        reason: reason as i32,
        white_minus_black: wmb,
        black_points: b,
        white_points: w,
        text: r.sgf(),
    }
}

/// The client-facing state of a game at `now` (ms).
pub fn state_to(game_id: &str, g: &Game, now: Ms) -> pb::GameState {
    let state = g.state();
    let clocks = g.clocks(now);
    let last_move = state.and_then(|s| match s.moves().last() {
        Some((_, Move::Place(p))) => Some(point_to(*p)),
        _ => None,
    });
    pb::GameState {
        game_id: game_id.to_string(),
        seq: g.seq(),
        phase: phase_to(g.phase()) as i32,
        settings: g.settings().map(settings_to),
        board: state.map(|s| s.board().rows()).unwrap_or_default(),
        to_move: color_to(g.to_move()),
        move_number: g.move_number() as u32,
        black_seat: match g.seat_of(Color::Black) {
            Some(weiqi_game::Seat::Host) => pb::Seat::Host,
            Some(weiqi_game::Seat::Guest) => pb::Seat::Guest,
            None => pb::Seat::Unspecified,
        } as i32,
        black_captures: state.map_or(0, |s| s.captures(Color::Black)),
        white_captures: state.map_or(0, |s| s.captures(Color::White)),
        black_clock: Some(clock_to(&clocks[0])),
        white_clock: Some(clock_to(&clocks[1])),
        result: g.result().map(result_to),
        pending_undo_from: color_to(g.pending_undo()),
        pending_draw_from: color_to(g.pending_draw()),
        dead_stones: g.proposal().unwrap_or_default().iter().map(|&p| point_to(p)).collect(),
        black_accepted: g.accepted()[0],
        white_accepted: g.accepted()[1],
        sealed_commitment: g.sealed_commitment().unwrap_or_default().to_string(),
        last_move,
        black_warnings: g.warnings(Color::Black),
        white_warnings: g.warnings(Color::White),
        server_time_ms: now as i64,
        ko_point: state.and_then(|s| s.ko_point()).map(point_to),
        nigiri_commitment: g.nigiri_commitment().unwrap_or_default().to_string(),
        nigiri_guess: g.nigiri_guess().map_or(pb::Parity::Unspecified, parity_to) as i32,
    }
}

pub fn parity_to(p: Parity) -> pb::Parity {
    match p {
        Parity::Odd => pb::Parity::Odd,
        Parity::Even => pb::Parity::Even,
    }
}

/// A nigiri guess; none when unspecified.
pub fn parity_from(p: i32) -> Result<Option<Parity>, Status> {
    match pb::Parity::try_from(p) {
        Ok(pb::Parity::Unspecified) => Ok(None),
        Ok(pb::Parity::Odd) => Ok(Some(Parity::Odd)),
        Ok(pb::Parity::Even) => Ok(Some(Parity::Even)),
        Err(_) => Err(invalid(format!("unknown nigiri guess {p}"))),
    }
}

/// A lobby row from a shared store.
pub fn lobby_row_to(r: weiqi_store::LobbyRow) -> pb::GameSummary {
    pb::GameSummary {
        game_id: r.game_id,
        phase: pb::Phase::from_str_name(&r.phase).unwrap_or_default() as i32,
        board_size: r.board_size,
        move_number: r.move_number,
        rules: r.rules,
    }
}

/// A lobby row.
pub fn summary_to((game_id, l): crate::hub::Listed) -> pb::GameSummary {
    pb::GameSummary {
        game_id,
        phase: l.phase() as i32,
        board_size: l.board_size,
        move_number: l.move_number(),
        rules: l.rules.clone(),
    }
}

pub fn event_to(e: &Event) -> pb::Event {
    let payload_json = serde_json::to_string(&e.kind).unwrap_or_default();
    let kind = kind_name(&payload_json).to_string();
    let (color, point) = match &e.kind {
        EventKind::MovePlayed { color, point, .. } => (Some(*color), Some(*point)),
        EventKind::Passed { color, .. } | EventKind::Warning { color, .. } | EventKind::Announcement { color, .. } => {
            (Some(*color), None)
        }
        EventKind::MoveVoided { color, mv, .. } => {
            (Some(*color), if let Move::Place(p) = mv { Some(*p) } else { None })
        }
        EventKind::UndoRequested { by }
        | EventKind::UndoDeclined { by }
        | EventKind::DrawOffered { by }
        | EventKind::DrawDeclined { by }
        | EventKind::DeadStonesProposed { by, .. }
        | EventKind::ScoreAccepted { by }
        | EventKind::ScoreDisputed { by }
        | EventKind::MoveSealed { by, .. } => (Some(*by), None),
        EventKind::MoveTakenBack { color, .. } => (Some(*color), None),
        _ => (None, None),
    };
    pb::Event {
        seq: e.seq,
        time_ms: e.at as i64,
        black_clock: Some(clock_to(&e.clocks[0])),
        white_clock: Some(clock_to(&e.clocks[1])),
        kind,
        payload_json,
        color: color_to(color),
        point: point.map(point_to),
    }
}

/// The `type` of an event kind from its JSON. `EventKind` is tagged internally, and serde
/// writes the tag first, so it is read off the front instead of building a JSON tree.
fn kind_name(json: &str) -> &str {
    json.strip_prefix(r#"{"type":""#)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_default()
}

/// A refused command as a gRPC status with a machine-readable reason.
pub fn rejection_to(r: &Rejection, game_id: &str, g: &Game) -> Status {
    if let Rejection::BadSetting { field, message } = r {
        return bad_request(&setting_field(*field), message.clone());
    }
    let (code, reason) = match r {
        Rejection::BadSetting { .. } => unreachable!("answered above"),
        Rejection::InvalidArgument(_) => (Code::InvalidArgument, "invalid_argument".to_string()),
        Rejection::CommitmentMismatch => (Code::InvalidArgument, "commitment_mismatch".to_string()),
        Rejection::WrongPhase(_) => (Code::FailedPrecondition, "wrong_phase".to_string()),
        Rejection::NotYourTurn => (Code::FailedPrecondition, "not_your_turn".to_string()),
        Rejection::Illegal(i) => (Code::FailedPrecondition, i.code().to_string()),
        Rejection::NothingPending(_) => (Code::FailedPrecondition, "nothing_pending".to_string()),
        Rejection::NotPermitted(_) => (Code::PermissionDenied, "not_permitted".to_string()),
        Rejection::UndoNotAllowed(_) => (Code::PermissionDenied, "undo_not_allowed".to_string()),
    };
    with_info(code, r.to_string(), &reason, game_id, g)
}

/// A status with an `ErrorInfo` (reason, game id, move number, phase).
pub fn with_info(code: Code, message: String, reason: &str, game_id: &str, g: &Game) -> Status {
    let meta = HashMap::from([
        ("game_id".to_string(), game_id.to_string()),
        ("move_number".to_string(), g.move_number().to_string()),
        ("seq".to_string(), g.seq().to_string()),
        ("phase".to_string(), phase_name(g.phase()).to_string()),
    ]);
    Status::with_error_details(code, message, ErrorDetails::with_error_info(reason, DOMAIN, meta))
}

#[cfg(test)]
mod tests {
    use weiqi_game::EventKind;
    use weiqi_rules::{Color, Point};

    use super::kind_name;

    /// The name read off the front of the JSON is the one serde writes as the tag.
    #[test]
    fn kind_name_is_the_serde_tag() {
        let kinds = [
            EventKind::Joined,
            EventKind::MovePlayed {
                color: Color::White,
                point: Point::new(3, 4),
                captures: 2,
                lag_ms: 0,
            },
            EventKind::Passed {
                color: Color::Black,
                declared_end: true,
                lag_ms: 5,
            },
            EventKind::ScoringStarted {
                proposal: vec![Point::new(0, 0)],
            },
        ];
        for k in kinds {
            let value = serde_json::to_value(&k).unwrap();
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(kind_name(&json), value["type"].as_str().unwrap(), "{json}");
            assert!(!kind_name(&json).is_empty());
        }
    }

    /// Enum numbers this server does not know are INVALID_ARGUMENT, never the default.
    #[test]
    fn unknown_enum_numbers_are_refused() {
        use weiqi_proto::v1 as pb;
        let with = |f: &dyn Fn(&mut pb::GameSettings)| {
            let mut s = pb::GameSettings {
                board_size: 9,
                ..Default::default()
            };
            f(&mut s);
            super::settings_from(Some(&s), 1000)
        };
        assert!(with(&|_| {}).is_ok());
        assert!(with(&|s| s.color_choice = pb::ColorChoice::Nigiri as i32).is_ok());
        let bad_choice = with(&|s| s.color_choice = 99).unwrap_err();
        let bad_mode = with(&|s| s.mode = -1).unwrap_err();
        for err in [bad_choice, bad_mode] {
            assert_eq!(err.code(), tonic::Code::InvalidArgument, "{err:?}");
        }
        assert_eq!(super::parity_from(7).unwrap_err().code(), tonic::Code::InvalidArgument);
    }

    /// Request and game ids: bounded, and no control characters (PostgreSQL cannot store
    /// a NUL; before this check such a request id failed as INTERNAL there).
    #[test]
    fn ids_are_checked() {
        for (ok, id) in [(true, "retry-1"), (false, "a\0b"), (false, "tab\t"), (true, "é")] {
            assert_eq!(super::request_id(id).is_ok(), ok, "{id:?}");
            assert_eq!(super::game_id(id).is_ok(), ok, "{id:?}");
        }
        assert!(super::request_id("").is_ok());
        assert!(super::game_id("").is_err());
        assert!(super::request_id(&"x".repeat(129)).is_err());
        assert!(super::game_id(&"x".repeat(65)).is_err());
    }
}
