//! The self-play driver: many games searched at once, so that the leaves of all games in
//! flight go to the evaluator as one batch; playout cap randomization decides per move
//! whether a search is full (and recorded) or cheap.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use weiqi_rules::{Color, Rules, State};

use super::{EvalError, Evaluator, Leaf, SearchConfig, Tree, checked};
use crate::play::{GameData, Recorder};

/// A game being played by [`play_games`].
struct Live {
    slot: usize,
    state: State,
    rec: Recorder,
    rng: SmallRng,
    tree: Tree,
    audit: bool,
    /// First player whose searched value fell below the threshold in an audit game.
    would_resign: Option<Color>,
    resigned: Option<Color>,
    /// Whether the move being searched is a full search (recorded) or a cheap one, drawn
    /// as its search begins (playout cap randomization); None between moves.
    full: Option<bool>,
}

/// The settings of one move's search: `cfg` for a full search; for a cheap one (playout
/// cap randomization), the cap's visits without root noise or forced playouts. A cheap
/// Gumbel search keeps its Gumbel noise: it is its only way of varying the move (PUCT's
/// cheap moves keep the sampling temperature instead), and it is not a target.
fn move_config(cfg: &SearchConfig, full: bool) -> SearchConfig {
    match cfg.playout_cap {
        Some(cap) if !full => SearchConfig {
            visits: cap.cheap_visits,
            dirichlet_alpha: if cfg.gumbel.is_some() { cfg.dirichlet_alpha } else { 0.0 },
            forced_playouts: false,
            ..*cfg
        },
        _ => *cfg,
    }
}

/// Plays the games `ids` (each seeded by its id) with PUCT search, `cfg.in_flight` at a
/// time; every round sends one leaf per game in flight to `eval` as one batch. `done` is
/// called as each game ends. The games come back in the order of `ids`.
#[allow(clippy::too_many_arguments)]
pub fn play_games<E: Evaluator + ?Sized>(
    ids: &[u64],
    size: u8,
    rules: Rules,
    cfg: &SearchConfig,
    max_moves: usize,
    sgf: bool,
    eval: &mut E,
    done: &(dyn Fn() + Sync),
) -> Result<Vec<GameData>, EvalError> {
    let n = size as usize;
    let area = n * n;
    let mut out: Vec<Option<GameData>> = (0..ids.len()).map(|_| None).collect();
    let mut queue = ids.iter().copied().enumerate();
    let mut live: Vec<Live> = Vec::new();
    let mut features: Vec<u8> = Vec::new();
    let mut waiting: Vec<(usize, Leaf)> = Vec::new();
    loop {
        while live.len() < cfg.in_flight.max(1) {
            let Some((slot, id)) = queue.next() else { break };
            let mut state = State::new(size, rules).expect("size checked by the caller");
            state.reserve(max_moves.min(4 * area));
            let mut rng = SmallRng::seed_from_u64(id);
            let audit = cfg.resign_threshold.is_some() && rng.random::<f64>() < cfg.resign_audit;
            live.push(Live {
                slot,
                rec: Recorder::new(&state, id),
                state,
                rng,
                tree: Tree::new(),
                audit,
                would_resign: None,
                resigned: None,
                full: None,
            });
        }
        if live.is_empty() {
            break;
        }
        // Advance every game to its next leaf, playing moves whose search is complete.
        features.clear();
        waiting.clear();
        let mut k = 0;
        while k < live.len() {
            match advance(&mut live[k], cfg, max_moves) {
                Some(leaf) => {
                    features.extend_from_slice(&leaf.features);
                    waiting.push((k, leaf));
                    k += 1;
                }
                None => {
                    let g = live.swap_remove(k);
                    let mut d = g.rec.finish(&g.state, g.resigned, sgf);
                    d.resign_audit = g.audit;
                    d.false_resign = match g.would_resign {
                        Some(c) => d.winner != Some(c.opponent()),
                        None => false,
                    };
                    out[g.slot] = Some(d);
                    done();
                }
            }
        }
        if waiting.is_empty() {
            continue;
        }
        let evals = checked(eval.evaluate(&features, waiting.len()), waiting.len())?;
        for ((k, leaf), e) in waiting.drain(..).zip(evals) {
            let g = &mut live[k];
            let root = leaf.node == 0;
            let mcfg = move_config(cfg, g.full != Some(false));
            g.tree
                .expand(leaf, &e, &mcfg, if root { Some(&mut g.rng) } else { None });
        }
    }
    Ok(out.into_iter().map(|d| d.expect("every game finished")).collect())
}

/// Runs simulations until one needs an evaluation; plays the move when the search is
/// done, recording the position when the search was a full one. None when the game is
/// over.
fn advance(g: &mut Live, cfg: &SearchConfig, max_moves: usize) -> Option<Leaf> {
    let n = g.state.board().width() as usize;
    loop {
        if g.resigned.is_some() || g.state.is_over() || g.state.move_number() >= max_moves {
            return None;
        }
        let full = *g
            .full
            .get_or_insert_with(|| cfg.playout_cap.is_none_or(|c| g.rng.random::<f64>() < c.full_fraction));
        let mcfg = move_config(cfg, full);
        if g.tree.done(mcfg.visits) {
            let sample = g.state.move_number() < cfg.temperature_plies;
            let r = g.tree.result(n, &mcfg, if sample { Some(&mut g.rng) } else { None });
            if let Some(t) = cfg.resign_threshold
                && r.value < t
            {
                if !g.audit {
                    g.resigned = Some(g.state.to_move());
                    return None;
                }
                g.would_resign.get_or_insert(g.state.to_move());
            }
            if full {
                g.rec.begin(&g.state);
                g.rec.end(&g.state, r.mv, Some(&r.policy));
            }
            g.state.play(r.mv).expect("searched moves are legal");
            g.rec.push(&g.state);
            g.tree = Tree::new();
            g.full = None;
            continue;
        }
        if let Some(leaf) = g.tree.select(&g.state, g.rec.history(), &mcfg, max_moves) {
            return Some(leaf);
        }
    }
}
