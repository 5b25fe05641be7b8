//! The hybrid engine's network side (issue 48): what a network tells the tree search of
//! [`crate::MctsPlayer`] about a position. The search stays the playout search; a node
//! that has earned enough visits asks its advisor once, gets the network's move
//! probabilities as virtual wins on its children (as Pachi adds its DCNN's priors), and
//! its value is mixed with the playouts' results below it (AlphaGo's mixing).
//!
//! The advisor is a trait so that this crate needs no network library: the trainer
//! implements it over its libtorch network.

use weiqi_rules::State;

/// A network's view of one position.
#[derive(Debug, Clone, PartialEq)]
pub struct Advice {
    /// A probability per move, N*N+1 of them (points row by row from the top, the pass
    /// last), over the legal moves.
    pub priors: Vec<f32>,
    /// The expected result in [-1, 1] from the view of the player to move.
    pub value: f32,
}

/// Evaluates positions for the search; one per search thread.
pub trait Advisor: Send {
    /// The advice for the player to move in `state`; an error stops the advice (the
    /// search goes on with playouts alone, and the player reports the failure).
    fn advise(&mut self, state: &State) -> Result<Advice, String>;
}

/// How the hybrid search uses its advisors.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HybridSettings {
    /// A node is advised once its simulations reach this many (the root at once): a
    /// network evaluation costs as much as dozens of playouts, so only nodes the search
    /// keeps returning to are worth one.
    pub advice_visits: u32,
    /// The network's share in a simulation's result, against the playout's (AlphaGo's
    /// lambda: 0.5); its value is that of the deepest advised node on the path.
    pub value_weight: f32,
    /// Virtual wins given to the network's favourite move at a node; the others get their
    /// probability's share of it.
    pub prior_visits: f32,
}

impl Default for HybridSettings {
    fn default() -> HybridSettings {
        HybridSettings {
            advice_visits: 8,
            value_weight: 0.5,
            prior_visits: 40.0,
        }
    }
}

impl HybridSettings {
    /// Refuses settings the search cannot use, naming the setting.
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.value_weight) {
            return Err(format!("value weight {}: a share in 0..=1", self.value_weight));
        }
        if !(self.prior_visits.is_finite() && self.prior_visits >= 0.0) {
            return Err(format!("prior visits {}: 0 or more", self.prior_visits));
        }
        Ok(())
    }
}

/// Black's share of a simulation's result: the playout's (`black_playout`, 1 won, 0
/// lost, 0.5 drawn) mixed with the network's value of the deepest advised position on
/// the path (`advised`: the value from the view of its player to move, and whether that
/// player is Black).
pub(crate) fn mixed_result(black_playout: f32, advised: Option<(f32, bool)>, weight: f32) -> f32 {
    match advised {
        Some((value, black_to_move)) => {
            let black_value = if black_to_move {
                (1.0 + value) / 2.0
            } else {
                (1.0 - value) / 2.0
            };
            (1.0 - weight) * black_playout + weight * black_value
        }
        None => black_playout,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_network_value_is_mixed_from_blacks_view() {
        // No advice: the playout alone.
        assert_eq!(mixed_result(1.0, None, 0.5), 1.0);
        // White to move thinks it is winning (value 0.6: Black's share 0.2); the playout
        // was Black's win: half and half gives 0.6.
        assert!((mixed_result(1.0, Some((0.6, false)), 0.5) - 0.6).abs() < 1e-6);
        // Black to move, sure of its win; the playout lost: a quarter weight gives 0.25.
        assert!((mixed_result(0.0, Some((1.0, true)), 0.25) - 0.25).abs() < 1e-6);
    }

    #[test]
    fn settings_are_checked() {
        assert!(HybridSettings::default().validate().is_ok());
        let bad = HybridSettings {
            value_weight: 1.5,
            ..HybridSettings::default()
        };
        assert!(bad.validate().unwrap_err().contains("value weight"));
    }
}
