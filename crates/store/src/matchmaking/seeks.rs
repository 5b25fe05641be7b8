//! Automatch's seeks and the pairings the server makes, in both databases: two seeks are
//! paired only if both rows are still there (deleted together, or the transaction writes
//! nothing), with the pairing and both players' events in that transaction.

use serde::{Deserialize, Serialize};
use sqlx::{ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Pool, Type};
use weiqi_game::PlayerRef;
use weiqi_players::{Pairing, PlayerEventKind, Seek};

use super::{json, parse};
use crate::sql::{RowsAffected, SqlDb, SqlStore};
use crate::{StoreError, StoreFuture};

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
