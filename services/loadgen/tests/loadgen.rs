//! The load generator against a real server in this process: it reports errors instead
//! of stopping at the first, and `--compare` measures its references and a move's floor.

/// A server on a loopback port with its own data directory, changed by `tune`.
async fn server(name: &str, tune: impl FnOnce(&mut weiqi_server::ServerConfig)) -> weiqi_server::Running {
    let dir = std::env::temp_dir().join(format!("weiqi-loadgen-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cfg = weiqi_server::ServerConfig::load(None).unwrap();
    cfg.listen = "127.0.0.1:0".into();
    cfg.metrics_listen = String::new();
    cfg.web_listen = String::new();
    cfg.data_dir = dir;
    tune(&mut cfg);
    weiqi_server::start(cfg).await.unwrap()
}

/// Runs the load generator with `args` against `addr` and parses its `--json` line.
async fn loadgen(addr: String, args: &[&str]) -> serde_json::Value {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_weiqi-loadgen"))
            .args(["--addr", &addr, "--json"])
            .args(args)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap()
}

/// A server whose per-client quota lets only 5 of 12 games be created. (At 20,000 games on
/// 8 connections, an h2 GOAWAY once ended the whole run with "broken pipe".) With
/// `--retry` too: the published policy retries UNAVAILABLE only, so a quota's refusals are
/// still counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setup_failures_are_counted_and_the_run_goes_on() {
    let server = server("errors", |cfg| {
        cfg.limits.creates_per_minute = 1;
        cfg.limits.create_burst = 5;
    })
    .await;
    let addr = format!("http://{}", server.addr);
    let args = &[
        "--games",
        "12",
        "--connections",
        "2",
        "--seconds",
        "1",
        "--size",
        "9",
        "--retry",
    ];
    let v = loadgen(addr, args).await;
    let moves = &v["moves"];
    assert_eq!(moves["setup_errors"], 7, "{v}");
    // (Games that end start new ones, which the quota refuses too.)
    assert!(
        moves["error_kinds"]["ResourceExhausted"]["count"].as_u64().unwrap() >= 7,
        "{v}"
    );
    assert!(moves["calls"].as_u64().unwrap() > 0, "the five games played: {v}");
    server.shutdown().await.unwrap();
}

/// `--compare` measures Ping, durable Ping and reads before the moves, each with its own
/// calls and the server's CPU per call, and the floor of a move's CPU they imply (issue 22);
/// with `--rounds 2` every workload runs twice, taking turns, and reports the sums. (Its
/// moves ask for basic answers: a server refusing the view would show as errors.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compare_measures_the_references_and_a_moves_floor() {
    // (No quota on creations: each round's games are new, as many as the run's rate makes.)
    let server = server("compare", |c| c.limits.creates_per_minute = 0).await;
    let addr = format!("http://{}", server.addr);
    // The server runs in this process, so this process's CPU is the server's (and a
    // little of the test's).
    let pid = std::process::id().to_string();
    let args = [
        "--games",
        "4",
        "--connections",
        "2",
        "--seconds",
        "0.5",
        "--size",
        "9",
        "--compare",
        "--rounds",
        "2",
        "--server-pid",
        &pid,
        "--basic-answers",
    ];
    let v = loadgen(addr, &args).await;
    for name in ["ping", "durable_ping", "reads", "moves"] {
        assert!(v[name]["calls"].as_u64().unwrap() > 0, "{name}: {v}");
        assert_eq!(v[name]["errors"], 0, "{name}: {v}");
        assert!(v[name]["server_cpu_per_call_us"].as_f64().unwrap() > 0.0, "{name}: {v}");
        // By thread: the runtime's workers answered, and no thread is counted twice (the
        // process's total is read apart, so the two differ by ticks and ended threads).
        let by_thread = v[name]["server_cpu_per_call_us_by_thread"].as_object().unwrap();
        assert!(by_thread["tokio-rt-worker"].as_f64().unwrap() > 0.0, "{name}: {v}");
        let sum: f64 = by_thread.values().map(|us| us.as_f64().unwrap()).sum();
        assert!(
            sum <= v[name]["server_cpu_per_call_us"].as_f64().unwrap() * 1.5 + 50.0,
            "{name}: {v}"
        );
        // Two rounds of at least 0.5 s each.
        assert!(v[name]["wall_s"].as_f64().unwrap() >= 1.0, "{name}: {v}");
    }
    assert_eq!(v["rounds"], 2, "{v}");
    let cpu = |name: &str| v[name]["server_cpu_per_call_us"].as_f64().unwrap();
    let floor = v["move_cpu_floor_us"].as_f64().unwrap();
    assert!(
        (floor - (cpu("reads") + cpu("durable_ping") - cpu("ping"))).abs() < 1e-6,
        "{v}"
    );
    assert!(
        (v["move_cpu_ratio"].as_f64().unwrap() - cpu("moves") / cpu("durable_ping")).abs() < 1e-9,
        "{v}"
    );
    server.shutdown().await.unwrap();
}

/// `--watchers` opens streams on the first game, on the players' connections or on their
/// own (`--watcher-connections`): each receives its moves, and the players' calls are
/// reported split between the watched game and the others (what a fan-out costs each),
/// adding up to all the calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchers_receive_moves_and_calls_are_split_by_game() {
    let server = server("watchers", |c| c.limits.watch_streams_per_client = 0).await;
    let addr = format!("http://{}", server.addr);
    for own in ["0", "3"] {
        let args = [
            "--games",
            "3",
            "--connections",
            "2",
            "--seconds",
            "1",
            "--size",
            "19",
            "--think-ms",
            "20",
            "--watchers",
            "4",
            "--watcher-connections",
            own,
        ];
        let v = loadgen(addr.clone(), &args).await;
        assert_eq!(v["watcher_connections"].to_string(), own, "{v}");
        watchers_report(&v);
    }
    server.shutdown().await.unwrap();
}

fn watchers_report(v: &serde_json::Value) {
    let w = &v["watchers"];
    assert_eq!(w["streams"], 4, "{v}");
    assert!(w["moves_fewest"].as_u64().unwrap() >= 1, "every stream got a move: {v}");
    // Each stream read the game's events from the first, each once and in order.
    assert_eq!(w["gaps"], 0, "{v}");
    assert_eq!(w["streams_with_gaps"], 0, "{v}");
    let watched = w["watched_game_calls"].as_u64().unwrap();
    let others = w["other_games_calls"].as_u64().unwrap();
    assert!(watched >= 1 && others >= 1, "{v}");
    // The watchers saw only moves of the watched game made while they watched.
    assert!(w["moves_most"].as_u64().unwrap() <= watched, "{v}");
    assert_eq!(watched + others, v["moves"]["calls"].as_u64().unwrap(), "{v}");
    assert!(w["watched_game_p99_ms"].as_f64().unwrap() > 0.0, "{v}");
}
