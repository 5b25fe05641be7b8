//! What a game's life means to its players, as the hub's [`GameListener`]: a rated game is
//! registered before it exists (so that a crash cannot lose its rating), rated when it
//! ends, and its players' feeds tell them it started and ended. Recovery applies ratings a
//! stopped server left unapplied.

use std::sync::Arc;

use tokio::sync::Notify;
use weiqi_game::{Game, Ms, Phase, Seat};
use weiqi_players::PlayerEventKind;
use weiqi_players::played::played_games;
use weiqi_players::ratings::{rate, rated_game};
use weiqi_store::{Accounts, StoreError};

use crate::hub::{GameHost, GameListener, HubError, ListenerFuture};

/// Ratings and players' feeds, kept as games start and end.
pub struct GameLife {
    pub accounts: Arc<dyn Accounts>,
    /// Woken after writing to players' feeds (the feed reads them at once).
    pub feed_wake: Arc<Notify>,
}

impl GameListener for GameLife {
    fn creating<'a>(
        &'a self,
        game_id: &'a str,
        game: &'a Game,
        now_ms: Ms,
    ) -> ListenerFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            if game.settings().is_some_and(|s| s.rated) {
                // Before the game exists: a server that stops after its last move can
                // still find it and apply its ratings (`recover_ratings`).
                self.accounts.expect_rating(game_id.to_string(), now_ms).await?;
            }
            Ok(())
        })
    }

    fn changed<'a>(&'a self, game_id: &'a str, game: &'a Game, before: Phase, now_ms: Ms) -> ListenerFuture<'a, ()> {
        Box::pin(async move {
            if before != Phase::Finished && game.phase() == Phase::Finished {
                self.rate(game_id, game, now_ms).await;
                self.record_played(game_id, game, now_ms).await;
            }
            self.tell_players(game_id, game, before, now_ms).await;
        })
    }
}

impl GameLife {
    /// Applies a finished rated game to its players' ratings (before the game's last
    /// command is answered, so the players see their new ratings at once). The store
    /// applies each game once (`rated_games`): a retry cannot count it twice. A failure is
    /// logged, the game's result stands, and recovery applies it later
    /// ([`GameLife::recover_ratings`]). False when nothing was applied.
    async fn rate(&self, game_id: &str, game: &Game, ended_ms: Ms) -> bool {
        if !game.settings().is_some_and(|s| s.rated) {
            return false;
        }
        let Some(rated) = rated_game(game_id, game, ended_ms) else {
            // A rated game that does not count (a forfeit, cancelled early): nothing to
            // recover either.
            let _ = self.accounts.drop_pending_rating(game_id.to_string()).await;
            return false;
        };
        match self.accounts.rate_game(rated, rate).await {
            Ok(applied) => {
                tracing::info!(game_id, applied, "ratings updated");
                applied
            }
            Err(e) => {
                tracing::warn!(game_id, error = %e, "rating update failed");
                false
            }
        }
    }

    /// Adds a finished game to its players' lists of games (their profiles). A failure is
    /// logged: the game and its result are durable already, only the list misses it.
    async fn record_played(&self, game_id: &str, game: &Game, ended_ms: Ms) {
        let rows = played_games(game_id, game, ended_ms);
        if rows.is_empty() {
            return;
        }
        if let Err(e) = self.accounts.record_played(rows).await {
            tracing::warn!(game_id, error = %e, "player game list update failed");
        }
    }

    /// Tells a game's players what just happened to it: started (both seats taken by
    /// players) or ended. A failure is logged (the game itself is durable already).
    async fn tell_players(&self, game_id: &str, game: &Game, before: Phase, now_ms: Ms) {
        let started = before == Phase::WaitingForOpponent && game.phase() != Phase::WaitingForOpponent;
        let ended = before != Phase::Finished && game.phase() == Phase::Finished;
        if !started && !ended {
            return;
        }
        let players: Vec<String> = [Seat::Host, Seat::Guest]
            .into_iter()
            .filter_map(|s| game.player(s).map(|p| p.id.clone()))
            .collect();
        let kind = if started {
            if players.len() < 2 {
                return;
            }
            PlayerEventKind::GameStarted {
                game_id: game_id.to_string(),
            }
        } else {
            if players.is_empty() {
                return;
            }
            PlayerEventKind::GameEnded {
                game_id: game_id.to_string(),
                result: game.result().map(|r| r.sgf()).unwrap_or_default(),
            }
        };
        let events = players.into_iter().map(|p| (p, kind.clone())).collect();
        match self.accounts.push_player_events(events, now_ms).await {
            Ok(()) => self.feed_wake.notify_one(),
            Err(e) => tracing::warn!(game_id, error = %e, "player feed update failed"),
        }
    }

    /// Applies the ratings of rated games that ended without them (a server stopped
    /// between the game's last append and the rating update), and forgets rated games that
    /// will not count or were never created. Returns how many it rated.
    pub async fn recover_ratings(&self, host: &Arc<dyn GameHost>) -> usize {
        let pending = match self.accounts.pending_ratings(100).await {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(error = %e, "reading pending ratings failed");
                return 0;
            }
        };
        let now = host.now_ms();
        let mut rated = 0;
        for (game_id, at_ms) in pending {
            match host.clone().game(&game_id).await {
                Ok(game) => {
                    let ended = game.last_event_at().unwrap_or(now);
                    if game.phase() == Phase::Finished && self.rate(&game_id, &game, ended).await {
                        rated += 1;
                    }
                }
                // Registered, then the server stopped before the game's first append.
                Err(HubError::NotFound { .. }) if at_ms + 60_000 < now => {
                    let _ = self.accounts.drop_pending_rating(game_id).await;
                }
                Err(e) => tracing::warn!(game_id, error = %e, "pending rating: game unreadable"),
            }
        }
        if rated > 0 {
            tracing::info!(rated, "ratings recovered");
        }
        rated
    }
}
