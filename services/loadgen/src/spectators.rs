//! The load generator's spectators: WatchGame streams on one game, each recording how late
//! every move reached it, on a runtime of their own.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use tonic::metadata::MetadataValue;
use tonic::transport::Channel;
use weiqi_proto::v1 as pb;

use crate::{Args, now_ms};

/// The spectators' runtime: one worker thread beside the players' (see `run`).
pub(crate) fn watchers_runtime() -> &'static tokio::runtime::Runtime {
    static RT: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("watchers")
            .enable_all()
            .build()
            .expect("the spectators' runtime")
    })
}

/// What a spectator received: how late each move reached it (µs), the same for the moves
/// made once every spectator's stream was open (an audience in place, not arriving), and
/// how many moves it saw.
pub(crate) struct Seen {
    pub(crate) delays: Vec<u64>,
    pub(crate) settled: Vec<u64>,
    pub(crate) moves: u64,
}

/// `--watchers` streams on `game_id`, each recording how late every move reached it
/// until `stop`.
pub(crate) fn watchers(
    args: &Args,
    chans: &[Channel],
    game_id: &str,
    stop: &Arc<AtomicBool>,
) -> Vec<tokio::task::JoinHandle<Seen>> {
    // When the last stream opened (0: not yet).
    let opened = Arc::new(AtomicUsize::new(0));
    let all_open_ms = Arc::new(AtomicU64::new(0));
    let audience = args.watchers;
    (0..args.watchers)
        .map(|w| {
            let chan = chans[w % chans.len()].clone();
            let (game_id, stop) = (game_id.to_string(), stop.clone());
            let (opened, all_open_ms) = (opened.clone(), all_open_ms.clone());
            tokio::spawn(async move {
                let mut seen = Seen {
                    delays: Vec::new(),
                    settled: Vec::new(),
                    moves: 0,
                };
                let mut req = tonic::Request::new(pb::WatchGameRequest {
                    game_id: game_id.clone(),
                    since_seq: 0,
                });
                if let Ok(v) = MetadataValue::try_from(game_id.as_str()) {
                    req.metadata_mut().insert("x-weiqi-game", v);
                }
                let Ok(mut stream) = watch_heads(chan, req).await else {
                    return seen;
                };
                let since = now_ms();
                if opened.fetch_add(1, Ordering::SeqCst) + 1 == audience {
                    all_open_ms.store(since, Ordering::SeqCst);
                }
                while !stop.load(Ordering::Relaxed) {
                    match tokio::time::timeout(Duration::from_millis(200), stream.message()).await {
                        Err(_) => continue,
                        Ok(Ok(Some(m))) => {
                            let Some(e) = m.event else { continue };
                            // Moves made after the stream opened (the replay is not a delay).
                            if e.kind == "move_played" && e.time_ms as u64 >= since {
                                let late_us = now_ms().saturating_sub(e.time_ms as u64).max(1) * 1000;
                                seen.delays.push(late_us);
                                let all_open = all_open_ms.load(Ordering::SeqCst);
                                if all_open > 0 && e.time_ms as u64 >= all_open {
                                    seen.settled.push(late_us);
                                }
                                seen.moves += 1;
                            }
                        }
                        Ok(_) => break,
                    }
                }
                seen
            })
        })
        .collect()
}

/// What a spectator of the load generator reads of each WatchGame item: its event's kind
/// and server time, with the tags of `WatchGameResponse.event`, `Event.time_ms` and
/// `Event.kind`. The rest (the game state, the event's payload) is skipped unread: ten
/// thousand spectators share this process's one core, where a real one decodes its own
/// items on its own device, and what is measured is the server's delivery.
#[derive(Clone, PartialEq, prost::Message)]
struct WatchedHead {
    #[prost(message, optional, tag = "1")]
    event: Option<EventHead>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct EventHead {
    #[prost(int64, tag = "2")]
    time_ms: i64,
    #[prost(string, tag = "5")]
    kind: String,
}

/// WatchGame, reading only each item's [`WatchedHead`].
async fn watch_heads(
    chan: Channel,
    req: tonic::Request<pb::WatchGameRequest>,
) -> Result<tonic::Streaming<WatchedHead>, tonic::Status> {
    let mut grpc = tonic::client::Grpc::new(chan);
    grpc.ready()
        .await
        .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
    let path = tonic::codegen::http::uri::PathAndQuery::from_static("/weiqi.v1.GameService/WatchGame");
    let codec = tonic_prost::ProstCodec::<pb::WatchGameRequest, WatchedHead>::default();
    Ok(grpc.server_streaming(req, path, codec).await?.into_inner())
}
