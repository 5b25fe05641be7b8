//! The accounts' side of [`MemoryStore`]: the same contract as the databases'
//! (`tests/contract`), kept in one lock, so that each change that pairs players or rates a
//! game is as atomic as the databases' transactions. For tests of the players' and
//! tournaments' code without a database, and as the reference behaviour of the traits.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use weiqi_players::played::{PageAfter, PlayedGame};
use weiqi_players::{
    Challenge, ChallengeState, HistoryRow, Pairing, PlayerEvent, PlayerEventKind, PlayerRecord, RateFn, RatedGame,
    RatingRow, Seek,
};
use weiqi_tournament::{TournamentEvent, TournamentPhase};

use super::MemoryStore;
use crate::matchmaking::{ChallengeStore, FeedStore, PendingRatings, SeekStore};
use crate::played::{PlayedGames, bounds, is_after};
use crate::players::PlayerStore;
use crate::reviews::Reviews;
use crate::tournaments::{TournamentRow, TournamentStore};
use crate::{StoreError, StoreFuture};

#[derive(Default)]
pub(super) struct Accounts {
    players: HashMap<String, PlayerRecord>,
    /// Guests' token hashes, to their player ids.
    tokens: HashMap<String, String>,
    /// `(player id, board size)`: a rating with at least one game.
    ratings: BTreeMap<(String, u32), RatingRow>,
    /// `(player id, row)`.
    history: Vec<(String, HistoryRow)>,
    rated_games: HashMap<String, u64>,
    /// In order of arrival.
    challenges: Vec<Challenge>,
    /// In order of arrival.
    seeks: Vec<Seek>,
    /// `(pairing, started)`, in order of arrival.
    pairings: Vec<(Pairing, bool)>,
    events: Vec<PlayerEvent>,
    presence: HashMap<String, u64>,
    /// By game id.
    reviews: HashMap<String, weiqi_gtp::GameReview>,
    pending: BTreeMap<String, u64>,
    /// Each tournament's row and events.
    tournaments: HashMap<String, (TournamentRow, Vec<TournamentEvent>)>,
    /// Finished games by player: `(player id, game id)`.
    played: BTreeMap<(String, String), PlayedGame>,
}

impl Accounts {
    fn push(&mut self, events: impl IntoIterator<Item = (String, PlayerEventKind)>, at_ms: u64) {
        for (player_id, kind) in events {
            let seq = self.events.last().map_or(0, |e| e.seq) + 1;
            self.events.push(PlayerEvent {
                seq,
                player_id,
                at_ms,
                kind,
            });
        }
    }

    /// Whether `p` would break the pairings' keys (its id, or its game's id).
    fn pairing_taken(&self, p: &Pairing) -> bool {
        self.pairings
            .iter()
            .any(|(q, _)| q.id == p.id || q.game_id == p.game_id)
    }

    /// As `INSERT ... ON CONFLICT DO NOTHING`: false when a key is taken.
    fn add_pairing(&mut self, p: Pairing) -> bool {
        if self.pairing_taken(&p) {
            return false;
        }
        self.pairings.push((p, false));
        true
    }
}

/// A key taken where the databases' statement has no `ON CONFLICT` (their error).
fn taken(what: &str, id: &str) -> StoreError {
    StoreError::local(format!("{what} {id:?} exists"))
}

/// Runs `f` on the accounts under the store's lock, as a ready future. (The change is
/// made when the call is made, not when the future is polled: a caller that drops the
/// future has still written, where a database's transaction would not have begun.)
fn with<T: Send + 'static>(
    store: &MemoryStore,
    f: impl FnOnce(&mut Accounts) -> Result<T, StoreError>,
) -> StoreFuture<'static, T> {
    let accounts: Arc<Mutex<Accounts>> = store.accounts.clone();
    let out = f(&mut accounts.lock().unwrap_or_else(|e| e.into_inner()));
    Box::pin(std::future::ready(out))
}

impl PlayedGames for MemoryStore {
    fn record_played(&self, rows: Vec<PlayedGame>) -> StoreFuture<'_, ()> {
        with(self, |a| {
            for g in rows {
                a.played.entry((g.player_id.clone(), g.game_id.clone())).or_insert(g);
            }
            Ok(())
        })
    }

    fn played_games(
        &self,
        player_id: String,
        after: Option<PageAfter>,
        limit: usize,
    ) -> StoreFuture<'_, Vec<PlayedGame>> {
        with(self, |a| {
            let mark = bounds(after);
            let mut mine: Vec<PlayedGame> = a
                .played
                .values()
                .filter(|g| g.player_id == player_id && is_after(g, &mark))
                .cloned()
                .collect();
            mine.sort_by(|x, y| (y.ended_ms, &y.game_id).cmp(&(x.ended_ms, &x.game_id)));
            mine.truncate(limit);
            Ok(mine)
        })
    }
}

impl Reviews for MemoryStore {
    fn put_review(
        &self,
        game_id: String,
        review: weiqi_gtp::GameReview,
        _at_ms: u64,
    ) -> StoreFuture<'_, weiqi_gtp::GameReview> {
        with(self, |a| Ok(a.reviews.entry(game_id).or_insert(review).clone()))
    }

    fn review(&self, game_id: String) -> StoreFuture<'_, Option<weiqi_gtp::GameReview>> {
        with(self, |a| Ok(a.reviews.get(&game_id).cloned()))
    }
}

impl PlayerStore for MemoryStore {
    fn register_guest(&self, player: PlayerRecord, token_hash: String) -> StoreFuture<'_, bool> {
        with(self, |a| {
            if a.players.contains_key(&player.id) {
                return Err(taken("player", &player.id));
            }
            let key = weiqi_players::name_key(&player.name);
            if a.players.values().any(|p| weiqi_players::name_key(&p.name) == key) {
                return Ok(false);
            }
            a.tokens.insert(token_hash, player.id.clone());
            a.players.insert(player.id.clone(), player);
            Ok(true)
        })
    }

    fn guest_by_token(&self, token_hash: String) -> StoreFuture<'_, Option<PlayerRecord>> {
        with(self, |a| {
            Ok(a.tokens.get(&token_hash).and_then(|id| a.players.get(id)).cloned())
        })
    }

    fn upsert_player(&self, player: PlayerRecord) -> StoreFuture<'_, ()> {
        with(self, |a| {
            match a.players.get_mut(&player.id) {
                Some(p) => {
                    p.name = player.name;
                    p.bot = player.bot;
                }
                None => {
                    a.players.insert(player.id.clone(), player);
                }
            }
            Ok(())
        })
    }

    fn player(&self, id: String) -> StoreFuture<'_, Option<(PlayerRecord, Vec<RatingRow>)>> {
        with(self, |a| {
            Ok(a.players.get(&id).map(|p| {
                let ratings = a
                    .ratings
                    .range((id.clone(), 0)..=(id.clone(), u32::MAX))
                    .map(|(_, r)| *r);
                (p.clone(), ratings.collect())
            }))
        })
    }

    fn leaderboard(&self, board_size: u32, limit: usize) -> StoreFuture<'_, Vec<(PlayerRecord, RatingRow)>> {
        with(self, |a| {
            let mut rows: Vec<(PlayerRecord, RatingRow)> = a
                .ratings
                .iter()
                .filter(|((_, size), _)| *size == board_size)
                .filter_map(|((id, _), r)| Some((a.players.get(id)?.clone(), *r)))
                .collect();
            rows.sort_by(|x, y| y.1.rating.total_cmp(&x.1.rating).then_with(|| x.0.id.cmp(&y.0.id)));
            rows.truncate(limit);
            Ok(rows)
        })
    }

    fn rating_history(&self, id: String, board_size: u32, limit: usize) -> StoreFuture<'_, Vec<HistoryRow>> {
        with(self, |a| {
            let mut rows: Vec<HistoryRow> = a
                .history
                .iter()
                .filter(|(who, h)| *who == id && h.board_size == board_size)
                .map(|(_, h)| h.clone())
                .collect();
            rows.sort_by(|x, y| y.at_ms.cmp(&x.at_ms).then_with(|| x.game_id.cmp(&y.game_id)));
            rows.truncate(limit);
            Ok(rows)
        })
    }

    fn rate_game(&self, g: RatedGame, rate: RateFn) -> StoreFuture<'_, bool> {
        with(self, |a| {
            a.pending.remove(&g.game_id);
            if a.rated_games.contains_key(&g.game_id) {
                return Ok(false);
            }
            a.rated_games.insert(g.game_id.clone(), g.at_ms);
            let current = |id: &str| a.ratings.get(&(id.to_string(), g.board_size)).copied();
            let [black, white] = rate(current(&g.black), current(&g.white), &g);
            let sides = [
                (&g.black, &g.white, g.black_score, black),
                (&g.white, &g.black, 1.0 - g.black_score, white),
            ];
            for (id, opponent, score, (before, after)) in sides {
                a.ratings.insert((id.clone(), g.board_size), after);
                a.history.push((
                    id.clone(),
                    HistoryRow {
                        game_id: g.game_id.clone(),
                        board_size: g.board_size,
                        at_ms: g.at_ms,
                        opponent_id: opponent.clone(),
                        score,
                        rating_before: before,
                        rating: after.rating,
                        deviation: after.deviation,
                        volatility: after.volatility,
                    },
                ));
            }
            Ok(true)
        })
    }
}

impl ChallengeStore for MemoryStore {
    fn create_challenge(&self, c: Challenge, max_open: usize) -> StoreFuture<'_, bool> {
        with(self, |a| {
            let open = |x: &&Challenge| x.challenger.id == c.challenger.id && x.state == ChallengeState::Open;
            if a.challenges.iter().any(|x| x.id == c.id) {
                return Err(taken("challenge", &c.id));
            }
            if a.challenges.iter().filter(open).count() >= max_open {
                return Ok(false);
            }
            let told = (
                c.challenged.id.clone(),
                PlayerEventKind::ChallengeReceived { challenge: c.clone() },
            );
            a.push([told], c.created_ms);
            a.challenges.push(c);
            Ok(true)
        })
    }

    fn challenge(&self, id: String) -> StoreFuture<'_, Option<Challenge>> {
        with(self, |a| Ok(a.challenges.iter().find(|c| c.id == id).cloned()))
    }

    fn answer_challenge(
        &self,
        id: String,
        state: ChallengeState,
        reason: String,
        pairing: Option<Pairing>,
        now_ms: u64,
    ) -> StoreFuture<'_, bool> {
        with(self, |a| {
            let Some(i) = a
                .challenges
                .iter()
                .position(|c| c.id == id && c.state == ChallengeState::Open)
            else {
                return Ok(false);
            };
            if let Some(p) = &pairing
                && a.pairing_taken(p)
            {
                return Err(taken("pairing", &p.id));
            }
            let c = &mut a.challenges[i];
            c.state = state;
            c.reason = reason;
            c.game_id = pairing.as_ref().map(|p| p.game_id.clone());
            let c = c.clone();
            if let Some(p) = pairing {
                a.add_pairing(p);
            }
            let told = [c.challenger.id.clone(), c.challenged.id.clone()]
                .map(|who| (who, PlayerEventKind::ChallengeAnswered { challenge: c.clone() }));
            a.push(told, now_ms);
            Ok(true)
        })
    }

    fn open_challenges(&self, player_id: String) -> StoreFuture<'_, Vec<Challenge>> {
        with(self, |a| {
            let mut open: Vec<Challenge> = a
                .challenges
                .iter()
                .filter(|c| c.state == ChallengeState::Open)
                .filter(|c| c.challenger.id == player_id || c.challenged.id == player_id)
                .cloned()
                .collect();
            // (Stable: the same millisecond keeps the order of arrival.)
            open.sort_by_key(|c| c.created_ms);
            open.truncate(1000);
            Ok(open)
        })
    }
}

impl SeekStore for MemoryStore {
    fn add_seek(&self, s: Seek) -> StoreFuture<'_, bool> {
        with(self, |a| {
            if a.seeks.iter().any(|x| x.id == s.id || x.player.id == s.player.id) {
                return Ok(false);
            }
            a.seeks.push(s);
            Ok(true)
        })
    }

    fn cancel_seek(&self, id: String, player_id: String) -> StoreFuture<'_, bool> {
        with(self, |a| {
            let before = a.seeks.len();
            a.seeks.retain(|s| !(s.id == id && s.player.id == player_id));
            Ok(a.seeks.len() < before)
        })
    }

    fn seeks(&self) -> StoreFuture<'_, Vec<Seek>> {
        with(self, |a| {
            let mut open = a.seeks.clone();
            open.sort_by_key(|s| s.created_ms);
            open.truncate(10_000);
            Ok(open)
        })
    }

    fn pair_seeks(&self, seeks: [(String, String); 2], pairing: Pairing) -> StoreFuture<'_, bool> {
        with(self, |a| {
            let [(x, _), (y, _)] = &seeks;
            if !(a.seeks.iter().any(|s| s.id == *x) && a.seeks.iter().any(|s| s.id == *y)) || x == y {
                return Ok(false);
            }
            if a.pairing_taken(&pairing) {
                return Err(taken("pairing", &pairing.id));
            }
            a.seeks.retain(|s| s.id != *x && s.id != *y);
            let (game_id, at_ms) = (pairing.game_id.clone(), pairing.created_ms);
            a.add_pairing(pairing);
            let told = seeks.map(|(seek_id, player_id)| {
                (
                    player_id,
                    PlayerEventKind::Matched {
                        seek_id,
                        game_id: game_id.clone(),
                    },
                )
            });
            a.push(told, at_ms);
            Ok(true)
        })
    }

    fn add_pairing(&self, pairing: Pairing) -> StoreFuture<'_, bool> {
        with(self, |a| Ok(a.add_pairing(pairing)))
    }

    fn pairing_of(&self, game_id: String) -> StoreFuture<'_, Option<Pairing>> {
        with(self, |a| {
            Ok(a.pairings
                .iter()
                .find(|(p, _)| p.game_id == game_id)
                .map(|(p, _)| p.clone()))
        })
    }

    fn unstarted_pairings(&self, before_ms: u64) -> StoreFuture<'_, Vec<Pairing>> {
        with(self, |a| {
            let mut due: Vec<Pairing> = a
                .pairings
                .iter()
                .filter(|(p, started)| !started && p.created_ms < before_ms)
                .map(|(p, _)| p.clone())
                .collect();
            due.sort_by_key(|p| p.created_ms);
            due.truncate(100);
            Ok(due)
        })
    }

    fn pairing_started(&self, id: String) -> StoreFuture<'_, bool> {
        with(self, |a| match a.pairings.iter_mut().find(|(p, _)| p.id == id) {
            Some((_, started)) if !*started => {
                *started = true;
                Ok(true)
            }
            _ => Ok(false),
        })
    }
}

impl FeedStore for MemoryStore {
    fn push_player_events(&self, events: Vec<(String, PlayerEventKind)>, at_ms: u64) -> StoreFuture<'_, ()> {
        with(self, |a| {
            a.push(events, at_ms);
            Ok(())
        })
    }

    fn player_events_after(&self, seq: u64, limit: usize) -> StoreFuture<'_, Vec<PlayerEvent>> {
        with(self, |a| {
            Ok(a.events.iter().filter(|e| e.seq > seq).take(limit).cloned().collect())
        })
    }

    fn player_events_of(&self, player_id: String, seq: u64, limit: usize) -> StoreFuture<'_, Vec<PlayerEvent>> {
        with(self, |a| {
            Ok(a.events
                .iter()
                .filter(|e| e.seq > seq && e.player_id == player_id)
                .take(limit)
                .cloned()
                .collect())
        })
    }

    fn last_player_event(&self) -> StoreFuture<'_, u64> {
        with(self, |a| Ok(a.events.last().map_or(0, |e| e.seq)))
    }

    fn seen(&self, player_ids: Vec<String>, until_ms: u64) -> StoreFuture<'_, ()> {
        with(self, |a| {
            for id in player_ids {
                let until = a.presence.entry(id).or_insert(0);
                *until = (*until).max(until_ms);
            }
            Ok(())
        })
    }

    fn online_until(&self, player_id: String) -> StoreFuture<'_, u64> {
        with(self, |a| Ok(a.presence.get(&player_id).copied().unwrap_or(0)))
    }
}

impl PendingRatings for MemoryStore {
    fn expect_rating(&self, game_id: String, at_ms: u64) -> StoreFuture<'_, ()> {
        with(self, |a| {
            a.pending.entry(game_id).or_insert(at_ms);
            Ok(())
        })
    }

    fn pending_ratings(&self, limit: usize) -> StoreFuture<'_, Vec<(String, u64)>> {
        with(self, |a| {
            let mut due: Vec<(String, u64)> = a.pending.iter().map(|(g, at)| (g.clone(), *at)).collect();
            due.sort_by(|x, y| x.1.cmp(&y.1).then_with(|| x.0.cmp(&y.0)));
            due.truncate(limit);
            Ok(due)
        })
    }

    fn drop_pending_rating(&self, game_id: String) -> StoreFuture<'_, ()> {
        with(self, |a| {
            a.pending.remove(&game_id);
            Ok(())
        })
    }
}

impl TournamentStore for MemoryStore {
    fn append_tournament(
        &self,
        id: String,
        expected: u64,
        events: Vec<TournamentEvent>,
        phase: TournamentPhase,
    ) -> StoreFuture<'_, bool> {
        with(self, |a| {
            if expected == 0 {
                let Some(TournamentEvent::Created { settings, at_ms, .. }) = events.first() else {
                    return Err(StoreError::Corrupt {
                        game_id: id,
                        why: "a tournament's first event is `created`".into(),
                    });
                };
                if a.tournaments.contains_key(&id) {
                    return Ok(false);
                }
                let row = TournamentRow {
                    id: id.clone(),
                    name: settings.name.clone(),
                    phase,
                    created_ms: *at_ms,
                };
                a.tournaments.insert(id, (row, events));
                return Ok(true);
            }
            match a.tournaments.get_mut(&id) {
                Some((row, log)) if log.len() as u64 == expected => {
                    row.phase = phase;
                    log.extend(events);
                    Ok(true)
                }
                _ => Ok(false),
            }
        })
    }

    fn tournament_events(&self, id: String) -> StoreFuture<'_, Vec<TournamentEvent>> {
        with(self, |a| {
            Ok(a.tournaments.get(&id).map(|(_, log)| log.clone()).unwrap_or_default())
        })
    }

    fn tournaments(&self, running_only: bool, limit: usize) -> StoreFuture<'_, Vec<TournamentRow>> {
        with(self, |a| {
            let mut rows: Vec<TournamentRow> = a
                .tournaments
                .values()
                .map(|(row, _)| row.clone())
                .filter(|row| !running_only || row.phase != TournamentPhase::Finished)
                .collect();
            rows.sort_by(|x, y| y.created_ms.cmp(&x.created_ms).then_with(|| x.id.cmp(&y.id)));
            rows.truncate(limit);
            Ok(rows)
        })
    }
}
