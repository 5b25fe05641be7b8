//! The load generator's spectators: WatchGame streams on one game, each recording how late
//! every move reached it, on a runtime of their own.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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

/// `--watchers` streams on `game_id`, each recording how late every move reached it
/// until `stop`; each returns its delays and how many moves it saw.
pub(crate) fn watchers(
    args: &Args,
    chans: &[Channel],
    game_id: &str,
    stop: &Arc<AtomicBool>,
) -> Vec<tokio::task::JoinHandle<(Vec<u64>, u64)>> {
    (0..args.watchers)
        .map(|w| {
            let chan = chans[w % chans.len()].clone();
            let (game_id, stop) = (game_id.to_string(), stop.clone());
            tokio::spawn(async move {
                let mut hist: Vec<u64> = Vec::new();
                let mut events = 0u64;
                let mut req = tonic::Request::new(pb::WatchGameRequest {
                    game_id: game_id.clone(),
                    since_seq: 0,
                });
                if let Ok(v) = MetadataValue::try_from(game_id.as_str()) {
                    req.metadata_mut().insert("x-weiqi-game", v);
                }
                let Ok(mut stream) = watch_heads(chan, req).await else {
                    return (hist, events);
                };
                let opened = now_ms();
                while !stop.load(Ordering::Relaxed) {
                    match tokio::time::timeout(Duration::from_millis(200), stream.message()).await {
                        Err(_) => continue,
                        Ok(Ok(Some(m))) => {
                            let Some(e) = m.event else { continue };
                            // Moves made after the stream opened (the replay is not a delay).
                            if e.kind == "move_played" && e.time_ms as u64 >= opened {
                                let late_ms = now_ms().saturating_sub(e.time_ms as u64);
                                hist.push(late_ms.max(1) * 1000);
                                events += 1;
                            }
                        }
                        Ok(_) => break,
                    }
                }
                (hist, events)
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
