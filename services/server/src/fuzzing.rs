//! Arbitrary bytes through the whole service, for the fuzzer (`fuzz/fuzz_targets/
//! service.rs`) and a property test: each chunk of the input is decoded as one of the
//! service's request types and called, as a player holding either seat or as a spectator,
//! on a game in play in the in-memory store. Whatever the bytes, no call panics, a game
//! changes only when a call answers OK, and the game stays the fold of its log.

use std::sync::Arc;

use tokio::sync::watch;
use tonic::Request;
use tonic::metadata::MetadataValue;
use weiqi_game::Game;
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::game_service_server::GameService;
use weiqi_store::MemoryStore;

use crate::hub::Hub;
use crate::metrics::Metrics;
use crate::service::GameSvc;

/// Runs `data` through the service (see the module docs); panics on a broken invariant.
pub fn drive(data: &[u8]) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(drive_async(data));
}

async fn drive_async(data: &[u8]) {
    let (_stop, rx) = watch::channel(false);
    let hub = Arc::new(Hub::new(MemoryStore::new(), vec![1; 32], Metrics::new(), rx));
    let svc = GameSvc::new(hub.clone(), 1000);
    // A 5x5 game in play without a clock: nothing but calls changes it.
    let settings = pb::GameSettings {
        board_size: 5,
        ..Default::default()
    };
    let created = svc
        .create_game(Request::new(pb::CreateGameRequest {
            settings: Some(settings),
            ..Default::default()
        }))
        .await
        .expect("create")
        .into_inner();
    let id = created.game_id;
    let joined = svc
        .join_game(Request::new(pb::JoinGameRequest {
            game_id: id.clone(),
            ..Default::default()
        }))
        .await
        .expect("join")
        .into_inner();
    let tokens = [Some(created.seat_token), Some(joined.seat_token), None];
    let mut rest = data;
    while let [op, who, len, tail @ ..] = rest {
        let (body, next) = tail.split_at((*len as usize).min(tail.len()));
        rest = next;
        let token = tokens[*who as usize % 3].as_deref();
        // Most calls are aimed at the game; some keep whatever game id they decoded.
        let target = (op & 0x80 == 0).then_some(id.as_str());
        let before = hub.lock(&id).await.expect("the game").game.get().seq();
        let answered = call(&svc, op & 0x7f, body, token, target).await;
        let after = hub.lock(&id).await.expect("the game").game.get().seq();
        if !answered {
            assert_eq!(before, after, "a refused call (op {op}) changed the game");
        }
    }
    let log = hub.stored_log(&id).await.expect("the log");
    let mut e = hub.lock(&id).await.expect("the game");
    assert_eq!(&Game::from_events(&log).expect("the log folds"), e.game.get());
    for (i, ev) in log.iter().enumerate() {
        assert_eq!(ev.seq, i as u64 + 1, "one event per sequence number");
    }
}

fn request<T>(msg: T, token: Option<&str>) -> Request<T> {
    let mut r = Request::new(msg);
    if let Some(t) = token
        && let Ok(v) = MetadataValue::try_from(format!("Bearer {t}"))
    {
        r.metadata_mut().insert("authorization", v);
    }
    r
}

fn aim(m: &mut Option<pb::Mutation>, target: Option<&str>) {
    if let (Some(m), Some(id)) = (m.as_mut(), target) {
        m.game_id = id.to_string();
    }
}

/// Decodes `body` as request type `op` and calls it; whether it answered OK (a body that
/// does not decode calls nothing, and counts as refused).
async fn call(svc: &GameSvc<MemoryStore>, op: u8, body: &[u8], token: Option<&str>, target: Option<&str>) -> bool {
    use prost::Message;
    macro_rules! mutating {
        ($method:ident, $ty:ty) => {{
            let Ok(mut r) = <$ty>::decode(body) else { return false };
            aim(&mut r.mutation, target);
            svc.$method(request(r, token)).await.is_ok()
        }};
    }
    macro_rules! plain {
        ($method:ident, $ty:ty) => {{
            let Ok(r) = <$ty>::decode(body) else { return false };
            svc.$method(request(r, token)).await.is_ok()
        }};
    }
    match op % 32 {
        0 => mutating!(play, pb::PlayRequest),
        1 => mutating!(pass, pb::PassRequest),
        2 => mutating!(resign, pb::ResignRequest),
        3 => mutating!(declare_end, pb::DeclareEndRequest),
        4 => mutating!(propose_dead_stones, pb::ProposeDeadStonesRequest),
        5 => mutating!(accept_score, pb::AcceptScoreRequest),
        6 => mutating!(dispute_score, pb::DisputeScoreRequest),
        7 => mutating!(request_undo, pb::RequestUndoRequest),
        8 => mutating!(answer_undo, pb::AnswerUndoRequest),
        9 => mutating!(offer_draw, pb::OfferDrawRequest),
        10 => mutating!(answer_draw, pb::AnswerDrawRequest),
        11 => mutating!(adjourn, pb::AdjournRequest),
        12 => mutating!(seal_move, pb::SealMoveRequest),
        13 => mutating!(resume, pb::ResumeRequest),
        14 => mutating!(reveal_nigiri, pb::RevealNigiriRequest),
        15 => mutating!(cancel_game, pb::CancelGameRequest),
        16 => mutating!(place_handicap, pb::PlaceHandicapRequest),
        17 => mutating!(check_in, pb::CheckInRequest),
        18 => mutating!(claim_timeout, pb::ClaimTimeoutRequest),
        19 => plain!(create_game, pb::CreateGameRequest),
        20 => plain!(join_game, pb::JoinGameRequest),
        21 => plain!(get_game, pb::GetGameRequest),
        22 => plain!(list_games, pb::ListGamesRequest),
        23 => plain!(export_sgf, pb::ExportSgfRequest),
        24 => plain!(ping, pb::PingRequest),
        25 => plain!(watch_game, pb::WatchGameRequest),
        26 => mutating!(place_seat_stone, pb::PlaceSeatStoneRequest),
        27 => mutating!(commit_bid, pb::CommitBidRequest),
        28 => mutating!(reveal_bid, pb::RevealBidRequest),
        29 => mutating!(claim_abandoned, pb::ClaimAbandonedRequest),
        30 => plain!(estimate_score, pb::EstimateScoreRequest),
        _ => {
            // A Play aimed at the game with a point from the bytes: far more of these
            // are legal than decoded ones.
            let (x, y) = (
                body.first().copied().unwrap_or(0) % 6,
                body.get(1).copied().unwrap_or(0) % 6,
            );
            let r = pb::PlayRequest {
                mutation: Some(pb::Mutation {
                    game_id: target.unwrap_or_default().to_string(),
                    ..Default::default()
                }),
                point: Some(pb::Point {
                    x: x as u32,
                    y: y as u32,
                }),
                lag_ms: 0,
            };
            svc.play(request(r, token)).await.is_ok()
        }
    }
}
