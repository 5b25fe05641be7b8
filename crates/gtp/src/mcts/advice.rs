//! The hybrid engine's side of the tree search (`crate::hybrid`): each search thread's
//! advisor, and how an advised node takes the network's priors and value.

use weiqi_rules::{Move, State};

use super::{ROOT, Tree};
use crate::hybrid::{Advisor, HybridSettings};

/// One search thread's advisor and why it stopped advising, if it did.
pub(super) struct AdvisorSlot {
    pub(super) advisor: Box<dyn Advisor>,
    pub(super) failed: Option<String>,
}

/// What a simulation of the hybrid search needs: its thread's advisor and the settings.
pub(super) struct Advising<'a> {
    pub(super) slot: &'a mut AdvisorSlot,
    pub(super) settings: HybridSettings,
}

impl Tree {
    /// Asks the advisor about `node` (at `state`) once it is expanded and has earned its
    /// advice: the network's probabilities become virtual wins on its children (the
    /// favourite gets `prior_visits`), its value is kept for the simulations below.
    pub(super) fn advise(&mut self, node: u32, state: &State, advising: &mut Advising<'_>) {
        let nd = &self.nodes[node as usize];
        let earned = node == ROOT || nd.visits >= advising.settings.advice_visits;
        if advising.slot.failed.is_some() || !nd.expanded || !nd.net_value.is_nan() || !earned {
            return;
        }
        let advice = match advising.slot.advisor.advise(state) {
            Ok(a) => a,
            Err(e) => {
                advising.slot.failed = Some(e);
                return;
            }
        };
        let (first, count) = (nd.first as usize, nd.count as usize);
        let area = state.board().area() as usize;
        let width = state.board().width() as usize;
        let prior = |mv: Move| {
            let i = match mv {
                Move::Place(p) => p.y as usize * width + p.x as usize,
                Move::Pass => area,
            };
            advice
                .priors
                .get(i)
                .copied()
                .filter(|p| p.is_finite())
                .unwrap_or(0.0)
                .max(0.0)
        };
        let top = self.nodes[first..first + count]
            .iter()
            .map(|c| prior(c.mv))
            .fold(0.0f32, f32::max);
        if top > 0.0 {
            for child in &mut self.nodes[first..first + count] {
                let v = (advising.settings.prior_visits * prior(child.mv) / top).round();
                child.amaf_visits += v as u32;
                child.amaf_wins += v;
            }
        }
        let value = if advice.value.is_finite() {
            advice.value.clamp(-1.0, 1.0)
        } else {
            0.0
        };
        self.nodes[node as usize].net_value = value;
    }
}
