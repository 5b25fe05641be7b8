//! PUCT search and batched self-play with stand-in evaluators (no network needed):
//! exact terminal values, visit-count targets, batching across games in flight,
//! determinism, resignation and its audit.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use rand::SeedableRng;
use rand::rngs::SmallRng;
use weiqi_rules::sgf::GameRecord;
use weiqi_rules::{Color, Move, Point, Preset, Rules, State};
use weiqi_selfplay::{
    Config, Eval, EvalError, Evaluator, Objects, PLANES, PlayPolicy, SearchConfig, UniformEvaluator, cells, play_games,
    read_shard, run_search, search,
};

/// Values a position by stones on the board (mover minus opponent), priors uniform: enough
/// knowledge for the search to see captures.
struct Material {
    area: usize,
    batches: Vec<usize>,
}

impl Evaluator for Material {
    fn evaluate(&mut self, features: &[u8], batch: usize) -> Result<Vec<Eval>, EvalError> {
        self.batches.push(batch);
        let per = PLANES * self.area;
        Ok((0..batch)
            .map(|b| {
                let f = &features[b * per..(b + 1) * per];
                let mine: i32 = f[..self.area].iter().map(|&x| x as i32).sum();
                let theirs: i32 = f[8 * self.area..9 * self.area].iter().map(|&x| x as i32).sum();
                Eval {
                    logits: vec![0.0; self.area + 1],
                    value: ((mine - theirs) as f32 / self.area as f32 * 4.0).clamp(-1.0, 1.0),
                }
            })
            .collect())
    }
}

/// Black believes it is lost once 4 stones are on the board; White believes it has won.
struct BlackDespairs {
    area: usize,
}

impl Evaluator for BlackDespairs {
    fn evaluate(&mut self, features: &[u8], batch: usize) -> Result<Vec<Eval>, EvalError> {
        let per = PLANES * self.area;
        Ok((0..batch)
            .map(|b| {
                let f = &features[b * per..(b + 1) * per];
                let stones: u32 = f[..self.area]
                    .iter()
                    .chain(&f[8 * self.area..9 * self.area])
                    .map(|&x| x as u32)
                    .sum();
                let black = f[16 * self.area] == 1;
                let v = if stones < 4 {
                    0.0
                } else if black {
                    -0.95
                } else {
                    0.95
                };
                Eval {
                    logits: vec![0.0; self.area + 1],
                    value: v,
                }
            })
            .collect())
    }
}

fn state_from(rows: &[&str], to_move: Color, rules: Rules) -> State {
    let n = rows.len() as u8;
    let mut s = State::new(n, rules).unwrap();
    // Set up by alternating play with passes, so the history is a real game's.
    let mut stones: Vec<(Color, Point)> = Vec::new();
    for (y, row) in rows.iter().enumerate() {
        for (x, c) in row.chars().enumerate() {
            let p = Point::new(x as u8, y as u8);
            match c {
                'X' => stones.push((Color::Black, p)),
                'O' => stones.push((Color::White, p)),
                _ => {}
            }
        }
    }
    for (c, p) in stones {
        s.play_color(c, Move::Place(p)).unwrap();
    }
    if s.to_move() != to_move {
        s.play_color(to_move.opponent(), Move::Pass).unwrap();
    }
    s
}

/// R7a: two passes end the game, and the search scores that end exactly. Black is far
/// ahead and White has just passed: passing wins at once, every other move only "0".
#[test]
fn search_sees_exact_terminal_results() {
    let rules = Preset::Chinese.rules().with_komi(0.5);
    let mut s = state_from(&["..XO.", "..XO.", "..XO.", "..XO.", "..XO."], Color::Black, rules);
    // Black's area is 15 to White's 10; Black fills one own point, White passes.
    s.play(Move::Place(Point::new(0, 0))).unwrap();
    s.play(Move::Pass).unwrap();
    assert_eq!(s.to_move(), Color::Black);
    let hist = vec![cells(&s, 5)];
    let cfg = SearchConfig::for_play(5, 64);
    let mut rng = SmallRng::seed_from_u64(1);
    let r = search(&s, &hist, &cfg, &mut UniformEvaluator { area: 25 }, &mut rng).unwrap();
    let black_area_wins = s.tromp_taylor_score().white_minus_black < 0.0;
    assert!(black_area_wins);
    assert_eq!(r.mv, Move::Pass, "{r:?}");
    assert!(r.value > 0.99, "the pass is an exact win: {}", r.value);
    // Visit counts as the policy target: a distribution over legal moves.
    let sum: f32 = r.policy.iter().sum();
    assert!((sum - 1.0).abs() < 1e-5);
    for (i, &p) in r.policy.iter().enumerate().take(25) {
        if p > 0.0 {
            assert!(s.is_legal(Move::Place(Point::new((i % 5) as u8, (i / 5) as u8))));
        }
    }
}

/// R4 captures: with a material evaluator the search takes the atari'd group.
#[test]
fn search_finds_the_capture() {
    let rules = Preset::Chinese.rules().with_komi(0.5);
    // White's three stones have one liberty left, at (1, 1).
    let mut s = state_from(&["XOOOX", "X.XXX", ".....", ".....", "....."], Color::White, rules);
    // White plays elsewhere (no pass, so Black's pass would not end the game).
    s.play(Move::Place(Point::new(4, 4))).unwrap();
    let hist = vec![cells(&s, 5)];
    let cfg = SearchConfig::for_play(5, 200);
    let mut rng = SmallRng::seed_from_u64(2);
    let r = search(
        &s,
        &hist,
        &cfg,
        &mut Material {
            area: 25,
            batches: vec![],
        },
        &mut rng,
    )
    .unwrap();
    assert_eq!(r.mv, Move::Place(Point::new(1, 1)), "{r:?}");
}

/// Leaves of all games in flight go to the evaluator together; every game is legal when
/// replayed from its SGF; policy targets are visit distributions; same ids, same games.
#[test]
fn batched_games_are_legal_and_deterministic() {
    let rules = Preset::Chinese.rules().with_komi(7.5);
    let mut cfg = SearchConfig::for_size(5, 16);
    cfg.in_flight = 6;
    let ids: Vec<u64> = (100..110).collect();
    let done = AtomicUsize::new(0);
    let mut ev = Material {
        area: 25,
        batches: vec![],
    };
    let games = play_games(&ids, 5, rules, &cfg, 100, true, &mut ev, &|| {
        done.fetch_add(1, Ordering::Relaxed);
    })
    .unwrap();
    assert_eq!(done.load(Ordering::Relaxed), 10);
    assert_eq!(games.len(), 10);
    assert_eq!(
        ev.batches[0], 6,
        "the first round evaluates the roots of all games in flight"
    );
    assert!(ev.batches.iter().all(|&b| b <= 6));
    let mut non_one_hot = 0;
    for (g, &id) in games.iter().zip(&ids) {
        assert_eq!(g.game_id, id);
        let rec = GameRecord::parse(g.sgf.as_ref().unwrap()).unwrap();
        let rep = rec.replay(rules).unwrap();
        assert!(rep.first_illegal.is_none());
        assert_eq!(rep.moves_applied, g.positions);
        assert!(g.scored && g.resigned.is_none());
        for i in 0..g.positions {
            let p = &g.policy[i * 26..(i + 1) * 26];
            let l = &g.legal[i * 26..(i + 1) * 26];
            assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            assert!(
                p.iter().zip(l).all(|(&p, &l)| p == 0.0 || l == 1),
                "targets only on legal moves"
            );
            non_one_hot += (p.iter().filter(|&&x| x > 0.0).count() > 1) as usize;
        }
    }
    assert!(non_one_hot > 0, "visit distributions, not one-hot moves");
    let again = materialist_games(&ids, rules, &cfg);
    for (a, b) in games.iter().zip(&again) {
        assert_eq!(a.features, b.features);
        assert_eq!(a.policy, b.policy);
        assert_eq!(a.sgf, b.sgf);
    }
}

/// The games `ids` on 5x5 against the material evaluator, with their SGF.
fn materialist_games(ids: &[u64], rules: Rules, cfg: &SearchConfig) -> Vec<weiqi_selfplay::GameData> {
    let mut ev = Material {
        area: 25,
        batches: vec![],
    };
    play_games(ids, 5, rules, cfg, 100, true, &mut ev, &|| {}).unwrap()
}

/// Self-play with Gumbel AlphaZero's root (issue 48): at 4 simulations a move (where
/// visit counts say little) every game is legal to the end, each target is a distribution
/// over legal moves with weight on moves never visited (the completed-Q improved policy),
/// and the same ids give the same games.
#[test]
fn gumbel_self_play_at_a_handful_of_simulations() {
    let rules = Preset::Chinese.rules().with_komi(7.5);
    let mut cfg = SearchConfig::for_size(5, 4);
    cfg.in_flight = 4;
    cfg.gumbel = Some(4);
    let ids: Vec<u64> = (200..206).collect();
    let games = materialist_games(&ids, rules, &cfg);
    let mut spread = 0;
    for g in &games {
        let rep = GameRecord::parse(g.sgf.as_ref().unwrap())
            .unwrap()
            .replay(rules)
            .unwrap();
        assert!(rep.first_illegal.is_none());
        assert_eq!(rep.moves_applied, g.positions);
        for i in 0..g.positions {
            let p = &g.policy[i * 26..(i + 1) * 26];
            let l = &g.legal[i * 26..(i + 1) * 26];
            assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            assert!(p.iter().zip(l).all(|(&p, &l)| p == 0.0 || l == 1));
            // Four simulations visit at most four moves; the improved policy covers all.
            spread += (p.iter().filter(|&&x| x > 0.0).count() > 4) as usize;
        }
    }
    assert!(spread > 0, "targets beyond the visited moves");
    for (a, b) in games.iter().zip(&materialist_games(&ids, rules, &cfg)) {
        assert_eq!(a.policy, b.policy);
        assert_eq!(a.sgf, b.sgf);
    }
}

/// Playout cap randomization (issue 48, KataGo's): only the moves searched fully are
/// recorded. With 16 full visits and 3 cheap ones, every recorded target is a count of
/// 16 (a multiple of 1/16, which no count of 3 is apart from 0 and 1), the recorded moves
/// are about the full fraction of the moves played, and each row's features are the
/// position before the move its move number names.
#[test]
fn playout_cap_randomization_records_only_full_searches() {
    let rules = Preset::Chinese.rules().with_komi(7.5);
    let mut cfg = SearchConfig::for_size(5, 16);
    cfg.in_flight = 4;
    cfg.playout_cap = Some(weiqi_selfplay::PlayoutCap {
        full_fraction: 0.25,
        cheap_visits: 3,
    });
    let ids: Vec<u64> = (300..312).collect();
    let games = materialist_games(&ids, rules, &cfg);
    let (mut recorded, mut played) = (0, 0);
    for g in &games {
        let rec = GameRecord::parse(g.sgf.as_ref().unwrap()).unwrap();
        let rep = rec.replay(rules).unwrap();
        assert!(rep.first_illegal.is_none());
        assert!(g.positions < rep.moves_applied, "cheap moves are not recorded");
        recorded += g.positions;
        played += rep.moves_applied;
        let mut state = State::new(5, rules).unwrap();
        let mut history = vec![cells(&state, 5)];
        let mut row = 0;
        for (k, &(_, mv)) in rep.state.moves().iter().enumerate() {
            if row < g.positions && g.move_number[row] as usize == k {
                let p = &g.policy[row * 26..(row + 1) * 26];
                assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-4);
                for &x in p {
                    let sixteenths = x * 16.0;
                    assert!((sixteenths - sixteenths.round()).abs() < 1e-3, "{p:?}");
                }
                let mut features = vec![0u8; PLANES * 25];
                let last8 = &history[history.len().saturating_sub(8)..];
                weiqi_selfplay::encode_planes(last8, state.to_move() == Color::Black, 25, &mut features);
                assert_eq!(&g.features[row * PLANES * 25..(row + 1) * PLANES * 25], &features[..]);
                row += 1;
            }
            state.play(mv).unwrap();
            history.push(cells(&state, 5));
        }
        assert_eq!(row, g.positions, "every row is a move of the game, in order");
    }
    let share = recorded as f64 / played as f64;
    assert!((0.12..0.40).contains(&share), "{recorded} of {played} recorded");
    // Deterministic like every self-play run.
    for (a, b) in games.iter().zip(&materialist_games(&ids, rules, &cfg)) {
        assert_eq!((&a.policy, &a.sgf), (&b.policy, &b.sgf));
    }
}

/// Forced playouts with policy target pruning (issue 48, KataGo's): self-play stays legal
/// and its targets stay distributions over legal moves, sharper than the raw visits
/// (pruning only takes visits away from moves other than the best).
#[test]
fn forced_playouts_keep_targets_on_legal_moves() {
    let rules = Preset::Chinese.rules().with_komi(7.5);
    let mut cfg = SearchConfig::for_size(5, 32);
    cfg.in_flight = 4;
    let ids: Vec<u64> = (400..404).collect();
    let plain = materialist_games(&ids, rules, &cfg);
    cfg.forced_playouts = true;
    let forced = materialist_games(&ids, rules, &cfg);
    let support = |games: &[weiqi_selfplay::GameData]| {
        let (mut moves, mut rows) = (0, 0);
        for g in games {
            for i in 0..g.positions {
                let p = &g.policy[i * 26..(i + 1) * 26];
                let l = &g.legal[i * 26..(i + 1) * 26];
                assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-4);
                assert!(p.iter().zip(l).all(|(&p, &l)| p == 0.0 || l == 1));
                moves += p.iter().filter(|&&x| x > 0.0).count();
                rows += 1;
            }
            let rep = GameRecord::parse(g.sgf.as_ref().unwrap())
                .unwrap()
                .replay(rules)
                .unwrap();
            assert!(rep.first_illegal.is_none());
        }
        moves as f64 / rows as f64
    };
    let (p, f) = (support(&plain), support(&forced));
    assert!(f < p, "pruned targets name fewer moves: {f:.2} against {p:.2}");
}

/// Resignation by value threshold, and the no-resign audit that measures it.
#[test]
fn resignation_and_audit() {
    let rules = Preset::Chinese.rules().with_komi(7.5);
    let mut cfg = SearchConfig::for_size(5, 8);
    cfg.resign_threshold = Some(-0.9);
    cfg.resign_audit = 0.0;
    let ids: Vec<u64> = (0..6).collect();
    let games = play_games(&ids, 5, rules, &cfg, 100, true, &mut BlackDespairs { area: 25 }, &|| {}).unwrap();
    for g in &games {
        assert_eq!(g.resigned, Some(Color::Black));
        assert_eq!(g.winner, Some(Color::White));
        assert!(!g.scored);
        assert!(g.sgf.as_ref().unwrap().contains("RE[W+R]"));
        for i in 0..g.positions {
            let black = g.features[(i * PLANES + 16) * 25] == 1;
            assert_eq!(g.value[i], if black { -1.0 } else { 1.0 });
        }
    }
    cfg.resign_audit = 1.0;
    let audited = play_games(
        &ids,
        5,
        rules,
        &cfg,
        100,
        false,
        &mut BlackDespairs { area: 25 },
        &|| {},
    )
    .unwrap();
    for g in &audited {
        assert!(g.resigned.is_none() && g.resign_audit && g.scored);
        assert_eq!(g.false_resign, g.winner != Some(Color::White));
    }
}

/// `run_search` writes shards like `run` does, with the search in the manifest.
#[test]
fn run_search_writes_shards() {
    let dir = std::env::temp_dir().join(format!("weiqi-search-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut search = SearchConfig::for_size(5, 8);
    search.resign_threshold = Some(-0.9);
    search.resign_audit = 0.5;
    let cfg = Config {
        size: 5,
        games: 8,
        seed: 3,
        policy: PlayPolicy::Light,
        rules: "chinese".into(),
        komi: 7.5,
        games_per_shard: 4,
        max_moves: 100,
        sgf: false,
        player: Some("black-despairs".into()),
        search: Some(search),
        variant: None,
        partition: Default::default(),
    };
    let evs = vec![
        Mutex::new(BlackDespairs { area: 25 }),
        Mutex::new(BlackDespairs { area: 25 }),
    ];
    let m = run_search(&cfg, &Objects::dir(&dir).unwrap(), false, &evs).unwrap();
    assert_eq!(m.games, 8);
    assert_eq!(m.results.resigned + m.results.resign_audit_games, 8);
    assert!(m.results.resigned > 0 && m.results.resign_audit_games > 0, "{m:?}");
    let mut scored = 0;
    for s in &m.shards {
        let sh = read_shard(&dir.join(&s.file)).unwrap();
        scored += sh.scored.iter().filter(|&&x| x == 1).count();
    }
    assert!(scored > 0);
    // The same seed, settings and lanes give byte-identical shards.
    let again = dir.with_extension("again");
    let _ = std::fs::remove_dir_all(&again);
    let m2 = run_search(&cfg, &Objects::dir(&again).unwrap(), false, &evs).unwrap();
    assert_eq!(m, m2);
    for s in &m.shards {
        assert_eq!(
            std::fs::read(dir.join(&s.file)).unwrap(),
            std::fs::read(again.join(&s.file)).unwrap()
        );
    }
    // The games depend on the number of lanes: a worker goes on only with the same number.
    let one = vec![Mutex::new(BlackDespairs { area: 25 })];
    let err = run_search(&cfg, &Objects::dir(&again).unwrap(), false, &one)
        .unwrap_err()
        .to_string();
    assert!(err.contains("2 search lanes, not 1"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&again);
}

/// A network that cannot evaluate: an error for the search and for the run (never a
/// search on made-up priors), and one that answers for fewer positions than it was asked.
struct Broken {
    short: bool,
}

impl Evaluator for Broken {
    fn evaluate(&mut self, _features: &[u8], batch: usize) -> Result<Vec<Eval>, EvalError> {
        if self.short {
            let one = Eval {
                logits: vec![0.0; 26],
                value: 0.0,
            };
            return Ok(vec![one; batch.saturating_sub(1)]);
        }
        Err(EvalError("tensor not readable".into()))
    }
}

#[test]
fn a_network_that_cannot_evaluate_stops_the_search() {
    let s = State::new(5, Preset::Chinese.rules()).unwrap();
    let cfg = SearchConfig::for_play(5, 8);
    let mut rng = SmallRng::seed_from_u64(1);
    let hist = vec![cells(&s, 5)];
    let err = search(&s, &hist, &cfg, &mut Broken { short: false }, &mut rng).unwrap_err();
    assert!(err.to_string().contains("tensor not readable"), "{err}");
    let short = search(&s, &hist, &cfg, &mut Broken { short: true }, &mut rng).unwrap_err();
    assert!(short.to_string().contains("0 evaluations for 1 positions"), "{short}");
    let ids: Vec<u64> = (0..3).collect();
    let rules = Preset::Chinese.rules();
    let games = play_games(&ids, 5, rules, &cfg, 100, false, &mut Broken { short: false }, &|| {});
    assert!(games.is_err());
    let dir = std::env::temp_dir().join(format!("weiqi-broken-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let config = Config {
        size: 5,
        games: 4,
        seed: 1,
        policy: PlayPolicy::Light,
        rules: "chinese".into(),
        komi: 7.5,
        games_per_shard: 2,
        max_moves: 100,
        sgf: false,
        player: None,
        search: Some(cfg),
        variant: None,
        partition: Default::default(),
    };
    let evs = [Mutex::new(Broken { short: false })];
    let run = run_search(&config, &Objects::dir(&dir).unwrap(), false, &evs);
    assert!(matches!(run, Err(weiqi_selfplay::Error::Eval(_))), "{run:?}");
}
