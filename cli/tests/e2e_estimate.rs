//! Score estimates during a game against the real server: who owns each point, the dead
//! stones and the count, bounded per client by a quota like game creation.

mod support;

use support::*;
use tonic::Code;
use tonic_types::StatusExt;
use weiqi_proto::v1 as pb;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_estimate_shades_each_side_and_counts_with_komi() {
    let srv = Server::fresh_with(
        "estimate",
        &[
            ("WEIQI__LIMITS__ESTIMATES_PER_MINUTE", "1"),
            ("WEIQI__LIMITS__ESTIMATE_BURST", "2"),
        ],
    );
    let mut c = srv.client().await;
    let g = new_game(&mut c, 5, None).await;
    // Black walls off column B, White column D.
    for y in 0..5 {
        play(&mut c, &g, &g.black, 1, y).await.unwrap();
        play(&mut c, &g, &g.white, 3, y).await.unwrap();
    }
    let ask = || pb::EstimateScoreRequest { game_id: g.id.clone() };
    let e = c.estimate_score(ask()).await.unwrap().into_inner();
    assert_eq!(e.ownership.len(), 25);
    assert_eq!(e.seq, state(&mut c, &g.id).await.seq);
    let at = |x: usize, y: usize| e.ownership[y * 5 + x];
    for y in 0..5 {
        assert!(at(0, y) > 0.5 && at(1, y) > 0.5, "Black's side: {:?}", e.ownership);
        assert!(at(3, y) < -0.5 && at(4, y) < -0.5, "White's side: {:?}", e.ownership);
    }
    assert!(e.ownership.iter().all(|v| (-1.0..=1.0).contains(v)));
    assert!(e.dead_stones.is_empty(), "{:?}", e.dead_stones);
    assert!(e.playouts > 0);
    // Black 10 points, White 10, the middle column shared; komi 0.5 (the tests' games).
    assert_eq!(e.black_points + e.white_points, 25.0);
    assert_eq!(e.text, format!("W+{}", e.white_minus_black));

    // The client's burst of two is spent: the third waits, told how long.
    c.estimate_score(ask()).await.unwrap();
    let third = c.estimate_score(ask()).await.unwrap_err();
    assert_eq!(third.code(), Code::ResourceExhausted);
    assert_eq!(reason(&third), "quota_exceeded");
    assert!(third.get_details_retry_info().and_then(|r| r.retry_delay).is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_game_has_no_estimate() {
    let srv = Server::fresh("estimate-unknown");
    let mut c = srv.client().await;
    let missing = c
        .estimate_score(pb::EstimateScoreRequest { game_id: "nope".into() })
        .await
        .unwrap_err();
    assert_eq!(
        (missing.code(), reason(&missing).as_str()),
        (Code::NotFound, "game_not_found")
    );
}
