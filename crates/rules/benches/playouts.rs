//! Criterion benchmarks: random playouts (the headline figure), legal-move listing, perft,
//! and SGF parsing. Compare against `weiqi bench playouts` and bench/peers.sh for ratios.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use weiqi_rules::sgf::GameRecord;
use weiqi_rules::{Color, KoCheck, Move, Playout, PlayoutOptions, Point, Policy, Rules, State, perft};

fn playouts(c: &mut Criterion) {
    let mut g = c.benchmark_group("playout");
    for size in [9u8, 19] {
        for policy in [Policy::Uniform, Policy::Light] {
            let proto = State::new(size, Rules::default()).unwrap();
            // Count moves of a fixed set of games so throughput is in moves.
            let mut rng = SmallRng::seed_from_u64(7);
            let moves: usize = (0..64)
                .map(|_| proto.clone().play_random_game(policy, &mut rng, 20 * 361))
                .sum();
            g.throughput(Throughput::Elements(moves as u64 / 64));
            g.bench_function(format!("{size}x{size}/{policy:?}"), |b| {
                let mut rng = SmallRng::seed_from_u64(7);
                b.iter_batched(
                    || proto.clone(),
                    |mut s| s.play_random_game(policy, &mut rng, 20 * 361),
                    BatchSize::SmallInput,
                )
            });
        }
    }
    g.finish();
}

/// The playout runner: simple ko (search playouts) against the exact engine.
fn runner(c: &mut Criterion) {
    let mut g = c.benchmark_group("runner");
    for size in [9u8, 19] {
        for policy in [Policy::Light, Policy::Heavy] {
            for ko in [KoCheck::Simple, KoCheck::Exact] {
                let from = State::new(size, Rules::default()).unwrap();
                let opts = PlayoutOptions {
                    policy,
                    ko,
                    max_moves: 20 * 361,
                    record: false,
                };
                let mut p = Playout::new(opts);
                let mut rng = SmallRng::seed_from_u64(7);
                let moves: usize = (0..64).map(|_| p.run(&from, &mut rng)).sum();
                g.throughput(Throughput::Elements(moves as u64 / 64));
                g.bench_function(format!("{size}x{size}/{policy:?}/{ko}"), |b| {
                    b.iter(|| p.run(&from, &mut rng))
                });
            }
        }
    }
    g.finish();
}

/// Inner loops: one move choice late in a light game, the eye test, a capture.
fn inner(c: &mut Criterion) {
    let mut s = State::new(19, Rules::default()).unwrap();
    let mut rng = SmallRng::seed_from_u64(3);
    for _ in 0..300 {
        s.play_random(Policy::Light, &mut rng);
    }
    c.bench_function("inner/choose light 19x19 after 300 moves", |b| {
        b.iter(|| s.choose_random(Policy::Light, &mut rng))
    });
    let points: Vec<Point> = s.board().points().collect();
    c.bench_function("inner/eye test all 361 points", |b| {
        b.iter(|| points.iter().filter(|&&p| s.board().is_eye_of(p, Color::Black)).count())
    });
    // A capture of a 4-stone chain in atari.
    let capture = State::from_board(
        weiqi_rules::Board::from_rows(&[".....", ".xxx.", "oooox", "xxxx.", "....."]).unwrap(),
        Color::Black,
        Rules::default(),
    );
    c.bench_function("inner/play capturing 4 stones", |b| {
        b.iter_batched(
            || capture.clone(),
            |mut st| assert_eq!(st.play(Move::Place(Point::new(0, 1))).unwrap().captures, 4),
            BatchSize::SmallInput,
        )
    });
}

fn legal_moves(c: &mut Criterion) {
    let mut s = State::new(19, Rules::default()).unwrap();
    let mut rng = SmallRng::seed_from_u64(3);
    for _ in 0..150 {
        s.play_random(Policy::Light, &mut rng);
    }
    c.bench_function("legal_moves/19x19 after 150 moves", |b| {
        b.iter(|| s.legal_moves().len())
    });
}

fn perft_bench(c: &mut Criterion) {
    let s = State::new(9, Rules::default()).unwrap();
    let mut g = c.benchmark_group("perft");
    g.sample_size(10);
    g.bench_function("9x9 depth 3", |b| b.iter(|| assert_eq!(perft(&s, 3, false), 511_920)));
    g.finish();
}

fn sgf(c: &mut Criterion) {
    let mut s = State::new(19, Rules::default()).unwrap();
    let mut rng = SmallRng::seed_from_u64(5);
    s.play_random_game(Policy::Light, &mut rng, 400);
    let text = GameRecord::from_state(&s).to_sgf();
    c.bench_function("sgf/parse+replay 400 moves", |b| {
        b.iter(|| {
            GameRecord::parse(&text)
                .unwrap()
                .replay(Rules::default())
                .unwrap()
                .moves_applied
        })
    });
}

criterion_group!(benches, playouts, runner, inner, legal_moves, perft_bench, sgf);
criterion_main!(benches);
