//! The hub's, the players' and the tournaments' errors, and the edge's own, as gRPC statuses: each with a code a client
//! acts on and a `google.rpc.ErrorInfo` (domain `weiqi.v1`, a reason, where the game
//! stood); a refused setting names its request field (`google.rpc.BadRequest`).

use std::collections::HashMap;

use prost::Message;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};
use weiqi_game::{ClockField, Rejection, SettingField, TimeControl};
use weiqi_players::{Class, Refusal};
use weiqi_store::StoreError;
use weiqi_tournament::TournamentError;

use crate::convert::{phase_to, view_to};
use crate::hub::{Denied, GameAt, HubError};
use crate::players::PlayersError;
use crate::tournaments::TournamentsError;

pub const DOMAIN: &str = "weiqi.v1";
/// Trailing metadata key that carries the current state of a stale call.
pub const STATE_TRAILER: &str = "weiqi-game-state-bin";

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
        SettingField::Variant => "settings.free_seats",
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

/// A refused command as a gRPC status with a machine-readable reason.
fn rejection_to(r: &Rejection, at: &GameAt) -> Status {
    if let Rejection::BadSetting { field, message } = r {
        return bad_request(&setting_field(*field), message.clone());
    }
    let (code, reason) = match r {
        Rejection::BadSetting { .. } => unreachable!("answered above"),
        Rejection::InvalidArgument(_) => (Code::InvalidArgument, "invalid_argument"),
        Rejection::CommitmentMismatch => (Code::InvalidArgument, "commitment_mismatch"),
        Rejection::FirstLine(_) => (Code::InvalidArgument, "first_line"),
        Rejection::BidsNotSealed => (Code::FailedPrecondition, "bids_not_sealed"),
        Rejection::WrongPhase(_) => (Code::FailedPrecondition, "wrong_phase"),
        Rejection::NotYourTurn => (Code::FailedPrecondition, "not_your_turn"),
        Rejection::Illegal(i) => (Code::FailedPrecondition, i.code()),
        Rejection::NothingPending(_) => (Code::FailedPrecondition, "nothing_pending"),
        Rejection::NotPermitted(_) => (Code::PermissionDenied, "not_permitted"),
        Rejection::UndoNotAllowed(_) => (Code::PermissionDenied, "undo_not_allowed"),
    };
    with_info(code, r.to_string(), reason, at)
}

/// A status with an `ErrorInfo` (reason, game id, move number, phase).
fn with_info(code: Code, message: String, reason: &str, at: &GameAt) -> Status {
    with_info_and(code, message, reason, at, &[])
}

/// [`with_info`] with more metadata.
fn with_info_and(code: Code, message: String, reason: &str, at: &GameAt, more: &[(&str, String)]) -> Status {
    let mut meta = HashMap::from([
        ("game_id".to_string(), at.game_id.clone()),
        ("move_number".to_string(), at.move_number.to_string()),
        ("seq".to_string(), at.seq.to_string()),
        ("phase".to_string(), phase_to(at.phase).as_str_name().to_string()),
    ]);
    meta.extend(more.iter().map(|(k, v)| (k.to_string(), v.clone())));
    Status::with_error_details(code, message, ErrorDetails::with_error_info(reason, DOMAIN, meta))
}

/// The hub's answer when a call did not go through, as a gRPC status: the code a client
/// acts on, an `ErrorInfo` with the reason and where the game stood, and for a stale call
/// the game as it is in a trailer.
pub fn hub_error(e: HubError) -> Status {
    let message = e.to_string();
    match e {
        HubError::BadGameId => invalid(message),
        HubError::NotFound { game_id } => error(Code::NotFound, "game_not_found", message, &[("game_id", &game_id)]),
        HubError::Rejected { rejection, at } => rejection_to(&rejection, &at),
        HubError::Stale { now, .. } => {
            let mut status = with_info(Code::FailedPrecondition, message, "stale", &GameAt::of_view(&now));
            let state = view_to(&now).encode_to_vec();
            status
                .metadata_mut()
                .insert_bin(STATE_TRAILER, tonic::metadata::MetadataValue::from_bytes(&state));
            status
        }
        HubError::Denied { why, at } => {
            let reason = match why {
                Denied::MissingToken => "missing_token",
                Denied::WrongToken => "wrong_token",
            };
            with_info(Code::PermissionDenied, message, reason, &at)
        }
        HubError::OpponentPresent { claimable_at_ms, at } => with_info_and(
            Code::FailedPrecondition,
            message,
            "opponent_present",
            &at,
            &[("claimable_at_ms", claimable_at_ms.to_string())],
        ),
        HubError::GameFull { at } => with_info(Code::FailedPrecondition, message, "game_full", &at),
        HubError::RequestIdReused { at, .. } => with_info(Code::InvalidArgument, message, "request_id_reused", &at),
        HubError::Corrupt(_) => error(Code::Internal, "corrupt_game", message, &[]),
        HubError::Missing { game_id } => error(Code::Internal, "storage_failure", message, &[("game_id", &game_id)]),
        HubError::Store(e) => store_error(&e),
    }
}

/// Why a score estimate was not made.
pub fn estimate_error(e: crate::estimates::EstimateError) -> Status {
    use crate::estimates::EstimateError;
    match &e {
        EstimateError::Count(_) => error(Code::Internal, "estimate_failed", e.to_string(), &[]),
        EstimateError::Stopping => error(Code::Unavailable, "shutting_down", e.to_string(), &[]),
    }
}

pub fn review_error(e: &crate::reviews::ReviewError) -> Status {
    use crate::reviews::ReviewError;
    match e {
        ReviewError::QueueFull { waiting, retry_after } => {
            let mut details = ErrorDetails::with_error_info(
                "review_queue_full",
                DOMAIN,
                HashMap::from([("waiting".to_string(), waiting.to_string())]),
            );
            details.set_retry_info(Some(*retry_after));
            Status::with_error_details(Code::ResourceExhausted, e.to_string(), details)
        }
        ReviewError::TooLong { moves, max } => error(
            Code::FailedPrecondition,
            "review_too_long",
            e.to_string(),
            &[("moves", &moves.to_string()), ("max_moves", &max.to_string())],
        ),
        ReviewError::Store(s) => store_error(s),
        ReviewError::Failed => error(Code::Internal, "review_failed", e.to_string(), &[]),
        ReviewError::Stopping => error(Code::Unavailable, "shutting_down", e.to_string(), &[]),
    }
}

/// A store failure as a status (UNAVAILABLE, INTERNAL, ABORTED for conflicts).
pub fn store(e: StoreError) -> Status {
    store_error(&e)
}

/// How long a client is told to wait before retrying a call the database could not take.
pub const STORAGE_RETRY_AFTER: std::time::Duration = std::time::Duration::from_millis(500);

fn store_error(e: &StoreError) -> Status {
    match e {
        StoreError::Conflict { .. } => error(Code::Aborted, "conflict", format!("{e}; retry"), &[]),
        StoreError::Closed => error(Code::Unavailable, "shutting_down", "the server is shutting down", &[]),
        // Retryable by gRPC's conventions (and safe: every mutation carries a request id):
        // UNAVAILABLE, with when to try again.
        StoreError::Unavailable(db) => {
            let sqlstate = db.code.clone().unwrap_or_default();
            let mut details = ErrorDetails::with_error_info(
                "storage_unavailable",
                DOMAIN,
                HashMap::from([("code".to_string(), sqlstate)]),
            );
            details.set_retry_info(Some(STORAGE_RETRY_AFTER));
            Status::with_error_details(
                Code::Unavailable,
                format!("the database is unavailable, retry: {db}"),
                details,
            )
        }
        other => error(
            Code::Internal,
            "storage_failure",
            format!("storage failure: {other}"),
            &[],
        ),
    }
}

impl From<HubError> for Status {
    fn from(e: HubError) -> Status {
        hub_error(e)
    }
}

/// A players' operation that did not go through, as a status: a refusal with its class's
/// code and reason (a refused field as `bad_request` names it), a bad credential as
/// UNAUTHENTICATED, the store's and the hub's failures as theirs.
pub fn players_error(e: PlayersError) -> Status {
    match e {
        PlayersError::Refused(Refusal::BadField { field, message }) => bad_request(field, message),
        PlayersError::Refused(r) => {
            let code = match r.class() {
                Class::BadRequest => Code::InvalidArgument,
                Class::NotFound => Code::NotFound,
                Class::NotYours => Code::PermissionDenied,
                Class::NotNow => Code::FailedPrecondition,
                Class::TooMany => Code::ResourceExhausted,
                Class::Exists => Code::AlreadyExists,
            };
            let details = r.details();
            let meta: Vec<(&str, &str)> = details.iter().map(|(k, v)| (*k, v.as_str())).collect();
            error(code, r.reason(), r.to_string(), &meta)
        }
        PlayersError::Unauthenticated(e) => error(Code::Unauthenticated, e.reason(), e.to_string(), &[]),
        PlayersError::Store(e) => store_error(&e),
        PlayersError::Hub(e) => hub_error(e),
    }
}

impl From<PlayersError> for Status {
    fn from(e: PlayersError) -> Status {
        players_error(e)
    }
}

/// A tournament operation that did not go through, as a status with its reason.
pub fn tournaments_error(e: TournamentsError) -> Status {
    let message = e.to_string();
    match e {
        TournamentsError::NotFound { id } => error(
            Code::NotFound,
            "tournament_not_found",
            message,
            &[("tournament_id", &id)],
        ),
        TournamentsError::Refused(refused) => {
            let (code, reason) = match refused {
                TournamentError::InvalidSettings(_) => (Code::InvalidArgument, "invalid_tournament_settings"),
                TournamentError::WrongPhase { .. } => (Code::FailedPrecondition, "wrong_tournament_phase"),
                TournamentError::AlreadyRegistered(_) => (Code::AlreadyExists, "already_registered"),
                TournamentError::Full { .. } => (Code::ResourceExhausted, "tournament_full"),
                TournamentError::NotRegistered(_) => (Code::FailedPrecondition, "not_registered"),
                TournamentError::NotOrganizer => (Code::PermissionDenied, "not_organizer"),
                TournamentError::TooFewPlayers { .. } => (Code::FailedPrecondition, "too_few_players"),
                TournamentError::NotOurGame(_) => (Code::NotFound, "not_a_tournament_game"),
                TournamentError::Corrupt(_) => (Code::Internal, "corrupt_tournament"),
            };
            error(code, reason, message, &[])
        }
        TournamentsError::Conflict { id } | TournamentsError::IdTaken { id } => {
            error(Code::Aborted, "conflict", message, &[("tournament_id", &id)])
        }
        TournamentsError::Store(e) => store_error(&e),
        TournamentsError::Hub(e) => hub_error(e),
    }
}

impl From<TournamentsError> for Status {
    fn from(e: TournamentsError) -> Status {
        tournaments_error(e)
    }
}
