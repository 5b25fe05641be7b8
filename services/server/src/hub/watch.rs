//! Watching a game: what it missed from the log, then each event as it happens, for as
//! long as the client stays.

use std::sync::Arc;

use tokio::sync::{broadcast, mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use weiqi_game::{Actor, Event, EventKind, Game};
use weiqi_store::EventStore;

use super::Hub;
use super::entry::{Broadcast, Entry, redact_for_actor};
use super::error::HubError;
use super::view::GameView;

/// A watcher's stream: each event (as the watcher may see it) with the game right after
/// it; an error ends it.
pub type WatchStream = ReceiverStream<Result<Broadcast, HubError>>;

/// How many items wait for a slow watcher before its feed waits for it (then it falls
/// behind the game's channel and catches up from the log).
const WATCH_BUFFER: usize = 256;

type WatchSender = mpsc::Sender<Result<Broadcast, HubError>>;

impl<S: EventStore> Hub<S> {
    /// A game's events after `since`, then its events as they happen, until the client
    /// drops the stream, the game leaves memory or the server stops. The bearer token, if
    /// any, decides which sealed moves the watcher sees.
    pub async fn watch(
        self: &Arc<Self>,
        game_id: &str,
        token: Option<&str>,
        since: u64,
    ) -> Result<WatchStream, HubError> {
        let (mut rx, backlog, viewer) = {
            let mut e = self.lock(game_id).await?;
            let viewer: Actor = e.seat_of_token(token).map_or(Actor::Server, Into::into);
            let rx = e.watchers.subscribe();
            (rx, self.watched_log(game_id, &mut e).await?, viewer)
        };
        let (out, out_rx) = mpsc::channel(WATCH_BUFFER);
        let hub = self.clone();
        let game_id = game_id.to_string();
        let mut shutdown = self.shutdown.clone();
        self.metrics.open_streams.inc();
        tokio::spawn(async move {
            let watcher = Watcher {
                hub: &hub,
                game_id: &game_id,
                viewer,
                out: &out,
            };
            watcher.run(since, backlog, &mut rx, &mut shutdown).await;
            hub.metrics.open_streams.dec();
        });
        Ok(ReceiverStream::new(out_rx))
    }
}

impl<S: EventStore> Hub<S> {
    /// The game's acknowledged log, for its watchers: kept in memory while the game is
    /// watched (read from the store by the first watcher, extended by every append), so
    /// that a crowd of watchers does not read it from the store one by one.
    async fn watched_log(&self, game_id: &str, entry: &mut Entry) -> Result<Vec<Event>, HubError> {
        if let Some(log) = &entry.log {
            return Ok(log.clone());
        }
        let mut events = self.stored_game(game_id).await?.events;
        // (Another server may have appended since this one caught up: those come through
        // the next catch-up, which extends the log.)
        events.retain(|e| e.seq <= entry.acked_seq);
        entry.log = Some(events.clone());
        Ok(events)
    }
}

/// Feeds one watcher until the client goes away (cancels, closes its connection, hits its
/// deadline: the stream's receiver is dropped), the game's channel closes, or the server
/// stops. Waiting on `out.closed()` beside the game's channel is what ends a stream on a
/// quiet game: a dead client is noticed at once, not at the game's next event.
struct Watcher<'a, S> {
    hub: &'a Arc<Hub<S>>,
    game_id: &'a str,
    viewer: Actor,
    out: &'a WatchSender,
}

impl<S: EventStore> Watcher<'_, S> {
    async fn run(
        &self,
        since: u64,
        backlog: Vec<Event>,
        rx: &mut broadcast::Receiver<Broadcast>,
        shutdown: &mut watch::Receiver<bool>,
    ) {
        let Watcher {
            hub,
            game_id,
            viewer,
            out,
        } = *self;
        // Replay what the client missed, with the game after each event.
        let Some(mut last) = replay(game_id, &backlog, since, viewer, out).await else {
            return;
        };
        drop(backlog);
        loop {
            let item = tokio::select! {
                _ = shutdown.changed() => return,
                _ = out.closed() => return,
                item = rx.recv() => item,
            };
            match item {
                Ok(b) => {
                    if b.0.seq <= last {
                        continue;
                    }
                    let seq = b.0.seq;
                    let shown = if matches!(b.0.kind, EventKind::MoveSealed { .. }) {
                        // Only a sealed move needs the viewer's colour.
                        let Ok(mut entry) = hub.lock(game_id).await else { return };
                        Arc::new((redact_for_actor(&b.0, entry.game.get(), viewer), b.1.clone()))
                    } else {
                        b
                    };
                    if out.send(Ok(shown)).await.is_err() {
                        return;
                    }
                    last = seq;
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    // Fell behind the channel: catch up from the log, each event with the
                    // game folded up to it (not the game now).
                    let Ok(mut entry) = hub.lock(game_id).await else { return };
                    let Ok(log) = hub.watched_log(game_id, &mut entry).await else {
                        return;
                    };
                    drop(entry);
                    match replay(game_id, &log, last, viewer, out).await {
                        Some(seq) => last = seq,
                        None => return,
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    }
}

/// Sends a watcher the events of `log` after `since`, each redacted for `viewer` and with
/// the game folded up to it. Returns the last sequence number sent (`since` when none),
/// or `None` when the client went away.
async fn replay(game_id: &str, log: &[Event], since: u64, viewer: Actor, out: &WatchSender) -> Option<u64> {
    let mut g = Game::new();
    let mut last = since;
    for e in log {
        if let Err(err) = g.apply(e) {
            // A log that does not fold: the watcher is told, not left with a gap.
            let _ = out.send(Err(HubError::corrupt(err))).await;
            return None;
        }
        if e.seq > since {
            let shown = redact_for_actor(e, &g, viewer);
            let item = Arc::new((shown, GameView::of(game_id, &g, e.at)));
            out.send(Ok(item)).await.ok()?;
            last = e.seq;
        }
    }
    Some(last)
}
