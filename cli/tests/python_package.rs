//! The Python package (`python/`, issue 47): its wheel built by maturin and installed into
//! the virtual environment `WEIQI_PYTHON_VENV` (made by scripts/python-venv.sh, as .ci/run
//! does), then its pytest suite (python/tests) run against it, with this build's `weiqi`
//! for the shards `weiqi selfplay` writes. Skips with a message without the environment,
//! unless WEIQI_REQUIRE_PYTHON=1 (set by .ci/run).

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_python_package_passes_its_tests() {
    let Some(venv) = std::env::var_os("WEIQI_PYTHON_VENV").map(PathBuf::from) else {
        assert!(
            std::env::var("WEIQI_REQUIRE_PYTHON").as_deref() != Ok("1"),
            "WEIQI_REQUIRE_PYTHON=1 but WEIQI_PYTHON_VENV is not set (scripts/python-venv.sh DIR)"
        );
        eprintln!("SKIPPED: no WEIQI_PYTHON_VENV (make one with scripts/python-venv.sh DIR)");
        return;
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let wheels = std::env::temp_dir().join(format!("weiqi-wheels-{}", std::process::id()));
    let run = |program: PathBuf, args: &[&str]| {
        let out = Command::new(&program)
            .args(args)
            .current_dir(&root)
            .env("WEIQI_BIN", env!("CARGO_BIN_EXE_weiqi"))
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
        let text = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{} {args:?}:\n{text}", program.display());
        text
    };
    // (The dev profile, as the tests' own build: the wheel reuses what cargo built.)
    let w = wheels.to_str().unwrap();
    run(
        venv.join("bin/maturin"),
        &[
            "build",
            "--profile",
            "dev",
            "--manifest-path",
            "python/Cargo.toml",
            "-o",
            w,
        ],
    );
    let wheel = std::fs::read_dir(&wheels)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .expect("a wheel");
    run(
        venv.join("bin/python"),
        &[
            "-m",
            "pip",
            "install",
            "--quiet",
            "--force-reinstall",
            "--no-deps",
            wheel.to_str().unwrap(),
        ],
    );
    let report = run(venv.join("bin/python"), &["-m", "pytest", "-q", "-rs", "python/tests"]);
    println!("{report}");
    assert!(report.contains(" passed"), "{report}");
    // In CI nothing may be skipped (PyTorch, S3, GNU Go and the conformance data are there).
    if std::env::var("WEIQI_REQUIRE_PYTHON").as_deref() == Ok("1") {
        assert!(!report.contains(" skipped"), "{report}");
    }
    let _ = std::fs::remove_dir_all(&wheels);
}
