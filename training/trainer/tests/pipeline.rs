//! `weiqi loop` on a tiny run (feature `tch`, issue 19): generations play, train, gate and
//! meet the fixed players; the record, the checkpoints and the report are where the layout
//! says; a loop killed in the middle of a step goes on to the same record; more
//! generations extend a finished run.
#![cfg(feature = "tch")]

use weiqi_trainer::generations::{LoopConfig, LoopState, Step};
use weiqi_trainer::pipeline::run;

fn config(generations: u32) -> LoopConfig {
    LoopConfig {
        size: 5,
        komi: 0.5,
        rules: "chinese".into(),
        generations,
        games: 12,
        visits: 4,
        window: 2,
        steps: 20,
        batch: 32,
        lr: 2e-3,
        lr_schedule: weiqi_trainer::schedule::LrSchedule::Constant,
        blocks: 1,
        channels: 8,
        gate_games: 4,
        gate_visits: 4,
        promote_at: 0.55,
        anchor_games: 2,
        gtp_anchors: vec![],
        threads: 1,
        seed: 7,
        gumbel: None,
        playout_cap: None,
        forced_playouts: false,
        global_pooling: false,
        score_head: false,
        opponent_head: false,
        teacher: None,
    }
}

#[test]
fn generations_play_train_gate_and_resume() {
    let dir = std::env::temp_dir().join(format!("weiqi-loop-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let state = run(&dir, &config(3), weiqi_trainer::device::for_tests(), false).unwrap();
    assert_eq!(state.generations.len(), 3);
    let mut best: Option<u32> = None;
    for g in &state.generations {
        assert_eq!(g.step(), Step::Done);
        let sp = g.selfplay.as_ref().unwrap();
        assert_eq!(sp.games, 12);
        // Each generation plays with the best network before it (light playouts first).
        let player = best.map_or("light".to_string(), |b| format!("gen={b}"));
        assert_eq!(sp.player, player);
        if g.promoted == Some(true) {
            best = Some(g.number);
        }
        let t = g.training.as_ref().unwrap();
        assert_eq!(
            t.data,
            (g.number.saturating_sub(1)..=g.number).collect::<Vec<_>>(),
            "a window of two"
        );
        assert_eq!(g.gate.is_some(), g.number > 0, "generation 0 has no gate");
        let anchors = g.anchors.as_ref().unwrap();
        assert_eq!(
            anchors.iter().map(|r| r.b.as_str()).collect::<Vec<_>>(),
            ["uniform", "light"]
        );
        assert!(anchors.iter().all(|r| r.games == 2));
        let folder = dir.join(format!("gen={}", g.number));
        assert!(folder.join("model.safetensors").exists() && folder.join("model.json").exists());
        assert!(folder.join("selfplay/manifest.json").exists());
    }
    assert_eq!(state.best, best);
    if let Some(r) = &state.generations[1].gate {
        assert_eq!((r.a.as_str(), r.b.as_str(), r.games), ("gen=1", "gen=0", 4));
        assert_eq!(state.generations[1].promoted, Some(r.a_rate >= 0.55));
    }
    for f in ["losses.svg", "gates.svg", "elo.svg", "elo.json"] {
        assert!(dir.join("report").join(f).exists(), "{f}");
    }
    assert_eq!(state.elo().len(), 2 + 3);

    // Killed during the last generation's gate: its entries from the gate on are gone. The
    // loop plays the gate again, to the same result (seeded), and ends where it ended.
    let mut cut: LoopState = serde_json::from_slice(&std::fs::read(dir.join("loop.json")).unwrap()).unwrap();
    let last = cut.generations.last_mut().unwrap();
    last.gate = None;
    last.promoted = None;
    last.anchors = None;
    cut.best = state.generations[..2]
        .iter()
        .rev()
        .find(|g| g.promoted == Some(true))
        .map(|g| g.number);
    cut.save(&dir).unwrap();
    let again = run(&dir, &config(3), weiqi_trainer::device::for_tests(), false).unwrap();
    assert_eq!(
        again.generations.last().unwrap().gate,
        state.generations.last().unwrap().gate
    );
    assert_eq!(again.best, state.best);

    // Other settings are refused, naming the record; more generations go on.
    let mut other = config(3);
    other.visits = 8;
    let err = run(&dir, &other, weiqi_trainer::device::for_tests(), false)
        .unwrap_err()
        .to_string();
    assert!(err.contains("loop.json"), "{err}");
    let more = run(&dir, &config(4), weiqi_trainer::device::for_tests(), false).unwrap();
    assert_eq!(more.generations.len(), 4);
    assert_eq!(more.generations[..3], again.generations[..]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The loop with issue 48's options: KataGo's (playout cap randomization, forced
/// playouts, global pooling, the score and opponent-reply heads) with the tree search as generation 0's
/// teacher, and, in a second run, Gumbel's root with the
/// playout cap and the cosine learning-rate schedule. Two generations each play, train and gate; the record and the checkpoint
/// say which options they ran with; a loop killed in the last gate goes on to the same
/// record; and the options are settings of the run (another is refused).
#[test]
fn a_loop_with_the_new_options_resumes_after_a_kill() {
    let katago = LoopConfig {
        playout_cap: Some(weiqi_selfplay::PlayoutCap {
            full_fraction: 0.5,
            cheap_visits: 2,
        }),
        forced_playouts: true,
        global_pooling: true,
        score_head: true,
        opponent_head: true,
        teacher: Some(32),
        ..config(2)
    };
    let gumbel = LoopConfig {
        gumbel: Some(4),
        playout_cap: katago.playout_cap,
        lr_schedule: weiqi_trainer::schedule::LrSchedule::Cosine,
        ..config(2)
    };
    for (name, cfg) in [("katago", katago), ("gumbel", gumbel)] {
        let dir = std::env::temp_dir().join(format!("weiqi-loop-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let state = run(&dir, &cfg, weiqi_trainer::device::for_tests(), false).unwrap();
        assert!(state.generations.iter().all(|g| g.step() == Step::Done));
        let first = state.generations[0].selfplay.as_ref().unwrap();
        assert_eq!(first.player, if cfg.teacher.is_some() { "mcts:32" } else { "light" });
        let sp = state.generations[1].selfplay.as_ref().unwrap();
        assert_eq!(sp.player, "gen=0");
        assert_eq!(sp.games, 12);
        let record = std::fs::read_to_string(dir.join("loop.json")).unwrap();
        assert!(record.contains("cheap_visits"), "{record}");
        assert_eq!(
            record.contains(r#""lr_schedule": "cosine""#),
            !cfg.lr_schedule.is_constant(),
            "{record}"
        );
        let net = std::fs::read_to_string(dir.join("gen=1/model.json")).unwrap();
        assert_eq!(net.contains("global_pooling"), cfg.global_pooling, "{net}");
        assert_eq!(net.contains("opponent_head"), cfg.opponent_head, "{net}");
        if cfg.opponent_head {
            let losses = &state.generations[1].training.as_ref().unwrap().losses;
            assert!(losses.iter().all(|l| l.opponent > 0.0), "{losses:?}");
        }
        assert!(state.generations[1].gate.is_some());

        let mut cut: LoopState = serde_json::from_str(&record).unwrap();
        let last = cut.generations.last_mut().unwrap();
        (last.gate, last.promoted, last.anchors) = (None, None, None);
        cut.best = Some(0);
        cut.save(&dir).unwrap();
        let again = run(&dir, &cfg, weiqi_trainer::device::for_tests(), false).unwrap();
        let (a, b) = (again.generations.last().unwrap(), state.generations.last().unwrap());
        assert_eq!(
            (&a.gate, a.promoted, &a.anchors),
            (&b.gate, b.promoted, &b.anchors),
            "{name}"
        );
        assert_eq!(again.best, state.best);

        let plain = config(2);
        let err = run(&dir, &plain, weiqi_trainer::device::for_tests(), false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("loop.json"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
