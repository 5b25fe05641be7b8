//! Self-play into an S3-compatible object store (issue 19), against a real server process:
//! `.ci/run` starts moto in server mode and points the AWS_* variables at it, as a user
//! points them at S3 or MinIO. Workers write create-only under one prefix, the index reads
//! the prefix back, a restarted worker goes on, and bad objects or buckets are named.
//!
//! Uses the bucket `WEIQI_TEST_S3_BUCKET` at `AWS_ENDPOINT`; skips without them, and
//! `WEIQI_REQUIRE_S3=1` makes that a failure.

use std::io::{Read, Write};

use serde_json::Value;

mod support;
use support::weiqi;

/// The store's endpoint as `host:port` and the test bucket, or `None` to skip.
fn store() -> Option<(String, String)> {
    let url = std::env::var("AWS_ENDPOINT").or_else(|_| std::env::var("AWS_ENDPOINT_URL"));
    match (url, std::env::var("WEIQI_TEST_S3_BUCKET")) {
        (Ok(u), Ok(bucket)) => Some((
            u.trim_start_matches("http://").trim_end_matches('/').to_string(),
            bucket,
        )),
        _ => {
            assert!(
                std::env::var_os("WEIQI_REQUIRE_S3").is_none(),
                "WEIQI_REQUIRE_S3 is set but AWS_ENDPOINT or WEIQI_TEST_S3_BUCKET is not"
            );
            eprintln!("SKIPPED: no S3-compatible store (AWS_ENDPOINT, WEIQI_TEST_S3_BUCKET)");
            None
        }
    }
}

/// One plain HTTP request to the store from the test's side (to look at and tamper with
/// objects behind weiqi's back): the status and the body. moto does not check signatures,
/// but treats a request without credentials as anonymous, which object ACLs refuse.
fn http(host: &str, method: &str, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
    let mut s = std::net::TcpStream::connect(host).expect("connect to the S3 endpoint");
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {}\r\nConnection: close\r\n\
         Authorization: AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/s3/aws4_request, \
         SignedHeaders=host, Signature=00\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("an HTTP answer");
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let mut body = raw[split + 4..].to_vec();
    if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        body = unchunk(&body);
    }
    (status, body)
}

fn unchunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line = b.windows(2).position(|w| w == b"\r\n").unwrap_or(b.len());
        let n = usize::from_str_radix(String::from_utf8_lossy(&b[..line]).trim(), 16).unwrap_or(0);
        if n == 0 {
            return out;
        }
        out.extend_from_slice(&b[line + 2..line + 2 + n]);
        b = &b[line + 2 + n + 2..];
    }
}

fn selfplay(out: &str, workers: u64, worker: u64, seed: &str) -> (i32, String, String) {
    let args = format!(
        "selfplay --size 5 --games 10 --games-per-shard 3 --seed {seed} --workers {workers} --worker {worker} --json --out {out}"
    );
    weiqi(&args.split(' ').collect::<Vec<_>>())
}

#[test]
fn workers_write_create_only_to_s3_and_the_index_reads_it_back() {
    let Some((host, bucket)) = store() else { return };
    // A prefix of this run's own in the shared bucket.
    let run = format!(
        "e2e-{}-{}",
        std::process::id(),
        std::time::UNIX_EPOCH.elapsed().unwrap().as_millis()
    );
    let root = format!("s3://{bucket}/{run}/gen=0/selfplay");

    // Two workers into the generation's layout, and one process into a directory.
    for k in 0..2 {
        let (code, _, err) = selfplay(&format!("{root}/worker={k}"), 2, k, "5");
        assert_eq!(code, 0, "{err}");
    }
    let local = std::env::temp_dir().join(format!("weiqi-e2e-s3-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&local);
    let (code, _, err) = selfplay(local.to_str().unwrap(), 1, 0, "5");
    assert_eq!(code, 0, "{err}");

    // The union of the workers' shards is the single process's, byte for byte.
    for (k, shard) in [(0, 0), (1, 1), (0, 2), (1, 3)] {
        let key = format!("/{bucket}/{run}/gen=0/selfplay/worker={k}/shard-{shard:05}.npz");
        let (status, bytes) = http(&host, "GET", &key, b"");
        assert_eq!(status, 200, "{key}");
        let file = std::fs::read(local.join(format!("shard-{shard:05}.npz"))).unwrap();
        assert!(bytes == file, "{key} differs from the single process's shard");
    }
    let (code, out, err) = weiqi(&["data", "index", &root, "--json"]);
    assert_eq!(code, 0, "{err}");
    let ix: Value = serde_json::from_str(out.trim()).unwrap();
    let (_, local_out, _) = weiqi(&["data", "index", local.to_str().unwrap(), "--json"]);
    let lx: Value = serde_json::from_str(local_out.trim()).unwrap();
    assert_eq!((ix["shards"].as_u64(), ix["games"].as_u64()), (Some(4), Some(10)));
    assert_eq!(ix["positions"], lx["positions"]);
    assert_eq!(ix["dirs"][1]["dir"].as_str(), Some(format!("{root}/worker=1").as_str()));

    // A worker started again finds its shards done and plays none of them again.
    let (code, out, err) = selfplay(&format!("{root}/worker=0"), 2, 0, "5");
    assert_eq!(code, 0, "{err}");
    let again: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        (
            again["games"].as_u64(),
            again["shards"].as_u64(),
            again["played_shards"].as_u64()
        ),
        (Some(6), Some(2), Some(0))
    );

    // Another run's settings under a worker's prefix are refused, naming its manifest.
    let (code, _, err) = selfplay(&format!("{root}/worker=0"), 2, 0, "6");
    assert_eq!(code, 1);
    assert!(err.contains(&format!("{root}/worker=0/manifest.json")), "{err}");

    // A shard already under a name (another worker given the same index) is never
    // overwritten: the run stops, naming the object.
    let clash = format!("s3://{bucket}/{run}/gen=1/selfplay/worker=0");
    let key = format!("/{bucket}/{run}/gen=1/selfplay/worker=0/shard-00000.npz");
    assert_eq!(http(&host, "PUT", &key, b"someone else's shard").0, 200);
    let (code, _, err) = selfplay(&clash, 1, 0, "5");
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!("{clash}/shard-00000.npz")) && err.contains("already exists"),
        "{err}"
    );
    assert_eq!(http(&host, "GET", &key, b"").1, b"someone else's shard");

    // A truncated shard is named by the index.
    let key = format!("/{bucket}/{run}/gen=0/selfplay/worker=1/shard-00003.npz");
    let (_, bytes) = http(&host, "GET", &key, b"");
    assert_eq!(http(&host, "PUT", &key, &bytes[..bytes.len() / 2]).0, 200);
    let (code, _, err) = weiqi(&["data", "index", &root]);
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!("{root}/worker=1/shard-00003.npz")) && err.contains("unreadable"),
        "{err}"
    );

    // A bucket that refuses writes (here: none by that name) stops the run, naming the
    // object it could not write; nothing is left behind.
    let missing = format!("s3://{bucket}-missing/{run}");
    let (code, _, err) = selfplay(&missing, 1, 0, "5");
    assert_eq!(code, 1);
    assert!(err.contains(&format!("{missing}/shard-0000")), "{err}");
    std::fs::remove_dir_all(&local).unwrap();
}
