//! Game reviews through the real server (ReviewGame, GetReview): a finished game judged
//! move by move by the tree search, its progress streamed, stored once and served from the
//! store to anyone who asks again; a bounded queue that refuses with RetryInfo.

mod support;

use std::time::Duration;

use futures::StreamExt;
use support::*;
use tonic::Code;
use tonic::transport::Channel;
use tonic_types::StatusExt;
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::game_service_client::GameServiceClient;

/// Black ignores the capture that decides a race (move 15, J9 instead of B5) and White
/// takes it (the game of `weiqi review`'s own test), then Black resigns.
const BLUNDER: [&str; 16] = [
    "A6", "A5", "B6", "B4", "C5", "A4", "C4", "A3", "B3", "A7", "A2", "B7", "G5", "C6", "J9", "B5",
];

/// GTP's vertex as the service's point (x from the left, y from the top).
fn point(v: &str) -> (u32, u32) {
    let x = "ABCDEFGHJ".find(&v[..1]).unwrap() as u32;
    let row: u32 = v[1..].parse().unwrap();
    (x, 9 - row)
}

/// A finished 9x9 game at komi 7.5: `moves`, then Black resigns.
async fn finished(c: &mut GameServiceClient<Channel>, moves: &[&str]) -> String {
    let settings = pb::GameSettings {
        board_size: 9,
        rules: "chinese".into(),
        komi: Some(7.5),
        color_choice: pb::ColorChoice::HostBlack as i32,
        ..Default::default()
    };
    let g = game_with(c, settings).await;
    for (k, v) in moves.iter().enumerate() {
        let (x, y) = point(v);
        let token = if k % 2 == 0 { &g.black } else { &g.white };
        play(c, &g, token, x, y).await.unwrap();
    }
    c.resign(authed(pb::ResignRequest { mutation: m(&g.id, "") }, &g.black))
        .await
        .unwrap();
    g.id
}

/// Every item of a ReviewGame stream.
async fn review_items(
    c: &mut GameServiceClient<Channel>,
    game_id: &str,
) -> Result<Vec<pb::ReviewGameResponse>, tonic::Status> {
    let mut stream = c
        .review_game(pb::ReviewGameRequest {
            game_id: game_id.into(),
        })
        .await?
        .into_inner();
    let mut items = Vec::new();
    while let Some(item) = stream.next().await {
        items.push(item?);
    }
    Ok(items)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_finds_the_blunder_streams_its_progress_and_is_stored_once() {
    let srv = Server::fresh_with("review", &[("WEIQI__REVIEW__VISITS", "2000")]);
    let mut c = srv.client().await;
    let id = finished(&mut c, &BLUNDER).await;

    // Nothing stored yet.
    let none = c
        .get_review(pb::GetReviewRequest { game_id: id.clone() })
        .await
        .unwrap_err();
    assert_eq!(
        (none.code(), reason(&none).as_str()),
        (Code::NotFound, "review_not_found")
    );

    let items = review_items(&mut c, &id).await.unwrap();
    let (last, progress) = items.split_last().unwrap();
    // Progress first: positions searched of the 17 (the start and one after each move),
    // never going back; only the last item carries the review.
    assert!(!progress.is_empty(), "{items:?}");
    let mut seen = 0;
    for p in progress {
        assert!(p.review.is_none());
        if p.positions > 0 {
            assert_eq!(p.positions, 17);
            assert!(p.positions_done >= seen && p.positions_done <= 17, "{progress:?}");
            seen = p.positions_done;
        }
    }
    let review = last.review.clone().expect("the last item carries the review");
    assert_eq!((last.positions_done, last.positions), (17, 17));
    assert_eq!((review.game_id.as_str(), review.visits), (id.as_str(), 2000));
    assert_eq!(review.moves.len(), 16);
    let blunder = &review.moves[14];
    let j9 = point("J9");
    let b5 = point("B5");
    assert_eq!(
        (blunder.number, blunder.color),
        (15, pb::Color::Black as i32),
        "{blunder:?}"
    );
    assert_eq!(blunder.played, pt(j9.0, j9.1));
    assert_eq!(blunder.best, pt(b5.0, b5.1), "{blunder:?}");
    assert!(blunder.loss > 0.2, "{blunder:?}");
    assert!(blunder.black_before > blunder.black_after, "{blunder:?}");
    assert_eq!(review.mistakes.first(), Some(&15), "{:?}", review.mistakes);
    for m in &review.moves {
        assert!((0.0..=1.0).contains(&m.black_before) && (0.0..=1.0).contains(&m.black_after));
        assert!(m.loss >= 0.0, "{m:?}");
    }

    // Asked again: the stored review, at once, alone; and GetReview reads the same.
    let again = review_items(&mut c, &id).await.unwrap();
    assert_eq!(again.len(), 1, "{again:?}");
    assert_eq!(again[0].review.as_ref(), Some(&review));
    let read = c
        .get_review(pb::GetReviewRequest { game_id: id.clone() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(read.review.as_ref(), Some(&review));

    // Kept across a restart: served from the store, not searched again.
    let srv = Server::start(srv.crash());
    let mut c = srv.client().await;
    let after = review_items(&mut c, &id).await.unwrap();
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].review.as_ref(), Some(&review));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_finished_games_are_reviewed() {
    let srv = Server::fresh("review-phase");
    let mut c = srv.client().await;
    let g = new_game(&mut c, 9, None).await;
    play(&mut c, &g, &g.black, 4, 4).await.unwrap();
    let early = review_items(&mut c, &g.id).await.unwrap_err();
    assert_eq!(
        (early.code(), reason(&early).as_str()),
        (Code::FailedPrecondition, "wrong_phase")
    );
    let missing = review_items(&mut c, "nope").await.unwrap_err();
    assert_eq!(
        (missing.code(), reason(&missing).as_str()),
        (Code::NotFound, "game_not_found")
    );
    let bad = c
        .get_review(pb::GetReviewRequest { game_id: String::new() })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument);
}

/// A game longer than the server reviews is refused before it is queued, and each client
/// may ask for a few reviews a minute.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_games_and_eager_clients_are_refused() {
    let srv = Server::fresh_with(
        "review-limits",
        &[
            ("WEIQI__REVIEW__MAX_MOVES", "10"),
            ("WEIQI__LIMITS__REVIEWS_PER_MINUTE", "1"),
            ("WEIQI__LIMITS__REVIEW_BURST", "2"),
        ],
    );
    let mut c = srv.client().await;
    let long = finished(&mut c, &BLUNDER).await;
    let short = finished(&mut c, &BLUNDER[..4]).await;
    let refused = review_items(&mut c, &long).await.unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::FailedPrecondition, "review_too_long")
    );
    let review = review_items(&mut c, &short).await.unwrap();
    assert_eq!(
        review.last().and_then(|i| i.review.as_ref()).map(|r| r.moves.len()),
        Some(4)
    );
    // The burst of two is spent.
    let eager = review_items(&mut c, &short).await.unwrap_err();
    assert_eq!(
        (eager.code(), reason(&eager).as_str()),
        (Code::ResourceExhausted, "quota_exceeded")
    );
    assert!(eager.get_details_retry_info().and_then(|r| r.retry_delay).is_some());
    // GetReview is a read: no quota.
    for _ in 0..3 {
        c.get_review(pb::GetReviewRequest { game_id: short.clone() })
            .await
            .unwrap();
    }
}

/// One worker and one place in the queue: a third game's review is refused with when to
/// retry; a second asker of a review in the making watches the same one; a review whose
/// watcher left is finished and stored all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_queue_is_bounded_and_a_review_outlives_its_watchers() {
    let srv = Server::fresh_with(
        "review-queue",
        &[
            ("WEIQI__REVIEW__WORKERS", "1"),
            ("WEIQI__REVIEW__QUEUE", "1"),
            // Long enough that the first review still runs when the third is asked for.
            ("WEIQI__REVIEW__VISITS", "10000"),
            ("WEIQI__LIMITS__REVIEWS_PER_MINUTE", "0"),
        ],
    );
    let mut c = srv.client().await;
    let mut games = Vec::new();
    for _ in 0..3 {
        games.push(finished(&mut c, &BLUNDER).await);
    }
    let open = |c: &mut GameServiceClient<Channel>, id: &str| {
        let mut c = c.clone();
        let id = id.to_string();
        async move {
            c.review_game(pb::ReviewGameRequest { game_id: id })
                .await
                .map(|r| r.into_inner())
        }
    };
    // The first runs; its watcher leaves at once.
    let first = open(&mut c, &games[0]).await.unwrap();
    drop(first);
    // The second waits behind it.
    let mut second = open(&mut c, &games[1]).await.unwrap();
    let queued = second.next().await.unwrap().unwrap();
    assert_eq!(queued.queued_ahead, 0, "{queued:?}");
    assert_eq!(queued.positions, 0, "{queued:?}");
    // A third game: no place.
    let full = open(&mut c, &games[2]).await.unwrap_err();
    assert_eq!(
        (full.code(), reason(&full).as_str()),
        (Code::ResourceExhausted, "review_queue_full")
    );
    assert!(full.get_details_retry_info().and_then(|r| r.retry_delay).is_some());
    // A second watcher of the waiting review joins it rather than taking a place.
    let joined = review_items(&mut c, &games[1]).await.unwrap();
    let done = joined.last().and_then(|i| i.review.clone()).expect("the review");
    let mut rest = Vec::new();
    while let Some(item) = second.next().await {
        rest.push(item.unwrap());
    }
    assert_eq!(rest.last().and_then(|i| i.review.as_ref()), Some(&done));
    // The first, left by its watcher, was stored all the same.
    let stored = c
        .get_review(pb::GetReviewRequest {
            game_id: games[0].clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(stored.review.map(|r| r.moves.len()), Some(16));
    // And the third has its place now.
    tokio::time::timeout(Duration::from_secs(120), review_items(&mut c, &games[2]))
        .await
        .expect("the third review in time")
        .unwrap();
}
