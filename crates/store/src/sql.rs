//! The accounts' SQL, written once for both databases: [`SqlStore`] is what that code needs
//! of a database (its pool, a write transaction, its dialect), and the accounts' traits
//! are implemented for every `SqlStore` (`players.rs`, `matchmaking.rs`,
//! `tournaments.rs`). The statements are PostgreSQL's text, with `$1` parameters, which
//! [`SqlDb::sql`] turns into the database's where they differ.
//!
//! Each of those impls states the same sqlx bounds in its `where` clause (what the queries
//! bind and read, and that the pool and a transaction execute them): Rust does not carry a
//! trait's `where` clauses to the code that uses it, so they cannot be said once here.

use std::future::Future;

use sqlx::{Database, Pool, Transaction};

/// A database the accounts' code runs on ([`crate::SqliteStore`], [`crate::PgStore`]).
pub(crate) trait SqlStore: Send + Sync + 'static {
    type Db: SqlDb;
    /// The pool for reads and single statements.
    fn pool(&self) -> &Pool<Self::Db>;
    /// A transaction that writes (SQLite's takes the write lock at once).
    fn begin_write(&self) -> impl Future<Output = Result<Transaction<'_, Self::Db>, sqlx::Error>> + Send;
}

/// What the accounts' code needs of a sqlx database: its dialect, and the types it binds
/// and reads. (The bounds that sqlx states per use are gathered here, once.)
pub(crate) trait SqlDb: Database {
    /// The statement in this database's parameter syntax (SQLite numbers `?1`).
    fn sql(text: &str) -> String;
    /// Locks the rows a transaction reads to update (PostgreSQL's `FOR UPDATE`; SQLite's
    /// write transaction holds the whole database already).
    const LOCK: &'static str;
    /// The column that orders rows made in one millisecond by their arrival: SQLite gives
    /// a new row a rowid above every row present; PostgreSQL numbers them from a sequence
    /// (`postgres::ARRIVAL`).
    const ARRIVAL: &'static str;
}

/// Rows a statement changed, for both databases' results (sqlx has it on each, not as a
/// trait).
pub(crate) trait RowsAffected {
    fn rows_affected(&self) -> u64;
}

impl RowsAffected for sqlx::sqlite::SqliteQueryResult {
    fn rows_affected(&self) -> u64 {
        sqlx::sqlite::SqliteQueryResult::rows_affected(self)
    }
}

impl RowsAffected for sqlx::postgres::PgQueryResult {
    fn rows_affected(&self) -> u64 {
        sqlx::postgres::PgQueryResult::rows_affected(self)
    }
}

impl SqlDb for sqlx::Sqlite {
    fn sql(text: &str) -> String {
        text.replace('$', "?")
    }
    const LOCK: &'static str = "";
    const ARRIVAL: &'static str = "rowid";
}

impl SqlDb for sqlx::Postgres {
    fn sql(text: &str) -> String {
        text.to_string()
    }
    const LOCK: &'static str = " FOR UPDATE";
    const ARRIVAL: &'static str = "arrival";
}

impl SqlStore for crate::SqliteStore {
    type Db = sqlx::Sqlite;
    fn pool(&self) -> &Pool<sqlx::Sqlite> {
        &self.accounts
    }
    /// On the accounts connection, taking the write lock at once (`BEGIN IMMEDIATE`): a
    /// deferred transaction that read first could not upgrade after the event writer
    /// committed, and SQLite answers that with SQLITE_BUSY at once, past any busy timeout.
    async fn begin_write(&self) -> Result<Transaction<'_, sqlx::Sqlite>, sqlx::Error> {
        self.accounts.begin_with("BEGIN IMMEDIATE").await
    }
}

impl SqlStore for crate::PgStore {
    type Db = sqlx::Postgres;
    fn pool(&self) -> &Pool<sqlx::Postgres> {
        &self.pool
    }
    /// A plain transaction: the statements inside lock what they change (`FOR UPDATE`,
    /// `UPDATE ... WHERE`).
    async fn begin_write(&self) -> Result<Transaction<'_, sqlx::Postgres>, sqlx::Error> {
        self.pool.begin().await
    }
}
