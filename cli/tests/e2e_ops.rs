//! End-to-end: what operators and browsers use of the real `weiqi serve` binary:
//! health, ping, the lobby, gRPC-Web over HTTP/1.1.

mod support;
use std::time::Duration;
use support::*;
use tonic::transport::Channel;
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::game_service_client::GameServiceClient;

/// Operations: health is SERVING; Ping echoes; the lobby lists open games.
#[tokio::test]
async fn health_ping_and_lobby() {
    let srv = Server::fresh("ops");
    let channel = Channel::from_shared(format!("http://{}", srv.addr))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel.clone());
    let r = health
        .check(tonic_health::pb::HealthCheckRequest {
            service: "weiqi.v1.GameService".into(),
        })
        .await
        .unwrap();
    assert_eq!(
        r.into_inner().status,
        tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    );
    let mut c = GameServiceClient::new(channel);
    let p = c
        .ping(pb::PingRequest {
            payload: b"hi".to_vec(),
            durable: false,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(p.payload, b"hi");
    // A durable ping is answered after a group commit of the store.
    let p = c
        .ping(pb::PingRequest {
            payload: b"deep".to_vec(),
            durable: true,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(p.payload, b"deep");
    // Every call is timed by method (a layer around the server), the health check too.
    assert_eq!(
        srv.metric("weiqi_rpc_duration_seconds_count{method=\"Ping\"}").await,
        2.0
    );
    assert!(srv.metric("weiqi_rpc_duration_seconds_count{method=\"Check\"}").await >= 1.0);
    let created = c
        .create_game(pb::CreateGameRequest {
            settings: None,
            request_id: "lobby-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    // Retrying creation returns the same game and token.
    let again = c
        .create_game(pb::CreateGameRequest {
            settings: None,
            request_id: "lobby-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (&again.game_id, &again.seat_token),
        (&created.game_id, &created.seat_token)
    );
    let lobby = c
        .list_games(pb::ListGamesRequest { limit: 10 })
        .await
        .unwrap()
        .into_inner();
    assert!(
        lobby
            .open
            .iter()
            .any(|s| s.game_id == created.game_id && s.board_size == 19)
    );
}

/// gRPC-Web over HTTP/1.1, as a browser sends it: a framed Ping comes back framed, with
/// the status in a trailer frame.
#[tokio::test]
async fn grpc_web_over_http1() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = Server::fresh("grpc-web");
    // PingRequest { payload: "web" } behind the 5-byte gRPC frame header.
    let message = [0x0a, 0x03, b'w', b'e', b'b'];
    let mut body = vec![0u8, 0, 0, 0, message.len() as u8];
    body.extend_from_slice(&message);
    let mut stream = tokio::net::TcpStream::connect(&server.addr).await.unwrap();
    let head = format!(
        "POST /weiqi.v1.GameService/Ping HTTP/1.1\r\nHost: {}\r\nContent-Type: application/grpc-web+proto\r\n\
         X-Grpc-Web: 1\r\nOrigin: https://play.example\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        server.addr,
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&body).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .unwrap()
        .unwrap();
    let text = String::from_utf8_lossy(&answer).to_lowercase();
    assert!(text.starts_with("http/1.1 200"), "{text}");
    assert!(text.contains("content-type: application/grpc-web+proto"), "{text}");
    // The echoed message in a data frame, then the trailers frame (flag 0x80).
    assert!(answer.windows(body.len()).any(|w| w == body.as_slice()), "{text}");
    assert!(text.contains("grpc-status:0"), "{text}");
    // A page from another origin may read the answer (CORS, any origin by default).
    assert!(text.contains("access-control-allow-origin: *"), "{text}");
    assert!(text.contains("grpc-status-details-bin"), "exposed headers: {text}");

    // The browser's preflight before a call with a bearer token.
    let mut stream = tokio::net::TcpStream::connect(&server.addr).await.unwrap();
    let preflight = format!(
        "OPTIONS /weiqi.v1.GameService/Play HTTP/1.1\r\nHost: {}\r\nOrigin: https://play.example\r\n\
         Access-Control-Request-Method: POST\r\n\
         Access-Control-Request-Headers: content-type,x-grpc-web,authorization\r\nConnection: close\r\n\r\n",
        server.addr
    );
    stream.write_all(preflight.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .unwrap()
        .unwrap();
    let text = String::from_utf8_lossy(&answer).to_lowercase();
    assert!(text.starts_with("http/1.1 200"), "{text}");
    assert!(text.contains("access-control-allow-origin: *"), "{text}");
    assert!(text.contains("access-control-allow-methods: post"), "{text}");
    let allowed = text
        .lines()
        .find_map(|l| l.strip_prefix("access-control-allow-headers:"))
        .unwrap_or_else(|| panic!("no allowed headers: {text}"));
    for h in ["content-type", "x-grpc-web", "authorization"] {
        assert!(allowed.contains(h), "{h} not allowed: {text}");
    }
}

/// The Grafana dashboard shipped in `deploy/grafana` queries only series the server
/// exports (after a game and a move, so that labelled ones exist; claims are counted only
/// with replicas, so that one is left out here).
#[tokio::test]
async fn the_dashboard_queries_series_the_server_exports() {
    let server = Server::fresh("dashboard");
    let mut c = server.client().await;
    let g = new_game(&mut c, 9, None).await;
    play(&mut c, &g, &g.black, 4, 4).await.unwrap();
    let text = server.metrics_text().await;
    let dashboard = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/grafana/weiqi-dashboard.json"
    ))
    .unwrap();
    let json: serde_json::Value = serde_json::from_str(&dashboard).unwrap();
    let mut names = std::collections::BTreeSet::new();
    for p in json["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().unwrap() {
            let expr = t["expr"].as_str().unwrap();
            let mut rest = expr;
            while let Some(i) = rest.find("weiqi_") {
                let name: String = rest[i..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                rest = &rest[i + name.len()..];
                names.insert(name);
            }
        }
    }
    assert!(names.len() >= 8, "{names:?}");
    for name in names {
        // Only claims need a second replica to be counted.
        if name == "weiqi_claims_total" {
            continue;
        }
        assert!(
            text.lines().any(|l| l.starts_with(&name)),
            "{name} is not exported:\n{text}"
        );
    }
}

/// One HTTP/1.1 exchange on a fresh connection: the answer's head (lowercase) and body.
async fn http1(addr: &str, request: &str, body: &[u8]) -> (String, Vec<u8>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .unwrap()
        .unwrap();
    let split = answer.windows(4).position(|w| w == b"\r\n\r\n").expect("a head") + 4;
    (
        String::from_utf8_lossy(&answer[..split]).to_lowercase(),
        answer[split..].to_vec(),
    )
}

fn header<'a>(head: &'a str, name: &str) -> &'a str {
    head.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}: ")))
        .unwrap_or("")
}

/// The web listener as a browser meets it: the page revalidated with its ETag, the bundle
/// under hashed names cached as immutable and compressed as the browser accepts, a
/// favicon, and the game service's calls through it timed as the gRPC port's are.
#[tokio::test]
async fn the_web_app_is_cached_compressed_and_its_calls_metered() {
    let server = Server::fresh("web-listener");
    let get = |path: &str, extra: &str| {
        format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\n{extra}Connection: close\r\n\r\n",
            server.web
        )
    };
    let (head, page) = http1(&server.web, &get("/", ""), b"").await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert_eq!(header(&head, "cache-control"), "no-cache");
    let etag = header(&head, "etag").to_string();
    assert!(etag.starts_with('"'), "{head}");
    let (again, _) = http1(&server.web, &get("/", &format!("If-None-Match: {etag}\r\n")), b"").await;
    assert!(again.starts_with("http/1.1 304"), "{again}");

    let page = String::from_utf8(page).unwrap();
    let script = page
        .split('"')
        .find(|s| s.starts_with("assets/app.") && s.ends_with(".js"))
        .unwrap_or_else(|| panic!("no hashed script in {page}"));
    let (head, br) = http1(
        &server.web,
        &get(&format!("/{script}"), "Accept-Encoding: gzip, br\r\n"),
        b"",
    )
    .await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert_eq!(header(&head, "content-encoding"), "br");
    assert_eq!(header(&head, "cache-control"), "public, max-age=31536000, immutable");
    let (head, plain) = http1(&server.web, &get(&format!("/{script}"), ""), b"").await;
    assert_eq!(header(&head, "content-encoding"), "");
    assert!(br.len() * 3 < plain.len(), "{} of {}", br.len(), plain.len());
    let (head, _) = http1(&server.web, &get("/favicon.ico", ""), b"").await;
    assert!(head.starts_with("http/1.1 200"), "{head}");

    // ListGames over gRPC-Web on the web listener is counted like any other call.
    let before = server
        .metric("weiqi_rpc_duration_seconds_count{method=\"ListGames\"}")
        .await;
    let message = [0x08, 0x05]; // ListGamesRequest { limit: 5 }
    let mut body = vec![0u8, 0, 0, 0, message.len() as u8];
    body.extend_from_slice(&message);
    let call = format!(
        "POST /weiqi.v1.GameService/ListGames HTTP/1.1\r\nHost: {}\r\nContent-Type: application/grpc-web+proto\r\n\
         X-Grpc-Web: 1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        server.web,
        body.len()
    );
    let (head, _) = http1(&server.web, &call, &body).await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    let after = server
        .metric("weiqi_rpc_duration_seconds_count{method=\"ListGames\"}")
        .await;
    assert_eq!(after, before + 1.0);
}
