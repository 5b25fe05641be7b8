//! Phases as the store keeps them: the domain's own names (`playing`, the same as the
//! events' JSON), not any wire format's.

use weiqi_game::Phase;

const NAMES: [(Phase, &str); 10] = [
    (Phase::WaitingForOpponent, "waiting_for_opponent"),
    (Phase::SeatStones, "seat_stones"),
    (Phase::Bidding, "bidding"),
    (Phase::Nigiri, "nigiri"),
    (Phase::Scheduled, "scheduled"),
    (Phase::PlacingHandicap, "placing_handicap"),
    (Phase::Playing, "playing"),
    (Phase::Adjourned, "adjourned"),
    (Phase::Scoring, "scoring"),
    (Phase::Finished, "finished"),
];

/// The name a phase is stored under.
pub fn phase_name(p: Phase) -> &'static str {
    NAMES.iter().find(|(q, _)| *q == p).map_or("", |(_, n)| n)
}

/// A stored phase name read back (`None` for a name no phase has).
pub fn phase_from_name(name: &str) -> Option<Phase> {
    NAMES.iter().find(|(_, n)| *n == name).map(|(p, _)| *p)
}

/// Databases written before the store kept domain names held the protobuf enum's names
/// (`PHASE_PLAYING`): renamed once, on opening. The same statement serves SQLite and
/// PostgreSQL; with nothing left to rename it changes no row.
pub(crate) const MIGRATE_PHASE_NAMES: &str =
    "UPDATE games SET phase = lower(substr(phase, 7)) WHERE phase LIKE 'PHASE!_%' ESCAPE '!'";

#[cfg(test)]
mod tests {
    use super::*;

    /// The stored names are the phases' serde names, and read back to the same phase.
    #[test]
    fn names_round_trip_and_match_serde() {
        for (p, name) in NAMES {
            assert_eq!(serde_json::to_value(p).unwrap(), name);
            assert_eq!(phase_from_name(phase_name(p)), Some(p));
        }
        assert_eq!(phase_from_name("PHASE_PLAYING"), None);
    }
}
