//! Watching a game: what it missed from the log, then each event as it happens, for as
//! long as the client stays.
//!
//! A watcher is a stream polled by the connection's response task: no task and no queue of
//! its own between the game's channel and the socket. (Ten thousand watchers of one game
//! each had a task feeding a channel of 256 items; the hop cost a task wake-up, a queue
//! push and a pop per watcher and event.) The game's herald wakes it ([`super::audience`]).
//! The stream is polled by hand, not an `async` loop: an item's usual path makes no future
//! (the loop made one per item, and with it a wait on the server's stop; both were a fifth
//! of the spectators' thread at 10,000 watchers). Work under the game's lock, rare, is a
//! future sent to the players' runtime.
//! A client that goes away drops the stream, and with it its subscription.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use futures::Stream;
use tokio::sync::watch;
use weiqi_game::{Actor, Event, EventKind, Game, Seat};
use weiqi_store::EventStore;

use super::Hub;
use super::audience::{Gap, Subscription};
use super::entry::{Broadcast, Entry, Published, redact_for_actor};
use super::error::HubError;
use super::presence::Presence;
use super::view::GameView;

impl<S: EventStore> Hub<S> {
    /// A game's events after `since`, then its events as they happen, until the client
    /// drops the stream, the game leaves memory or the server stops. The bearer token, if
    /// any, decides which sealed moves the watcher sees. Watchers of one `group` (the edge
    /// passes the connection) are told of each event together, so that their frames leave
    /// in one write.
    pub async fn watch(
        self: &Arc<Self>,
        game_id: &str,
        token: Option<&str>,
        since: u64,
        group: u64,
    ) -> Result<Feed<S>, HubError> {
        let (hub, id, token) = (self.clone(), game_id.to_string(), token.map(str::to_string));
        // The feed is made whole where the subscription is: a caller that gives up meanwhile
        // drops it there, and its seat's stream closes with it (a seat left open would keep
        // its player present for as long as the game stays in memory).
        let feed = self
            .on_players_runtime(async move { hub.subscribe(id, token.as_deref(), since, group).await })
            .await??;
        Ok(feed)
    }

    /// A watcher's feed, subscribed under the game's lock: its channel (told by the
    /// spectators' herald when it has no seat and the server has a spectators' runtime),
    /// the log after `since` to replay, whom it watches as, and its seat with the game's
    /// presence.
    async fn subscribe(
        self: &Arc<Self>,
        game_id: String,
        token: Option<&str>,
        since: u64,
        group: u64,
    ) -> Result<Feed<S>, HubError> {
        let mut e = self.lock(&game_id).await?;
        let seat = e.seat_of_token(token);
        let viewer: Actor = seat.map_or(Actor::Server, Into::into);
        let spectators = self.delivery.as_ref().filter(|_| seat.is_none());
        let rx = e.watchers.subscribe(group, spectators.map(|rt| &rt.spectators));
        let replay = self.replay(&game_id, &mut e, viewer, since).await?;
        // A seat's own stream: its player is here for as long as it stays open.
        let seat = seat.map(|s| {
            let now = self.time.now_ms();
            if e.presence.stream_opened(s, now) {
                self.publish_presence(&game_id, &mut e, now);
            }
            (s, e.presence.clone())
        });
        // Someone watches now: either seat's grace running out is news (a seat with a
        // stream open is not watched: its stream's end starts the watch).
        for s in [Seat::Host, Seat::Guest] {
            if !e.presence.has_stream(s) {
                self.watch_for_lapse(&game_id, &e.presence, s);
            }
        }
        drop(e);
        self.metrics.open_streams.inc();
        let mut stopping = self.shutdown.clone();
        Ok(Feed {
            hub: self.clone(),
            game_id,
            seat,
            viewer,
            rx,
            shutdown: self.shutdown.clone(),
            stopped: Box::pin(async move {
                let _ = stopping.changed().await;
            }),
            replay: Some(replay),
            pending: None,
            last: since,
            ended: false,
        })
    }
}

impl<S: EventStore> Hub<S> {
    /// The game's acknowledged log, for its watchers: kept in memory while the game is
    /// watched (read from the store by the first watcher, extended by every append), so
    /// that a crowd of watchers does not read it from the store one by one.
    async fn watched_log<'e>(&self, game_id: &str, entry: &'e mut Entry) -> Result<&'e [Event], HubError> {
        if entry.log.is_none() {
            let mut events = self.stored_game(game_id).await?.events;
            // (Another server may have appended since this one caught up: those come
            // through the next catch-up, which extends the log.)
            events.retain(|e| e.seq <= entry.acked_seq);
            entry.log = Some(events);
        }
        Ok(entry.log.as_deref().unwrap_or_default())
    }

    /// What a watcher replays of the log after `since`, under the game's lock: a seat's
    /// own fold of the log (its sealed moves are its own to see), or for a spectator the
    /// game's shared items ([`SpectatorsLog`]).
    async fn replay(&self, game_id: &str, entry: &mut Entry, viewer: Actor, since: u64) -> Result<Replay, HubError> {
        if viewer.seat().is_some() {
            let log = self.watched_log(game_id, entry).await?.to_vec();
            return Ok(Replay::Folding {
                log: log.into_iter(),
                game: Game::new(),
                since,
            });
        }
        self.watched_log(game_id, entry).await?;
        let log = entry.log.as_deref().unwrap_or_default();
        let shared = entry.spectators_log.get_or_insert_with(Default::default);
        SpectatorsLog::extend(shared, game_id, log)?;
        let items = shared.clone();
        let next = items.items.partition_point(|b| b.seq() <= since);
        Ok(Replay::Shared { items, next })
    }
}

/// A game's log as every spectator replays it: each event as a spectator sees it, with the
/// game folded up to it. Made by the first spectator and extended by the next ones (or a
/// catch-up) with what the log gained meanwhile, under the game's lock on the players'
/// runtime, so that a crowd's arrival, or its catch-up after falling behind, costs each
/// spectator a reference, not a fold of the game and an encoding of every event (the
/// items' encodings are shared as a live item's are). Its size: about a game view (a
/// 19x19 board is 361 bytes of it) and, once sent, an encoding per event, 1-2 KB, and a
/// game. Kept and dropped with the log: until a move is made with nobody watching, or the
/// game leaves memory.
#[derive(Clone, Default)]
pub struct SpectatorsLog {
    items: Vec<Broadcast>,
    /// The game after the last item's event.
    game: Game,
}

impl SpectatorsLog {
    /// Adds the events of `log` beyond those already made (a log is the game's history
    /// from its first event: what was made stays true). Copies the items only if a
    /// replay still holds them.
    fn extend(shared: &mut Arc<SpectatorsLog>, game_id: &str, log: &[Event]) -> Result<(), HubError> {
        let made = shared.items.len();
        if log.len() < made || (made > 0 && log[made - 1].seq != shared.items[made - 1].seq()) {
            // Not the history these items were made from: start again.
            *shared = Arc::default();
        }
        let made = shared.items.len();
        if log.len() == made {
            return Ok(());
        }
        let this = Arc::make_mut(shared);
        for e in &log[made..] {
            this.game.apply(e).map_err(HubError::corrupt)?;
            this.items.push(replayed(game_id, &this.game, e, Actor::Server));
        }
        Ok(())
    }
}

/// One watcher's stream: each event (as the watcher may see it) with the game right after
/// it; an error ends it. Its position: the game's channel, what is left to replay from the
/// log, and the last sequence number it was sent.
pub struct Feed<S: EventStore> {
    hub: Arc<Hub<S>>,
    game_id: String,
    /// The seat whose player this stream is, and the game's presence it counts in.
    seat: Option<(Seat, Presence)>,
    viewer: Actor,
    rx: Subscription,
    /// The server's stop, looked at before each item (an atomic load).
    shutdown: watch::Receiver<bool>,
    /// The same stop as a wake-up, polled only when the watcher waits (made once: a wait
    /// made per item registered and unregistered each watcher with the signal).
    stopped: Pin<Box<dyn Future<Output = ()> + Send>>,
    /// The log being replayed: the backlog at first, a catch-up after falling behind.
    replay: Option<Replay>,
    /// Work under the game's lock, on the players' runtime: a catch-up's log or a seat's
    /// view of a sealed move. `None` from it ends the stream.
    pending: Option<Pin<Box<dyn Future<Output = Option<Step>> + Send>>>,
    last: u64,
    /// After an error, nothing more.
    ended: bool,
}

impl<S: EventStore> Drop for Feed<S> {
    fn drop(&mut self) {
        self.hub.metrics.open_streams.dec();
        if let Some((seat, presence)) = &self.seat
            && presence.stream_closed(*seat, self.hub.time.now_ms())
        {
            // The seat's last stream: absent once the grace runs out, unless it is back.
            self.hub.watch_for_lapse(&self.game_id, presence, *seat);
        }
    }
}

impl<S: EventStore> Hub<S> {
    /// Tells the game's watchers when `seat`'s grace runs out, unless it is seen again
    /// meanwhile (one task per seat at most, waiting on the hub's clock).
    pub(super) fn watch_for_lapse(self: &Arc<Self>, game_id: &str, presence: &Presence, seat: Seat) {
        if !presence.begin_watch(seat) {
            return;
        }
        let Some(runtime) = self.players_runtime() else {
            presence.end_watch(seat);
            return;
        };
        let (hub, game_id, presence) = (self.clone(), game_id.to_string(), presence.clone());
        runtime.spawn(async move {
            while let Some(at) = presence.lapses_at(seat) {
                if hub.time.now_ms() < at {
                    tokio::time::sleep_until(hub.time.instant(at)).await;
                    continue;
                }
                presence.end_watch(seat);
                hub.presence_lapsed(&game_id, seat).await;
                return;
            }
        });
    }

    /// `seat`'s grace ran out: the game's watchers hear of it, if the game is still in
    /// memory (one that left it has nobody to tell).
    async fn presence_lapsed(self: &Arc<Self>, game_id: &str, seat: Seat) {
        if !self.games.read().expect("lock").contains_key(game_id) {
            return;
        }
        let Ok(mut entry) = self.lock(game_id).await else {
            return;
        };
        let now = self.time.now_ms();
        if !self.presence_of(&mut entry, now)[seat.index()].present {
            self.publish_presence(game_id, &mut entry, now);
        }
    }
}

/// What the players' runtime sends back to a watcher.
enum Step {
    /// The replay to catch up from (the watcher fell behind the channel).
    CatchUp(Replay),
    /// The catch-up failed: told to the watcher, and the stream ends.
    Failed(HubError),
    /// A sealed move as the watcher's seat may see it.
    Shown(Broadcast),
}

impl<S: EventStore> Stream for Feed<S> {
    type Item = Result<Broadcast, HubError>;

    /// The watcher's next item; `None` ends the stream (the game's channel closed, the
    /// server is stopping, or an error was sent).
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            // (A changed or dropped stop: the server is stopping.)
            if this.ended || this.shutdown.has_changed().unwrap_or(true) {
                this.ended = true;
                return Poll::Ready(None);
            }
            if let Some(work) = &mut this.pending {
                let step = ready!(work.as_mut().poll(cx));
                this.pending = None;
                match step {
                    Some(Step::CatchUp(replay)) => this.replay = Some(replay),
                    Some(Step::Failed(e)) => {
                        this.ended = true;
                        return Poll::Ready(Some(Err(e)));
                    }
                    Some(Step::Shown(b)) => {
                        this.last = b.seq();
                        return Poll::Ready(Some(Ok(b)));
                    }
                    None => {
                        this.ended = true;
                        return Poll::Ready(None);
                    }
                }
            }
            if let Some(replay) = &mut this.replay {
                match replay.next(&this.game_id, this.viewer) {
                    Some(Ok(item)) => {
                        this.last = item.seq();
                        return Poll::Ready(Some(Ok(item)));
                    }
                    Some(Err(e)) => {
                        // A log that does not fold: the watcher is told, not left with a gap.
                        this.ended = true;
                        return Poll::Ready(Some(Err(e)));
                    }
                    None => this.replay = None,
                }
            }
            let item = match this.rx.poll_recv(cx) {
                Poll::Ready(item) => item,
                Poll::Pending => {
                    if this.stopped.as_mut().poll(cx).is_ready() {
                        this.ended = true;
                        return Poll::Ready(None);
                    }
                    return Poll::Pending;
                }
            };
            match item {
                // A change outside the log (presence), unless the watcher has already been
                // sent a later state (it caught up from the log meanwhile).
                Ok(b) if b.event.is_none() => {
                    if b.view.seq >= this.last {
                        return Poll::Ready(Some(Ok(b)));
                    }
                }
                Ok(b) if b.seq() <= this.last => {}
                Ok(b) => match &b.event {
                    // Only a sealed move needs the viewer's colour, and only a seat's view
                    // needs the game (a spectator sees no sealed move's point).
                    Some(e) if matches!(e.kind, EventKind::MoveSealed { .. }) => match this.viewer.seat() {
                        None => {
                            let shown = Published::new(e.redacted_for(None), b.view.clone());
                            this.last = shown.seq();
                            return Poll::Ready(Some(Ok(shown)));
                        }
                        Some(_) => {
                            let (hub, id, e, viewer) = (this.hub.clone(), this.game_id.clone(), e.clone(), this.viewer);
                            let runner = hub.clone();
                            this.pending = Some(Box::pin(async move {
                                let redacted = runner.on_players_runtime(async move {
                                    let mut entry = hub.lock(&id).await?;
                                    Ok::<_, HubError>(redact_for_actor(&e, entry.game.get(), viewer))
                                });
                                let shown = redacted.await.ok()?.ok()?;
                                Some(Step::Shown(Published::new(shown, b.view.clone())))
                            }));
                        }
                    },
                    _ => {
                        this.last = b.seq();
                        return Poll::Ready(Some(Ok(b)));
                    }
                },
                Err(Gap::Lagged(_)) => {
                    // Fell behind the channel: catch up from the log, each event with the
                    // game folded up to it (not the game now).
                    this.hub.metrics.watch_catch_ups.inc();
                    let (hub, id, runner) = (this.hub.clone(), this.game_id.clone(), this.hub.clone());
                    let (viewer, last) = (this.viewer, this.last);
                    this.pending = Some(Box::pin(async move {
                        let replay = runner.on_players_runtime(async move {
                            let mut entry = hub.lock(&id).await?;
                            hub.replay(&id, &mut entry, viewer, last).await
                        });
                        // (A log that does not fold, or a store that fails, is told to the
                        // watcher; a players' runtime that stops ends the stream.)
                        match replay.await.ok()? {
                            Ok(replay) => Some(Step::CatchUp(replay)),
                            Err(e) => Some(Step::Failed(e)),
                        }
                    }));
                }
                Err(Gap::Closed) => {
                    this.ended = true;
                    return Poll::Ready(None);
                }
            }
        }
    }
}

/// The item a replay sends of `e`, `game` being folded up to it: the event as `viewer`
/// sees it, with the game right after it (a seat's fold and the spectators' shared log
/// make the same items).
fn replayed(game_id: &str, game: &Game, e: &Event, viewer: Actor) -> Broadcast {
    Published::new(redact_for_actor(e, game, viewer), GameView::of(game_id, game, e.at))
}

/// The events of a log after `since`, one at a time, each as the watcher sees it and with
/// the game folded up to it.
enum Replay {
    /// A seat's: the log folded for it.
    Folding {
        log: std::vec::IntoIter<Event>,
        game: Game,
        since: u64,
    },
    /// A spectator's: the game's shared items, from `next`.
    Shared { items: Arc<SpectatorsLog>, next: usize },
}

impl Replay {
    fn next(&mut self, game_id: &str, viewer: Actor) -> Option<Result<Broadcast, HubError>> {
        match self {
            Replay::Folding { log, game, since } => {
                for e in log.by_ref() {
                    if let Err(err) = game.apply(&e) {
                        return Some(Err(HubError::corrupt(err)));
                    }
                    if e.seq > *since {
                        return Some(Ok(replayed(game_id, game, &e, viewer)));
                    }
                }
                None
            }
            Replay::Shared { items, next } => {
                let item = items.items.get(*next)?.clone();
                *next += 1;
                Some(Ok(item))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use futures::StreamExt;
    use tokio::sync::watch as signal;
    use weiqi_game::{Command, Settings};
    use weiqi_rules::{Color, Point};
    use weiqi_store::MemoryStore;

    use super::*;
    use crate::hub::Mutation;
    use crate::metrics::Metrics;

    /// A hub with a spectators' runtime, and a casual 9x9 game in play: its id, Black's
    /// seat and token, and the hub's stop (kept, or the streams end at once).
    async fn hub_and_game(
        spectators: &crate::delivery::Delivery,
    ) -> (Arc<Hub<MemoryStore>>, String, Seat, String, signal::Sender<bool>) {
        let (stopper, stop) = signal::channel(false);
        let hub = Hub::new(MemoryStore::new(), vec![7; 32], Metrics::new(), stop);
        let hub = Arc::new(hub.with_delivery(spectators.handle()));
        let created = hub.create(Settings::casual(9), None, None, "").await.unwrap();
        let (guest_token, _) = hub.join(&created.game_id, None, None, "").await.unwrap();
        let black = hub
            .lock(&created.game_id)
            .await
            .unwrap()
            .game
            .get()
            .seat_of(Color::Black)
            .unwrap();
        let token = if black == Seat::Host {
            created.seat_token
        } else {
            guest_token
        };
        (hub, created.game_id, black, token, stopper)
    }

    /// Black's own stream is told of a move by the players' herald even while the
    /// spectators' thread is stuck; a spectator's stream hears of it once that thread runs
    /// again (issue 50: the opponent's news never waits for an audience).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_seats_stream_does_not_wait_for_the_spectators_thread() {
        let spectators = crate::delivery::Delivery::start().unwrap();
        let (hub, id, black, token, _stopper) = hub_and_game(&spectators).await;
        let now = hub.lock(&id).await.unwrap().game.get().seq();
        let seat_stream = hub.watch(&id, Some(&token), now, 1).await.unwrap();
        let spectator = hub.watch(&id, None, now, 2).await.unwrap();
        // Both wait for the next item (here, where the test polls them): each is woken by
        // its own herald.
        let next = |mut stream: Feed<MemoryStore>| {
            tokio::spawn(async move {
                let seq = stream.next().await.map(|item| item.unwrap().seq());
                (seq, stream)
            })
        };
        let (seat_next, spectator_next) = (next(seat_stream), next(spectator));
        while hub.lock(&id).await.unwrap().watchers.waiting() < 2 {
            tokio::task::yield_now().await;
        }
        // The spectators' herald has started (its runtime runs its tasks in turn).
        spectators.handle().spawn(async {}).await.unwrap();
        // The spectators' one thread, stuck until told.
        let (release, stuck) = std::sync::mpsc::channel::<()>();
        spectators.handle().spawn(async move {
            let _ = stuck.recv();
        });
        let point = Point::new(2, 2);
        hub.run(
            &id,
            Actor::from(black),
            Command::Play { point, lag_ms: 0 },
            Mutation::default(),
        )
        .await
        .unwrap();
        let told = tokio::time::timeout(Duration::from_secs(5), seat_next).await;
        let (seq, seat_stream) = told
            .expect("the seat's stream waited for the spectators' thread")
            .unwrap();
        assert_eq!(seq, Some(now + 1));
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(
            !spectator_next.is_finished(),
            "a spectator was told by another herald than its own"
        );
        release.send(()).unwrap();
        let later = tokio::time::timeout(Duration::from_secs(5), spectator_next).await;
        let (seq, spectator) = later.expect("the spectator is told once its thread runs").unwrap();
        assert_eq!(seq, Some(now + 1));
        drop((seat_stream, spectator, hub));
    }

    /// Spectators replay the game's shared items (the same item, so one encoding for all),
    /// each from the first after its `since`, and items made before a move are still
    /// shared after it; a seat replays its own fold of the log.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn spectators_replay_shared_items_and_a_seat_its_own() {
        let spectators = crate::delivery::Delivery::start().unwrap();
        let (hub, id, black, token, _stopper) = hub_and_game(&spectators).await;
        let seq = |hub: Arc<Hub<MemoryStore>>, id: String| async move { hub.lock(&id).await.unwrap().game.get().seq() };
        let take = |mut stream: Feed<MemoryStore>, n: u64| async move {
            let mut items = Vec::new();
            for _ in 0..n {
                let item = tokio::time::timeout(Duration::from_secs(5), stream.next()).await;
                items.push(item.expect("a replayed item").unwrap().unwrap());
            }
            (items, stream)
        };
        let before = seq(hub.clone(), id.clone()).await;
        let (early, _early) = take(hub.watch(&id, None, 0, 1).await.unwrap(), before).await;
        hub.run(
            &id,
            Actor::from(black),
            Command::Play {
                point: Point::new(2, 2),
                lag_ms: 0,
            },
            Mutation::default(),
        )
        .await
        .unwrap();
        let now = seq(hub.clone(), id.clone()).await;
        assert!(now > before);
        let (all, _a) = take(hub.watch(&id, None, 0, 2).await.unwrap(), now).await;
        let (late, _b) = take(hub.watch(&id, None, 2, 3).await.unwrap(), now - 2).await;
        let (own, _seat) = take(hub.watch(&id, Some(&token), 0, 4).await.unwrap(), now).await;
        let seqs = |items: &[Broadcast]| items.iter().map(|b| b.seq()).collect::<Vec<_>>();
        assert_eq!(seqs(&all), (1..=now).collect::<Vec<_>>());
        assert_eq!(seqs(&late), (3..=now).collect::<Vec<_>>());
        assert_eq!(seqs(&own), seqs(&all));
        for (i, item) in late.iter().enumerate() {
            assert!(Arc::ptr_eq(item, &all[i + 2]), "spectators share item {}", item.seq());
        }
        for (i, item) in early.iter().enumerate() {
            assert!(
                Arc::ptr_eq(item, &all[i]),
                "item {} was made again after a move",
                item.seq()
            );
        }
        assert!(
            own.iter().zip(&all).all(|(a, b)| !Arc::ptr_eq(a, b)),
            "a seat folds its own"
        );
        // The same game either way.
        assert_eq!(own.last().unwrap().view.seq, all.last().unwrap().view.seq);
    }

    /// A spectator that fell behind and catches up from a log that does not fold is told
    /// so (an error, not a clean end after a gap), and its stream ends.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_catch_up_that_fails_is_told_to_the_spectator() {
        let spectators = crate::delivery::Delivery::start().unwrap();
        let (hub, id, _black, _token, _stopper) = hub_and_game(&spectators).await;
        let now = hub.lock(&id).await.unwrap().game.get().seq();
        let mut stream = hub.watch(&id, None, now, 1).await.unwrap();
        {
            let mut entry = hub.lock(&id).await.unwrap();
            // More than the channel keeps: the spectator's next look finds it lagged.
            for _ in 0..=super::super::audience::CHANNEL_SLOTS {
                hub.publish_presence(&id, &mut entry, hub.time.now_ms());
            }
            // A log whose game was created twice does not fold.
            let log = entry.log.as_mut().unwrap();
            log.insert(1, log[0].clone());
            entry.spectators_log = None;
        }
        let told = tokio::time::timeout(Duration::from_secs(5), stream.next()).await;
        let err = told.expect("the spectator was told").expect("an item").unwrap_err();
        assert!(matches!(err, HubError::Corrupt(_)), "{err:?}");
        assert!(stream.next().await.is_none(), "the stream ends after the error");
    }

    /// A watcher waiting for the next item hears of the server's stop at once: its stream
    /// ends (so that a graceful shutdown is not held by its audience).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_waiting_stream_ends_when_the_server_stops() {
        let spectators = crate::delivery::Delivery::start().unwrap();
        let (hub, id, _black, token, stopper) = hub_and_game(&spectators).await;
        let now = hub.lock(&id).await.unwrap().game.get().seq();
        let streams = [
            hub.watch(&id, None, now, 1).await.unwrap(),
            hub.watch(&id, Some(&token), now, 2).await.unwrap(),
        ];
        let ends: Vec<_> = streams
            .into_iter()
            .map(|mut s| tokio::spawn(async move { s.next().await.is_none() }))
            .collect();
        while hub.lock(&id).await.unwrap().watchers.waiting() < 2 {
            tokio::task::yield_now().await;
        }
        stopper.send(true).unwrap();
        for end in ends {
            let ended = tokio::time::timeout(Duration::from_secs(5), end).await;
            assert!(ended.expect("a waiting stream outlived the stop").unwrap());
        }
        assert_eq!(hub.metrics.open_streams.get(), 0);
    }

    /// A seat's watch given up while it waits for the game's lock (its subscription runs on
    /// the players' runtime and goes on without it) leaves no stream open: the seat is not
    /// kept present, and the open streams' gauge is back to none.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_watch_given_up_while_subscribing_leaves_its_seat_absent() {
        let spectators = crate::delivery::Delivery::start().unwrap();
        let (hub, id, black, token, _stopper) = hub_and_game(&spectators).await;
        {
            let held = hub.lock(&id).await.unwrap();
            let watching = hub.watch(&id, Some(&token), 0, 1);
            assert!(
                tokio::time::timeout(Duration::from_millis(100), watching)
                    .await
                    .is_err()
            );
            drop(held);
        }
        let mut open = true;
        for _ in 0..200 {
            open = hub.lock(&id).await.unwrap().presence.has_stream(black);
            if !open {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(!open, "the given-up stream keeps its seat present");
        assert_eq!(hub.metrics.open_streams.get(), 0);
    }
}
