//! The referee of matches (as gogui-twogtp): one runner, [`play_out`], for any two
//! [`Player`]s, GTP engines in child processes ([`crate::EnginePlayer`]) or players in this
//! process. Every move is checked by the rules crate, an illegal move or a failing player
//! forfeits, a resignation ends the game, a clock per move is enforced, and the end is
//! counted by area.

use std::time::{Duration, Instant};

use weiqi_rules::sgf::GameRecord;
use weiqi_rules::{Color, Policy, State};

use crate::player::{Choice, Player};
use crate::timing::Budget;

/// How the referee runs a game.
#[derive(Debug, Clone)]
pub struct MatchSettings {
    /// Plies after which a game is stopped and counted as it stands.
    pub max_moves: usize,
    /// Light random plies at the start (drawn by the referee), so that a match of
    /// deterministic players sees varied games; 0 for engines that choose their openings.
    pub opening: usize,
    /// A clock of this long for every move: each player's budget, and an answer later than
    /// this plus [`MatchSettings::lag`] loses on time. `None`: untimed (players get
    /// [`UNTIMED_BUDGET`] as their budget; engines are still bounded by their deadline).
    pub seconds_per_move: Option<Duration>,
    /// What a move may take beyond `seconds_per_move`: the pipes and process scheduling
    /// between the referee and an engine, which the engine's own clock cannot see.
    pub lag: Duration,
}

/// The budget of a move in an untimed game (a tree search given time uses it).
pub const UNTIMED_BUDGET: Duration = Duration::from_secs(1);

/// How one game ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// Both passed; the count by area (white minus black, komi included).
    Score {
        white_minus_black: f64,
    },
    Resignation,
    /// The loser played an illegal move, refused a legal one, or failed to answer.
    Forfeit(String),
    /// Stopped at the move limit and counted.
    MoveLimit {
        white_minus_black: f64,
    },
    /// The loser's move came after its time per move (and the lag margin).
    Time {
        seconds: f64,
    },
}

impl Ending {
    /// The SGF `RE` value for this ending and `winner` (`0` for a draw).
    pub fn sgf_result(&self, winner: Option<Color>) -> String {
        let Some(w) = winner else { return "0".into() };
        let how = match self {
            Ending::Score { white_minus_black } | Ending::MoveLimit { white_minus_black } => {
                format!("{}", white_minus_black.abs())
            }
            Ending::Resignation => "R".into(),
            Ending::Time { .. } => "T".into(),
            Ending::Forfeit(_) => "F".into(),
        };
        format!("{}+{how}", w.letter())
    }
}

/// One game as played: how it ended, and every move (the position is the referee's).
#[derive(Debug, Clone)]
pub struct PlayedGame {
    pub ending: Ending,
    pub winner: Option<Color>,
    pub state: State,
}

impl PlayedGame {
    fn new(ending: Ending, winner: Option<Color>, state: &State) -> PlayedGame {
        PlayedGame {
            ending,
            winner,
            state: state.clone(),
        }
    }

    /// The game as an SGF record: result, players' names and, for a forfeit, why.
    pub fn record(&self, black: &str, white: &str) -> GameRecord {
        let mut rec = GameRecord::from_state(&self.state);
        rec.result = Some(self.ending.sgf_result(self.winner));
        rec.black_player = Some(black.to_string());
        rec.white_player = Some(white.to_string());
        rec.comment = match &self.ending {
            Ending::Forfeit(why) => Some(format!("forfeit: {why}")),
            Ending::Time { seconds } => Some(format!("lost on time: {seconds:.2} s for a move")),
            Ending::MoveLimit { .. } => Some("stopped at the move limit and counted".into()),
            _ => None,
        };
        rec
    }
}

/// One game's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct GameOutcome {
    /// Whether engine A had Black.
    pub a_black: bool,
    pub winner: Option<Color>,
    pub ending: Ending,
    pub moves: usize,
}

impl GameOutcome {
    /// The winner as A or B: `Some(true)` when A won, `None` for a draw.
    pub fn a_won(&self) -> Option<bool> {
        self.winner.map(|w| (w == Color::Black) == self.a_black)
    }
}

fn winner_of(white_minus_black: f64) -> Option<Color> {
    if white_minus_black > 0.0 {
        Some(Color::White)
    } else if white_minus_black < 0.0 {
        Some(Color::Black)
    } else {
        None
    }
}

/// Plays one game between two players, from `start`: the one referee of every match
/// (`weiqi match`'s engines in child processes, the trainer's arena, in-process players).
/// A move the rules refuse, or a player that fails ([`Choice::Fail`]: an engine that
/// exits, answers `?` or no vertex, refuses a legal move), forfeits; a resignation loses;
/// a move later than its clock loses on time; the end (two passes, or `max_moves`) is
/// counted by area, with the dead stones both players name when they agree
/// ([`Player::dead_stones`]) and the rules crate's estimate otherwise.
pub fn play_out(
    black: &mut dyn Player,
    white: &mut dyn Player,
    start: State,
    m: &MatchSettings,
    rng: &mut dyn rand::RngCore,
) -> PlayedGame {
    let mut state = start;
    let budget = Budget {
        time: m.seconds_per_move.unwrap_or(UNTIMED_BUDGET),
    };
    let allowed = m.seconds_per_move.map(|t| t + m.lag);
    while !state.is_over() {
        if state.move_number() >= m.max_moves {
            break;
        }
        let color = state.to_move();
        let mv = if state.move_number() < m.opening {
            state.clone().choose_random(Policy::Light, rng)
        } else {
            let mover: &mut dyn Player = if color == Color::Black {
                &mut *black
            } else {
                &mut *white
            };
            // (Catching up and setting up are not the move's time.)
            if let Err(why) = mover.prepare(&state, color) {
                return PlayedGame::new(Ending::Forfeit(why), Some(color.opponent()), &state);
            }
            let asked = Instant::now();
            let choice = mover.genmove(&state, color, budget, false);
            if let Some(a) = allowed
                && asked.elapsed() > a
            {
                let seconds = asked.elapsed().as_secs_f64();
                return PlayedGame::new(Ending::Time { seconds }, Some(color.opponent()), &state);
            }
            match choice {
                Choice::Play(mv) => mv,
                Choice::Resign => return PlayedGame::new(Ending::Resignation, Some(color.opponent()), &state),
                Choice::Fail(why) => return PlayedGame::new(Ending::Forfeit(why), Some(color.opponent()), &state),
            }
        };
        if let Err(e) = state.play(mv) {
            let why = format!("illegal move {} by {color}: {e}", mv.to_gtp(state.board().height()));
            return PlayedGame::new(Ending::Forfeit(why), Some(color.opponent()), &state);
        }
    }
    // Both players see the whole game before it is counted (an engine that refuses the
    // last move loses, as it would have at its next one).
    if let Err(why) = black.prepare(&state, Color::Black) {
        return PlayedGame::new(Ending::Forfeit(why), Some(Color::White), &state);
    }
    if let Err(why) = white.prepare(&state, Color::White) {
        return PlayedGame::new(Ending::Forfeit(why), Some(Color::Black), &state);
    }
    let wmb = count(&state, black, white);
    let ending = if state.is_over() {
        Ending::Score { white_minus_black: wmb }
    } else {
        Ending::MoveLimit { white_minus_black: wmb }
    };
    PlayedGame::new(ending, winner_of(wmb), &state)
}

/// The count by area, with the dead stones both players name when they agree, and the
/// rules crate's estimate otherwise.
fn count(state: &State, black: &mut dyn Player, white: &mut dyn Player) -> f64 {
    let dead = match (black.dead_stones(state), white.dead_stones(state)) {
        (Some(a), Some(b)) if a == b => a,
        _ => weiqi_rules::DeadEstimate::default().estimate(state),
    };
    state
        .area_score(&dead)
        .or_else(|_| state.area_score(&[]))
        .map(|s| s.white_minus_black)
        .unwrap_or(0.0)
}

/// Wins, losses and draws of engine A, with a 95% Wilson interval on its win rate (a draw
/// counts half a win).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Tally {
    pub games: u32,
    pub a_wins: u32,
    pub b_wins: u32,
    pub draws: u32,
}

impl Tally {
    pub fn add(&mut self, o: &GameOutcome) {
        self.games += 1;
        match o.a_won() {
            Some(true) => self.a_wins += 1,
            Some(false) => self.b_wins += 1,
            None => self.draws += 1,
        }
    }

    pub fn a_win_rate(&self) -> f64 {
        if self.games == 0 {
            return 0.0;
        }
        (self.a_wins as f64 + 0.5 * self.draws as f64) / self.games as f64
    }

    /// The 95% Wilson score interval of A's win rate.
    pub fn wilson95(&self) -> (f64, f64) {
        let n = self.games as f64;
        weiqi_rating::wilson95(self.a_win_rate() * n, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use weiqi_rules::{Move, Point};

    /// A player that always answers the same: a point, or a resignation.
    struct Stubborn(Choice);

    impl Player for Stubborn {
        fn genmove(&mut self, _: &State, _: Color, _: Budget, _: bool) -> Choice {
            self.0.clone()
        }
        fn name(&self) -> String {
            "stubborn".into()
        }
    }

    /// In-process games follow the engines' rule: an illegal move forfeits (the point is
    /// taken by the second time it is played), a resignation loses, two passes count.
    #[test]
    fn in_process_games_forfeit_illegal_moves_and_lose_on_resignation() {
        let start = || State::new(5, weiqi_rules::Rules::default()).unwrap();
        let m = MatchSettings {
            max_moves: 100,
            opening: 0,
            seconds_per_move: None,
            lag: Duration::ZERO,
        };
        let mut rng = weiqi_rules::rng::SplitMix64(1);
        let point = Choice::Play(Move::Place(Point::new(2, 2)));
        let (mut a, mut b) = (Stubborn(point.clone()), Stubborn(point));
        let g = play_out(&mut a, &mut b, start(), &m, &mut rng);
        assert!(matches!(g.ending, Ending::Forfeit(_)), "{:?}", g.ending);
        assert_eq!((g.winner, g.state.move_number()), (Some(Color::Black), 1));
        let (mut a, mut b) = (Stubborn(Choice::Play(Move::Pass)), Stubborn(Choice::Resign));
        let g = play_out(&mut a, &mut b, start(), &m, &mut rng);
        assert_eq!((g.ending, g.winner), (Ending::Resignation, Some(Color::Black)));
        let (mut a, mut b) = (Stubborn(Choice::Play(Move::Pass)), Stubborn(Choice::Play(Move::Pass)));
        let g = play_out(&mut a, &mut b, start(), &m, &mut rng);
        // An empty board: White wins by komi.
        assert!(matches!(g.ending, Ending::Score { .. }) && g.winner == Some(Color::White));
    }

    #[test]
    fn sgf_results_name_the_winner_and_how() {
        let score = Ending::Score {
            white_minus_black: -3.5,
        };
        assert_eq!(score.sgf_result(Some(Color::Black)), "B+3.5");
        assert_eq!(Ending::Resignation.sgf_result(Some(Color::White)), "W+R");
        assert_eq!(Ending::Time { seconds: 1.7 }.sgf_result(Some(Color::Black)), "B+T");
        assert_eq!(Ending::Forfeit("illegal".into()).sgf_result(Some(Color::White)), "W+F");
        assert_eq!(Ending::Score { white_minus_black: 0.0 }.sgf_result(None), "0");
    }

    #[test]
    fn wilson_interval_matches_the_formula() {
        let t = Tally {
            games: 100,
            a_wins: 50,
            b_wins: 50,
            draws: 0,
        };
        let (lo, hi) = t.wilson95();
        assert!((lo - 0.4038).abs() < 1e-3 && (hi - 0.5962).abs() < 1e-3, "{lo} {hi}");
        let none = Tally {
            games: 10,
            a_wins: 0,
            b_wins: 10,
            draws: 0,
        };
        assert_eq!(none.wilson95().0, 0.0);
        assert!(none.wilson95().1 > 0.2 && none.wilson95().1 < 0.35);
    }
}
