//! The referee's byo-yomi calls (C2), in closed form: the next call is found by division,
//! never by walking the periods.

use serde::{Deserialize, Serialize};
use weiqi_rules::Color;

use crate::{Clock, Ms, TimeControl};

/// A referee's call (C2): seconds used in the current byo-yomi period, or the final count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Announcement {
    /// When it is due.
    pub due: Ms,
    /// The player whose clock it concerns.
    pub color: Color,
    /// Seconds used in the period at `due` (30, 40, 50, 55, 58, or 51..59 in the last).
    pub seconds: u32,
    /// In the last period, the count 1..9; otherwise `None`.
    pub count: Option<u32>,
    /// Periods left including the current one.
    pub periods_left: u32,
}

impl Clock {
    /// The referee's next byo-yomi call for the running player's current move strictly
    /// after `after` (C2): 30, 40, 50, 55 and 58 s into a 60 s period (the same distances
    /// from its end for other lengths), and in the last period 30, 40, 50 s and then the
    /// count 1..9. O(1) whatever the settings: the period is found by division, never by
    /// walking the periods (10^8 periods once cost a call minutes).
    pub fn next_announcement(&self, after: Ms) -> Option<Announcement> {
        let (color, since) = self.running?;
        let TimeControl::ByoYomi { .. } = self.control else {
            return None;
        };
        let s = &self.sides[color.index()];
        let period = s.period_ms;
        if period == 0 || s.periods == 0 {
            return None;
        }
        let start = since.saturating_add(s.main_ms);
        // The period `after` falls in (0 before byo-yomi starts), then the next one.
        let k = after.checked_sub(start).map_or(0, |d| d / period);
        for k in [k, k.saturating_add(1)] {
            if k >= s.periods as Ms {
                return None;
            }
            let left = s.periods - k as u32;
            let base = start.saturating_add(k.saturating_mul(period));
            let found = period_calls(period, left == 1)
                .map(|(offset, count)| (base.saturating_add(offset), offset, count))
                .find(|&(due, _, _)| due > after);
            if let Some((due, offset, count)) = found {
                return Some(Announcement {
                    due,
                    color,
                    seconds: (offset / 1000) as u32,
                    count,
                    periods_left: left,
                });
            }
        }
        None
    }

    /// The calls due in `(after, now]` that still matter: those of the period `now` is in
    /// and of the one before it, in order. A tick that comes late (after an outage, or on
    /// another replica) does not recite periods long gone: at most 28 calls, whatever the
    /// settings.
    pub fn due_announcements(&self, after: Ms, now: Ms) -> Vec<Announcement> {
        let mut out = Vec::new();
        let Some(first) = self.next_announcement(after) else {
            return out;
        };
        let mut from = after;
        if let (Some((color, since)), TimeControl::ByoYomi { .. }) = (self.running, self.control) {
            let s = &self.sides[color.index()];
            let start = since.saturating_add(s.main_ms);
            if s.period_ms > 0 && now > start {
                // The start of the period before `now`'s: older calls are skipped.
                let k = ((now - start) / s.period_ms).saturating_sub(1);
                from = from.max(start.saturating_add(k.saturating_mul(s.period_ms)).saturating_sub(1));
            }
        }
        let mut next = if from == after {
            Some(first)
        } else {
            self.next_announcement(from)
        };
        while let Some(a) = next.filter(|a| a.due <= now) {
            out.push(a);
            next = self.next_announcement(a.due);
        }
        out
    }
}

/// The calls within one byo-yomi period of `period` ms, as (offset from its start, count),
/// in order: at most 5, or 12 in the last period.
pub(crate) fn period_calls(period: Ms, last: bool) -> impl Iterator<Item = (Ms, Option<u32>)> {
    let before_end: &[Ms] = if last {
        &[30_000, 20_000, 10_000]
    } else {
        &[30_000, 20_000, 10_000, 5_000, 2_000]
    };
    let spoken = before_end
        .iter()
        .filter(move |&&r| r < period)
        .map(move |&r| (period - r, None));
    let counted = (1..=9u32)
        .filter(move |&c| last && (c as Ms) * 1000 + 10_000 <= period)
        .map(move |c| (period - 10_000 + c as Ms * 1000, Some(c)));
    spoken.chain(counted)
}
