//! A tournament driven through its decisions, as the server's director drives it (C9, C4,
//! C7; the tournament notice in seed 002's neighbour, `../shared/seeds/`).

use proptest::prelude::*;
use weiqi_game::Settings;
use weiqi_tournament::{
    BoardResult, Entrant, RoundGame, Seeding, Stage, Tournament, TournamentError, TournamentEvent, TournamentPhase,
    TournamentSettings, export,
};

fn settings(groups: u32, group_size: u32, knockout: bool) -> TournamentSettings {
    let mut game = Settings::casual(9);
    game.rules = game.rules.with_komi(7.0);
    TournamentSettings {
        name: "Club championship".into(),
        groups,
        group_size,
        game,
        seeding: Seeding::Rating,
        knockout,
        round_starts_ms: vec![],
        round_break_ms: 1_000,
        check_in_window_ms: 5_000,
    }
}

fn entrant(k: u32) -> Entrant {
    Entrant {
        player_id: format!("p{k}"),
        name: format!("Player {k}"),
        bot: false,
        // p1 the strongest.
        rating: 2000.0 - f64::from(k),
    }
}

fn game_ids(pairing_id: &str) -> String {
    format!("game-{pairing_id}")
}

/// A stored log: every decision's events appended and folded.
struct Log {
    events: Vec<TournamentEvent>,
    t: Tournament,
}

impl Log {
    fn new(s: TournamentSettings) -> Log {
        let first = Tournament::create("T1", s, "org", 0).unwrap();
        let t = Tournament::fold([&first]).unwrap();
        Log { events: vec![first], t }
    }

    fn push(&mut self, events: Result<Vec<TournamentEvent>, TournamentError>) -> Result<(), TournamentError> {
        for e in events? {
            self.t.apply(&e).unwrap();
            self.events.push(e);
        }
        Ok(())
    }

    fn register(&mut self, n: u32) {
        for k in 1..=n {
            let d = self.t.register(entrant(k));
            self.push(d).unwrap();
        }
    }

    fn advance(&mut self, now: u64) {
        let d = self.t.advance(now, &game_ids);
        self.push(d).unwrap();
    }

    /// Plays every open game with `decide`, then advances; until the end.
    fn run(&mut self, mut decide: impl FnMut(&RoundGame, Stage) -> BoardResult) {
        let mut now = 10;
        for _ in 0..100 {
            self.advance(now);
            if self.t.phase == TournamentPhase::Finished {
                return;
            }
            let open: Vec<(Stage, RoundGame)> = self
                .t
                .open_boards()
                .into_iter()
                .map(|(r, b)| (r.stage, b.clone()))
                .collect();
            for (stage, b) in open {
                now += 1;
                let d = self.t.record(&b.game_id, decide(&b, stage), false, &game_ids, now);
                self.push(d).unwrap();
            }
        }
        panic!("the tournament did not finish");
    }
}

fn number(p: &Option<String>) -> u32 {
    p.as_deref().map_or(u32::MAX, |p| p[1..].parse().unwrap())
}

/// The lower number wins.
fn stronger_wins(b: &RoundGame, _: Stage) -> BoardResult {
    if number(&b.black) < number(&b.white) {
        BoardResult::BlackWins
    } else {
        BoardResult::WhiteWins
    }
}

fn order(s: &[weiqi_tournament::Standing]) -> Vec<&str> {
    s.iter().map(|r| r.player_id.as_str()).collect()
}

/// C9: group round robin, 3/1/0, the top two of each group on to a knockout (A1-B2, B1-A2).
#[test]
fn two_groups_of_four_then_the_knockout_c9() {
    let mut log = Log::new(settings(2, 4, true));
    log.register(8);
    let d = log.t.start("org", 42, 5);
    log.push(d).unwrap();
    // Seeded by rating, snaking: A gets 1, 4, 5, 8; B gets 2, 3, 6, 7.
    assert_eq!(
        log.t.groups,
        vec![vec!["p1", "p4", "p5", "p8"], vec!["p2", "p3", "p6", "p7"]]
    );
    log.run(stronger_wins);
    let t = &log.t;
    assert_eq!(order(&t.group_standings(0)), ["p1", "p4", "p5", "p8"]);
    assert_eq!(order(&t.group_standings(1)), ["p2", "p3", "p6", "p7"]);
    assert_eq!(
        t.group_standings(0).iter().map(|s| s.points).collect::<Vec<_>>(),
        [9, 6, 3, 0]
    );
    // Three group rounds, the semi-finals and the final.
    let stages: Vec<Stage> = t.rounds.iter().map(|r| r.stage).collect();
    assert_eq!(
        stages,
        [
            Stage::Groups,
            Stage::Groups,
            Stage::Groups,
            Stage::Knockout,
            Stage::Knockout
        ]
    );
    let semi: Vec<[u32; 2]> = t.rounds[3]
        .boards
        .iter()
        .map(|b| {
            let mut p = [number(&b.black), number(&b.white)];
            p.sort();
            p
        })
        .collect();
    assert_eq!(semi, [[1, 3], [2, 4]], "A1-B2, B1-A2");
    assert_eq!(t.champion.as_deref(), Some("p1"));
    // Every group game has the tournament referee, its start and a seat kept for White.
    let r = &t.rounds[0];
    let s = t.game_settings(r, &r.boards[0]);
    assert_eq!(s.mode, weiqi_game::RefereeMode::Tournament);
    assert_eq!(s.scheduled_start, Some(r.starts_ms));
    assert_eq!(s.max_lateness_ms, 5_000, "C4's check-in window");
    assert_eq!(s.reserved_guest, r.boards[0].white);
    assert_eq!(s.rules.komi, 7.0, "group games keep the komi (draws count 1, C9)");
    // The stored events fold into the same tournament, also after a JSON round trip.
    let json = serde_json::to_string(&log.events).unwrap();
    let back: Vec<TournamentEvent> = serde_json::from_str(&json).unwrap();
    assert_eq!(&Tournament::fold(&back).unwrap(), t);
}

/// Bad input (issue 18): each a typed error, nothing changed.
#[test]
fn bad_requests_are_typed_errors() {
    let mut bad = settings(3, 4, true);
    assert!(matches!(
        Tournament::create("x", bad.clone(), "org", 0),
        Err(TournamentError::InvalidSettings(_))
    ));
    bad.groups = 2;
    bad.group_size = 1;
    assert!(matches!(
        Tournament::create("x", bad, "org", 0),
        Err(TournamentError::InvalidSettings(_))
    ));

    let mut log = Log::new(settings(2, 2, true));
    log.register(3);
    assert_eq!(
        log.t.register(entrant(2)),
        Err(TournamentError::AlreadyRegistered("p2".into()))
    );
    assert_eq!(
        log.t.start("org", 1, 5),
        Err(TournamentError::TooFewPlayers { need: 4, have: 3 })
    );
    log.register(0);
    let d = log.t.register(entrant(4));
    log.push(d).unwrap();
    assert_eq!(log.t.register(entrant(5)), Err(TournamentError::Full { capacity: 4 }));
    assert_eq!(log.t.start("p1", 1, 5), Err(TournamentError::NotOrganizer));
    assert_eq!(
        log.t.withdraw("p9", 5),
        Err(TournamentError::NotRegistered("p9".into()))
    );
    let d = log.t.start("org", 1, 5);
    log.push(d).unwrap();
    assert!(matches!(
        log.t.register(entrant(6)),
        Err(TournamentError::WrongPhase { .. })
    ));
    log.advance(6);
    assert_eq!(
        log.t
            .record("someone-elses-game", BoardResult::BlackWins, false, &game_ids, 7),
        Err(TournamentError::NotOurGame("someone-elses-game".into()))
    );
    let g = log.t.open_boards()[0].1.game_id.clone();
    let d = log.t.record(&g, BoardResult::BlackWins, false, &game_ids, 7);
    log.push(d).unwrap();
    assert_eq!(
        log.t.record(&g, BoardResult::WhiteWins, false, &game_ids, 8),
        Err(TournamentError::NotOurGame(g))
    );
}

/// The issue: a knockout game cannot end drawn. Its komi is a half point; a draw by
/// agreement is replayed with colours swapped; no result (C7) is replayed in either stage.
#[test]
fn knockout_games_have_a_half_point_komi_and_draws_are_replayed() {
    let mut log = Log::new(settings(1, 2, true));
    log.register(2);
    let d = log.t.start("org", 3, 5);
    log.push(d).unwrap();
    log.advance(6);
    // The group game: no result is replayed (C7), then a draw counts 1 each (C9).
    let (_, b) = log.t.open_boards()[0];
    let (g, black) = (b.game_id.clone(), b.black.clone());
    let d = log.t.record(&g, BoardResult::NoResult, false, &game_ids, 7);
    assert!(matches!(d.as_ref().unwrap()[1], TournamentEvent::Replayed { .. }));
    log.push(d).unwrap();
    let (_, again) = log.t.open_boards()[0];
    assert_eq!((again.attempt, &again.white), (1, &black), "colours swapped");
    let g = again.game_id.clone();
    let d = log.t.record(&g, BoardResult::Draw, false, &game_ids, 8);
    assert_eq!(d.as_ref().unwrap().len(), 1, "a group draw stands");
    log.push(d).unwrap();
    assert!(log.t.group_standings(0).iter().all(|s| s.points == 1));
    // The final: komi 7 becomes 7.5; a draw by agreement is replayed, colours swapped.
    log.advance(9);
    let (r, b) = log.t.open_boards()[0];
    assert_eq!(r.stage, Stage::Knockout);
    assert_eq!(log.t.game_settings(r, b).rules.komi, 7.5);
    let mut black = b.black.clone();
    for attempt in 0..weiqi_tournament::limits::MAX_REPLAYS {
        let (_, b) = log.t.open_boards()[0];
        assert_eq!((b.attempt, &b.black), (attempt, &black));
        let g = b.game_id.clone();
        let d = log.t.record(&g, BoardResult::Draw, false, &game_ids, 10);
        log.push(d).unwrap();
        black = log.t.open_boards()[0].1.black.clone();
    }
    // After the last replay the lots from the seed decide, and the tournament ends.
    let (_, b) = log.t.open_boards()[0];
    let g = b.game_id.clone();
    let d = log.t.record(&g, BoardResult::Draw, false, &game_ids, 11);
    log.push(d).unwrap();
    log.advance(12);
    assert_eq!(log.t.phase, TournamentPhase::Finished);
    assert!(log.t.champion.is_some());
}

/// C4: both absent, both lose; in the knockout neither goes on and the next opponent wins
/// by walkover.
#[test]
fn a_double_forfeit_in_the_semi_final_is_a_walkover_in_the_final_c4() {
    let mut log = Log::new(settings(2, 2, true));
    log.register(4);
    let d = log.t.start("org", 9, 5);
    log.push(d).unwrap();
    log.run(|b, stage| {
        let (x, y) = (number(&b.black), number(&b.white));
        if stage == Stage::Knockout && b.slot == 1 && b.game_id.contains(":r2:") {
            BoardResult::BothLose
        } else if x < y {
            BoardResult::BlackWins
        } else {
            BoardResult::WhiteWins
        }
    });
    let t = &log.t;
    let final_ = &t.rounds.last().unwrap().boards[0];
    assert!(final_.is_walkover());
    let semi_winner = t.rounds[1].boards[0].winner().cloned();
    assert_eq!(t.champion, semi_winner);
}

/// A player who withdraws after the start forfeits the rest (walkovers, `W+`/`L-` in the
/// cross table) and does not go on.
#[test]
fn withdrawing_mid_way_forfeits_the_rest() {
    let mut log = Log::new(settings(1, 4, true));
    log.register(4);
    let d = log.t.start("org", 9, 5);
    log.push(d).unwrap();
    log.advance(6);
    let d = log.t.withdraw("p1", 7);
    log.push(d).unwrap();
    log.run(stronger_wins);
    let t = &log.t;
    let s = t.group_standings(0);
    let p1 = s.iter().find(|r| r.player_id == "p1").unwrap();
    assert_eq!(p1.points, 3, "round 1 was played (p1 won), rounds 2 and 3 are forfeits");
    let walkovers = t
        .rounds
        .iter()
        .flat_map(|r| &r.boards)
        .filter(|b| b.is_walkover())
        .count();
    assert_eq!(walkovers, 2);
    assert_ne!(t.champion.as_deref(), Some("p1"));
    let csv = export::cross_table_csv(t);
    assert!(csv.lines().any(|l| l.contains(",p1,") && l.contains("L-")), "{csv}");
    let header = csv.lines().next().unwrap();
    assert_eq!(
        header,
        "group,place,player_id,name,points,wins,draws,losses,head_to_head,sonneborn_berger_x2,1,2,3,4"
    );
}

/// C9: equal points go by the game between the tied players, and that decides who
/// qualifies.
#[test]
fn head_to_head_decides_who_qualifies_c9() {
    let mut log = Log::new(settings(1, 4, false));
    log.register(4);
    let d = log.t.start("org", 9, 5);
    log.push(d).unwrap();
    // The lower number wins, except p2 beats p1 and p4 beats p2.
    log.run(|b, _| {
        let (x, y) = (number(&b.black), number(&b.white));
        let (lo, hi) = (x.min(y), x.max(y));
        let lower_wins = !matches!((lo, hi), (2, 4) | (1, 2));
        if lower_wins == (x < y) {
            BoardResult::BlackWins
        } else {
            BoardResult::WhiteWins
        }
    });
    let s = log.t.group_standings(0);
    // p1: beats 3, 4 (6); p2: beats 1, 3 (6); p3: beats 4 (3); p4: beats 2 (3). Both
    // ties go by the game between the tied players.
    assert_eq!(s.iter().map(|r| r.points).collect::<Vec<_>>(), [6, 6, 3, 3]);
    assert_eq!(order(&s), ["p2", "p1", "p3", "p4"]);
    assert_eq!(
        log.t.champion.as_deref(),
        Some("p2"),
        "one group, no knockout: the group's winner"
    );
    let json = serde_json::to_value(export::cross_table(&log.t)).unwrap();
    assert_eq!(json["groups"][0]["rows"][0]["player_id"], "p2");
    assert_eq!(
        json["groups"][0]["rows"][0]["cells"],
        serde_json::json!(["W", "*", "W", "L"])
    );
}

proptest! {
    /// Any results: every pair in a group meets once, the rounds are as many as the
    /// schedule says, and the champion came through the knockout.
    #[test]
    fn any_results_finish_the_tournament(
        groups in prop::sample::select(vec![1u32, 2, 4]),
        players in 2u32..=5,
        results in prop::collection::vec(0u8..5, 200),
        seed: u64,
    ) {
        let mut log = Log::new(settings(groups, players, true));
        log.register(groups * players);
        let d = log.t.start("org", seed, 5);
        log.push(d).unwrap();
        let mut k = 0;
        log.run(|_, _| {
            k += 1;
            [BoardResult::BlackWins, BoardResult::WhiteWins, BoardResult::Draw, BoardResult::BothLose, BoardResult::NoResult][usize::from(results[k % results.len()])]
        });
        let t = &log.t;
        for (g, members) in t.groups.iter().enumerate() {
            let games = t.group_games(g);
            let n = members.len();
            prop_assert_eq!(games.len(), n * (n - 1) / 2);
            let standings = t.group_standings(g);
            prop_assert!(standings.windows(2).all(|w| w[0].points >= w[1].points));
        }
        let knockout_rounds = t.rounds.iter().filter(|r| r.stage == Stage::Knockout).count();
        prop_assert_eq!(1usize << knockout_rounds, 2 * groups as usize);
        if let Some(c) = &t.champion {
            let last = t.rounds.last().unwrap();
            prop_assert!(last.boards.iter().any(|b| b.black.as_ref() == Some(c) || b.white.as_ref() == Some(c)));
        }
    }
}
