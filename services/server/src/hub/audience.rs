//! A game's audience: the channel its watchers read, and the herald that tells them of
//! each item, off the move path.
//!
//! Publishing an item (on the move path, under the game's lock) is a push into a bounded
//! channel and a bell: the same few atomic operations for one watcher or ten thousand.
//! (Before, the move's own `send` woke every watcher under the lock: at 10,000 watchers the
//! watched game's moves took 3.4-4.3 ms at p50, 1.5-2.6 ms since; docs/performance.md.)
//! Telling the watchers is the herald's job, a task of its own per watched game. It wakes
//! the waiting watchers in turns of about [`TURN`] streams and yields to the runtime
//! between turns, so that no more than a turn of watchers is queued ahead of another
//! game's move. (Measured, the turns did not change the other games' p99 beyond the noise:
//! the fan-out's cost on the server's one core is what they wait on.)
//!
//! A turn takes whole groups: the edge gives each watcher its connection as its group, so
//! a connection's streams are woken together and one `send` still carries their frames.
//! A watcher that falls more than [`CHANNEL_SLOTS`] items behind is told it lagged and
//! catches up from the game's log: no buffer grows with a slow reader.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};

use tokio::runtime::Handle;
use tokio::sync::{Notify, broadcast};

use super::entry::Broadcast;

/// How many items the channel keeps for a slow watcher, which then catches up from the log.
pub const CHANNEL_SLOTS: usize = 64;

/// About how many watchers the herald wakes before it lets the runtime run other tasks
/// (a connection's watchers are never split, so a turn may be larger). At about 10 µs of
/// the server's core a delivered item, a turn is about 2.5 ms of work.
pub const TURN: usize = 256;

/// A game's audience, made by its first watcher: most games are never watched and hold no
/// channel. Shared by the entry and its slot (which counts watchers without the lock).
#[derive(Clone, Default)]
pub(super) struct Audience(Arc<OnceLock<Channel>>);

/// The channel and its bells. Dropped with the game's entry: the bells close, the heralds
/// wake everyone still waiting and end, and the watchers' streams end.
struct Channel {
    tx: broadcast::Sender<Broadcast>,
    /// [`HERE`]: the bell whose herald runs where its first watcher subscribed (the
    /// players' runtime); [`SPECTATORS`]: the one whose herald runs on the spectators'
    /// runtime, for watchers without a seat when the server has one. Each made by its
    /// first watcher; every item rings both.
    bells: [OnceLock<Arc<Bell>>; 2],
}

const HERE: usize = 0;
const SPECTATORS: usize = 1;

impl Channel {
    fn bells(&self) -> impl Iterator<Item = &Arc<Bell>> {
        self.bells.iter().filter_map(OnceLock::get)
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        self.bells().for_each(|b| b.close());
    }
}

impl Audience {
    /// A new watcher in `group` (watchers of one group are woken in the same turn), told
    /// of items by the herald on `delivery` (the spectators' runtime, `crate::delivery`),
    /// or, with none, by the herald on the runtime this is called on. The first watcher of
    /// each starts its herald.
    pub fn subscribe(&self, group: u64, delivery: Option<&Handle>) -> Subscription {
        let channel = self.0.get_or_init(|| Channel {
            tx: broadcast::channel(CHANNEL_SLOTS).0,
            bells: Default::default(),
        });
        let which = if delivery.is_some() { SPECTATORS } else { HERE };
        let bell = channel.bells[which].get_or_init(|| {
            let bell = Arc::new(Bell::default());
            match delivery {
                Some(rt) => drop(rt.spawn(herald(bell.clone()))),
                None => drop(tokio::spawn(herald(bell.clone()))),
            }
            bell
        });
        Subscription {
            rx: channel.tx.subscribe(),
            bell: bell.clone(),
            id: bell.next_id.fetch_add(1, Ordering::Relaxed),
            group,
            closing: false,
            queued_in: None,
        }
    }

    /// How many watchers are subscribed now.
    pub fn count(&self) -> usize {
        self.0.get().map_or(0, |c| c.tx.receiver_count())
    }

    /// How many watchers wait for a herald now.
    #[cfg(test)]
    pub(super) fn waiting(&self) -> usize {
        self.0
            .get()
            .map_or(0, |c| c.bells().map(|b| b.lock().wakers.len()).sum())
    }

    /// Publishes an item: into the channel, then the bells. Wakes nobody itself.
    pub fn publish(&self, b: Broadcast) {
        if let Some(c) = self.0.get() {
            let _ = c.tx.send(b);
            c.bells().for_each(|b| b.ring());
        }
    }
}

/// Why a subscription has no more items for now.
#[derive(Debug, PartialEq, Eq)]
pub enum Gap {
    /// The watcher fell this many items behind the channel: catch up from the log.
    Lagged(u64),
    /// The game left memory.
    Closed,
}

/// One watcher's place in the channel.
pub struct Subscription {
    rx: broadcast::Receiver<Broadcast>,
    bell: Arc<Bell>,
    /// Its key in the bell's list of waiting watchers.
    id: u64,
    group: u64,
    /// The bell closed: what is left in the channel, then [`Gap::Closed`].
    closing: bool,
    /// The herald's pass whose list holds this watcher's waker, if any.
    queued_in: Option<u64>,
}

impl Subscription {
    /// The next item, waiting for the herald when there is none.
    #[cfg(test)]
    pub async fn recv(&mut self) -> Result<Broadcast, Gap> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// The next item, or `Pending` with the task's waker left for the herald. Polled by
    /// the watcher's stream itself: no future is made or dropped per item (at 10,000
    /// watchers that was a fifth of the spectators' thread, docs/performance.md).
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Result<Broadcast, Gap>> {
        loop {
            // The bell's count before the look: an item published after the look rings
            // it, and the check under the lock below then looks again.
            let rung = self.bell.rung();
            match self.rx.try_recv() {
                Ok(b) => return Poll::Ready(Ok(b)),
                Err(broadcast::error::TryRecvError::Lagged(n)) => return Poll::Ready(Err(Gap::Lagged(n))),
                Err(broadcast::error::TryRecvError::Closed) => return Poll::Ready(Err(Gap::Closed)),
                Err(broadcast::error::TryRecvError::Empty) if self.closing => return Poll::Ready(Err(Gap::Closed)),
                Err(broadcast::error::TryRecvError::Empty) => {}
            }
            let mut w = self.bell.lock();
            if w.closed {
                // What is left in the channel, then the end.
                self.closing = true;
                continue;
            }
            // Checked under the lock the herald takes the list with: a ring after this
            // check is followed by a take that finds this waker.
            if self.bell.rung() != rung {
                continue;
            }
            if self.queued_in == Some(w.taken) {
                // Already in this pass's list (polled again before the herald came):
                // the latest waker is the one to wake. (The old one is dropped after the
                // lock: a waker's drop may run anything.)
                let old = match w.wakers.get_mut(&self.id) {
                    Some((_, waker)) if !waker.will_wake(cx.waker()) => {
                        Some(std::mem::replace(waker, cx.waker().clone()))
                    }
                    _ => None,
                };
                drop(w);
                drop(old);
            } else {
                w.wakers.insert(self.id, (self.group, cx.waker().clone()));
                self.queued_in = Some(w.taken);
            }
            return Poll::Pending;
        }
    }
}

impl Drop for Subscription {
    /// A watcher that goes away while waiting takes its waker out of the herald's list.
    fn drop(&mut self) {
        if let Some(pass) = self.queued_in {
            let mut w = self.bell.lock();
            let removed = if w.taken == pass {
                w.wakers.remove(&self.id)
            } else {
                None
            };
            // (The waker is dropped after the lock.)
            drop(w);
            drop(removed);
        }
    }
}

/// The bell of a game's audience: how many items were published, the watchers waiting
/// for the next, and the herald's wake-up.
#[derive(Default)]
struct Bell {
    rung: AtomicU64,
    next_id: AtomicU64,
    waiting: Mutex<Waiting>,
    herald: Notify,
}

#[derive(Default)]
struct Waiting {
    /// Each waiting watcher's group and waker, by its id: a watcher that goes away while
    /// waiting takes its waker out (a client opening and cancelling streams on a quiet game
    /// leaves nothing behind).
    wakers: Waiters,
    /// How many times the herald took the list (a watcher queued in the current one is
    /// not queued twice).
    taken: u64,
    closed: bool,
}

impl Bell {
    fn rung(&self) -> u64 {
        self.rung.load(Ordering::SeqCst)
    }

    fn ring(&self) {
        self.rung.fetch_add(1, Ordering::SeqCst);
        self.herald.notify_one();
    }

    fn close(&self) {
        self.lock().closed = true;
        self.herald.notify_one();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Waiting> {
        // (Nothing panics while it is held; a poisoned list is still a list.)
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The waiting watchers, for the herald (the list is left empty, with `spare`'s
    /// allocation), and whether the bell closed.
    fn take(&self, spare: Waiters) -> (Waiters, bool) {
        let mut w = self.lock();
        w.taken += 1;
        (std::mem::replace(&mut w.wakers, spare), w.closed)
    }
}

/// A game's herald: after each ring, wakes the watchers then waiting, a turn at a time;
/// ends when the bell closes (after waking the last ones).
async fn herald(bell: Arc<Bell>) {
    // (The list and the turns keep their allocations from one pass to the next.)
    let mut spare = Waiters::default();
    let mut waiting = Vec::new();
    loop {
        bell.herald.notified().await;
        let (mut taken, closed) = bell.take(spare);
        if closed {
            taken.into_values().for_each(|(_, w)| w.wake());
            return;
        }
        waiting.extend(taken.drain().map(|(_, entry)| entry));
        spare = taken;
        for turn in turns(&mut waiting) {
            turn.iter().for_each(|(_, w)| w.wake_by_ref());
            tokio::task::yield_now().await;
        }
        waiting.clear();
    }
}

/// The waiting watchers: by id, each one's group and waker.
type Waiters = HashMap<u64, (u64, Waker)>;

/// The waiting watchers sorted by group and cut into turns of about [`TURN`], never
/// between two watchers of one group.
fn turns(waiting: &mut [(u64, Waker)]) -> Vec<&[(u64, Waker)]> {
    waiting.sort_unstable_by_key(|(group, _)| *group);
    let mut turns = Vec::with_capacity(waiting.len() / TURN + 1);
    let mut rest: &[(u64, Waker)] = waiting;
    while !rest.is_empty() {
        let mut end = TURN.min(rest.len());
        while end < rest.len() && rest[end].0 == rest[end - 1].0 {
            end += 1;
        }
        let (turn, after) = rest.split_at(end);
        turns.push(turn);
        rest = after;
    }
    turns
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::{GameView, Published};
    use std::sync::atomic::AtomicUsize;
    use weiqi_game::{Event, EventKind, Game};

    fn item(seq: u64) -> Broadcast {
        let event = Event {
            seq,
            at: seq,
            clocks: Default::default(),
            kind: EventKind::Passed {
                color: weiqi_game::weiqi_rules::Color::Black,
                declared_end: false,
                lag_ms: 0,
            },
        };
        Published::new(event, GameView::of("g", &Game::new(), seq))
    }

    /// Lets every spawned watcher reach its wait.
    async fn all_waiting(audience: &Audience, watchers: usize) {
        while audience.waiting() < watchers {
            tokio::task::yield_now().await;
        }
    }

    /// A waker that counts its wakes and records their order.
    struct Counting {
        id: usize,
        order: Arc<Mutex<Vec<usize>>>,
        wakes: AtomicUsize,
    }

    impl std::task::Wake for Counting {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.wakes.fetch_add(1, Ordering::SeqCst);
            self.order.lock().unwrap().push(self.id);
        }
    }

    #[test]
    fn turns_keep_groups_whole_and_cover_everyone_once() {
        let order = Arc::new(Mutex::new(Vec::new()));
        // 1,000 watchers over 7 groups, in no order.
        let mut waiting: Vec<(u64, Waker)> = (0..1000)
            .map(|i| {
                let w = Arc::new(Counting {
                    id: i,
                    order: order.clone(),
                    wakes: AtomicUsize::new(0),
                });
                (((i * 37) % 7) as u64, Waker::from(w))
            })
            .collect();
        let cut = turns(&mut waiting);
        assert_eq!(cut.iter().map(|t| t.len()).sum::<usize>(), 1000);
        let mut seen_groups = std::collections::HashSet::new();
        for turn in &cut {
            // A group is in one turn only.
            let groups: std::collections::HashSet<u64> = turn.iter().map(|(g, _)| *g).collect();
            for g in &groups {
                assert!(seen_groups.insert(*g), "group {g} split over two turns");
            }
        }
        // Small groups: turns of about TURN, the last shorter.
        let mut small: Vec<(u64, Waker)> = (0..1000u64).map(|i| (i / 3, Waker::noop().clone())).collect();
        let cut = turns(&mut small);
        assert!(
            cut.iter().all(|t| t.len() <= TURN + 2),
            "{:?}",
            cut.iter().map(|t| t.len()).collect::<Vec<_>>()
        );
        assert_eq!(cut.len(), 1000usize.div_ceil(TURN));
    }

    /// Publishing wakes nobody on the publisher's path; the herald then wakes every
    /// waiting watcher once, and each reads every item once and in order.
    #[tokio::test(flavor = "current_thread")]
    async fn publishing_is_off_the_watchers_path_and_every_watcher_reads_every_item() {
        let audience = Audience::default();
        let watchers = 3 * TURN + 17;
        let mut subs: Vec<Subscription> = (0..watchers)
            .map(|i| audience.subscribe((i % 50) as u64, None))
            .collect();
        assert_eq!(audience.count(), watchers);
        let read = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for (i, mut sub) in subs.drain(..).enumerate() {
            let read = read.clone();
            tasks.push(tokio::spawn(async move {
                let mut seqs = Vec::new();
                loop {
                    match sub.recv().await {
                        Ok(b) => {
                            seqs.push(b.seq());
                            read.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(Gap::Closed) => return (i, seqs),
                        Err(Gap::Lagged(n)) => panic!("watcher {i} lagged by {n}"),
                    }
                }
            }));
        }
        all_waiting(&audience, watchers).await;
        for seq in 1..=10 {
            audience.publish(item(seq));
            // On a current-thread runtime nothing else has run yet: the publisher's call
            // woke nobody.
            assert_eq!(read.load(Ordering::SeqCst), (seq as usize - 1) * watchers);
            // The herald's turns, and the watchers between them.
            while read.load(Ordering::SeqCst) < seq as usize * watchers {
                tokio::task::yield_now().await;
            }
        }
        drop(audience);
        for t in tasks {
            let (i, seqs) = t.await.unwrap();
            assert_eq!(seqs, (1..=10).collect::<Vec<_>>(), "watcher {i}");
        }
    }

    /// Players and spectators have a herald each: with another runtime as the spectators',
    /// watchers subscribed for it are woken by a herald there, the others by one here, and
    /// every watcher of either reads every item once and in order; dropping the audience
    /// ends both.
    #[tokio::test(flavor = "current_thread")]
    async fn players_and_spectators_are_told_by_heralds_of_their_own() {
        // (Shut down when dropped, even inside this test's runtime on a failed assert.)
        let spectators = crate::delivery::Delivery::start().unwrap();
        let audience = Audience::default();
        let read = |mut sub: Subscription| async move {
            let mut seqs = Vec::new();
            loop {
                match sub.recv().await {
                    Ok(b) => seqs.push(b.seq()),
                    Err(Gap::Closed) => return seqs,
                    Err(Gap::Lagged(n)) => panic!("lagged by {n}"),
                }
            }
        };
        let mut tasks = Vec::new();
        for i in 0..40u64 {
            let sub = audience.subscribe(i, None);
            tasks.push(tokio::spawn(read(sub)));
            let sub = audience.subscribe(i, Some(&spectators.handle()));
            tasks.push(spectators.handle().spawn(read(sub)));
        }
        assert_eq!(audience.count(), 80);
        let bells = |a: &Audience| a.0.get().unwrap().bells().count();
        assert_eq!(bells(&audience), 2);
        all_waiting(&audience, 80).await;
        for seq in 1..=10 {
            audience.publish(item(seq));
        }
        drop(audience);
        for t in tasks {
            let seqs = tokio::time::timeout(std::time::Duration::from_secs(10), t).await;
            assert_eq!(
                seqs.expect("a watcher was never told").unwrap(),
                (1..=10).collect::<Vec<_>>()
            );
        }
    }

    /// Between two turns the runtime runs other tasks: a task woken while the herald is
    /// at work runs before the herald's last turn.
    #[tokio::test(flavor = "current_thread")]
    async fn other_tasks_run_between_turns() {
        let audience = Audience::default();
        let watchers = 4 * TURN;
        let done = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for i in 0..watchers {
            let mut sub = audience.subscribe(i as u64, None);
            let done = done.clone();
            tasks.push(tokio::spawn(async move {
                let _ = sub.recv().await;
                done.fetch_add(1, Ordering::SeqCst);
            }));
        }
        all_waiting(&audience, watchers).await;
        audience.publish(item(1));
        // A "move" of another game, ready as soon as the herald starts.
        let seen_at = Arc::new(AtomicUsize::new(usize::MAX));
        let move_task = {
            let (done, seen_at) = (done.clone(), seen_at.clone());
            tokio::spawn(async move {
                seen_at.store(done.load(Ordering::SeqCst), Ordering::SeqCst);
            })
        };
        move_task.await.unwrap();
        for t in tasks {
            t.await.unwrap();
        }
        let at = seen_at.load(Ordering::SeqCst);
        assert!(at <= TURN, "the other task ran after {at} watchers, not within a turn");
    }

    /// Watchers that go away while waiting take their wakers with them: a client opening
    /// and cancelling streams on a quiet game leaves nothing in the list.
    #[tokio::test(flavor = "current_thread")]
    async fn watchers_that_leave_while_waiting_leave_nothing_behind() {
        let audience = Audience::default();
        for _round in 0..5 {
            let tasks: Vec<_> = (0..200)
                .map(|i| {
                    let mut sub = audience.subscribe(i, None);
                    tokio::spawn(async move {
                        let _ = sub.recv().await;
                    })
                })
                .collect();
            all_waiting(&audience, 200).await;
            for t in tasks {
                t.abort();
                let _ = t.await;
            }
            assert_eq!(audience.waiting(), 0);
            assert_eq!(audience.count(), 0);
        }
    }

    /// A watcher polled again before the herald came (by another task) is in the list
    /// once, and the herald wakes the latest waker it was polled with.
    #[tokio::test(flavor = "current_thread")]
    async fn the_herald_wakes_the_latest_waker_once() {
        let audience = Audience::default();
        let mut sub = audience.subscribe(1, None);
        let order = Arc::new(Mutex::new(Vec::new()));
        let waker = |id| {
            Waker::from(Arc::new(Counting {
                id,
                order: order.clone(),
                wakes: AtomicUsize::new(0),
            }))
        };
        let (first, second) = (waker(1), waker(2));
        assert!(sub.poll_recv(&mut Context::from_waker(&first)).is_pending());
        assert!(sub.poll_recv(&mut Context::from_waker(&second)).is_pending());
        assert!(sub.poll_recv(&mut Context::from_waker(&second)).is_pending());
        assert_eq!(audience.waiting(), 1);
        audience.publish(item(1));
        while order.lock().unwrap().is_empty() {
            tokio::task::yield_now().await;
        }
        assert_eq!(*order.lock().unwrap(), vec![2]);
        match sub.poll_recv(&mut Context::from_waker(&second)) {
            Poll::Ready(Ok(b)) => assert_eq!(b.seq(), 1),
            other => panic!("the item was not there: {:?}", other.map(|r| r.map(|b| b.seq()))),
        }
        // Waiting again puts it back in the (new) list.
        assert!(sub.poll_recv(&mut Context::from_waker(&first)).is_pending());
        assert_eq!(audience.waiting(), 1);
        drop(sub);
        assert_eq!(audience.waiting(), 0);
    }

    /// A watcher more than CHANNEL_SLOTS behind is told so (and catches up from the log,
    /// in `watch`); the channel never holds more.
    #[tokio::test(flavor = "current_thread")]
    async fn a_slow_watcher_lags_instead_of_buffering() {
        let audience = Audience::default();
        let mut slow = audience.subscribe(1, None);
        for seq in 1..=(CHANNEL_SLOTS as u64 + 5) {
            audience.publish(item(seq));
        }
        assert_eq!(slow.recv().await.unwrap_err(), Gap::Lagged(5));
        assert_eq!(slow.recv().await.unwrap().seq(), 6);
    }
}
