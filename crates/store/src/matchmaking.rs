//! Challenges, seeks, the games the server pairs from them, each player's event feed, and
//! who is online, in both stores.
//!
//! Every change that pairs players is one transaction that checks the state it changes:
//! a challenge is answered only while open (an accept and a cancel racing: one wins), two
//! seeks are paired only if both rows are still there (deleted together, or not at all),
//! so with several servers on one PostgreSQL a seek is matched at most once. The pairing
//! row is written in the same transaction: a server that dies before it creates the game
//! leaves the pairing for any server to finish (`unstarted_pairings`).

use serde::{Deserialize, Serialize};
use sqlx::{ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Pool, Type};
use weiqi_game::PlayerRef;
use weiqi_players::{Challenge, ChallengeState, Pairing, PlayerEvent, PlayerEventKind, Seek};

use crate::sql::{RowsAffected, SqlDb, SqlStore};
use crate::{StoreError, StoreFuture};

/// Direct challenges.
pub trait ChallengeStore: Send + Sync + 'static {
    /// Opens a challenge and tells the challenged player; false (and nothing written) when
    /// the challenger already has `max_open` open challenges.
    fn create_challenge(&self, c: Challenge, max_open: usize) -> StoreFuture<'_, bool>;
    fn challenge(&self, id: String) -> StoreFuture<'_, Option<Challenge>>;
    /// Moves an open challenge to `state` (with a decline reason, and the pairing of an
    /// accepted one) and tells both players; false when it was no longer open.
    fn answer_challenge(
        &self,
        id: String,
        state: ChallengeState,
        reason: String,
        pairing: Option<Pairing>,
        now_ms: u64,
    ) -> StoreFuture<'_, bool>;
    /// A player's open challenges, made or received, oldest first.
    fn open_challenges(&self, player_id: String) -> StoreFuture<'_, Vec<Challenge>>;
}

/// Automatch's seeks, and the games the server pairs (from seeks, challenges or
/// tournaments' boards).
pub trait SeekStore: Send + Sync + 'static {
    /// Adds a seek; false when the player already has one open.
    fn add_seek(&self, s: Seek) -> StoreFuture<'_, bool>;
    /// Removes a player's open seek; false when there was none with that id.
    fn cancel_seek(&self, id: String, player_id: String) -> StoreFuture<'_, bool>;
    /// Every open seek, oldest first (by creation time, then order of arrival).
    fn seeks(&self) -> StoreFuture<'_, Vec<Seek>>;
    /// Pairs two open seeks (`(seek id, player id)`): both removed, the pairing written, both players told; false
    /// (and nothing changed) when either was already gone.
    fn pair_seeks(&self, seeks: [(String, String); 2], pairing: Pairing) -> StoreFuture<'_, bool>;
    /// The pairing a game was made from.
    /// Stores a pairing another system made (a tournament's board); `false` when it is
    /// stored already.
    fn add_pairing(&self, pairing: Pairing) -> StoreFuture<'_, bool>;
    fn pairing_of(&self, game_id: String) -> StoreFuture<'_, Option<Pairing>>;
    /// Pairings whose game nobody has started, written before `before_ms`.
    fn unstarted_pairings(&self, before_ms: u64) -> StoreFuture<'_, Vec<Pairing>>;
    /// Marks a pairing's game created: false when it was already.
    fn pairing_started(&self, id: String) -> StoreFuture<'_, bool>;
}

/// Players' feeds, and who is online.
pub trait FeedStore: Send + Sync + 'static {
    /// Appends events to players' feeds (each gets the next `seq`).
    fn push_player_events(&self, events: Vec<(String, PlayerEventKind)>, at_ms: u64) -> StoreFuture<'_, ()>;
    /// Every player's events after `seq`, in order, at most `limit`.
    fn player_events_after(&self, seq: u64, limit: usize) -> StoreFuture<'_, Vec<PlayerEvent>>;
    /// One player's events after `seq` (a feed resuming), at most `limit`.
    fn player_events_of(&self, player_id: String, seq: u64, limit: usize) -> StoreFuture<'_, Vec<PlayerEvent>>;
    /// The last event's seq (0 when none).
    fn last_player_event(&self) -> StoreFuture<'_, u64>;
    /// These players are online until `until_ms` (each server refreshes its own feeds').
    fn seen(&self, player_ids: Vec<String>, until_ms: u64) -> StoreFuture<'_, ()>;
    /// Until when a player was last known online (0: never).
    fn online_until(&self, player_id: String) -> StoreFuture<'_, u64>;
}

/// Rated games whose ratings are still to apply (what a crash between a game's end and its
/// rating leaves behind).
pub trait PendingRatings: Send + Sync + 'static {
    /// A rated game was created: until its rating is applied, a recovery pass can find it.
    fn expect_rating(&self, game_id: String, at_ms: u64) -> StoreFuture<'_, ()>;
    /// Rated games whose rating is still to apply (or which will not count).
    fn pending_ratings(&self, limit: usize) -> StoreFuture<'_, Vec<(String, u64)>>;
    fn drop_pending_rating(&self, game_id: String) -> StoreFuture<'_, ()>;
}

/// The tables; `$serial` is the database's auto-increment key.
pub(crate) fn schema(serial: &str) -> Vec<String> {
    vec![
        "CREATE TABLE IF NOT EXISTS challenges (
            challenge_id TEXT PRIMARY KEY,
            challenger_id TEXT NOT NULL,
            challenged_id TEXT NOT NULL,
            state TEXT NOT NULL,
            body TEXT NOT NULL,
            created_ms BIGINT NOT NULL)"
            .into(),
        "CREATE INDEX IF NOT EXISTS challenges_by_challenger ON challenges (challenger_id, state)".into(),
        "CREATE INDEX IF NOT EXISTS challenges_by_challenged ON challenges (challenged_id, state)".into(),
        "CREATE TABLE IF NOT EXISTS seeks (
            seek_id TEXT PRIMARY KEY,
            player_id TEXT NOT NULL UNIQUE,
            body TEXT NOT NULL,
            created_ms BIGINT NOT NULL)"
            .into(),
        "CREATE TABLE IF NOT EXISTS pairings (
            pairing_id TEXT PRIMARY KEY,
            game_id TEXT NOT NULL UNIQUE,
            started BOOLEAN NOT NULL,
            body TEXT NOT NULL,
            created_ms BIGINT NOT NULL)"
            .into(),
        format!(
            "CREATE TABLE IF NOT EXISTS player_events (
            seq {serial},
            player_id TEXT NOT NULL,
            at_ms BIGINT NOT NULL,
            body TEXT NOT NULL)"
        ),
        "CREATE INDEX IF NOT EXISTS player_events_by_player ON player_events (player_id, seq)".into(),
        "CREATE TABLE IF NOT EXISTS presence (player_id TEXT PRIMARY KEY, until_ms BIGINT NOT NULL)".into(),
        "CREATE TABLE IF NOT EXISTS rating_pending (game_id TEXT PRIMARY KEY, at_ms BIGINT NOT NULL)".into(),
    ]
}

/// A seek as stored: the row's body.
#[derive(Serialize, Deserialize)]
struct SeekBody {
    player: PlayerRef,
    rating: f64,
    sizes: Vec<u32>,
    main_min_ms: u64,
    main_max_ms: u64,
    rated: bool,
    window: f64,
    handicap: bool,
}

fn json<T: Serialize>(v: &T) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(StoreError::local)
}

fn parse<T: for<'de> Deserialize<'de>>(what: &str, s: &str) -> Result<T, StoreError> {
    serde_json::from_str(s).map_err(|e| StoreError::Corrupt {
        game_id: what.to_string(),
        why: e.to_string(),
    })
}

fn seek_body(s: &Seek) -> Result<String, StoreError> {
    json(&SeekBody {
        player: s.player.clone(),
        rating: s.rating,
        sizes: s.sizes.clone(),
        main_min_ms: s.main_min_ms,
        main_max_ms: s.main_max_ms,
        rated: s.rated,
        window: s.window,
        handicap: s.handicap,
    })
}

fn seek_of((id, body, created): (String, String, i64)) -> Result<Seek, StoreError> {
    let b: SeekBody = parse(&id, &body)?;
    Ok(Seek {
        id,
        player: b.player,
        rating: b.rating,
        sizes: b.sizes,
        main_min_ms: b.main_min_ms,
        main_max_ms: b.main_max_ms,
        rated: b.rated,
        window: b.window,
        handicap: b.handicap,
        created_ms: created as u64,
    })
}

fn challenge_of((id, state, body): (String, String, String)) -> Result<Challenge, StoreError> {
    let mut c: Challenge = parse(&id, &body)?;
    c.state = ChallengeState::from_name(&state)
        .ok_or_else(|| StoreError::local(format!("unknown challenge state {state:?}")))?;
    Ok(c)
}

fn event_of((seq, player_id, at, body): (i64, String, i64, String)) -> Result<PlayerEvent, StoreError> {
    Ok(PlayerEvent {
        seq: seq as u64,
        kind: parse(&player_id, &body)?,
        player_id,
        at_ms: at as u64,
    })
}

/// Writes `$events` (a slice of `(player id, kind)`) inside the transaction `$tx`.
macro_rules! push {
    ($tx:expr, $events:expr, $at_ms:expr, $sql:path) => {{
        let q = $sql("INSERT INTO player_events (player_id, at_ms, body) VALUES ($1, $2, $3)");
        for (who, kind) in $events.iter() {
            sqlx::query(&q)
                .bind(who)
                .bind($at_ms as i64)
                .bind(json(kind)?)
                .execute(&mut *$tx)
                .await?;
        }
    }};
}

macro_rules! insert_pairing {
    ($tx:expr, $p:expr, $sql:path) => {{
        let p: &Pairing = $p;
        let q = $sql(
            "INSERT INTO pairings (pairing_id, game_id, started, body, created_ms) VALUES ($1, $2, FALSE, $3, $4)",
        );
        sqlx::query(&q)
            .bind(&p.id)
            .bind(&p.game_id)
            .bind(json(p)?)
            .bind(p.created_ms as i64)
            .execute(&mut *$tx)
            .await?;
    }};
}

/// One implementation for both databases (`crate::sql`).
impl<S: SqlStore> ChallengeStore for S
where
    for<'c> &'c mut <S::Db as Database>::Connection: Executor<'c, Database = S::Db>,
    for<'c> &'c Pool<S::Db>: Executor<'c, Database = S::Db>,
    for<'q> <S::Db as Database>::Arguments<'q>: IntoArguments<'q, S::Db>,
    <S::Db as Database>::QueryResult: RowsAffected,
    for<'q> String: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    for<'q> &'q str: Encode<'q, S::Db> + Type<S::Db>,
    for<'q> i64: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    for<'q> f64: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    for<'q> bool: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    usize: ColumnIndex<<S::Db as Database>::Row>,
{
    fn create_challenge(&self, c: Challenge, max_open: usize) -> StoreFuture<'_, bool> {
        Box::pin(async move {
            let mut tx = self.begin_write().await?;
            let q = S::Db::sql("SELECT COUNT(*) FROM challenges WHERE challenger_id = $1 AND state = 'open'");
            let (open,): (i64,) = sqlx::query_as(&q).bind(&c.challenger.id).fetch_one(&mut *tx).await?;
            if open as usize >= max_open {
                return Ok(false);
            }
            let q = S::Db::sql(
                "INSERT INTO challenges (challenge_id, challenger_id, challenged_id, state, body, created_ms)
                          VALUES ($1, $2, $3, $4, $5, $6)",
            );
            sqlx::query(&q)
                .bind(&c.id)
                .bind(&c.challenger.id)
                .bind(&c.challenged.id)
                .bind(c.state.name())
                .bind(json(&c)?)
                .bind(c.created_ms as i64)
                .execute(&mut *tx)
                .await?;
            let event = (
                c.challenged.id.clone(),
                PlayerEventKind::ChallengeReceived { challenge: c.clone() },
            );
            push!(tx, [event], c.created_ms, S::Db::sql);
            tx.commit().await?;
            Ok(true)
        })
    }

    fn challenge(&self, id: String) -> StoreFuture<'_, Option<Challenge>> {
        Box::pin(async move {
            let q = S::Db::sql("SELECT challenge_id, state, body FROM challenges WHERE challenge_id = $1");
            let row: Option<(String, String, String)> =
                sqlx::query_as(&q).bind(&id).fetch_optional(self.pool()).await?;
            row.map(challenge_of).transpose()
        })
    }

    fn answer_challenge(
        &self,
        id: String,
        state: ChallengeState,
        reason: String,
        pairing: Option<Pairing>,
        now_ms: u64,
    ) -> StoreFuture<'_, bool> {
        Box::pin(async move {
            let mut tx = self.begin_write().await?;
            let q = S::Db::sql("SELECT challenge_id, state, body FROM challenges WHERE challenge_id = $1");
            let row: Option<(String, String, String)> = sqlx::query_as(&q).bind(&id).fetch_optional(&mut *tx).await?;
            let Some(mut c) = row.map(challenge_of).transpose()? else {
                return Ok(false);
            };
            c.state = state;
            c.reason = reason;
            c.game_id = pairing.as_ref().map(|p| p.game_id.clone());
            let q =
                S::Db::sql("UPDATE challenges SET state = $2, body = $3 WHERE challenge_id = $1 AND state = 'open'");
            let changed = sqlx::query(&q)
                .bind(&id)
                .bind(state.name())
                .bind(json(&c)?)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if changed == 0 {
                return Ok(false);
            }
            if let Some(p) = &pairing {
                insert_pairing!(tx, p, S::Db::sql);
            }
            let told = [c.challenger.id.clone(), c.challenged.id.clone()]
                .map(|who| (who, PlayerEventKind::ChallengeAnswered { challenge: c.clone() }));
            push!(tx, told, now_ms, S::Db::sql);
            tx.commit().await?;
            Ok(true)
        })
    }

    fn open_challenges(&self, player_id: String) -> StoreFuture<'_, Vec<Challenge>> {
        Box::pin(async move {
            let q = S::Db::sql(&format!(
                "SELECT challenge_id, state, body FROM challenges
                          WHERE (challenger_id = $1 OR challenged_id = $1) AND state = 'open'
                          ORDER BY created_ms, {} LIMIT 1000",
                S::Db::ARRIVAL
            ));
            let rows: Vec<(String, String, String)> =
                sqlx::query_as(&q).bind(&player_id).fetch_all(self.pool()).await?;
            rows.into_iter().map(challenge_of).collect()
        })
    }
}

impl<S: SqlStore> SeekStore for S
where
    for<'c> &'c mut <S::Db as Database>::Connection: Executor<'c, Database = S::Db>,
    for<'c> &'c Pool<S::Db>: Executor<'c, Database = S::Db>,
    for<'q> <S::Db as Database>::Arguments<'q>: IntoArguments<'q, S::Db>,
    <S::Db as Database>::QueryResult: RowsAffected,
    for<'q> String: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    for<'q> &'q str: Encode<'q, S::Db> + Type<S::Db>,
    for<'q> i64: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    for<'q> f64: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    for<'q> bool: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    usize: ColumnIndex<<S::Db as Database>::Row>,
{
    fn add_seek(&self, s: Seek) -> StoreFuture<'_, bool> {
        Box::pin(async move {
            let q = S::Db::sql(
                "INSERT INTO seeks (seek_id, player_id, body, created_ms) VALUES ($1, $2, $3, $4)
                          ON CONFLICT DO NOTHING",
            );
            let added = sqlx::query(&q)
                .bind(&s.id)
                .bind(&s.player.id)
                .bind(seek_body(&s)?)
                .bind(s.created_ms as i64)
                .execute(self.pool())
                .await?
                .rows_affected();
            Ok(added == 1)
        })
    }

    fn cancel_seek(&self, id: String, player_id: String) -> StoreFuture<'_, bool> {
        Box::pin(async move {
            let q = S::Db::sql("DELETE FROM seeks WHERE seek_id = $1 AND player_id = $2");
            let gone = sqlx::query(&q)
                .bind(&id)
                .bind(&player_id)
                .execute(self.pool())
                .await?
                .rows_affected();
            Ok(gone == 1)
        })
    }

    fn seeks(&self) -> StoreFuture<'_, Vec<Seek>> {
        Box::pin(async move {
            let q = format!(
                "SELECT seek_id, body, created_ms FROM seeks ORDER BY created_ms, {} LIMIT 10000",
                S::Db::ARRIVAL
            );
            let rows: Vec<(String, String, i64)> = sqlx::query_as(&q).fetch_all(self.pool()).await?;
            rows.into_iter().map(seek_of).collect()
        })
    }

    fn pair_seeks(&self, seeks: [(String, String); 2], pairing: Pairing) -> StoreFuture<'_, bool> {
        Box::pin(async move {
            let mut tx = self.begin_write().await?;
            // Both rows, or neither: a seek another server paired meanwhile is
            // gone (PostgreSQL re-reads a row it waited on), and this pairing is
            // rolled back.
            let q = S::Db::sql("DELETE FROM seeks WHERE seek_id = $1 OR seek_id = $2");
            let gone = sqlx::query(&q)
                .bind(&seeks[0].0)
                .bind(&seeks[1].0)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if gone != 2 {
                return Ok(false);
            }
            insert_pairing!(tx, &pairing, S::Db::sql);
            let told = seeks.map(|(seek_id, player_id)| {
                (
                    player_id,
                    PlayerEventKind::Matched {
                        seek_id,
                        game_id: pairing.game_id.clone(),
                    },
                )
            });
            push!(tx, told, pairing.created_ms, S::Db::sql);
            tx.commit().await?;
            Ok(true)
        })
    }

    fn add_pairing(&self, pairing: Pairing) -> StoreFuture<'_, bool> {
        Box::pin(async move {
            let q = S::Db::sql(
                "INSERT INTO pairings (pairing_id, game_id, started, body, created_ms)
                 VALUES ($1, $2, FALSE, $3, $4) ON CONFLICT DO NOTHING",
            );
            Ok(sqlx::query(&q)
                .bind(&pairing.id)
                .bind(&pairing.game_id)
                .bind(json(&pairing)?)
                .bind(pairing.created_ms as i64)
                .execute(self.pool())
                .await?
                .rows_affected()
                == 1)
        })
    }

    fn pairing_of(&self, game_id: String) -> StoreFuture<'_, Option<Pairing>> {
        Box::pin(async move {
            let q = S::Db::sql("SELECT pairing_id, body FROM pairings WHERE game_id = $1");
            let row: Option<(String, String)> = sqlx::query_as(&q).bind(&game_id).fetch_optional(self.pool()).await?;
            row.map(|(id, body)| parse(&id, &body)).transpose()
        })
    }

    fn unstarted_pairings(&self, before_ms: u64) -> StoreFuture<'_, Vec<Pairing>> {
        Box::pin(async move {
            let q = S::Db::sql(
                "SELECT pairing_id, body FROM pairings WHERE NOT started AND created_ms < $1
                          ORDER BY created_ms LIMIT 100",
            );
            let rows: Vec<(String, String)> = sqlx::query_as(&q).bind(before_ms as i64).fetch_all(self.pool()).await?;
            rows.into_iter().map(|(id, body)| parse(&id, &body)).collect()
        })
    }

    fn pairing_started(&self, id: String) -> StoreFuture<'_, bool> {
        Box::pin(async move {
            let q = S::Db::sql("UPDATE pairings SET started = TRUE WHERE pairing_id = $1 AND NOT started");
            Ok(sqlx::query(&q).bind(&id).execute(self.pool()).await?.rows_affected() == 1)
        })
    }
}

impl<S: SqlStore> FeedStore for S
where
    for<'c> &'c mut <S::Db as Database>::Connection: Executor<'c, Database = S::Db>,
    for<'c> &'c Pool<S::Db>: Executor<'c, Database = S::Db>,
    for<'q> <S::Db as Database>::Arguments<'q>: IntoArguments<'q, S::Db>,
    <S::Db as Database>::QueryResult: RowsAffected,
    for<'q> String: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    for<'q> &'q str: Encode<'q, S::Db> + Type<S::Db>,
    for<'q> i64: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    for<'q> f64: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    for<'q> bool: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    usize: ColumnIndex<<S::Db as Database>::Row>,
{
    fn push_player_events(&self, events: Vec<(String, PlayerEventKind)>, at_ms: u64) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let mut tx = self.begin_write().await?;
            push!(tx, events, at_ms, S::Db::sql);
            tx.commit().await?;
            Ok(())
        })
    }

    fn player_events_after(&self, seq: u64, limit: usize) -> StoreFuture<'_, Vec<PlayerEvent>> {
        Box::pin(async move {
            let q = S::Db::sql(
                "SELECT seq, player_id, at_ms, body FROM player_events WHERE seq > $1 ORDER BY seq LIMIT $2",
            );
            let rows: Vec<(i64, String, i64, String)> = sqlx::query_as(&q)
                .bind(seq as i64)
                .bind(limit as i64)
                .fetch_all(self.pool())
                .await?;
            rows.into_iter().map(event_of).collect()
        })
    }

    fn player_events_of(&self, player_id: String, seq: u64, limit: usize) -> StoreFuture<'_, Vec<PlayerEvent>> {
        Box::pin(async move {
            let q = S::Db::sql(
                "SELECT seq, player_id, at_ms, body FROM player_events WHERE player_id = $1 AND seq > $2
                          ORDER BY seq LIMIT $3",
            );
            let rows: Vec<(i64, String, i64, String)> = sqlx::query_as(&q)
                .bind(&player_id)
                .bind(seq as i64)
                .bind(limit as i64)
                .fetch_all(self.pool())
                .await?;
            rows.into_iter().map(event_of).collect()
        })
    }

    fn last_player_event(&self) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            let (seq,): (Option<i64>,) = sqlx::query_as("SELECT MAX(seq) FROM player_events")
                .fetch_one(self.pool())
                .await?;
            Ok(seq.unwrap_or(0) as u64)
        })
    }

    fn seen(&self, player_ids: Vec<String>, until_ms: u64) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let mut tx = self.begin_write().await?;
            let q = S::Db::sql(
                "INSERT INTO presence (player_id, until_ms) VALUES ($1, $2)
                          ON CONFLICT (player_id) DO UPDATE SET until_ms = excluded.until_ms
                          WHERE presence.until_ms < excluded.until_ms",
            );
            for id in &player_ids {
                sqlx::query(&q).bind(id).bind(until_ms as i64).execute(&mut *tx).await?;
            }
            tx.commit().await?;
            Ok(())
        })
    }

    fn online_until(&self, player_id: String) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            let q = S::Db::sql("SELECT until_ms FROM presence WHERE player_id = $1");
            let row: Option<(i64,)> = sqlx::query_as(&q).bind(&player_id).fetch_optional(self.pool()).await?;
            Ok(row.map_or(0, |(u,)| u as u64))
        })
    }
}

impl<S: SqlStore> PendingRatings for S
where
    for<'c> &'c mut <S::Db as Database>::Connection: Executor<'c, Database = S::Db>,
    for<'c> &'c Pool<S::Db>: Executor<'c, Database = S::Db>,
    for<'q> <S::Db as Database>::Arguments<'q>: IntoArguments<'q, S::Db>,
    <S::Db as Database>::QueryResult: RowsAffected,
    for<'q> String: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    for<'q> &'q str: Encode<'q, S::Db> + Type<S::Db>,
    for<'q> i64: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    for<'q> f64: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    for<'q> bool: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    usize: ColumnIndex<<S::Db as Database>::Row>,
{
    fn expect_rating(&self, game_id: String, at_ms: u64) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let q = S::Db::sql("INSERT INTO rating_pending (game_id, at_ms) VALUES ($1, $2) ON CONFLICT DO NOTHING");
            sqlx::query(&q)
                .bind(&game_id)
                .bind(at_ms as i64)
                .execute(self.pool())
                .await?;
            Ok(())
        })
    }

    fn pending_ratings(&self, limit: usize) -> StoreFuture<'_, Vec<(String, u64)>> {
        Box::pin(async move {
            let q = S::Db::sql("SELECT game_id, at_ms FROM rating_pending ORDER BY at_ms, game_id LIMIT $1");
            let rows: Vec<(String, i64)> = sqlx::query_as(&q).bind(limit as i64).fetch_all(self.pool()).await?;
            Ok(rows.into_iter().map(|(g, at)| (g, at as u64)).collect())
        })
    }

    fn drop_pending_rating(&self, game_id: String) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let q = S::Db::sql("DELETE FROM rating_pending WHERE game_id = $1");
            sqlx::query(&q).bind(&game_id).execute(self.pool()).await?;
            Ok(())
        })
    }
}
