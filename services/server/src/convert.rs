//! Protobuf to and from domain types: settings, points, games, events, the lobby.
//! (Errors as statuses: `status`.)

use tonic::Status;
use weiqi_game::{
    ColorChoice, EndReason, Event, EventKind, GameResult, LagComp, Ms, Parity, Phase, PlayerTime, RefereeMode, Seat,
    Settings, TimeControl, Variant,
};
use weiqi_proto::v1 as pb;
use weiqi_rules::{Color, Move, Point, Preset};
use weiqi_store::{Lobby, LobbyRow};

use crate::hub::{Applied, Broadcast, GameView, Scoring, SeatPresence};
use crate::status::{bad_request, invalid};

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
    if let Some(ms) = s.nigiri_timeout_ms {
        out.nigiri_timeout_ms = ms;
    }
    out.rated = s.rated;
    out.variant = match &s.free_seats {
        None => Variant::Standard,
        Some(f) => Variant::FreeSeats {
            no_first_line: f.no_first_line,
            half_point_bids: f.half_point_bids,
        },
    };
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
        nigiri_timeout_ms: Some(s.nigiri_timeout_ms),
        rated: s.rated,
        free_seats: match s.variant {
            Variant::Standard => None,
            Variant::FreeSeats {
                no_first_line,
                half_point_bids,
            } => Some(pb::FreeSeats {
                no_first_line,
                half_point_bids,
            }),
        },
    }
}

pub fn phase_to(p: Phase) -> pb::Phase {
    match p {
        Phase::WaitingForOpponent => pb::Phase::WaitingForOpponent,
        Phase::SeatStones => pb::Phase::SeatStones,
        Phase::Bidding => pb::Phase::Bidding,
        Phase::Nigiri => pb::Phase::Nigiri,
        Phase::Scheduled => pb::Phase::Scheduled,
        Phase::PlacingHandicap => pb::Phase::PlacingHandicap,
        Phase::Playing => pb::Phase::Playing,
        Phase::Adjourned => pb::Phase::Adjourned,
        Phase::Scoring => pb::Phase::Scoring,
        Phase::Finished => pb::Phase::Finished,
    }
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
        EndReason::Abandoned => pb::EndReason::Abandoned,
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

/// A game as its client sees it.
pub fn view_to(v: &GameView) -> pb::GameState {
    view_into(v.clone())
}

/// [`view_to`] of a view the caller is done with: its strings move into the message
/// instead of being copied.
pub fn view_into(v: GameView) -> pb::GameState {
    view_as(v, pb::StateView::Full)
}

/// A mutation's `view`: an enum number this server does not know is refused (a client
/// newer than the server asked for something else than the whole state).
pub fn state_view_from(view: i32) -> Result<pb::StateView, Status> {
    match pb::StateView::try_from(view) {
        Ok(pb::StateView::Unspecified) => Ok(pb::StateView::Full),
        Ok(v) => Ok(v),
        Err(_) => Err(invalid(format!("unknown mutation.view {view}"))),
    }
}

/// [`view_into`] in the view a mutation asked for: the basic view leaves out the board and
/// the settings (see `StateView` in game.proto).
pub fn view_as(v: GameView, view: pb::StateView) -> pb::GameState {
    let full = view != pb::StateView::Basic;
    pb::GameState {
        game_id: v.game_id,
        seq: v.seq,
        phase: phase_to(v.phase) as i32,
        settings: if full {
            v.settings.as_ref().map(settings_to)
        } else {
            None
        },
        board: if full {
            weiqi_rules::text_rows(&v.board, v.board_width)
        } else {
            Vec::new()
        },
        to_move: color_to(v.to_move),
        move_number: v.move_number,
        black_seat: match v.black_seat {
            Some(Seat::Host) => pb::Seat::Host,
            Some(Seat::Guest) => pb::Seat::Guest,
            None => pb::Seat::Unspecified,
        } as i32,
        black_captures: v.captures[0],
        white_captures: v.captures[1],
        black_clock: Some(clock_to(&v.clocks[0])),
        white_clock: Some(clock_to(&v.clocks[1])),
        result: v.result.as_ref().map(result_to),
        pending_undo_from: color_to(v.pending_undo_from),
        pending_draw_from: color_to(v.pending_draw_from),
        dead_stones: v.dead_stones.iter().map(|&p| point_to(p)).collect(),
        black_accepted: v.accepted[0],
        white_accepted: v.accepted[1],
        sealed_commitment: v.sealed_commitment,
        last_move: v.last_move.map(point_to),
        black_warnings: v.warnings[0],
        white_warnings: v.warnings[1],
        server_time_ms: v.server_time_ms as i64,
        ko_point: v.ko_point.map(point_to),
        nigiri_commitment: v.nigiri_commitment,
        nigiri_guess: v.nigiri_guess.map_or(pb::Parity::Unspecified, parity_to) as i32,
        host_player: v.players[0].as_ref().map(seat_player_to),
        guest_player: v.players[1].as_ref().map(seat_player_to),
        host_bid_sealed: v.bids[0].0,
        guest_bid_sealed: v.bids[1].0,
        host_bid: v.bids[0].1,
        guest_bid: v.bids[1].1,
        forfeit_at_ms: v.forfeit_at.map(|ms| ms as i64),
        host_presence: v.presence.map(|p| presence_to(&p[0])),
        guest_presence: v.presence.map(|p| presence_to(&p[1])),
        scoring: v.scoring.as_ref().map(|s| scoring_to(s, v.board_width, full)),
    }
}

pub fn seat_player_to(p: &weiqi_game::PlayerRef) -> pb::SeatPlayer {
    pb::SeatPlayer {
        player_id: p.id.clone(),
        name: p.name.clone(),
        bot: p.bot,
    }
}

fn presence_to(p: &SeatPresence) -> pb::SeatPresence {
    pb::SeatPresence {
        present: p.present,
        last_seen_ms: p.last_seen_ms as i64,
        claimable_at_ms: p.claimable_at_ms.map(|ms| ms as i64),
    }
}

/// A score estimate of the game at `seq`.
pub fn estimate_to(e: weiqi_rules::estimate::Estimate, seq: u64) -> pb::EstimateScoreResponse {
    pb::EstimateScoreResponse {
        seq,
        ownership: e.ownership,
        dead_stones: e.dead.iter().map(|&p| point_to(p)).collect(),
        black_points: e.score.black,
        white_points: e.score.white,
        white_minus_black: e.score.white_minus_black,
        text: e.score.outcome.sgf(),
        playouts: e.playouts,
    }
}

/// A game's review, with its biggest mistakes.
pub fn review_to(game_id: &str, r: &weiqi_gtp::GameReview) -> pb::GameReview {
    let mv = |m: weiqi_rules::Move| match m {
        weiqi_rules::Move::Place(p) => Some(point_to(p)),
        weiqi_rules::Move::Pass => None,
    };
    pb::GameReview {
        game_id: game_id.to_string(),
        visits: r.visits,
        moves: r
            .moves
            .iter()
            .map(|m| pb::MoveReview {
                number: m.number as u32,
                color: color_to(Some(m.color)),
                played: mv(m.played),
                black_before: m.black_before,
                black_after: m.black_after,
                best: mv(m.best),
                black_after_best: m.black_after_best,
                loss: m.loss,
            })
            .collect(),
        mistakes: weiqi_gtp::mistakes(&r.moves, weiqi_gtp::MISTAKES, weiqi_gtp::MISTAKE_LOSS)
            .iter()
            .map(|m| m.number as u32)
            .collect(),
    }
}

/// A review's step as a ReviewGame item; none for a failure (the stream's error).
pub fn review_step_to(game_id: &str, step: &crate::reviews::Step) -> pb::ReviewGameResponse {
    use crate::reviews::Step;
    match step {
        Step::Queued { ahead } => pb::ReviewGameResponse {
            queued_ahead: *ahead,
            ..Default::default()
        },
        Step::Running { done, total } => pb::ReviewGameResponse {
            positions_done: *done,
            positions: *total,
            ..Default::default()
        },
        Step::Done(r) => pb::ReviewGameResponse {
            positions_done: r.moves.len() as u32 + 1,
            positions: r.moves.len() as u32 + 1,
            review: Some(review_to(game_id, r)),
            ..Default::default()
        },
        Step::Failed(_) => pb::ReviewGameResponse::default(),
    }
}

/// The count under a proposal; the owners' rows only in a view that carries the board.
fn scoring_to(s: &Scoring, width: u8, with_owners: bool) -> pb::ScoringView {
    let owners: String = s
        .owners
        .iter()
        .map(|o| match o {
            Some(Color::Black) => 'x',
            Some(Color::White) => 'o',
            None => '.',
        })
        .collect();
    pb::ScoringView {
        owners: if with_owners {
            weiqi_rules::text_rows(&owners, width)
        } else {
            Vec::new()
        },
        black_points: s.score.black,
        white_points: s.score.white,
        white_minus_black: s.score.white_minus_black,
        text: s.score.outcome.sgf(),
    }
}

/// What a command did, as its caller gets it, in the view the caller asked for.
pub fn outcome_to(o: Applied, view: pb::StateView) -> pb::CommandResult {
    pb::CommandResult {
        events: o.events.iter().map(event_to).collect(),
        state: Some(view_as(o.game, view)),
    }
}

/// One item of a watch stream.
pub fn watched_to(b: &Broadcast) -> pb::WatchGameResponse {
    pb::WatchGameResponse {
        event: b.event.as_ref().map(event_to),
        state: Some(view_to(&b.view)),
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

/// The lobby.
pub fn lobby_to(l: Lobby) -> pb::ListGamesResponse {
    let row = |r: LobbyRow| pb::GameSummary {
        game_id: r.game_id,
        phase: phase_to(r.phase) as i32,
        board_size: r.board_size,
        move_number: r.move_number,
        rules: r.rules,
    };
    pb::ListGamesResponse {
        open: l.open.into_iter().map(row).collect(),
        playing: l.playing.into_iter().map(row).collect(),
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

#[cfg(test)]
mod tests {
    use weiqi_game::EventKind;
    use weiqi_rules::{Color, Point};

    use super::kind_name;

    /// The name read off the front of the JSON is the one serde writes as the tag.
    #[test]
    fn kind_name_is_the_serde_tag() {
        let kinds = [
            EventKind::Joined { player: None },
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
            assert_eq!(crate::hub::valid_game_id(id), ok, "{id:?}");
        }
        assert!(super::request_id("").is_ok());
        assert!(!crate::hub::valid_game_id(""));
        assert!(super::request_id(&"x".repeat(129)).is_err());
        assert!(!crate::hub::valid_game_id(&"x".repeat(65)));
    }
}
