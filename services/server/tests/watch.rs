//! WatchGame for a watcher that falls behind: once the game's channel has moved on past
//! what the watcher read, it is caught up from the log, and every replayed event carries
//! the state right after it (the fold up to that event), not the game's state now.

use std::sync::Arc;

use futures::StreamExt;
use tokio::sync::watch;
use tonic::Request;
use weiqi_game::{Actor, Command, Settings};
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::game_service_server::GameService;
use weiqi_rules::{Color, Point};
use weiqi_server::hub::{Hub, Mutation};
use weiqi_server::metrics::Metrics;
use weiqi_server::service::GameSvc;
use weiqi_store::MemoryStore;

#[tokio::test]
async fn a_lagging_watcher_sees_each_event_with_the_state_after_it() {
    let (_stop, rx) = watch::channel(false);
    let hub = Arc::new(Hub::new(MemoryStore::new(), vec![7; 32], Metrics::new(), rx));
    let svc = GameSvc::new(hub.clone(), 1000);
    let id = hub.create(Settings::casual(19), None, None, "").await.unwrap().game_id;
    hub.join(&id, None, None, "").await.unwrap();
    let seat = |c: Color| {
        let hub = hub.clone();
        let id = id.clone();
        async move { Actor::from(hub.lock(&id).await.unwrap().game.get().seat_of(c).unwrap()) }
    };
    let (black, white) = (seat(Color::Black).await, seat(Color::White).await);
    let start = hub.lock(&id).await.unwrap().game.get().seq();

    // A watcher that reads nothing while the game goes on.
    let mut stream = svc
        .watch_game(Request::new(pb::WatchGameRequest {
            game_id: id.clone(),
            since_seq: start,
        }))
        .await
        .unwrap()
        .into_inner();

    // 120 moves, each followed by an undo request and its refusal: 360 events, more than
    // the game's channel (64) and the stream's buffer (256) hold together.
    let run = |actor: Actor, cmd: Command| {
        let hub = hub.clone();
        let id = id.clone();
        async move { hub.run(&id, actor, cmd, Mutation::default()).await.unwrap() }
    };
    for i in 0..120u8 {
        let (mover, other) = if i % 2 == 0 { (black, white) } else { (white, black) };
        // Black on rows 0, 4, 8..., White on rows 2, 6, 10...: nothing is ever captured.
        let row = (i % 2) * 2 + 4 * ((i / 2) / 19);
        let point = Point::new((i / 2) % 19, row);
        run(mover, Command::Play { point, lag_ms: 0 }).await;
        run(mover, Command::RequestUndo).await;
        run(other, Command::AnswerUndo { accept: false }).await;
    }
    let end = hub.lock(&id).await.unwrap().game.get().seq();
    assert_eq!(end - start, 360);

    // Everything arrives, in order, each event with the state after it.
    let mut seen = 0;
    let mut last_moves = 0;
    while let Some(msg) = tokio::time::timeout(std::time::Duration::from_secs(5), stream.next())
        .await
        .expect("the watcher is caught up")
    {
        let msg = msg.unwrap();
        // (Items without an event tell of a seat's presence.)
        let Some(event) = msg.event else { continue };
        let state = msg.state.unwrap();
        assert_eq!(event.seq, start + seen + 1, "in order, none missing");
        assert_eq!(state.seq, event.seq, "the state after this event, not the game's now");
        if event.kind == "move_played" {
            last_moves += 1;
        }
        assert_eq!(state.move_number, last_moves);
        seen += 1;
        if event.seq == end {
            break;
        }
    }
    assert_eq!(seen, 360);
}
