//! The lobby (ListGames) reads listings kept beside the games: it answers while a game is
//! busy (its lock held, as while its events are on their way to disk), shows the newest
//! games first, and follows phases and move numbers.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tonic::Request;
use weiqi_game::{Actor, Command, Settings};
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::game_service_server::GameService;
use weiqi_rules::Point;
use weiqi_server::hub::{Hub, Mutation};
use weiqi_server::metrics::Metrics;
use weiqi_server::service::GameSvc;
use weiqi_store::MemoryStore;

async fn list(svc: &GameSvc<MemoryStore>, limit: u32) -> pb::ListGamesResponse {
    tokio::time::timeout(
        Duration::from_secs(2),
        svc.list_games(Request::new(pb::ListGamesRequest { limit })),
    )
    .await
    .expect("the lobby answers at once")
    .unwrap()
    .into_inner()
}

fn ids(games: &[pb::GameSummary]) -> Vec<&str> {
    games.iter().map(|g| g.game_id.as_str()).collect()
}

#[tokio::test(start_paused = true)]
async fn the_lobby_never_waits_for_a_busy_game_and_shows_the_newest_first() {
    let (_stop, rx) = watch::channel(false);
    let hub = Arc::new(Hub::new(MemoryStore::new(), vec![7; 32], Metrics::new(), rx));
    let svc = GameSvc::new(hub.clone(), 1000);
    // Five games created a second apart; the first three get an opponent.
    let mut created = Vec::new();
    for _ in 0..5 {
        let id = hub.create(Settings::casual(9), None, None, "").await.unwrap().game_id;
        created.push(id);
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    for id in &created[..3] {
        hub.join(id, None, None, "").await.unwrap();
    }
    let black = |id: &str| {
        let hub = hub.clone();
        let id = id.to_string();
        async move {
            let mut e = hub.lock(&id).await.unwrap();
            Actor::from(e.game.get().seat_of(weiqi_rules::Color::Black).unwrap())
        }
    };
    let actor = black(&created[0]).await;
    hub.run(
        &created[0],
        actor,
        Command::Play {
            point: Point::new(4, 4),
            lag_ms: 0,
        },
        Mutation::default(),
    )
    .await
    .unwrap();

    // A game busy: its lock is held for as long as the lobby is asked.
    let busy = hub.lock(&created[1]).await.unwrap();
    let lobby = list(&svc, 10).await;
    drop(busy);
    assert_eq!(
        ids(&lobby.open),
        [created[4].as_str(), created[3].as_str()],
        "newest first"
    );
    assert_eq!(
        ids(&lobby.playing),
        [created[2].as_str(), created[1].as_str(), created[0].as_str()]
    );
    let first = &lobby.playing[2];
    assert_eq!(
        (first.phase, first.move_number, first.board_size, first.rules.as_str()),
        (pb::Phase::Playing as i32, 1, 9, "chinese")
    );
    assert_eq!(lobby.open[0].phase, pb::Phase::WaitingForOpponent as i32);

    // The limit applies to each list, keeping the newest.
    let lobby = list(&svc, 1).await;
    assert_eq!(ids(&lobby.open), [created[4].as_str()]);
    assert_eq!(ids(&lobby.playing), [created[2].as_str()]);

    // A game that ends leaves the lobby.
    let actor = black(&created[2]).await;
    hub.run(&created[2], actor, Command::Resign, Mutation::default())
        .await
        .unwrap();
    let lobby = list(&svc, 10).await;
    assert_eq!(ids(&lobby.playing), [created[1].as_str(), created[0].as_str()]);
    // The metrics follow: five created, one finished, four held in memory.
    let m = &hub.metrics;
    assert_eq!(
        (m.games_created.get(), m.games_finished.get(), m.games_active.get()),
        (5, 1, 4)
    );
}
