//! Presence and abandonment against the real server: a seat is here while its watch stream
//! is open, everyone watching hears when it leaves (an item without an event), its
//! opponent may claim the game only once it has been gone `abandon_after`, and the
//! scoring phase carries the count under the proposal on the table.

mod support;

use std::time::{Duration, Instant};

use support::*;
use tonic::Code;
use tonic_types::StatusExt;
use weiqi_proto::v1 as pb;

/// How long a seat is still here after it was last seen (the server's grace).
const GRACE_MS: u64 = 10_000;
/// How long the servers here wait, after that, before a claim.
const ABANDON_AFTER_MS: u64 = 3_000;

/// A seat's claim that its opponent left (a win, or a draw), with request id `rid`.
fn claim(game: &str, rid: &str, token: &str, draw: bool) -> tonic::Request<pb::ClaimAbandonedRequest> {
    authed(
        pb::ClaimAbandonedRequest {
            mutation: m(game, rid),
            draw,
        },
        token,
    )
}

fn watch(id: &str) -> pb::WatchGameRequest {
    pb::WatchGameRequest {
        game_id: id.into(),
        since_seq: 0,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_who_leaves_is_seen_to_leave_and_the_game_can_be_claimed() {
    let srv = Server::fresh_with("presence", &[("WEIQI__ABANDON_AFTER_MS", "3000")]);
    let mut c = srv.client().await;
    let g = new_game(&mut c, 9, None).await;
    play(&mut c, &g, &g.black, 2, 2).await.unwrap();

    // Both players watch with their seats' tokens; a spectator watches without one.
    let black_tab = c.watch_game(authed(watch(&g.id), &g.black)).await.unwrap().into_inner();
    let white_tab = c.watch_game(authed(watch(&g.id), &g.white)).await.unwrap().into_inner();
    let mut spectator = c.watch_game(watch(&g.id)).await.unwrap().into_inner();
    let st = state(&mut c, &g.id).await;
    let (host, guest) = (st.host_presence.unwrap(), st.guest_presence.unwrap());
    assert!(host.present && guest.present, "{host:?} {guest:?}");
    assert_eq!((host.claimable_at_ms, guest.claimable_at_ms), (None, None));

    // While White is here, Black cannot claim.
    let claim = |token: &str, draw: bool| claim(&g.id, "", token, draw);
    let early = c.claim_abandoned(claim(&g.black, false)).await.unwrap_err();
    assert_eq!(
        (early.code(), reason(&early).as_str()),
        (Code::FailedPrecondition, "opponent_present")
    );

    // White closes the tab. After the 10 s grace the spectator is told, by an item with
    // the state and no event: White absent, claimable 3 s later.
    let left = Instant::now();
    drop(white_tab);
    let told = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let item = spectator.message().await.unwrap().unwrap();
            let s = item.state.unwrap();
            if item.event.is_none() && s.guest_presence.as_ref().is_some_and(|p| !p.present) {
                return s;
            }
        }
    })
    .await
    .expect("the spectator hears that White left");
    assert!(
        left.elapsed() >= Duration::from_millis(9_500),
        "not before the grace: {:?}",
        left.elapsed()
    );
    let gone = told.guest_presence.unwrap();
    let claimable_at = gone.claimable_at_ms.expect("claimable once gone long enough");
    assert_eq!(claimable_at, gone.last_seen_ms + (GRACE_MS + ABANDON_AFTER_MS) as i64);
    assert!(told.host_presence.unwrap().present, "Black still watches");

    // Too early: refused with the time it becomes possible.
    let early = c.claim_abandoned(claim(&g.black, false)).await.unwrap_err();
    assert_eq!(reason(&early), "opponent_present");
    let info = early.get_details_error_info().unwrap();
    assert_eq!(info.metadata["claimable_at_ms"], claimable_at.to_string());

    // A spectator holds no seat; White's own token is White's.
    let nobody = c
        .claim_abandoned(tonic::Request::new(pb::ClaimAbandonedRequest {
            mutation: m(&g.id, ""),
            draw: false,
        }))
        .await
        .unwrap_err();
    assert_eq!(nobody.code(), Code::PermissionDenied);

    // Once gone long enough: Black claims the win.
    let wait = (claimable_at - told.server_time_ms).max(0) as u64 + 200;
    tokio::time::sleep(Duration::from_millis(wait)).await;
    let won = c
        .claim_abandoned(claim(&g.black, false))
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap()
        .state
        .unwrap();
    let result = won.result.unwrap();
    assert_eq!(
        (result.reason, result.winner, result.text.as_str()),
        (pb::EndReason::Abandoned as i32, pb::Color::Black as i32, "B+F")
    );
    let sgf = c
        .export_sgf(pb::ExportSgfRequest { game_id: g.id.clone() })
        .await
        .unwrap()
        .into_inner()
        .sgf;
    assert!(sgf.contains("RE[B+F]"), "{sgf}");
    drop(black_tab);
}

/// A claim is made once: retried with its request id it is answered as the first time
/// (though the game has left memory and been read back, which counts both seats as seen),
/// and a game that is over refuses any other claim as over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_is_answered_once_and_a_finished_game_refuses_another() {
    let srv = Server::fresh_with("presence-retry", &[("WEIQI__ABANDON_AFTER_MS", "0")]);
    let mut c = srv.client().await;
    let g = new_game(&mut c, 9, None).await;
    play(&mut c, &g, &g.black, 2, 2).await.unwrap();
    tokio::time::sleep(Duration::from_millis(GRACE_MS + 300)).await;
    let claim = |rid: &str| claim(&g.id, rid, &g.black, false);
    let first = c.claim_abandoned(claim("claim-1")).await.unwrap().into_inner();
    let again = c.claim_abandoned(claim("claim-1")).await.unwrap().into_inner();
    assert_eq!(first, again);
    let other = c.claim_abandoned(claim("claim-2")).await.unwrap_err();
    assert_eq!(
        (other.code(), reason(&other).as_str()),
        (Code::FailedPrecondition, "wrong_phase")
    );
}

/// Waiting in the lobby is no absence: a host who made no call since creating the game
/// cannot be claimed against the moment someone joins, nor can the guest who just joined.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_before_play_starts_is_no_absence() {
    let srv = Server::fresh_with("presence-lobby", &[("WEIQI__ABANDON_AFTER_MS", "0")]);
    let mut c = srv.client().await;
    let created = c
        .create_game(pb::CreateGameRequest {
            settings: Some(pb::GameSettings {
                board_size: 9,
                color_choice: pb::ColorChoice::HostBlack as i32,
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    // Longer in the lobby than the grace and the (zero) wait together.
    tokio::time::sleep(Duration::from_millis(GRACE_MS + 300)).await;
    let joined = c
        .join_game(pb::JoinGameRequest {
            game_id: created.game_id.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let st = joined.state.unwrap();
    assert_eq!(st.phase, pb::Phase::Playing as i32);
    for (token, who) in [(&created.seat_token, "host"), (&joined.seat_token, "guest")] {
        let early = c
            .claim_abandoned(claim(&created.game_id, "", token, false))
            .await
            .unwrap_err();
        assert_eq!(reason(&early), "opponent_present", "the {who} claims at once");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_counts_as_presence_and_a_draw_can_be_claimed() {
    let srv = Server::fresh_with("presence-draw", &[("WEIQI__ABANDON_AFTER_MS", "3000")]);
    let mut c = srv.client().await;
    let g = new_game(&mut c, 9, None).await;
    play(&mut c, &g, &g.black, 2, 2).await.unwrap();
    // Nobody watches: both were seen when the game began; Black keeps calling, White not.
    tokio::time::sleep(Duration::from_millis(GRACE_MS + 500)).await;
    let st = state(&mut c, &g.id).await;
    let white = st.guest_presence.unwrap();
    assert!(!white.present, "White made no call for 10 s");
    assert!(
        white.claimable_at_ms.unwrap() > st.server_time_ms,
        "absent, not yet for long"
    );
    // A call from White, even a refused one (a stone on an occupied point), shows White is
    // here: no claim for now.
    let refused = c
        .play(authed(
            pb::PlayRequest {
                mutation: m(&g.id, ""),
                point: Some(pb::Point { x: 2, y: 2 }),
                lag_ms: 0,
            },
            &g.white,
        ))
        .await
        .unwrap_err();
    assert_ne!(refused.code(), Code::Ok);
    assert!(state(&mut c, &g.id).await.guest_presence.unwrap().present);
    let claim = || claim(&g.id, "", &g.black, true);
    assert_eq!(
        reason(&c.claim_abandoned(claim()).await.unwrap_err()),
        "opponent_present"
    );
    tokio::time::sleep(Duration::from_millis(GRACE_MS + ABANDON_AFTER_MS + 500)).await;
    let drawn = c
        .claim_abandoned(claim())
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap()
        .state
        .unwrap()
        .result
        .unwrap();
    assert_eq!(
        (drawn.reason, drawn.winner, drawn.text.as_str()),
        (pb::EndReason::Abandoned as i32, pb::Color::Unspecified as i32, "0")
    );
}

/// C6: from the first proposal on, the state carries the count under it, point by point;
/// every toggle changes it for both, and each player accepts explicitly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scoring_phase_shows_the_count_under_the_proposal() {
    let srv = Server::fresh("scoring-view");
    let mut c = srv.client().await;
    let g = new_game(&mut c, 5, None).await;
    play(&mut c, &g, &g.black, 2, 2).await.unwrap();
    pass(&mut c, &g, &g.white).await;
    let st = pass(&mut c, &g, &g.black).await.state.unwrap();
    assert_eq!(st.phase, pb::Phase::Scoring as i32);
    let view = st.scoring.unwrap();
    // One black stone alive on 5x5: every point is Black's, komi decides.
    assert_eq!(view.owners, vec!["xxxxx"; 5]);
    assert_eq!((view.black_points, view.white_points), (25.0, 0.0));
    assert_eq!(
        view.text,
        format!("B+{}", 25.0 - st.settings.unwrap().komi.unwrap_or(7.5))
    );

    // White marks the stone dead: nothing is anyone's, and nobody has accepted.
    let st = c
        .propose_dead_stones(authed(
            pb::ProposeDeadStonesRequest {
                mutation: m(&g.id, ""),
                stones: vec![pb::Point { x: 2, y: 2 }],
            },
            &g.white,
        ))
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap()
        .state
        .unwrap();
    let view = st.scoring.unwrap();
    assert_eq!(view.owners, vec!["....."; 5]);
    // (Neutral points are split between the two.)
    assert_eq!((view.black_points, view.white_points), (12.5, 12.5));
    assert!(view.white_minus_black > 0.0 && view.text.starts_with("W+"), "{view:?}");
    assert!(!st.black_accepted && !st.white_accepted, "proposing is not accepting");
}
