//! Multi-row statements in a few cached shapes.

use std::sync::LazyLock;

/// Splits `items` into chunks whose lengths are powers of two up to 64, so only a few
/// statement shapes exist. (Each new shape is prepared once and analysed by sqlx, which
/// takes seconds for a 200-row upsert; a handful of cached shapes keep that off the hot
/// path.)
pub(super) fn chunks<T>(items: &[T]) -> impl Iterator<Item = &[T]> {
    let mut rest = items;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let n = if rest.len() >= 64 {
            64
        } else {
            1 << (usize::BITS - 1 - rest.len().leading_zeros())
        };
        let (head, tail) = rest.split_at(n);
        rest = tail;
        Some(head)
    })
}

/// `head VALUES row, row, ... tail`: one statement inserting `rows` rows.
fn multi_row_sql(head: &str, row: &str, rows: usize, tail: &str) -> String {
    format!("{head} VALUES {} {tail}", vec![row; rows].join(", "))
}

/// One multi-row statement in every length [`chunks`] makes (1, 2, 4, ... 64 rows), built
/// once rather than formatted for every chunk of every commit.
pub(super) struct Shapes([String; 7]);

impl Shapes {
    fn new(head: &str, row: &str, tail: &str) -> Shapes {
        Shapes(std::array::from_fn(|k| multi_row_sql(head, row, 1 << k, tail)))
    }

    /// The statement for a chunk of `rows` rows (a power of two up to 64).
    pub(super) fn of(&self, rows: usize) -> &str {
        &self.0[rows.trailing_zeros() as usize]
    }
}

pub(super) static GAME_ROWS: LazyLock<Shapes> = LazyLock::new(|| {
    Shapes::new(
        "INSERT INTO games (game_no, game_id, host_token_hash, guest_token_hash, last_seq, phase, board_size,
                            move_number, rules, finished, updated_ms)",
        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        "ON CONFLICT (game_no) DO UPDATE SET last_seq = excluded.last_seq, phase = excluded.phase,
          move_number = excluded.move_number, finished = excluded.finished, updated_ms = excluded.updated_ms,
          guest_token_hash = COALESCE(excluded.guest_token_hash, games.guest_token_hash)",
    )
});
/// `OR FAIL`: a row the unique index or a NOT NULL refuses still fails the statement, and
/// the writer then rolls the whole transaction back, but SQLite keeps no statement journal
/// to undo just this statement's earlier rows (it copies every page a multi-row insert
/// changes into one under the default `ABORT`: 5% of the writer's CPU at a human pace).
pub(super) static EVENT_ROWS: LazyLock<Shapes> = LazyLock::new(|| {
    Shapes::new(
        "INSERT OR FAIL INTO events (game_no, seq, request_id, body)",
        "(?, ?, ?, ?)",
        "",
    )
});
pub(super) static RECENT_ROWS: LazyLock<Shapes> = LazyLock::new(|| {
    Shapes::new(
        "INSERT OR FAIL INTO events_recent (game_no, seq, request_id, body)",
        "(?, ?, ?, ?)",
        "",
    )
});
pub(super) static PROBE_ROWS: LazyLock<Shapes> =
    LazyLock::new(|| Shapes::new("INSERT OR REPLACE INTO probes (slot, at_ms, payload)", "(?, ?, ?)", ""));

#[cfg(test)]
mod tests {
    use super::*;

    /// Every chunk a batch is cut into has its statement, with one row of placeholders per
    /// item: the cached shapes cover every length `chunks` makes.
    #[test]
    fn every_chunk_has_a_statement_of_its_length() {
        for n in 1..300 {
            let items = vec![0u8; n];
            let mut covered = 0;
            for chunk in chunks(&items) {
                assert_eq!(EVENT_ROWS.of(chunk.len()).matches("(?, ?, ?, ?)").count(), chunk.len());
                assert_eq!(PROBE_ROWS.of(chunk.len()).matches("(?, ?, ?)").count(), chunk.len());
                assert_eq!(
                    GAME_ROWS
                        .of(chunk.len())
                        .matches("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
                        .count(),
                    chunk.len()
                );
                covered += chunk.len();
            }
            assert_eq!(covered, n);
        }
    }
}
