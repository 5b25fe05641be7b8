//! A group's standings (C9): a win 3 points, a draw 1, a loss or forfeit 0; ties broken by
//! the head-to-head result, then (documented here, as C9 leaves it open) Sonneborn-Berger,
//! then the draw's order.
//!
//! Head-to-head among more than two tied players is the mini-league of their games with
//! each other (points scored against the tied players only). A circle (A beats B, B beats
//! C, C beats A) ties it; Sonneborn-Berger (the points of the opponents a player beat, and
//! half those of the ones they drew) breaks most of those; what is still tied goes by the
//! order of the published draw.

use serde::{Deserialize, Serialize};

/// How a game counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoardResult {
    BlackWins,
    WhiteWins,
    Draw,
    /// Both forfeit (C4: both absent past the allowed lateness): both lose.
    BothLose,
    /// No result (C7: a repetition cycle under simple ko): the game is played again, and
    /// counts for nothing.
    NoResult,
}

pub const WIN: u32 = 3;
pub const DRAW: u32 = 1;

impl BoardResult {
    /// Points for Black and White.
    pub fn points(self) -> (u32, u32) {
        match self {
            BoardResult::BlackWins => (WIN, 0),
            BoardResult::WhiteWins => (0, WIN),
            BoardResult::Draw => (DRAW, DRAW),
            BoardResult::BothLose | BoardResult::NoResult => (0, 0),
        }
    }
}

/// A finished game between two players of a group.
#[derive(Debug, Clone, PartialEq)]
pub struct Played<'a> {
    pub black: &'a str,
    pub white: &'a str,
    pub outcome: BoardResult,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Standing {
    pub player_id: String,
    /// 1-based; every player has their own place.
    pub place: u32,
    pub played: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    pub points: u32,
    /// Points in the games among the players tied with this one on points.
    pub head_to_head: u32,
    /// Sonneborn-Berger, doubled (whole numbers: beaten opponents' points twice, drawn
    /// ones' once).
    pub sonneborn_berger_x2: u32,
}

/// The standings of a group whose players are `players` (in the draw's order) after
/// `games`.
pub fn standings(players: &[String], games: &[Played<'_>]) -> Vec<Standing> {
    let idx = |id: &str| players.iter().position(|p| p == id);
    let n = players.len();
    let mut rows: Vec<Standing> = players
        .iter()
        .map(|p| Standing {
            player_id: p.clone(),
            place: 0,
            played: 0,
            wins: 0,
            draws: 0,
            losses: 0,
            points: 0,
            head_to_head: 0,
            sonneborn_berger_x2: 0,
        })
        .collect();
    // (points of i against j, for the head-to-head and Sonneborn-Berger)
    let mut against = vec![vec![None::<u32>; n]; n];
    for g in games {
        let (Some(b), Some(w)) = (idx(g.black), idx(g.white)) else {
            continue;
        };
        if g.outcome == BoardResult::NoResult {
            continue;
        }
        let (pb, pw) = g.outcome.points();
        for (i, j, p) in [(b, w, pb), (w, b, pw)] {
            let r = &mut rows[i];
            r.played += 1;
            r.points += p;
            match p {
                WIN => r.wins += 1,
                DRAW => r.draws += 1,
                _ => r.losses += 1,
            }
            against[i][j] = Some(against[i][j].unwrap_or(0) + p);
        }
    }
    for i in 0..n {
        let mut sb = 0;
        let mut h2h = 0;
        for j in 0..n {
            let Some(p) = against[i][j] else { continue };
            sb += match p {
                WIN => 2 * rows[j].points,
                DRAW => rows[j].points,
                _ => 0,
            };
            if rows[j].points == rows[i].points {
                h2h += p;
            }
        }
        rows[i].sonneborn_berger_x2 = sb;
        rows[i].head_to_head = h2h;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&rows[a], &rows[b]);
        (y.points, y.head_to_head, y.sonneborn_berger_x2)
            .cmp(&(x.points, x.head_to_head, x.sonneborn_berger_x2))
            .then(a.cmp(&b))
    });
    let mut out: Vec<Standing> = order.into_iter().map(|i| rows[i].clone()).collect();
    for (k, r) in out.iter_mut().enumerate() {
        r.place = k as u32 + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("p{i}")).collect()
    }

    fn g<'a>(black: &'a str, white: &'a str, outcome: BoardResult) -> Played<'a> {
        Played { black, white, outcome }
    }

    /// C9: 3 for a win, 1 for a draw, 0 for a loss or a forfeit; equal points go by the
    /// game between the tied players.
    #[test]
    fn points_then_head_to_head_c9() {
        use BoardResult::*;
        let p = ids(4);
        let games = [
            g("p0", "p1", WhiteWins), // p1 beats p0
            g("p2", "p3", Draw),
            g("p0", "p2", BlackWins),
            g("p1", "p3", BlackWins),
            g("p3", "p0", WhiteWins),
            g("p2", "p1", BlackWins),
        ];
        let s = standings(&p, &games);
        let by = |id: &str| s.iter().find(|r| r.player_id == id).unwrap().clone();
        assert_eq!((by("p0").points, by("p1").points), (6, 6));
        assert_eq!((by("p2").points, by("p3").points), (4, 1));
        // p0 and p1 tied on 6: p1 won their game.
        let order: Vec<&str> = s.iter().map(|r| r.player_id.as_str()).collect();
        assert_eq!(order, ["p1", "p0", "p2", "p3"]);
        assert_eq!((s[0].head_to_head, s[1].head_to_head), (3, 0));
    }

    #[test]
    fn a_circle_goes_to_sonneborn_berger_then_the_draw() {
        use BoardResult::*;
        let p = ids(4);
        // p0 > p1 > p2 > p0; each beats p3.
        let games = [
            g("p0", "p1", BlackWins),
            g("p1", "p2", BlackWins),
            g("p2", "p0", BlackWins),
            g("p0", "p3", BlackWins),
            g("p1", "p3", BlackWins),
            g("p2", "p3", BlackWins),
        ];
        let s = standings(&p, &games);
        assert!(
            s[..3]
                .iter()
                .all(|r| r.points == 6 && r.head_to_head == 3 && r.sonneborn_berger_x2 == 12)
        );
        let order: Vec<&str> = s.iter().map(|r| r.player_id.as_str()).collect();
        assert_eq!(order, ["p0", "p1", "p2", "p3"], "the draw's order last");
    }

    #[test]
    fn both_forfeiting_is_a_loss_for_both_c4() {
        let p = ids(2);
        let s = standings(&p, &[g("p0", "p1", BoardResult::BothLose)]);
        assert!(s.iter().all(|r| r.points == 0 && r.losses == 1));
    }
}
