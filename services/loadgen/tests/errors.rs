//! The load generator reports errors instead of stopping at the first: here a server
//! whose per-client quota lets only 5 of 12 games be created. (At 20,000 games on 8
//! connections, an h2 GOAWAY once ended the whole run with "broken pipe".)

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setup_failures_are_counted_and_the_run_goes_on() {
    let dir = std::env::temp_dir().join(format!("weiqi-loadgen-errors-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cfg = weiqi_server::ServerConfig::load(None).unwrap();
    cfg.listen = "127.0.0.1:0".into();
    cfg.metrics_listen = String::new();
    cfg.web_listen = String::new();
    cfg.data_dir = dir;
    cfg.limits.creates_per_minute = 1;
    cfg.limits.create_burst = 5;
    let server = weiqi_server::start(cfg).await.unwrap();
    let addr = format!("http://{}", server.addr);
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_weiqi-loadgen"))
            .args(["--addr", &addr, "--games", "12", "--connections", "2"])
            .args(["--seconds", "1", "--size", "9", "--json"])
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
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
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
