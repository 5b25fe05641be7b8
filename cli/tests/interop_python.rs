//! Interoperability with another gRPC implementation: tests/interop/interop.py (Python
//! grpcio, stubs generated from the same proto) plays a short game against this binary,
//! and reads its services through server reflection, v1alpha (grpcio-reflection) and v1.
//! Skips with a message when grpcio is not installed, unless WEIQI_REQUIRE_INTEROP=1
//! (set by .ci/run, which installs it).

use std::path::PathBuf;
use std::process::Command;

#[test]
fn python_grpcio_client_plays_a_game() {
    let has = Command::new("python3")
        .args(["-c", "import grpc, grpc_tools, grpc_reflection"])
        .status()
        .is_ok_and(|s| s.success());
    if !has {
        if std::env::var("WEIQI_REQUIRE_INTEROP").as_deref() == Ok("1") {
            panic!(
                "python3 with grpcio, grpcio-tools and grpcio-reflection is required (pip install grpcio grpcio-tools grpcio-reflection)"
            );
        }
        eprintln!("SKIPPED: python3 grpcio/grpcio-tools/grpcio-reflection not installed");
        return;
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/interop/interop.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_weiqi"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("interop ok"), "{stdout}");
}
