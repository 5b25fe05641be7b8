//! A game at rest. Between two commands a server needs none of the live board's
//! bookkeeping: [`Game::park`] keeps the referee's state as it is and packs the position
//! ([`PackedState`]), and [`ParkedGame::unpark`] rebuilds it.

use weiqi_rules::{Board, PackedState};

use super::{Created, Game, Stage};

/// A [`Game`] at rest: everything the game holds, the position packed. Unparking gives
/// back an equal game.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParkedGame(Option<Box<Created<PackedState>>>);

impl Game {
    /// This game at rest, in a fraction of the memory (see [`ParkedGame`]).
    pub fn park(self) -> ParkedGame {
        self.park_keeping_board().0
    }

    /// As [`Game::park`], handing back the live board (none before the game is created),
    /// whose storage [`ParkedGame::unpark_on`] can reuse for another game.
    pub fn park_keeping_board(self) -> (ParkedGame, Option<Board>) {
        match self.stage {
            Stage::NotCreated => (ParkedGame(None), None),
            Stage::Created(mut g) => {
                // (Grown by doubling while live: at rest, only what it holds.)
                g.move_clocks.shrink_to_fit();
                let mut board = None;
                let parked = g.with_state(|s| {
                    let (packed, b) = s.pack_keeping_board();
                    board = Some(b);
                    packed
                });
                (ParkedGame(Some(Box::new(parked))), board)
            }
        }
    }
}

impl ParkedGame {
    /// The live game again.
    pub fn unpark(self) -> Game {
        self.unpark_on(None)
    }

    /// As [`ParkedGame::unpark`], the board rebuilt in `spare`'s storage when given (a
    /// board another game gave back, of any size: see [`PackedState::unpack_on`]).
    pub fn unpark_on(self, spare: Option<Board>) -> Game {
        let stage = match self.0 {
            None => Stage::NotCreated,
            Some(g) => Stage::Created(Box::new(g.with_state(|p| match spare {
                Some(b) => p.unpack_on(b),
                None => PackedState::unpack(p),
            }))),
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
            open,
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
            open,
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
