//! Idempotency keys: a client's request id, scoped to the seat that sent it and bound to
//! the command it carried.

use std::collections::HashMap;

use weiqi_game::{Actor, Command};

/// A request id as the server keeps it: scoped to the seat that sent it (both players may
/// use the same ids), with a fingerprint of the command so that an id reused for another
/// command is refused instead of answered with the first command's result. Stored as
/// `<seat>:<fingerprint>:<request id>`; ids stored by older versions (no prefix) still
/// answer retries from either seat. Since the answer is rebuilt from the log, the stored
/// fingerprint carries how many events the command made (`<fingerprint>.<events>`): two
/// commands in the same millisecond are told apart by it, not by their time.
#[derive(Debug, Clone)]
pub struct RequestKey {
    /// `<seat>:<request id>`, the seat a letter: the key of the game's answered ids, built
    /// once (a move looks it up, records it and stores it).
    map_key: String,
    pub fingerprint: String,
}

impl RequestKey {
    /// `None` for calls without a request id.
    pub fn new(actor: Actor, request_id: &str, cmd: &Command) -> Option<RequestKey> {
        if request_id.is_empty() {
            return None;
        }
        let seat = match actor {
            Actor::Host => 'h',
            Actor::Guest => 'g',
            Actor::Server => 's',
        };
        let mut map_key = String::with_capacity(request_id.len() + 2);
        map_key.push(seat);
        map_key.push(':');
        map_key.push_str(request_id);
        Some(RequestKey {
            map_key,
            fingerprint: cmd.fingerprint(),
        })
    }

    pub fn map_key(&self) -> &str {
        &self.map_key
    }

    /// The seat's letter and the client's id, as [`RequestKey::map_key`] joins them.
    fn parts(&self) -> (&str, &str) {
        (&self.map_key[..1], &self.map_key[2..])
    }

    /// The id as stored with the first of the `events` events its command made.
    pub fn stored(&self, events: usize) -> String {
        let (seat, request_id) = self.parts();
        format!("{seat}:{}.{events}:{request_id}", self.fingerprint)
    }

    /// A stored id as kept in memory: its map key and what the request did.
    pub fn parse((stored, first): (String, u64)) -> (String, Answered) {
        let mut parts = stored.splitn(3, ':');
        if let (Some(seat @ ("h" | "g" | "s")), Some(fp), Some(id)) = (parts.next(), parts.next(), parts.next()) {
            // (Versions before the event count stored the fingerprint alone.)
            let (fp, events) = fp.split_once('.').map_or((fp, None), |(f, n)| (f, n.parse().ok()));
            if fp.len() == 16 && fp.bytes().all(|b| b.is_ascii_hexdigit()) {
                let fingerprint = Some(fp.to_string());
                return (
                    format!("{seat}:{id}"),
                    Answered {
                        first,
                        events,
                        fingerprint,
                    },
                );
            }
        }
        let legacy = Answered {
            first,
            events: None,
            fingerprint: None,
        };
        (stored, legacy)
    }

    /// This seat's earlier use of the id, or one stored by an older version.
    pub fn find<'a>(&self, requests: &'a HashMap<String, Answered>) -> Option<&'a Answered> {
        requests
            .get(self.map_key())
            .or_else(|| requests.get(self.parts().1).filter(|a| a.fingerprint.is_none()))
    }
}

/// The request ids a game has answered (map keys as [`RequestKey::map_key`] makes them),
/// as 32-bit hashes: 4 bytes a command instead of a map of strings on every move of every
/// game in memory. A match may be a collision (about one command in a billion in a
/// 300-move game), so the hub confirms it against the ids in the store before answering a
/// retry. The hash is keyed per process, so clients cannot aim for collisions.
#[derive(Debug, Default, Clone)]
pub struct SeenRequests(Vec<u32>);

impl SeenRequests {
    pub fn insert(&mut self, map_key: &str) {
        let h = short_hash(map_key);
        if let Err(i) = self.0.binary_search(&h) {
            self.0.insert(i, h);
        }
    }

    /// The ids as the store keeps them (stored form and first event, see
    /// [`RequestKey::parse`]).
    pub fn insert_stored(&mut self, stored: Vec<(String, u64)>) {
        for (key, _) in stored.into_iter().map(RequestKey::parse) {
            self.insert(&key);
        }
    }

    /// Whether this seat's id (or an older version's bare id) may have been answered.
    pub fn may_contain(&self, key: &RequestKey) -> bool {
        let has = |k: &str| self.0.binary_search(&short_hash(k)).is_ok();
        has(key.map_key()) || has(key.parts().1)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn short_hash(s: &str) -> u32 {
    use std::hash::BuildHasher;
    static KEYS: std::sync::LazyLock<std::hash::RandomState> = std::sync::LazyLock::new(std::hash::RandomState::new);
    (KEYS.hash_one(s) >> 32) as u32
}

/// What a request did: its first event, how many events (unknown for ids stored by older
/// versions: then the events that share the first one's time), and its command's
/// fingerprint (none for the oldest ids).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    pub first: u64,
    pub events: Option<u32>,
    pub fingerprint: Option<String>,
}

#[cfg(test)]
mod tests {
    use weiqi_game::{Actor, Command};

    use super::*;

    /// Stored ids read back: with the event count, without it (older versions), and the
    /// oldest, bare ids.
    /// Every id inserted is found, for its seat and as a bare (older) id; others almost
    /// never are.
    #[test]
    fn seen_requests_find_what_was_inserted() {
        let mut seen = SeenRequests::default();
        let keys: Vec<RequestKey> = (0..1000)
            .map(|i| RequestKey::new(Actor::Host, &format!("move-{i}"), &Command::Resign).unwrap())
            .collect();
        for k in &keys {
            seen.insert(k.map_key());
        }
        seen.insert("legacy-id");
        assert!(keys.iter().all(|k| seen.may_contain(k)));
        let legacy = RequestKey::new(Actor::Guest, "legacy-id", &Command::Resign).unwrap();
        assert!(seen.may_contain(&legacy));
        let others = (0..1000)
            .filter(|i| {
                seen.may_contain(&RequestKey::new(Actor::Guest, &format!("move-{i}"), &Command::Resign).unwrap())
            })
            .count();
        assert!(others <= 1, "{others} of 1000 unseen ids matched");
        assert_eq!(seen.len(), 1001);
    }

    #[test]
    fn stored_ids_round_trip_in_every_format() {
        let key = RequestKey::new(Actor::Host, "retry:1", &Command::Resign).unwrap();
        let (map_key, a) = RequestKey::parse((key.stored(3), 7));
        let answered = Answered {
            first: 7,
            events: Some(3),
            fingerprint: Some(key.fingerprint.clone()),
        };
        assert_eq!((map_key.as_str(), a.clone()), ("h:retry:1", answered));
        let older = format!("h:{}:retry:1", key.fingerprint);
        assert_eq!(RequestKey::parse((older, 7)).1.events, None);
        let (bare, a) = RequestKey::parse(("plain-id".into(), 2));
        assert_eq!((bare.as_str(), a.fingerprint, a.events), ("plain-id", None, None));
    }
}
