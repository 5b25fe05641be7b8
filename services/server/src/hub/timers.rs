//! One timer per game, at the next time something happens to it without a command (a
//! clock running out, a byo-yomi announcement, a scheduled start).

use std::sync::Arc;

use tracing::warn;
use weiqi_game::{Actor, Command};
use weiqi_store::EventStore;

use super::entry::Entry;
use super::{Hub, Mutation};

impl<S: EventStore> Hub<S> {
    /// (Re)arms the game's timer for its next wake-up; none if nothing is due.
    pub(super) fn schedule(self: &Arc<Self>, game_id: &str, entry: &mut Entry) {
        if let Some(t) = entry.timer.take()
            && Some(t.id()) != tokio::task::try_id()
        {
            // (A timer that is itself ticking is not aborted: it is finishing anyway.)
            t.abort();
        }
        let Some(wake) = entry.game.get().next_wakeup() else {
            return;
        };
        let hub = Arc::clone(self);
        let id = game_id.to_string();
        let at = self.time.instant(wake);
        let handle = tokio::spawn(async move {
            tokio::time::sleep_until(at).await;
            if let Err(e) = hub.run(&id, Actor::Server, Command::Tick, Mutation::default()).await {
                warn!(game_id = %id, error = %e, "timer tick failed");
            }
        });
        entry.timer = Some(handle.abort_handle());
    }
}
