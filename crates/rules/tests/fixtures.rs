//! The project's own fixtures: the rules checked without `../shared`.

mod common;

use weiqi_rules::sgf::GameRecord;
use weiqi_rules::{Color, Illegal, KoRule, Move, Point, Rules, State, perft};

fn load(name: &str) -> GameRecord {
    let text = std::fs::read_to_string(common::fixtures_dir().join(name)).unwrap();
    GameRecord::parse(&text).unwrap()
}

/// The final position of one of the GNU Go corpus games (komi 7.5, as they were played).
fn gnugo_end(name: &str) -> State {
    load(name).start(Rules::default().with_komi(7.5)).unwrap()
}

/// The proposal with the seki test switched off (playouts, Benson and the race rule only).
fn proposed_without_seki(state: &State) -> Vec<Point> {
    weiqi_rules::DeadEstimate {
        seki: false,
        ..Default::default()
    }
    .estimate(state)
}

/// R6: positional superko over the whole game, setup stones included; the same move is
/// legal under simple ko, and the typed reason names superko.
#[test]
fn superko_record_r6() {
    let rec = load("superko_sending_two_returning_one.sgf");
    let rep = rec.replay(Rules::default().with_komi(0.5)).unwrap();
    let (n, m, why) = rep.first_illegal.expect("move 11 repeats a position");
    assert_eq!(
        (n, m.color, m.mv, why),
        (11, Color::Black, Move::Place(Point::new(0, 0)), Illegal::Superko)
    );
    let simple = Rules::default().with_ko(KoRule::Simple);
    let rep = rec.replay(simple).unwrap();
    assert!(rep.first_illegal.is_none());
    // Under simple ko the repetition is a cycle (C7).
    assert!(rep.state.cycle_detected());
    let situational = Rules::default().with_ko(KoRule::Situational);
    // Move 11 recreates the position after move 4 with White to move both times.
    assert_eq!(
        rec.replay(situational).unwrap().first_illegal.map(|f| f.2),
        Some(Illegal::Superko)
    );
}

/// R7, R8: a finished 5x5 game ends with two passes and its area count matches RE.
#[test]
fn simple_game_r7_r8() {
    let rec = load("simple_game.sgf");
    let mut rep = rec.replay(Rules::default().with_komi(0.5)).unwrap();
    assert!(rep.first_illegal.is_none());
    assert!(rep.state.is_over());
    let s = rep.state.area_score(&[]).unwrap();
    assert_eq!(s.black + s.white, 25.0);
    // Checked by hand: Black 7 stones + 3 points, White 7 stones + 8 points, komi 0.5.
    assert_eq!((s.black, s.white), (10.0, 15.0));
    assert_eq!(Some(s.outcome.to_string()), rec.result.clone());
    assert_eq!(rep.state.play(Move::Pass), Err(Illegal::GameOver));
}

/// R2, R4-R6: perft from our own table.
#[test]
fn perft_small() {
    let text = std::fs::read_to_string(common::fixtures_dir().join("perft_small.txt")).unwrap();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let size: u8 = f[0][..1].parse().unwrap();
        let state = State::new(size, Rules::default()).unwrap();
        assert_eq!(
            perft(&state, f[2].parse().unwrap(), f[1] == "pass"),
            f[3].parse::<u64>().unwrap(),
            "{line}"
        );
    }
}

/// R4: opponent chains are captured before the mover's own chain is checked.
#[test]
fn capture_before_suicide_r4_r5() {
    let b = weiqi_rules::Board::from_rows(&[".ox..", "ox...", ".....", ".....", "....."]).unwrap();
    let mut s = State::from_board(b, Color::Black, Rules::default());
    // Black at (0,0) has no liberty of its own but captures (1,0): legal.
    let played = s.play(Move::Place(Point::new(0, 0))).unwrap();
    assert_eq!(played.captures, 1);
    // Suicide is refused (R5 default) and allowed as an option, removing the chain.
    let b = weiqi_rules::Board::from_rows(&[".o...", "o....", ".....", ".....", "....."]).unwrap();
    let s = State::from_board(b.clone(), Color::Black, Rules::default());
    assert_eq!(s.check(Move::Place(Point::new(0, 0))), Err(Illegal::Suicide));
    let rules = Rules::default().with_suicide(true).with_ko(KoRule::Situational);
    let mut s = State::from_board(b, Color::Black, rules);
    let played = s.play(Move::Place(Point::new(0, 0))).unwrap();
    assert_eq!((played.captures, played.suicided), (0, 1));
    assert_eq!(s.board().get(Point::new(0, 0)), None);
    assert_eq!(s.captures(Color::White), 1);
}

/// Every illegal reason is typed (R2, R5, R6).
#[test]
fn typed_reasons() {
    let mut s = State::new(9, Rules::default()).unwrap();
    assert_eq!(s.play(Move::Place(Point::new(9, 0))), Err(Illegal::OffBoard));
    s.play(Move::Place(Point::new(0, 0))).unwrap();
    assert_eq!(s.play_as(Color::Black, Move::Pass), Err(Illegal::NotYourTurn));
    assert_eq!(s.play(Move::Place(Point::new(0, 0))), Err(Illegal::Occupied));
    // A simple ko: Black captures at (1,0)... build it directly.
    let b = weiqi_rules::Board::from_rows(&[".xo..", "xo...", ".....", ".....", "....."]).unwrap();
    let mut s = State::from_board(b, Color::White, Rules::default());
    s.play(Move::Place(Point::new(0, 0))).unwrap(); // captures (1,0)
    assert_eq!(s.ko_point(), Some(Point::new(1, 0)));
    assert_eq!(s.check(Move::Place(Point::new(1, 0))), Err(Illegal::Ko));
    s.pass();
    s.pass();
    assert_eq!(s.check(Move::Pass), Err(Illegal::GameOver));
}

/// R9: handicap stones, White first, compensation N points under Chinese rules.
#[test]
fn handicap_r9() {
    let s = State::with_handicap(19, 3, Rules::default().with_komi(0.0)).unwrap();
    assert_eq!(s.to_move(), Color::White);
    assert_eq!(s.board().stone_counts(), [3, 0]);
    assert_eq!(s.white_bonus(), 3.0);
    // R9 example: a 3-stone game is a draw when Black has 182 points (361 - 182 = 179,
    // 179 + 3 = 182).
    let mut aga = weiqi_rules::Preset::Aga.rules();
    aga.komi = 0.5;
    let s = State::with_handicap(19, 4, aga).unwrap();
    assert_eq!(s.white_bonus(), 3.5);
    let free = [Point::new(0, 0), Point::new(5, 5)];
    let s = State::with_free_handicap(9, &free, Rules::default()).unwrap();
    assert_eq!(s.handicap(), 2);
    assert!(State::with_free_handicap(9, &[Point::new(0, 0), Point::new(0, 0)], Rules::default()).is_err());
}

/// R9: integral komi makes a draw possible.
#[test]
fn integral_komi_draw_r9() {
    let b = weiqi_rules::Board::from_rows(&["x.", "o."]).unwrap();
    let s = State::from_board(b, Color::Black, Rules::default().with_komi(0.0));
    assert_eq!(s.area_score(&[]).unwrap().outcome, weiqi_rules::Outcome::Draw);
}

/// C6, the dead-stone proposal: a close capturing race at the end of a GNU Go self-play game
/// (GNU Go 3.8 `--level 1`, the bots issue's corpus). Random play from the position loses
/// Black's lone B9 stone more often than not, but White's five stones next to it (A8-D7)
/// are lost in a large share of the playouts too: a race too close to call, so B9 is not
/// proposed dead (GNU Go calls it alive). Without the race rule it was. The settled dead
/// stones elsewhere (A2, B3, H3, H4) are proposed either way.
#[test]
fn a_close_capturing_race_is_not_conceded() {
    let state = gnugo_end("close_race_gnugo.sgf");
    let b9 = Point::from_gtp("B9", 9).unwrap();
    let proposal = weiqi_rules::DeadEstimate::default().estimate(&state);
    assert!(!proposal.contains(&b9), "{proposal:?}");
    for v in ["A2", "B3", "H3", "H4"] {
        assert!(
            proposal.contains(&Point::from_gtp(v, 9).unwrap()),
            "{v} in {proposal:?}"
        );
    }
    let without = weiqi_rules::DeadEstimate {
        race: 2.0,
        ..Default::default()
    };
    assert!(without.estimate(&state).contains(&b9));
}

/// C6, the dead-stone proposal: a lone stone in atari next to an uncertain group, at the end
/// of another game of the same corpus. Black's J4 has one liberty inside White's lower
/// right group, which random play loses in over a third of the playouts; the race rule
/// kept J4 alive for that. A chain in atari races nothing (one move takes it whoever wins
/// around it), so J4 is proposed dead, with C4: GNU Go's own list.
#[test]
fn a_stone_in_atari_is_not_in_a_race() {
    let state = gnugo_end("atari_stone_gnugo.sgf");
    let proposal = weiqi_rules::DeadEstimate::default().estimate(&state);
    // (The proposal comes sorted by row, then column.)
    let gnugo: Vec<Point> = ["C4", "J4"].iter().map(|v| Point::from_gtp(v, 9).unwrap()).collect();
    assert_eq!(proposal, gnugo);
}

/// The points of one of GNU Go's lists, in the proposal's order (row from the top, then
/// column).
fn gnugo_dead(list: &[&str]) -> Vec<Point> {
    gnugo_points(list, 9)
}

/// GNU Go's vertices on a board of `size`, in the estimate's order (row by row).
fn gnugo_points(list: &[&str], size: u8) -> Vec<Point> {
    let mut points: Vec<Point> = list.iter().map(|v| Point::from_gtp(v, size).unwrap()).collect();
    points.sort_by_key(|p| (p.y, p.x));
    points
}

/// C6: seki stones are not dead. At the end of a GNU Go 3.8 `--level 10` self-play game,
/// White's 17-stone group and Black's H8-J8-J7 share exactly four liberties (G8, H7, J6,
/// J9) and nothing else: whoever fills one first is captured first, so both live. Random
/// playouts fill them and call White's group dead; the seki rule keeps the proposal at
/// GNU Go's list (nothing dead).
#[test]
fn a_seki_of_shared_liberties_is_not_proposed_dead() {
    let state = gnugo_end("seki_shared_liberties_gnugo.sgf");
    assert_eq!(weiqi_rules::DeadEstimate::default().estimate(&state), gnugo_dead(&[]));
    assert!(proposed_without_seki(&state).contains(&Point::from_gtp("G7", 9).unwrap()));
}

/// C6: a seki where each side's liberties are points neither can fill without self-atari
/// (another game of the same corpus): Black's H8-J8 is proposed dead by the playouts
/// alone, alive with the seki rule, as GNU Go says; the seki stones are GNU Go's
/// `final_status_list seki`, both sides (White could fill G9 without self-atari, joining
/// H9 to its big chain, and then the two have the same two liberties).
#[test]
fn a_seki_of_cramped_liberties_is_not_proposed_dead() {
    let state = gnugo_end("seki_cramped_gnugo.sgf");
    assert_eq!(weiqi_rules::DeadEstimate::default().estimate(&state), gnugo_dead(&[]));
    assert!(proposed_without_seki(&state).contains(&Point::from_gtp("H8", 9).unwrap()));
    let gnugo_seki = [
        "D9", "E9", "F5", "F8", "F9", "G4", "G5", "G6", "G7", "G8", "H6", "H8", "H9", "J5", "J6", "J7", "J8",
    ];
    assert_eq!(weiqi_rules::seki_stones(state.board()), gnugo_dead(&gnugo_seki));
}

/// C6: equal liberties are a race, not a seki, when filling one captures. Black's C6 and
/// White's B5-E5 chain both have just B6 and D6, but White at D6 takes Black's D7-E7-E6
/// (in atari), so C6 is dead with them: GNU Go's list, which the proposal equals.
#[test]
fn equal_liberties_with_a_capture_are_not_a_seki() {
    let state = gnugo_end("race_not_seki_gnugo.sgf");
    assert_eq!(
        weiqi_rules::DeadEstimate::default().estimate(&state),
        gnugo_dead(&["C6", "D7", "E2", "E6", "E7", "F2"])
    );
}

/// C6: equal liberties are a race when a fill reaches an outside liberty (GNU Go 3.8
/// `--level 1`, the 9x9 corpus). Black's C3-C2-D2 and White's D3-G1 chain both have just D1
/// and E2, but White at D1 joins C1 and gains B1, so Black is the one short of liberties:
/// not a seki (GNU Go calls Black's three stones dead; the playouts alone, not the seki
/// test, still let them live).
#[test]
fn equal_liberties_with_an_outside_liberty_are_not_a_seki() {
    let state = gnugo_end("race_outside_liberty_gnugo.sgf");
    assert!(weiqi_rules::seki_stones(state.board()).is_empty());
}

/// C6: one eye against a chain that can reach an outside liberty is not a seki (the same
/// corpus). White's left-side chain has the eye A8 and the liberty A5 next to Black's A4;
/// both are self-atari for Black today, but Black at A3 joins A4 to B3-B1 first and then
/// fills A5. GNU Go calls the chain dead; the seki test does not hold it alive.
#[test]
fn one_eye_against_an_outside_liberty_is_not_a_seki() {
    let state = gnugo_end("eye_against_outside_liberty_gnugo.sgf");
    assert!(weiqi_rules::seki_stones(state.board()).is_empty());
}

/// C6: a chain shares its group's fate (GNU Go 3.8 `--level 10`, the 9x9 corpus). Black's
/// lone E3 sits in White's lower side beside F2, which shares two of its liberties; the
/// playouts lose F2 and the rest of Black's stones there in more than half of them but E3
/// in fewer, because random play lets it run. Judged with its group (the size-weighted
/// mean of the chains linked through shared liberties), E3 is dead with them, as GNU Go
/// says.
#[test]
fn a_stone_beside_a_dead_group_is_dead_with_it() {
    let state = gnugo_end("group_stone_beside_dead_gnugo.sgf");
    assert_eq!(
        weiqi_rules::DeadEstimate::default().estimate(&state),
        gnugo_dead(&["C5", "D5", "E3", "E5", "F2", "F5", "G4", "H4"])
    );
    let alone = weiqi_rules::DeadEstimate {
        groups: false,
        ..Default::default()
    };
    let e3 = Point::from_gtp("E3", 9).unwrap();
    assert!(!alone.estimate(&state).contains(&e3), "each chain alone: E3 lives");
}

/// C6: White's C2-C3 and D1 (sharing C1) and E2 (sharing E1 with D1) are one group inside
/// Black's lower left; GNU Go calls all of it dead, and so does the estimate judging the
/// group, while each chain alone leaves C2-C3 and D1 alive.
#[test]
fn chains_linked_by_shared_liberties_are_judged_together() {
    let state = gnugo_end("group_diagonal_dead_gnugo.sgf");
    let dead = gnugo_dead(&["B6", "C2", "C3", "C6", "D1", "E2"]);
    assert_eq!(weiqi_rules::DeadEstimate::default().estimate(&state), dead);
    let alone = weiqi_rules::DeadEstimate {
        groups: false,
        ..Default::default()
    };
    assert_ne!(alone.estimate(&state), dead);
}

/// C6: a chain two liberties short of its rival loses their race, however uncertain the
/// rival's group (GNU Go 3.8 `--level 1`, the 19x19 corpus). Black's B5-B6-C6 has two
/// liberties (A5, B4) inside White's lower-left corner; White's C1-C5 chain beside it has
/// four (B1-B4), and the black wall around White's corner makes random play lose that
/// chain's group in over a third of the playouts. Black cannot win that race even moving
/// first, so the three stones are dead, as GNU Go says; before the liberty count the race
/// rule kept them alive. (Their other rival, White's A6-G6 chain, has two liberties, A5
/// and G7, within the margin, but its group is lost in under 35% of the playouts, so it
/// races nothing either.)
#[test]
fn a_chain_two_liberties_short_loses_its_race() {
    let state = gnugo_end("race_lost_on_liberties_gnugo.sgf");
    let gnugo = gnugo_points(&["B5", "B6", "C6", "F1", "J9", "K9"], 19);
    assert_eq!(weiqi_rules::DeadEstimate::default().estimate(&state), gnugo);
}

/// GNU Go 19x19 at its default level 10, seed 20: Black's B18-C18-C19 in the upper left has
/// two liberties, A18 and B19, and random play captures it in most playouts. But it shares
/// A18 with Black's A15-A17, which lives (it shares A14 with the big black group, and a
/// white stone on A14 would be captured at A13). A white stone on A18 would capture
/// nothing and keep one liberty, A19, where Black takes it: the link is safe, and GNU Go
/// calls the three stones alive. Without the links they are proposed dead.
#[test]
fn a_chain_safely_linked_to_a_living_chain_lives() {
    let state = gnugo_end("link_self_atari_cut_gnugo.sgf");
    let corner = ["B18", "C18", "C19"].map(|v| Point::from_gtp(v, 19).unwrap());
    let dead = weiqi_rules::DeadEstimate::default().estimate(&state);
    assert!(corner.iter().all(|p| !dead.contains(p)), "linked: alive");
    assert_eq!(dead, gnugo_points(&["G6", "M4", "O3", "P13", "S8", "T8"], 19));
    let unlinked = weiqi_rules::DeadEstimate {
        links: false,
        ..Default::default()
    }
    .estimate(&state);
    assert!(
        corner.iter().all(|p| unlinked.contains(p)),
        "without links: proposed dead"
    );
}
