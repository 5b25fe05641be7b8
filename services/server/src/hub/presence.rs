//! Whether each seat's player is here: an open watch stream made with the seat's token,
//! or a call with it in the last [`GRACE_MS`]. Presence is not part of the game (nothing
//! of it is stored): a server that takes a game up counts both seats as seen then, so
//! nobody can claim a game as abandoned because a server restarted.
//!
//! It is shared by the game's entry and the seats' watch streams, behind a plain mutex
//! held for a few assignments: a stream that ends (dropped by the connection's task,
//! without the game's lock) counts itself out at once.

use std::sync::{Arc, Mutex};

use weiqi_game::{Ms, Seat};

/// How long a seat counts as here after its last call or its last stream closed: a
/// reload or a dropped connection that comes back within it is not an absence.
pub const GRACE_MS: Ms = 10_000;

/// One seat's presence as clients see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SeatPresence {
    pub present: bool,
    /// When the seat was last here (now, while it is).
    pub last_seen_ms: Ms,
    /// While absent from a game in play: from when the opponent may claim the game (the
    /// seat's last sight, plus the grace, plus the server's `abandon_after`).
    pub claimable_at_ms: Option<Ms>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    /// Watch streams open with the seat's token.
    streams: u32,
    /// The last call, the last stream's end, or when the server took the game up (or play
    /// started).
    last_ms: Ms,
    /// A task waits to tell the watchers if the seat's grace runs out (one at most).
    watched: bool,
}

/// The two seats' presence (host, then guest).
#[derive(Debug, Clone)]
pub struct Presence(Arc<Mutex<[Seen; 2]>>);

impl Presence {
    /// A game taken up at `now`: both seats count as seen then.
    pub fn new(now: Ms) -> Presence {
        Presence(Arc::new(Mutex::new(
            [Seen {
                streams: 0,
                last_ms: now,
                watched: false,
            }; 2],
        )))
    }

    /// Play starts (or resumes): both seats count as seen now, so that time spent waiting
    /// for an opponent, or before a scheduled start, is no absence.
    pub fn both_seen(&self, now: Ms) {
        self.with(|s| s.iter_mut().for_each(|seen| seen.last_ms = seen.last_ms.max(now)));
    }

    /// Starts watching the seat for the end of its grace; false when already watched.
    pub fn begin_watch(&self, seat: Seat) -> bool {
        self.with(|s| !std::mem::replace(&mut s[seat.index()].watched, true))
    }

    /// When the seat turns absent unless seen again; none while a stream of it is open
    /// (the watch then ends: the stream's end starts another).
    pub fn lapses_at(&self, seat: Seat) -> Option<Ms> {
        self.with(|s| {
            let seen = &mut s[seat.index()];
            if seen.streams > 0 {
                seen.watched = false;
                return None;
            }
            Some(seen.last_ms.saturating_add(GRACE_MS))
        })
    }

    /// Whether a watch stream of the seat is open.
    pub fn has_stream(&self, seat: Seat) -> bool {
        self.with(|s| s[seat.index()].streams > 0)
    }

    /// The watch of the seat is over.
    pub fn end_watch(&self, seat: Seat) {
        self.with(|s| s[seat.index()].watched = false);
    }

    fn with<T>(&self, f: impl FnOnce(&mut [Seen; 2]) -> T) -> T {
        // (Poisoning cannot leave the counts half-written: each change is one assignment.)
        f(&mut self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// A call made with the seat's token; true when the seat was absent until now.
    pub fn called(&self, seat: Seat, now: Ms) -> bool {
        self.with(|s| {
            let seen = &mut s[seat.index()];
            let was = is_here(seen, now);
            seen.last_ms = seen.last_ms.max(now);
            !was
        })
    }

    /// A watch stream opened with the seat's token; true when the seat was absent.
    pub fn stream_opened(&self, seat: Seat, now: Ms) -> bool {
        self.with(|s| {
            let seen = &mut s[seat.index()];
            let was = is_here(seen, now);
            seen.streams += 1;
            seen.last_ms = seen.last_ms.max(now);
            !was
        })
    }

    /// The seat's watch stream ended; true when it was the seat's last one (the seat is
    /// absent from `now + GRACE_MS` unless it comes back).
    pub fn stream_closed(&self, seat: Seat, now: Ms) -> bool {
        self.with(|s| {
            let seen = &mut s[seat.index()];
            seen.streams = seen.streams.saturating_sub(1);
            seen.last_ms = seen.last_ms.max(now);
            seen.streams == 0
        })
    }

    /// Both seats at `now`; `in_play` games may be claimed once a seat has been absent
    /// `abandon_after` (absent: [`GRACE_MS`] after its last sight).
    pub fn view(&self, now: Ms, in_play: bool, abandon_after: Ms) -> [SeatPresence; 2] {
        self.with(|s| {
            s.map(|seen| {
                let present = is_here(&seen, now);
                SeatPresence {
                    present,
                    last_seen_ms: if seen.streams > 0 { now } else { seen.last_ms },
                    claimable_at_ms: (in_play && !present).then(|| claimable_from(&seen, abandon_after)),
                }
            })
        })
    }

    /// Whether the seat has been absent `abandon_after` by `now`; otherwise, from when.
    pub fn claimable(&self, seat: Seat, now: Ms, abandon_after: Ms) -> Result<(), Ms> {
        self.with(|s| {
            let seen = s[seat.index()];
            let from = claimable_from(&seen, abandon_after);
            if seen.streams == 0 && now >= from {
                Ok(())
            } else {
                Err(from.max(now + 1))
            }
        })
    }
}

/// When a seat not seen since `seen.last_ms` may be claimed as gone.
fn claimable_from(seen: &Seen, abandon_after: Ms) -> Ms {
    seen.last_ms.saturating_add(GRACE_MS).saturating_add(abandon_after)
}

fn is_here(seen: &Seen, now: Ms) -> bool {
    seen.streams > 0 || now < seen.last_ms.saturating_add(GRACE_MS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_watch_per_seat_and_none_while_a_stream_is_open() {
        let p = Presence::new(0);
        assert!(p.begin_watch(Seat::Host));
        assert!(!p.begin_watch(Seat::Host), "already watched");
        assert!(p.begin_watch(Seat::Guest), "seats are watched apart");
        assert_eq!(p.lapses_at(Seat::Host), Some(GRACE_MS));
        p.called(Seat::Host, 5_000);
        assert_eq!(p.lapses_at(Seat::Host), Some(5_000 + GRACE_MS), "a call pushes it back");
        p.stream_opened(Seat::Host, 6_000);
        assert_eq!(p.lapses_at(Seat::Host), None, "a stream ends the watch");
        assert!(p.begin_watch(Seat::Host));
        p.end_watch(Seat::Host);
        assert!(p.begin_watch(Seat::Host));
    }

    #[test]
    fn a_seat_is_here_while_it_watches_and_for_the_grace_after() {
        let p = Presence::new(1_000);
        // Taken up at 1 s: both count as seen then.
        assert!(p.view(1_000, true, 60_000).iter().all(|s| s.present));
        assert!(!p.view(1_000 + GRACE_MS, true, 60_000)[0].present);
        assert!(p.stream_opened(Seat::Host, 20_000), "back after an absence");
        assert!(!p.stream_opened(Seat::Host, 20_001), "a second tab changes nothing");
        let v = p.view(500_000, true, 60_000);
        assert_eq!(
            v[0],
            SeatPresence {
                present: true,
                last_seen_ms: 500_000,
                claimable_at_ms: None
            }
        );
        assert!(!p.stream_closed(Seat::Host, 500_000), "one tab is still open");
        assert!(p.stream_closed(Seat::Host, 600_000), "the last tab closed");
        assert!(p.view(600_000 + GRACE_MS - 1, true, 60_000)[0].present);
        let gone = p.view(600_000 + GRACE_MS, true, 60_000)[0];
        assert_eq!(
            gone,
            SeatPresence {
                present: false,
                last_seen_ms: 600_000,
                claimable_at_ms: Some(600_000 + GRACE_MS + 60_000)
            }
        );
        // A game not in play is never claimable.
        assert_eq!(p.view(700_000, false, 60_000)[0].claimable_at_ms, None);
    }

    #[test]
    fn a_claim_waits_for_the_grace_and_then_the_whole_absence() {
        let p = Presence::new(0);
        let due = GRACE_MS + 60_000;
        assert_eq!(p.claimable(Seat::Guest, due - 1, 60_000), Err(due));
        assert_eq!(p.claimable(Seat::Guest, due, 60_000), Ok(()));
        // A call resets it; an open stream holds it off whatever the time.
        p.called(Seat::Guest, 100_000);
        assert_eq!(p.claimable(Seat::Guest, 120_000, 60_000), Err(100_000 + due));
        p.stream_opened(Seat::Guest, 200_000);
        assert!(p.claimable(Seat::Guest, 1_000_000, 60_000).is_err());
        // Play starting counts as a sight of both seats.
        p.both_seen(2_000_000);
        assert_eq!(
            p.claimable(Seat::Host, 2_000_000 + GRACE_MS, 60_000),
            Err(2_000_000 + due)
        );
        // A setting too large to add never makes a game claimable.
        assert!(p.claimable(Seat::Host, Ms::MAX - 1, Ms::MAX).is_err());
        // With no wait configured, a seat is claimable as soon as it is absent.
        let q = Presence::new(0);
        assert_eq!(q.claimable(Seat::Host, 5_000, 0), Err(GRACE_MS));
    }
}
