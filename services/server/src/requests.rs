//! Idempotency keys: a client's request id, scoped to the seat that sent it and bound to
//! the command it carried.

use std::collections::HashMap;

use weiqi_game::{Actor, Command};

/// A request id as the server keeps it: scoped to the seat that sent it (both players may
/// use the same ids), with a fingerprint of the command so that an id reused for another
/// command is refused instead of answered with the first command's result. Stored as
/// `<seat>:<fingerprint>:<request id>`; ids stored by older versions (no prefix) still
/// answer retries from either seat.
#[derive(Debug, Clone)]
pub struct RequestKey {
    seat: char,
    request_id: String,
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
        Some(RequestKey {
            seat,
            request_id: request_id.to_string(),
            fingerprint: cmd.fingerprint(),
        })
    }

    pub fn map_key(&self) -> String {
        format!("{}:{}", self.seat, self.request_id)
    }

    pub fn stored(&self) -> String {
        format!("{}:{}:{}", self.seat, self.fingerprint, self.request_id)
    }

    /// A stored id as kept in memory: `(seat:id, (first seq, fingerprint))`.
    pub fn parse((stored, seq): (String, u64)) -> (String, (u64, Option<String>)) {
        let mut parts = stored.splitn(3, ':');
        if let (Some(seat @ ("h" | "g" | "s")), Some(fp), Some(id)) = (parts.next(), parts.next(), parts.next())
            && fp.len() == 16
            && fp.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return (format!("{seat}:{id}"), (seq, Some(fp.to_string())));
        }
        (stored, (seq, None))
    }

    /// This seat's earlier use of the id, or one stored by an older version.
    pub fn find<'a>(&self, requests: &'a HashMap<String, (u64, Option<String>)>) -> Option<&'a (u64, Option<String>)> {
        requests
            .get(&self.map_key())
            .or_else(|| requests.get(&self.request_id).filter(|(_, fp)| fp.is_none()))
    }
}
