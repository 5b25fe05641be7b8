//! The spectators' runtime: a thread of the lowest priority that delivers watched games'
//! items, so that a large audience never delays a player's move.
//!
//! On one core, ten thousand watchers of one game cost 55-70 ms of CPU a move (5.5-7 µs a
//! delivered item: the wake-ups and HTTP/2's per-stream work), and on the runtime that also
//! decides moves, every other game's move queued behind that work (p99 57-206 ms against
//! 11-13 ms unwatched; docs/performance.md). A tokio runtime has no priorities, the kernel
//! does: the spectators' listener (`spectators_listen`, WatchGame and health only) is
//! served by a runtime of its own whose one worker runs at nice 19, and the spectators'
//! heralds run there too ([`crate::hub::Hub::with_delivery`]; a seat's own stream keeps
//! its herald on the players' runtime). A move's path pushes into the game's channel and
//! rings the bells; whatever the players' runtime has to do preempts the delivery, which
//! takes the core's idle time (nice 19 has a weight of 15 against 1024, so it is slowed,
//! never starved, when the players keep the core busy; a watcher left too far behind
//! catches up from the log). Work under a game's lock is sent to the players' runtime, so
//! that the low thread never holds a game's lock a move waits for.
//!
//! Under a CPU quota (a container's CFS limit) the quota is the process's: there the
//! spectators' thread spends the players' quota on another core, and when it runs out
//! the whole process waits for the next period. Size such a quota for the audience.

use std::io;

use tokio::runtime::Handle;

/// The priority of the spectators' thread: the lowest a process may give itself.
pub const NICE: i32 = 19;

/// The spectators' runtime, shut down (without waiting for its tasks) when dropped.
///
/// A current-thread runtime driven by a thread of its own rather than a multi-thread one
/// with one worker: the spectators' wake-ups come from the herald on that thread, and its
/// run queue is then a plain queue, where the other's is a bounded one of 256 tasks that a
/// turn of the herald overflows into a shared one under a lock.
pub struct Delivery {
    handle: Handle,
    /// Dropped to stop the runtime: its thread returns and drops it there.
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Delivery {
    /// Starts the runtime on a thread, `weiqi-spectators`, at [`NICE`].
    pub fn start() -> io::Result<Delivery> {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (started, handle) = std::sync::mpsc::sync_channel(1);
        // The runtime is made, run and dropped on its thread: a runtime dropped inside
        // another's task (were the thread not to start) would panic.
        std::thread::Builder::new()
            .name("weiqi-spectators".into())
            .spawn(move || {
                lower_priority();
                let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                    Ok(rt) => rt,
                    Err(e) => return drop(started.send(Err(e))),
                };
                if started.send(Ok(runtime.handle().clone())).is_err() {
                    return;
                }
                runtime.block_on(async {
                    let _ = stopped.await;
                });
                // (Its tasks are dropped, not run.)
                drop(runtime);
            })?;
        let handle = handle
            .recv()
            .map_err(|_| io::Error::other("the spectators' thread ended before its runtime started"))??;
        Ok(Delivery { handle, _stop: stop })
    }

    pub fn handle(&self) -> Handle {
        self.handle.clone()
    }
}

/// Lowers the calling thread (not the process: on Linux a priority belongs to a thread).
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        let me = rustix::thread::gettid();
        if let Err(e) = rustix::process::setpriority_process(Some(me), NICE) {
            tracing::warn!(error = %e, "the spectators' thread keeps the server's priority");
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The runtime's tasks run on a thread at nice 19, and the caller keeps its priority.
    #[test]
    fn the_spectators_thread_runs_at_the_lowest_priority() {
        let me = rustix::thread::gettid();
        let before = rustix::process::getpriority_process(Some(me)).unwrap();
        let delivery = Delivery::start().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        delivery.handle().spawn(async move {
            let me = rustix::thread::gettid();
            let name = std::thread::current().name().map(str::to_string);
            tx.send((rustix::process::getpriority_process(Some(me)).unwrap(), name))
                .unwrap();
        });
        let (nice, name) = rx.recv().unwrap();
        assert_eq!(nice, NICE);
        assert_eq!(name.as_deref(), Some("weiqi-spectators"));
        assert_eq!(rustix::process::getpriority_process(Some(me)).unwrap(), before);
    }
}
