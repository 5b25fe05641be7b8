//! What each viewer may see of an event: a sealed move stays hidden from all but its sealer
//! until resumption (C3).

use weiqi_rules::Color;

use crate::types::{Event, EventKind};

impl Event {
    /// The event as `viewer` may see it: a sealed move is hidden from all but its sealer.
    pub fn redacted_for(&self, viewer: Option<Color>) -> Event {
        let mut e = self.clone();
        if let EventKind::MoveSealed { by, sealed, .. } = &mut e.kind
            && viewer != Some(*by)
        {
            *sealed = None;
        }
        e
    }
}
