//! A game at rest. Between two commands a server needs none of the live board's
//! bookkeeping: [`Game::park`] keeps the referee's state as it is and packs the position
//! ([`PackedState`]), and [`ParkedGame::unpark`] rebuilds it.

use weiqi_rules::{PackedState, State};

use super::{Created, Game, Stage};

/// A [`Game`] at rest: everything the game holds, the position packed. Unparking gives
/// back an equal game.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParkedGame(Option<Box<Created<PackedState>>>);

impl Game {
    /// This game at rest, in a fraction of the memory (see [`ParkedGame`]).
    pub fn park(self) -> ParkedGame {
        match self.stage {
            Stage::NotCreated => ParkedGame(None),
            Stage::Created(mut g) => {
                // (Grown by doubling while live: at rest, only what it holds.)
                g.move_clocks.shrink_to_fit();
                ParkedGame(Some(Box::new(g.with_state(State::pack))))
            }
        }
    }
}

impl ParkedGame {
    /// The live game again.
    pub fn unpark(self) -> Game {
        let stage = match self.0 {
            None => Stage::NotCreated,
            Some(g) => Stage::Created(Box::new(g.with_state(PackedState::unpack))),
        };
        Game { stage }
    }

    /// Heap bytes of the packed position (moves, keys and stones; the referee's own
    /// bookkeeping aside).
    pub fn position_bytes(&self) -> usize {
        self.0.as_ref().map_or(0, |g| g.state.heap_bytes())
    }
}

impl<P> Created<P> {
    /// The same game with its position turned into another form.
    fn with_state<Q>(self, f: impl FnOnce(P) -> Q) -> Created<Q> {
        let Created {
            settings,
            state,
            clock,
            phase,
            seq,
            last_at,
            black,
            players,
            nigiri_commitment,
            nigiri_guess,
            checked_in,
            warnings,
            pending_undo,
            pending_draw,
            proposal,
            accepted,
            sealed,
            result,
            repetitions,
            last_announced,
            move_clocks,
            seat_stones,
            bids,
            step_at,
        } = self;
        Created {
            settings,
            state: f(state),
            clock,
            phase,
            seq,
            last_at,
            black,
            players,
            nigiri_commitment,
            nigiri_guess,
            checked_in,
            warnings,
            pending_undo,
            pending_draw,
            proposal,
            accepted,
            sealed,
            result,
            repetitions,
            last_announced,
            move_clocks,
            seat_stones,
            bids,
            step_at,
        }
    }
}
