//! The single writer: group commits of appends, heartbeats and probes, the cache of games
//! that is the concurrency check, and the bulk merge of quick games' events.

use std::collections::HashMap;
use std::sync::Arc;

use rusqlite::OptionalExtension;
use rusqlite::types::ToSqlOutput;
use tokio::sync::{mpsc, oneshot};

use super::rows::{EVENT_ROWS, GAME_ROWS, PROBE_ROWS, RECENT_ROWS, chunks};
use super::wal::{CheckpointDone, reset_wal};
use crate::{Append, StoreError, Summary};

/// A game is in quick play when its previous two appends each came less than this after
/// the one before (ms): its events go to `events_recent` and reach the index in the next
/// merge, several moves at once. Slower games (a human pace) write to `events` directly, as
/// a merge would write their index page once a move anyway, and their rows only once. (One
/// quick gap is not enough: at a human pace of one move per 10 s, 2.5% of the gaps are
/// under 250 ms by chance, a row each that would be written twice for nothing.)
const QUICK_PLAY_MS: u64 = 250;

/// How often `events_recent` is merged into `events` while it has rows: at most this long
/// a quick game's moves wait for their index entries (reads see them before, scanning).
const MERGE_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// `events_recent` is merged at once when it holds this many rows: what a read of one
/// game scans there (about 8 MB at most) and what one merge writes stay bounded.
const MERGE_ROWS: u64 = 32_768;

/// What the writer task commits.
pub(super) enum Write {
    /// An append with its events already serialized (by the caller's task, in parallel,
    /// rather than by the single writer).
    Append(Box<Append>, Vec<String>),
    /// The service is alive at this time (ms).
    Heartbeat(u64),
    /// A probe row: time and payload.
    Probe(u64, Vec<u8>),
    /// Nothing to write: answered after every write queued before it (the writer answers
    /// in order), for [`crate::EventStore::barrier`].
    Barrier,
}

/// A write, where its outcome goes, and the span of the call that waits for it (its
/// trace gets the commit).
pub(super) type Job = (Write, oneshot::Sender<Result<(), StoreError>>, tracing::Span);

/// What the writer knows of a game: its internal key, last sequence number, the time of
/// its last append (ms, the caller's clock) and whether that came quickly after the one
/// before, for [`QUICK_PLAY_MS`].
#[derive(Debug, Clone, Copy)]
struct Known {
    game_no: i64,
    last_seq: u64,
    last_ms: u64,
    quick_gap: bool,
}

/// The writer's cache of games, filled from the database on first use.
struct Games {
    known: HashMap<String, Known>,
    next_no: i64,
    /// Probes written since the writer started (the next probe's slot, modulo the slots).
    probes: u64,
    /// Rows in `events_recent` (committed), and since when they wait: the first of them was
    /// written (or the last merge failed) then.
    recent_rows: u64,
    waiting_since: std::time::Instant,
    /// The last merge failed: the next waits for [`MERGE_EVERY`], however many rows wait,
    /// and meanwhile every game writes to `events` (the recent rows stop growing).
    merge_failed: bool,
}

impl Games {
    /// An empty cache: games are numbered from `next_no` on, and `recent_rows` wait in
    /// `events_recent` (since now).
    fn new(next_no: i64, recent_rows: u64) -> Games {
        Games {
            known: HashMap::new(),
            next_no,
            probes: 0,
            recent_rows,
            waiting_since: std::time::Instant::now(),
            merge_failed: false,
        }
    }
}

/// The single writer: takes whatever writes are waiting, commits them in one transaction
/// (one fsync), then answers each. Being the only writer, it checks the optimistic
/// concurrency condition against its cache of each game's last sequence number (read from
/// the database on first use), so a batch costs a handful of multi-row statements rather
/// than several statements per append.
pub(super) async fn writer(
    mut conn: rusqlite::Connection,
    mut rx: mpsc::Receiver<Job>,
    _lock: std::fs::File,
    spacing: std::time::Duration,
    checkpointed: Arc<CheckpointDone>,
) {
    let mut batch: Vec<Job> = Vec::with_capacity(1024);
    let next_no = match conn.query_row("SELECT COALESCE(max(game_no), 0) + 1 FROM games", [], |r| r.get(0)) {
        Ok(n) => n,
        Err(e) => {
            tracing::error!(error = %e, "the event store cannot be written");
            return;
        }
    };
    let recent_rows = match conn.query_row("SELECT count(*) FROM events_recent", [], |r| r.get::<_, i64>(0)) {
        Ok(n) => n as u64,
        Err(e) => {
            tracing::error!(error = %e, "the event store cannot be read");
            return;
        }
    };
    let mut games = Games::new(next_no, recent_rows);
    // Rows left by a server that stopped before merging them go to the index first: the
    // games they belong to are not in the cache yet, and looking one up scans the table.
    if games.recent_rows > 0 {
        merge_recent(&mut conn, &mut games);
    }
    let mut last_reset = std::time::Instant::now();
    let mut last_commit: Option<std::time::Instant> = None;
    while let Some(job) = rx.recv().await {
        // Under load (the last commit began less than `spacing` ago), the writes of the
        // rest of the interval join this one's commit. At a human pace most commits carried
        // one move each; a commit's fixed cost (statements, WAL frames, the fsync, two
        // threads waking) then dominated a move's CPU.
        if let Some(since) = last_commit.map(|t| t.elapsed())
            && since < spacing
        {
            tokio::time::sleep(spacing - since).await;
        }
        last_commit = Some(std::time::Instant::now());
        batch.push(job);
        while batch.len() < 1024 {
            match rx.try_recv() {
                Ok(j) => batch.push(j),
                Err(_) => break,
            }
        }
        let started = std::time::Instant::now();
        // In each waiting call's trace, the commit its write went into.
        let spans: Vec<tracing::Span> = batch
            .iter()
            .filter(|(_, _, parent)| !parent.is_none())
            .map(|(_, _, parent)| {
                tracing::info_span!(target: crate::TRACE, parent: parent, "db.commit", db.system = "sqlite", writes = batch.len())
            })
            .collect();
        let results = commit_batch(&mut conn, &batch, &mut games);
        drop(spans);
        tracing::debug!(
            writes = batch.len(),
            micros = started.elapsed().as_micros() as u64,
            "batch committed"
        );
        for ((_, reply, _), r) in batch.drain(..).zip(results) {
            let _ = reply.send(r);
        }
        if games.recent_rows > 0
            && (games.waiting_since.elapsed() >= MERGE_EVERY
                || (games.recent_rows >= MERGE_ROWS && !games.merge_failed))
        {
            merge_recent(&mut conn, &mut games);
        }
        // Tried again after the next commit until it completes (the background checkpoint
        // may hold the checkpoint lock).
        if checkpointed.reset_due(last_reset.elapsed()) && reset_wal(&conn) {
            last_reset = std::time::Instant::now();
        }
    }
    // Every store has gone: what waits is merged now, so that a stopped server leaves a
    // database whose `events` alone hold every event (as an older version reads it).
    if games.recent_rows > 0 {
        merge_recent(&mut conn, &mut games);
    }
    // Closed (the last connection's close may checkpoint) before the lock file is let go.
    drop(conn);
}

/// Moves every row of `events_recent` into `events` in one transaction, sorted as the
/// index is, so each game's index page is written once for all its rows. A failure (the
/// unique index refusing a row would mean the writer's cache was wrong) leaves the rows
/// where they are, still read from there; the next merge tries again a second later, and
/// meanwhile no more rows join them.
fn merge_recent(conn: &mut rusqlite::Connection, games: &mut Games) {
    let started = std::time::Instant::now();
    let merged = (|| {
        end_open_transaction(conn, games)?;
        let tx = conn.transaction()?;
        // (`OR FAIL`, as the appends' statements: a refused row fails the merge, which
        // is rolled back whole, with no statement journal.)
        tx.execute(
            "INSERT OR FAIL INTO events (game_no, seq, request_id, body)
             SELECT game_no, seq, request_id, body FROM events_recent ORDER BY game_no, seq",
            [],
        )?;
        tx.execute("DELETE FROM events_recent", [])?;
        tx.commit()
    })();
    match merged {
        Ok(()) => {
            tracing::debug!(
                rows = games.recent_rows,
                micros = started.elapsed().as_micros() as u64,
                "recent events merged"
            );
            games.recent_rows = 0;
            games.merge_failed = false;
        }
        Err(e) => {
            tracing::error!(error = %e, rows = games.recent_rows, "merging recent events failed");
            games.merge_failed = true;
            games.waiting_since = std::time::Instant::now();
        }
    }
}

/// Ends a transaction left open on the writer's connection (a failed batch's rollback that
/// itself failed), before anything is read: otherwise every later `BEGIN` would fail, and
/// with it every write until a restart, and the cache of games would be filled from rows
/// that are then rolled back. The cache is dropped too: it may hold what such reads saw.
fn end_open_transaction(conn: &rusqlite::Connection, games: &mut Games) -> rusqlite::Result<()> {
    if !conn.is_autocommit() {
        tracing::warn!("the writer's connection was left in a transaction: rolled back");
        conn.execute_batch("ROLLBACK")?;
        games.known.clear();
    }
    Ok(())
}

/// A game's key and last sequence number as stored, if the game exists.
fn lookup(conn: &rusqlite::Connection, game_id: &str) -> rusqlite::Result<Option<Known>> {
    let Some(game_no) = conn
        .prepare_cached("SELECT game_no FROM games WHERE game_id = ?")?
        .query_row([game_id], |r| r.get::<_, i64>(0))
        .optional()?
    else {
        return Ok(None);
    };
    // (The recent rows are scanned: they are few, and a game in quick play is cached.)
    let last: Option<i64> = conn
        .prepare_cached(
            "SELECT max(s) FROM (SELECT max(seq) AS s FROM events WHERE game_no = ?1
                                 UNION ALL SELECT max(seq) FROM events_recent WHERE game_no = ?1)",
        )?
        .query_row([game_no], |r| r.get(0))?;
    Ok(Some(Known {
        game_no,
        last_seq: last.unwrap_or(0) as u64,
        // Not known to be in quick play.
        last_ms: 0,
        quick_gap: false,
    }))
}

/// An append that passed the concurrency check, with its game's key.
struct Accepted<'a> {
    append: &'a Append,
    bodies: &'a [String],
    game_no: i64,
    /// The game is in quick play: its events go to `events_recent`.
    quick: bool,
    /// The game's first append: its row in `games` is created.
    new: bool,
}

fn commit_batch(conn: &mut rusqlite::Connection, batch: &[Job], games: &mut Games) -> Vec<Result<(), StoreError>> {
    if let Err(e) = end_open_transaction(conn, games) {
        let (msg, code) = (e.to_string(), crate::sqlite_code(&e));
        return batch.iter().map(|_| Err(StoreError::sqlite(&msg, code))).collect();
    }
    let mut results: Vec<Option<Result<(), StoreError>>> = Vec::with_capacity(batch.len());
    let mut accepted: Vec<Accepted<'_>> = Vec::new();
    let mut heartbeat: Option<u64> = None;
    let mut probes: Vec<(i64, u64, &[u8])> = Vec::new();
    let mut touched: Vec<&str> = Vec::new();
    for (write, _, _) in batch {
        match write {
            Write::Probe(ms, payload) => {
                probes.push(((games.probes % crate::PROBE_SLOTS) as i64, *ms, payload));
                games.probes += 1;
                results.push(None);
            }
            Write::Heartbeat(ms) => {
                heartbeat = Some(heartbeat.map_or(*ms, |h: u64| h.max(*ms)));
                results.push(None);
            }
            Write::Barrier => results.push(None),
            Write::Append(a, bodies) => {
                let known = match games.known.get(&a.game_id) {
                    Some(&k) => Some(k),
                    None => match lookup(conn, &a.game_id) {
                        Ok(k) => k,
                        Err(e) => {
                            results.push(Some(Err(StoreError::from(e))));
                            continue;
                        }
                    },
                };
                let ok = match known {
                    None => a.expected_seq == 0,
                    Some(k) => a.expected_seq == k.last_seq && a.expected_seq > 0,
                };
                if !ok {
                    if let Some(k) = known {
                        games.known.insert(a.game_id.clone(), k);
                    }
                    results.push(Some(Err(StoreError::Conflict {
                        game_id: a.game_id.clone(),
                        expected: a.expected_seq,
                    })));
                    continue;
                }
                let game_no = match known {
                    Some(k) => k.game_no,
                    None => {
                        games.next_no += 1;
                        games.next_no - 1
                    }
                };
                let last_seq = a.expected_seq + a.events.len() as u64;
                let quick_gap = known.is_some_and(|k| a.now_ms.saturating_sub(k.last_ms) < QUICK_PLAY_MS);
                let quick = quick_gap && known.is_some_and(|k| k.quick_gap) && !games.merge_failed;
                let last_ms = a.now_ms;
                // (Most appends are to a game already cached: updated in place, its id not
                // copied.)
                match games.known.get_mut(&a.game_id) {
                    Some(k) => (k.last_seq, k.last_ms, k.quick_gap) = (last_seq, last_ms, quick_gap),
                    None => {
                        let k = Known {
                            game_no,
                            last_seq,
                            last_ms,
                            quick_gap,
                        };
                        games.known.insert(a.game_id.clone(), k);
                    }
                }
                touched.push(&a.game_id);
                accepted.push(Accepted {
                    append: a,
                    bodies,
                    game_no,
                    quick,
                    new: known.is_none(),
                });
                results.push(None);
            }
        }
    }
    let recent: usize = accepted.iter().filter(|a| a.quick).map(|a| a.append.events.len()).sum();
    if let Err(e) = write_accepted(conn, &accepted, heartbeat, &probes) {
        // Nothing of this batch is on disk: forget what we assumed and fail the accepted.
        for id in touched {
            games.known.remove(id);
        }
        let (msg, code) = (e.to_string(), crate::sqlite_code(&e));
        return results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(StoreError::sqlite(&msg, code))))
            .collect();
    }
    if games.recent_rows == 0 && recent > 0 {
        games.waiting_since = std::time::Instant::now();
    }
    games.recent_rows += recent as u64;
    // Finished games take no more appends: forget them (the cache would otherwise grow
    // with every game ever played; a late append would look the game up again).
    for acc in &accepted {
        if acc.append.summary.as_ref().is_some_and(|s| s.finished) {
            games.known.remove(&acc.append.game_id);
        }
    }
    results.into_iter().map(|r| r.unwrap_or(Ok(()))).collect()
}

/// One row of `events` or `events_recent`: game_no, seq, request_id, body.
type EventRow<'a> = (i64, i64, Option<&'a str>, &'a str);

/// A text argument, or NULL.
fn text(s: Option<&str>) -> ToSqlOutput<'_> {
    s.map_or(ToSqlOutput::Owned(rusqlite::types::Value::Null), ToSqlOutput::from)
}

/// Runs one multi-row statement (a cached shape) with its arguments.
fn insert_rows(tx: &rusqlite::Transaction<'_>, sql: &str, args: &[ToSqlOutput<'_>]) -> rusqlite::Result<()> {
    tx.prepare_cached(sql)?.execute(rusqlite::params_from_iter(args))?;
    Ok(())
}

/// Writes the accepted appends of a batch in one transaction.
fn write_accepted(
    conn: &mut rusqlite::Connection,
    accepted: &[Accepted<'_>],
    heartbeat: Option<u64>,
    probes: &[(i64, u64, &[u8])],
) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    // Summary rows, only where they changed (most moves change none) or the game is new.
    // The unique (game_no, seq) index on events is what guarantees one event per sequence
    // number.
    // (A new game without a summary gets a blank row: no phase, no board.)
    let rows: Vec<(&Accepted<'_>, Option<&Summary>)> = accepted
        .iter()
        .filter_map(|a| match &a.append.summary {
            Some(s) => Some((a, Some(s))),
            None if a.new => Some((a, None)),
            None => None,
        })
        .collect();
    let mut args: Vec<ToSqlOutput<'_>> = Vec::new();
    for chunk in chunks(&rows) {
        args.clear();
        for (acc, s) in chunk {
            let s = crate::SummaryColumns::of(*s);
            let a = acc.append;
            args.extend([
                ToSqlOutput::from(acc.game_no),
                ToSqlOutput::from(a.game_id.as_str()),
                text(a.host_token_hash.as_deref()),
                text(a.guest_token_hash.as_deref()),
                ToSqlOutput::from((a.expected_seq + a.events.len() as u64) as i64),
                ToSqlOutput::from(s.phase),
                ToSqlOutput::from(s.board_size),
                ToSqlOutput::from(s.move_number),
                ToSqlOutput::from(s.rules),
                ToSqlOutput::from(s.finished),
                ToSqlOutput::from(a.now_ms as i64),
            ]);
        }
        insert_rows(&tx, GAME_ROWS.of(chunk.len()), &args)?;
    }
    // Indexed at once, or (games in quick play) in the next merge.
    let mut events: [Vec<EventRow>; 2] = Default::default();
    for acc in accepted {
        let a = acc.append;
        for (k, (e, body)) in a.events.iter().zip(acc.bodies.iter()).enumerate() {
            let rid = if k == 0 { a.request_id.as_deref() } else { None };
            events[usize::from(acc.quick)].push((acc.game_no, e.seq as i64, rid, body));
        }
    }
    for (rows, shapes) in events.iter().zip([&*EVENT_ROWS, &*RECENT_ROWS]) {
        for chunk in chunks(rows) {
            args.clear();
            for (no, seq, rid, body) in chunk {
                args.extend([
                    ToSqlOutput::from(*no),
                    ToSqlOutput::from(*seq),
                    text(*rid),
                    ToSqlOutput::from(*body),
                ]);
            }
            insert_rows(&tx, shapes.of(chunk.len()), &args)?;
        }
    }
    for chunk in chunks(probes) {
        args.clear();
        for (slot, ms, payload) in chunk {
            args.extend([
                ToSqlOutput::from(*slot),
                ToSqlOutput::from(*ms as i64),
                ToSqlOutput::from(*payload),
            ]);
        }
        insert_rows(&tx, PROBE_ROWS.of(chunk.len()), &args)?;
    }
    if let Some(ms) = heartbeat {
        tx.prepare_cached("INSERT OR REPLACE INTO meta (key, value) VALUES ('heartbeat_ms', ?)")?
            .execute([ms.to_string()])?;
    }
    tx.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer's connection on a new database with the store's schema.
    fn connection(name: &str) -> (rusqlite::Connection, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("weiqi-writer-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut conn = super::super::writer_connection(&dir.join("w.sqlite3")).unwrap();
        let tx = conn.transaction().unwrap();
        for stmt in crate::schema(super::super::SCHEMA, "INTEGER PRIMARY KEY AUTOINCREMENT") {
            tx.execute_batch(&stmt).unwrap();
        }
        tx.commit().unwrap();
        (conn, dir)
    }

    fn events(conn: &rusqlite::Connection) -> Vec<(i64, i64, String)> {
        let mut st = conn
            .prepare("SELECT game_no, seq, body FROM events ORDER BY rowid")
            .unwrap();
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    /// Under `OR FAIL` the unique (game_no, seq) index still refuses a second event with the
    /// same number, failing the statement; the transaction, rolled back, keeps none of the
    /// statement's rows before it, nor the batch's other statements.
    #[test]
    fn a_refused_event_row_leaves_nothing_of_its_batch() {
        let (mut conn, dir) = connection("refused");
        conn.execute("INSERT INTO events VALUES (1, 2, NULL, 'stored')", [])
            .unwrap();
        let row = |seq: i64, body: &'static str| {
            [
                ToSqlOutput::from(1i64),
                ToSqlOutput::from(seq),
                text(None),
                ToSqlOutput::from(body),
            ]
        };
        {
            let tx = conn.transaction().unwrap();
            insert_rows(&tx, EVENT_ROWS.of(1), &row(1, "first")).unwrap();
            let rows: Vec<ToSqlOutput<'_>> = [row(3, "a"), row(4, "b"), row(2, "again"), row(5, "c")]
                .into_iter()
                .flatten()
                .collect();
            let e = insert_rows(&tx, EVENT_ROWS.of(4), &rows).unwrap_err();
            assert_eq!(
                e.sqlite_error().map(|e| e.extended_code),
                Some(rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE),
                "{e}"
            );
            // `OR FAIL`: the rows before the refused one stay until the transaction ends (no
            // statement journal undid them; under `ABORT` there would be 2 rows here).
            let n: i64 = tx.query_row("SELECT count(*) FROM events", [], |r| r.get(0)).unwrap();
            assert_eq!(n, 4, "stored, first, 3 and 4");
            // Dropped unfinished: rolled back.
        }
        assert_eq!(events(&conn), vec![(1, 2, "stored".to_string())]);
        drop(conn);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A connection left inside a transaction (a rollback that failed) still commits the
    /// next batch: the open transaction is rolled back first, and the cache of games, which
    /// may hold what was read inside it, is dropped.
    #[test]
    fn a_transaction_left_open_does_not_stop_the_writer() {
        let (mut conn, dir) = connection("left-open");
        conn.execute_batch("BEGIN; INSERT INTO events VALUES (7, 1, NULL, 'never committed')")
            .unwrap();
        let mut games = Games::new(8, 0);
        let cached = Known {
            game_no: 7,
            last_seq: 1,
            last_ms: 0,
            quick_gap: false,
        };
        games.known.insert("g7".to_string(), cached);
        end_open_transaction(&conn, &mut games).unwrap();
        assert!(games.known.is_empty());
        let tx = conn.transaction().unwrap();
        insert_rows(
            &tx,
            EVENT_ROWS.of(1),
            &[
                ToSqlOutput::from(1i64),
                ToSqlOutput::from(1i64),
                text(Some("rid")),
                ToSqlOutput::from("kept"),
            ],
        )
        .unwrap();
        tx.commit().unwrap();
        assert_eq!(events(&conn), vec![(1, 1, "kept".to_string())]);
        drop(conn);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
