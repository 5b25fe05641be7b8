//! Graceful shutdown of the real server (in process, on a loopback port): health turns
//! NOT_SERVING first, game watchers are closed, and the server is gone within the grace
//! period even when a client holds a stream open that nothing on our side ends (a health
//! watch, as load balancers keep).

use std::time::{Duration, Instant};

use tonic::transport::Channel;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::game_service_client::GameServiceClient;
use weiqi_server::ServerConfig;

const SERVICE: &str = "weiqi.v1.GameService";

fn config(grace_ms: u64) -> ServerConfig {
    let dir = std::env::temp_dir().join(format!("weiqi-shutdown-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cfg = ServerConfig::load(None).expect("defaults");
    cfg.listen = "127.0.0.1:0".into();
    cfg.metrics_listen = String::new();
    cfg.web_listen = String::new();
    cfg.data_dir = dir;
    cfg.shutdown_grace_ms = grace_ms;
    cfg
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_turns_not_serving_then_streams_close_within_the_grace_period() {
    let running = weiqi_server::start(config(500)).await.expect("server starts");
    let channel = Channel::from_shared(format!("http://{}", running.addr))
        .unwrap()
        .connect()
        .await
        .unwrap();

    // A game with a watcher.
    let mut games = GameServiceClient::new(channel.clone());
    let created = games
        .create_game(pb::CreateGameRequest {
            settings: Some(pb::GameSettings {
                board_size: 9,
                ..Default::default()
            }),
            request_id: String::new(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut game_watch = games
        .watch_game(pb::WatchGameRequest {
            game_id: created.game_id.clone(),
            since_seq: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(game_watch.message().await.unwrap().is_some(), "the creation event");

    // A health watch: it stays open as long as the client wants.
    let mut health = HealthClient::new(channel);
    let mut health_watch = health
        .watch(HealthCheckRequest {
            service: SERVICE.into(),
        })
        .await
        .unwrap()
        .into_inner();
    let first = health_watch.message().await.unwrap().expect("a status");
    assert_eq!(first.status, ServingStatus::Serving as i32);

    let started = Instant::now();
    let stopping = tokio::spawn(running.shutdown());

    // Health says NOT_SERVING before anything closes (load balancers drain first).
    let next = tokio::time::timeout(Duration::from_secs(5), health_watch.message())
        .await
        .expect("a status change before shutdown completes")
        .expect("the health stream is still open")
        .expect("a status");
    assert_eq!(next.status, ServingStatus::NotServing as i32);

    // The game watch is closed by the server.
    let end = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match game_watch.message().await {
                Ok(Some(_)) => continue,
                other => return other.map(|_| ()),
            }
        }
    })
    .await
    .expect("the game watch ends");
    assert!(
        end.is_ok() || end.as_ref().is_err_and(|s| s.code() == tonic::Code::Unavailable),
        "closed cleanly, got {end:?}"
    );

    // The health watch is still held open by this client: the server goes anyway once the
    // grace period is over.
    tokio::time::timeout(Duration::from_secs(10), stopping)
        .await
        .expect("shutdown finishes despite the open health watch")
        .unwrap()
        .expect("clean exit");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(400),
        "in-flight calls get their grace period ({took:?})"
    );
    drop(health_watch);
}
