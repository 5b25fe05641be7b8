//! The game record as SGF FF[4].

use weiqi_clock::TimeControl;

use super::Created;
use crate::types::{EndReason, GameResult};

impl Created {
    /// The game record as SGF FF[4]: rules, komi, handicap, result, time settings, and the
    /// clock after every move (`BL`/`WL`, `OB`/`OW`).
    pub(super) fn to_sgf(&self) -> String {
        let mut rec = weiqi_rules::sgf::GameRecord::from_state(&self.state);
        rec.result = self.result.as_ref().map(GameResult::sgf);
        // SGF has one word for every ending without a winner, `RE[Void]`; the root comment
        // says which it was, so a reader can tell a double forfeit from a game without
        // result (C7) or one nobody joined.
        rec.comment = self.result.as_ref().and_then(|r| {
            let why = match r.reason {
                EndReason::DoubleForfeit => "Double forfeit (C4): both players lose.",
                EndReason::NoResult => "No result (C7): a repetition cycle; the game does not count.",
                EndReason::Cancelled => "Cancelled: nobody joined the game.",
                EndReason::Abandoned => "Abandoned: a player left; the one who stayed claimed a draw.",
                _ => return None,
            };
            r.winner.is_none().then(|| why.to_string())
        });
        // The variant: the seat stones are the record's AB/AW setup, the agreed komi its KM,
        // and the bids go in the root comment.
        if let [Some(host), Some(guest)] = &self.bids
            && let (Some((h, _)), Some((g, _))) = (&host.revealed, &guest.revealed)
        {
            rec.comment = Some(format!(
                "Free seat stones and agreed komi (seed 002 variant). Bids: host {}, guest {}. \
                 The higher bid plays Black and gives it as komi.",
                *h as f64 / 2.0,
                *g as f64 / 2.0
            ));
        }
        let time = self.settings.time;
        let (main, overtime) = time_limit_and_overtime(time);
        rec.time_limit = main.map(|m| m as f64 / 1000.0);
        rec.overtime = overtime;
        if main.is_some() {
            for (m, c) in rec.moves.iter_mut().zip(&self.move_clocks) {
                m.time_left = Some(c.time_left_ms as f64 / 1000.0);
                if matches!(time, TimeControl::ByoYomi { .. }) && c.time_left_ms == 0 {
                    m.overtime_left = Some(c.periods as i64);
                }
            }
        }
        rec.to_sgf()
    }
}

/// SGF `TM` (main time, ms) and `OT` (the overtime in words) of a time control.
fn time_limit_and_overtime(time: TimeControl) -> (Option<u64>, Option<String>) {
    let secs = |ms: u64| ms as f64 / 1000.0;
    match time {
        TimeControl::None => (None, None),
        TimeControl::Absolute { main_ms } => (Some(main_ms), None),
        TimeControl::Fischer {
            main_ms, increment_ms, ..
        } => (Some(main_ms), Some(format!("Fischer {} s", secs(increment_ms)))),
        TimeControl::ByoYomi {
            main_ms,
            periods,
            period_ms,
        } => (Some(main_ms), Some(format!("{periods}x{} byo-yomi", secs(period_ms)))),
        TimeControl::Canadian {
            main_ms,
            stones,
            period_ms,
        } => (Some(main_ms), Some(format!("{stones}/{} Canadian", secs(period_ms)))),
        TimeControl::GamePlusMove { main_ms, per_move_ms } => {
            (Some(main_ms), Some(format!("{} s per move", secs(per_move_ms))))
        }
    }
}
