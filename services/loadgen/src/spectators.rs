//! The load generator's spectators: WatchGame streams on one game, each recording how late
//! every move reached it, on a runtime of their own.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tonic::metadata::MetadataValue;
use tonic::transport::Channel;
use weiqi_proto::v1 as pb;

use crate::{Args, now_ms};

/// The name of this process's spectators' thread.
pub(crate) const WATCHERS_THREAD: &str = "watchers";

/// The spectators' runtime: one thread beside the players' (see `run`), driving a
/// current-thread runtime (its run queue is a plain one; a one-worker multi-thread
/// runtime's bounded queue overflows into a locked one when a move wakes the crowd).
pub(crate) fn watchers_runtime() -> &'static tokio::runtime::Handle {
    // (Started before the window is measured: the thread's CPU is read by its name.)
    static RT: std::sync::OnceLock<tokio::runtime::Handle> = std::sync::OnceLock::new();
    RT.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("the spectators' runtime");
        let handle = rt.handle().clone();
        std::thread::Builder::new()
            .name(WATCHERS_THREAD.into())
            .spawn(move || rt.block_on(std::future::pending::<()>()))
            .expect("the spectators' thread");
        handle
    })
}

/// What a spectator received: how late each move reached it (µs), the same for the moves
/// made once every spectator's stream was open (an audience in place, not arriving), and
/// how many moves it saw.
#[derive(Default)]
pub(crate) struct Seen {
    pub(crate) delays: Vec<u64>,
    pub(crate) settled: Vec<u64>,
    pub(crate) moves: u64,
    /// Events missed, repeated or out of order: each event after the first should be the
    /// one after the last (the stream starts from the game's first event).
    pub(crate) gaps: u64,
    /// The last event's sequence number.
    last_seq: u64,
}

/// A spectator's stream, recording into `seen` until [`Watcher::finish`].
pub(crate) struct Watcher {
    task: tokio::task::JoinHandle<()>,
    seen: Arc<Mutex<Seen>>,
}

impl Watcher {
    /// Stops the stream and gives what it saw.
    pub(crate) async fn finish(self) -> Seen {
        self.task.abort();
        let _ = self.task.await;
        std::mem::take(&mut *self.seen.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// `--watchers` streams on `game_id`, each recording how late every move reached it
/// until finished. (A stream waits for its next item with nothing else: a timeout per
/// item, to look at a stop flag, was a timer set and cancelled per item on this process's
/// one spectators' thread, whose delays are counted in what is measured.)
pub(crate) fn watchers(args: &Args, chans: &[Channel], game_id: &str) -> Vec<Watcher> {
    // When the last stream opened (0: not yet).
    let opened = Arc::new(AtomicUsize::new(0));
    let all_open_ms = Arc::new(AtomicU64::new(0));
    let audience = args.watchers;
    (0..args.watchers)
        .map(|w| {
            let chan = chans[w % chans.len()].clone();
            let game_id = game_id.to_string();
            let (opened, all_open_ms) = (opened.clone(), all_open_ms.clone());
            let seen = Arc::new(Mutex::new(Seen::default()));
            let record = seen.clone();
            let task = tokio::spawn(async move {
                let mut req = tonic::Request::new(pb::WatchGameRequest {
                    game_id: game_id.clone(),
                    since_seq: 0,
                });
                if let Ok(v) = MetadataValue::try_from(game_id.as_str()) {
                    req.metadata_mut().insert("x-weiqi-game", v);
                }
                let Ok(mut stream) = watch_heads(chan, req).await else {
                    return;
                };
                let since = now_ms();
                if opened.fetch_add(1, Ordering::SeqCst) + 1 == audience {
                    all_open_ms.store(since, Ordering::SeqCst);
                }
                while let Ok(Some(m)) = stream.message().await {
                    let Some(e) = m.event else { continue };
                    let mut seen = record.lock().unwrap_or_else(|e| e.into_inner());
                    if e.seq != seen.last_seq + 1 {
                        seen.gaps += 1;
                    }
                    seen.last_seq = e.seq;
                    // Moves made after the stream opened (the replay is not a delay).
                    if e.kind == "move_played" && e.time_ms as u64 >= since {
                        let late_us = now_ms().saturating_sub(e.time_ms as u64).max(1) * 1000;
                        let all_open = all_open_ms.load(Ordering::SeqCst);
                        seen.delays.push(late_us);
                        if all_open > 0 && e.time_ms as u64 >= all_open {
                            seen.settled.push(late_us);
                        }
                        seen.moves += 1;
                    }
                }
            });
            Watcher { task, seen }
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
    #[prost(uint64, tag = "1")]
    seq: u64,
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
