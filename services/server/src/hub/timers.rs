//! One timer per game, at the next time something happens to it without a command (a
//! clock running out, a byo-yomi announcement, a scheduled start, a forfeit).

use std::sync::Arc;

use tracing::{debug, warn};
use weiqi_game::{Actor, Command, Ms, Phase, Rejection};
use weiqi_store::EventStore;

use super::entry::Entry;
use super::error::HubError;
use super::{Hub, Mutation};

/// How long a timer whose tick could not be stored, or that woke to find nothing due,
/// waits before it tries again. (The game promises that a tick at `next_wakeup` always
/// has something to do, and its property tests check it; were that ever broken, the game
/// would still end, a little late, instead of waiting for a command that may never
/// come, and the timer would not spin.)
const TICK_RETRY_MS: Ms = 1_000;

impl<S: EventStore> Hub<S> {
    /// (Re)arms the game's timer for its next wake-up; none if nothing is due.
    pub(super) fn schedule(self: &Arc<Self>, game_id: &str, entry: &mut Entry) {
        let wake = entry.game.get().next_wakeup();
        self.arm(game_id, entry, wake);
    }

    /// After a tick that found nothing to do: armed again, no sooner than
    /// [`TICK_RETRY_MS`] from `now` when the wake-up has already passed.
    pub(super) fn rearm_after_empty_tick(self: &Arc<Self>, game_id: &str, entry: &mut Entry, now: Ms) {
        let wake = entry.game.get().next_wakeup();
        if let Some(w) = wake.filter(|&w| w <= now) {
            warn!(
                game_id,
                wake_ms = w,
                now_ms = now,
                "a timer found nothing due at its wake-up"
            );
        }
        let wake = wake.map(|w| if w <= now { now + TICK_RETRY_MS } else { w });
        self.arm(game_id, entry, wake);
    }

    fn arm(self: &Arc<Self>, game_id: &str, entry: &mut Entry, wake: Option<Ms>) {
        if let Some(t) = entry.timer.take()
            && Some(t.id()) != tokio::task::try_id()
        {
            // (A timer that is itself ticking is not aborted: it is finishing anyway.)
            t.abort();
        }
        let Some(wake) = wake else {
            return;
        };
        let hub = Arc::clone(self);
        let id = game_id.to_string();
        let at = self.time.instant(wake);
        let handle = tokio::spawn(async move {
            tokio::time::sleep_until(at).await;
            // A store that fails (a database restarting) is tried again until the tick is
            // stored: a forfeit or a flag must not be lost to one failed write.
            while let Err(e) = hub.run(&id, Actor::Server, Command::Tick, Mutation::default()).await {
                match e {
                    HubError::Store(_) => {
                        warn!(game_id = %id, error = %e, "timer tick failed; trying again");
                        tokio::time::sleep(std::time::Duration::from_millis(TICK_RETRY_MS)).await;
                    }
                    // Another replica ended the game meanwhile: nothing was left to do.
                    HubError::Rejected {
                        rejection: Rejection::WrongPhase(Phase::Finished),
                        ..
                    } => {
                        debug!(game_id = %id, "timer: the game had ended elsewhere");
                        break;
                    }
                    e => {
                        warn!(game_id = %id, error = %e, "timer tick failed");
                        break;
                    }
                }
            }
        });
        entry.timer = Some(handle.abort_handle());
    }
}
