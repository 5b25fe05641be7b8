//! End-to-end, as careless and hostile clients: settings out of bounds, reused request
//! ids, unknown games, free handicap and scheduled starts through the API, the lag
//! allowance, and the transport's limits and per-client quotas (docs/service.md's "Limits and
//! hostile clients").

mod support;

use std::time::Duration;

use support::*;
use tonic::Code;
use tonic::transport::Channel;
use tonic_types::StatusExt;
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::game_service_client::GameServiceClient;

fn settings(f: impl FnOnce(&mut pb::GameSettings)) -> pb::CreateGameRequest {
    let mut s = pb::GameSettings {
        board_size: 9,
        color_choice: pb::ColorChoice::HostBlack as i32,
        ..Default::default()
    };
    f(&mut s);
    pb::CreateGameRequest {
        settings: Some(s),
        ..Default::default()
    }
}

fn byo_yomi(periods: u32, period_ms: u64) -> Option<pb::TimeControl> {
    Some(pb::TimeControl {
        kind: Some(pb::time_control::Kind::ByoYomi(pb::time_control::ByoYomi {
            main_ms: 0,
            periods,
            period_ms,
        })),
    })
}

/// The field a refused call names in its `google.rpc.BadRequest`.
fn field(s: &tonic::Status) -> String {
    s.get_details_bad_request()
        .and_then(|b| b.field_violations.first().map(|v| v.field.clone()))
        .unwrap_or_default()
}

/// Every setting has bounds; a value beyond them is INVALID_ARGUMENT naming the field,
/// at once (10^8 byo-yomi periods once cost a JoinGame 14 s and stalled the server).
#[tokio::test]
async fn settings_out_of_bounds_name_their_field() {
    let srv = Server::fresh("bounds");
    let mut c = srv.client().await;
    let canadian = |stones| {
        Some(pb::TimeControl {
            kind: Some(pb::time_control::Kind::Canadian(pb::time_control::Canadian {
                main_ms: 60_000,
                stones,
                period_ms: 60_000,
            })),
        })
    };
    let cases: Vec<(pb::CreateGameRequest, &str)> = vec![
        (
            settings(|s| s.time_control = byo_yomi(100_000_000, 60_000)),
            "settings.time_control.byo_yomi.periods",
        ),
        (
            settings(|s| s.time_control = byo_yomi(5, u64::MAX)),
            "settings.time_control.byo_yomi.period_ms",
        ),
        (
            settings(|s| s.time_control = byo_yomi(0, 60_000)),
            "settings.time_control.byo_yomi.periods",
        ),
        (
            settings(|s| s.time_control = canadian(0)),
            "settings.time_control.canadian.stones",
        ),
        (settings(|s| s.komi = Some(f64::NAN)), "settings.komi"),
        (settings(|s| s.board_size = 26), "settings.board_size"),
        (settings(|s| s.board_size = 1 << 20), "settings.board_size"),
        (settings(|s| s.handicap = 10), "settings.handicap"),
        (
            settings(|s| s.lag_allowance_ms = Some(60_000)),
            "settings.lag_allowance_ms",
        ),
        (
            settings(|s| s.scheduled_start_ms = Some(u64::MAX)),
            "settings.scheduled_start_ms",
        ),
        (
            settings(|s| {
                s.scheduled_start_ms = Some(0);
                s.max_lateness_ms = u64::MAX;
            }),
            "settings.max_lateness_ms",
        ),
    ];
    for (req, expected) in cases {
        let err = c.create_game(req.clone()).await.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{req:?}: {err:?}");
        assert_eq!(field(&err), expected, "{req:?}");
        assert_eq!(reason(&err), "bad_setting");
    }
    // The largest allowed values are accepted and cost nothing to play under.
    create_and_join(&mut c, settings(|s| s.time_control = byo_yomi(100, 86_400_000))).await;
}

/// Request ids belong to the seat that sent them; one reused for another command is
/// refused, not answered with the first command's result.
#[tokio::test]
async fn request_ids_are_per_seat_and_per_command() {
    let srv = Server::fresh("request-ids");
    let mut c = srv.client().await;
    let g = new_game(&mut c, 9, None).await;
    let call = |token: &str, point: Option<(u32, u32)>| {
        let mutation = m(&g.id, "X");
        match point {
            Some((x, y)) => {
                let req = pb::PlayRequest {
                    mutation,
                    point: pt(x, y),
                    lag_ms: 0,
                };
                let mut c = c.clone();
                let req = authed(req, token);
                Box::pin(async move { c.play(req).await.map(|r| r.into_inner().result.unwrap()) })
                    as std::pin::Pin<Box<dyn std::future::Future<Output = _>>>
            }
            None => {
                let req = authed(pb::PassRequest { mutation, lag_ms: 0 }, token);
                let mut c = c.clone();
                Box::pin(async move { c.pass(req).await.map(|r| r.into_inner().result.unwrap()) })
            }
        }
    };
    let first = call(&g.black, Some((2, 2))).await.unwrap();
    // White's pass with the same id is White's own command, and is done.
    let passed = call(&g.white, None).await.unwrap();
    assert_eq!(passed.events[0].kind, "passed");
    assert_eq!(passed.state.unwrap().move_number, 2);
    // Black's retry gets the first answer; the same id for another point is refused.
    let again = call(&g.black, Some((2, 2))).await.unwrap();
    assert_eq!(again.state, first.state);
    let reused = call(&g.black, Some((3, 3))).await.unwrap_err();
    assert_eq!(
        (reused.code(), reason(&reused)),
        (Code::InvalidArgument, "request_id_reused".into())
    );
    assert_eq!(state(&mut c, &g.id).await.move_number, 2);
}

/// Every error carries an ErrorInfo: an unknown game too.
#[tokio::test]
async fn unknown_games_are_not_found_with_a_reason() {
    let srv = Server::fresh("not-found");
    let mut c = srv.client().await;
    let err = c
        .get_game(pb::GetGameRequest {
            game_id: "no-such-game".into(),
        })
        .await
        .unwrap_err();
    assert_eq!((err.code(), reason(&err)), (Code::NotFound, "game_not_found".into()));
    let info = err.get_details_error_info().unwrap();
    assert_eq!(info.metadata.get("game_id").map(String::as_str), Some("no-such-game"));
}

/// R9 free handicap through the API: Black places the stones in one call, on Black's
/// clock; a wrong count or the wrong player is refused. C4: a scheduled game starts when
/// both players check in.
#[tokio::test]
async fn free_handicap_and_check_in_reach_the_referee() {
    let srv = Server::fresh("handicap");
    let mut c = srv.client().await;
    let absolute = Some(pb::TimeControl {
        kind: Some(pb::time_control::Kind::Absolute(pb::time_control::Absolute {
            main_ms: 600_000,
        })),
    });
    let (created, joined) = create_and_join(
        &mut c,
        settings(|s| {
            s.handicap = 3;
            s.free_handicap = true;
            s.time_control = absolute;
        }),
    )
    .await;
    let st = joined.state.unwrap();
    assert_eq!(st.phase, pb::Phase::PlacingHandicap as i32);
    assert!(st.black_clock.unwrap().running, "Black places on Black's clock");
    let place = |token: &str, stones: Vec<(u32, u32)>| {
        let req = pb::PlaceHandicapRequest {
            mutation: m(&created.game_id, ""),
            stones: stones.into_iter().map(|(x, y)| pb::Point { x, y }).collect(),
        };
        let req = authed(req, token);
        let mut c = c.clone();
        async move { c.place_handicap(req).await }
    };
    let wrong_count = place(&created.seat_token, vec![(2, 2), (6, 6)]).await.unwrap_err();
    assert_eq!(wrong_count.code(), Code::InvalidArgument);
    let by_white = place(&joined.seat_token, vec![(2, 2), (6, 6), (4, 4)])
        .await
        .unwrap_err();
    assert_eq!(by_white.code(), Code::FailedPrecondition);
    let too_many = place(&created.seat_token, vec![(0, 0); 626]).await.unwrap_err();
    assert_eq!(
        (too_many.code(), field(&too_many)),
        (Code::InvalidArgument, "stones".into())
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    let placed = place(&created.seat_token, vec![(2, 2), (6, 6), (4, 4)])
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap();
    let st = placed.state.unwrap();
    assert_eq!(st.phase, pb::Phase::Playing as i32);
    assert_eq!(st.to_move, pb::Color::White as i32);
    assert!(
        st.black_clock.unwrap().main_ms < 600_000,
        "the placement took Black's time"
    );
    assert!(st.white_clock.unwrap().running);

    // A game scheduled to start now: both check in, then play begins.
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let (created, joined) = create_and_join(
        &mut c,
        settings(|s| {
            s.scheduled_start_ms = Some(now_ms);
            s.max_lateness_ms = 600_000;
        }),
    )
    .await;
    assert_eq!(joined.state.unwrap().phase, pb::Phase::Scheduled as i32);
    let mut phase = 0;
    for token in [&created.seat_token, &joined.seat_token] {
        phase = check_in(&mut c, &created.game_id, token).await.phase;
    }
    assert_eq!(phase, pb::Phase::Playing as i32);
}

/// C2: with no lag allowance a player loses exactly at the deadline, and the timeout is
/// stamped with the deadline, not with when the server noticed.
#[tokio::test]
async fn no_lag_allowance_flags_at_the_deadline() {
    let srv = Server::fresh("lag");
    let mut c = srv.client().await;
    let (created, _) = create_and_join(
        &mut c,
        settings(|s| {
            s.lag_allowance_ms = Some(0);
            s.time_control = Some(pb::TimeControl {
                kind: Some(pb::time_control::Kind::Absolute(pb::time_control::Absolute {
                    main_ms: 300,
                })),
            });
        }),
    )
    .await;
    let mut w = watch(&mut c, &created.game_id, 0).await;
    let mut started = None;
    let ended = loop {
        let msg = tokio::time::timeout(Duration::from_secs(10), w.message())
            .await
            .expect("the game ends on time")
            .unwrap()
            .unwrap();
        let Some(e) = msg.event else { continue };
        match e.kind.as_str() {
            "play_started" => started = Some(e.time_ms),
            "game_ended" => break (e, msg.state.unwrap()),
            _ => {}
        }
    };
    assert_eq!(ended.0.time_ms, started.unwrap() + 300, "stamped with the deadline");
    assert_eq!(ended.1.result.unwrap().reason, pb::EndReason::Time as i32);
}

/// Per-client quotas: creating games too fast, and holding too many watch streams, is
/// RESOURCE_EXHAUSTED with a RetryInfo; the stream quota frees up as streams end.
#[tokio::test]
async fn quotas_refuse_with_retry_info() {
    let srv = Server::fresh_with(
        "quotas",
        &[
            ("WEIQI__LIMITS__CREATES_PER_MINUTE", "1"),
            ("WEIQI__LIMITS__CREATE_BURST", "2"),
            ("WEIQI__LIMITS__WATCH_STREAMS_PER_CLIENT", "1"),
        ],
    );
    let mut c = srv.client().await;
    let id = open_game(&mut c).await;
    open_game(&mut c).await;
    let err = c.create_game(pb::CreateGameRequest::default()).await.unwrap_err();
    assert_eq!(
        (err.code(), reason(&err)),
        (Code::ResourceExhausted, "quota_exceeded".into())
    );
    let retry = err.get_details_retry_info().unwrap().retry_delay.unwrap();
    assert!(retry > Duration::ZERO && retry <= Duration::from_secs(60), "{retry:?}");

    let first = watch(&mut c, &id, 0).await;
    let err = c
        .watch_game(pb::WatchGameRequest {
            game_id: id.clone(),
            since_seq: 0,
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted);
    assert!(err.get_details_retry_info().is_some());
    drop(first);
    let started = std::time::Instant::now();
    loop {
        let again = c
            .watch_game(pb::WatchGameRequest {
                game_id: id.clone(),
                since_seq: 0,
            })
            .await;
        if again.is_ok() {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(3), "the quota is returned");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn ping(c: &mut GameServiceClient<Channel>) -> Result<(), tonic::Status> {
    c.ping(pb::PingRequest::default()).await.map(|_| ())
}

async fn connect(srv: &Server) -> GameServiceClient<Channel> {
    GameServiceClient::new(
        Channel::from_shared(format!("http://{}", srv.addr))
            .unwrap()
            .connect_lazy(),
    )
}

/// The transport's bounds: connections past the limit are closed (and counted), a call
/// past a connection's stream limit waits for a free one, an oversized header fails its
/// own call only (no GOAWAY for the connection), an oversized message is refused.
#[tokio::test]
async fn transport_limits() {
    let srv = Server::fresh_with(
        "transport",
        &[
            ("WEIQI__LIMITS__MAX_CONNECTIONS", "2"),
            ("WEIQI__LIMITS__MAX_STREAMS_PER_CONNECTION", "2"),
        ],
    );
    let mut a = connect(&srv).await;
    let id = open_game(&mut a).await;
    let mut b = connect(&srv).await;
    ping(&mut b).await.unwrap();
    // A third connection is closed as it arrives.
    let mut third = connect(&srv).await;
    assert!(ping(&mut third).await.is_err());
    assert_eq!(srv.metric("weiqi_connections_refused_total").await, 1.0);

    // Two streams fill connection A: a third call there waits; B answers.
    let w1 = watch(&mut a, &id, 0).await;
    let w2 = watch(&mut a, &id, 0).await;
    assert!(
        tokio::time::timeout(Duration::from_millis(300), ping(&mut a))
            .await
            .is_err(),
        "a third stream waits"
    );
    ping(&mut b).await.unwrap();
    drop(w1);
    tokio::time::timeout(Duration::from_secs(3), ping(&mut a))
        .await
        .expect("a stream is free again")
        .unwrap();
    drop(w2);

    // A 40 KB bearer token (over the 16 KiB limit) fails its own call (HTTP/2 answers
    // 431); the connection goes on. (Over about 96 KiB, more CONTINUATION frames than h2
    // allows for the limit, h2 closes the connection: its guard against CONTINUATION
    // floods.)
    let huge = format!("Bearer {}", "x".repeat(40_000));
    let mut req = tonic::Request::new(pb::PingRequest::default());
    req.metadata_mut().insert("authorization", huge.parse().unwrap());
    assert!(b.ping(req).await.is_err());
    ping(&mut b).await.unwrap();

    // A request message over 64 KiB is refused by tonic before it is decoded
    // (OUT_OF_RANGE, one of the errors that carry no ErrorInfo: see docs/service.md).
    let big = pb::PingRequest {
        payload: vec![0; 100_000],
        durable: false,
    };
    assert_eq!(b.ping(big).await.unwrap_err().code(), Code::OutOfRange);
    ping(&mut b).await.unwrap();
}

/// Passes bytes from `r` to `w` until `frozen`, then drops them, as a dead network does:
/// neither side sees its socket close (an end of stream is not passed on either).
async fn forward(
    mut r: tokio::net::tcp::OwnedReadHalf,
    mut w: tokio::net::tcp::OwnedWriteHalf,
    frozen: std::sync::Arc<std::sync::atomic::AtomicBool>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0; 16 * 1024];
    loop {
        let n = match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if frozen.load(std::sync::atomic::Ordering::SeqCst) {
            continue;
        }
        if w.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    // Both halves stay open for the rest of the test.
    std::future::pending::<()>().await;
    drop(w);
}

/// A connection that goes silent (a phone that lost its network: no FIN, no RST) is
/// found by HTTP/2 keepalive and closed, and its streams end with it.
#[tokio::test]
async fn keepalive_closes_dead_connections() {
    let srv = Server::fresh_with(
        "keepalive",
        &[
            ("WEIQI__LIMITS__KEEPALIVE_INTERVAL_MS", "300"),
            ("WEIQI__LIMITS__KEEPALIVE_TIMEOUT_MS", "300"),
        ],
    );
    let mut c = srv.client().await;
    let id = open_game(&mut c).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = listener.local_addr().unwrap();
    let frozen = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (server_addr, f) = (srv.addr.clone(), frozen.clone());
    tokio::spawn(async move {
        let (client, _) = listener.accept().await.unwrap();
        let upstream = tokio::net::TcpStream::connect(server_addr).await.unwrap();
        let ((cr, cw), (ur, uw)) = (client.into_split(), upstream.into_split());
        tokio::spawn(forward(cr, uw, f.clone()));
        tokio::spawn(forward(ur, cw, f));
    });
    let baseline = srv.metric("weiqi_open_streams").await;
    let mut far = GameServiceClient::connect(format!("http://{proxy}")).await.unwrap();
    let mut stream = watch(&mut far, &id, 0).await;
    assert!(stream.message().await.unwrap().is_some());
    assert_eq!(srv.metric("weiqi_open_streams").await, baseline + 1.0);
    frozen.store(true, std::sync::atomic::Ordering::SeqCst);
    let started = std::time::Instant::now();
    while srv.metric("weiqi_open_streams").await != baseline {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the dead connection's stream is still open"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The server's own deadline on calls (`limits.request_timeout_ms`) counts from the
/// request's headers: a client whose request message arrives 200 ms after them (a slow
/// phone, or a hostile client holding a stream open) is cut off with CANCELLED or
/// DEADLINE_EXCEEDED when the limit is 1 ms, and answered with the default. Under the
/// default, a thousand durable pings queued over four connections all succeed as well.
#[tokio::test]
async fn request_timeout_cuts_off_slow_calls() {
    /// A Ping whose one message is sent 200 ms after the call's headers.
    async fn slow_ping(srv: &Server) -> Result<pb::PingResponse, tonic::Status> {
        let channel = Channel::from_shared(format!("http://{}", srv.addr))
            .unwrap()
            .connect()
            .await
            .unwrap();
        let mut grpc = tonic::client::Grpc::new(channel);
        grpc.ready().await.unwrap();
        let late = futures::stream::once(async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            pb::PingRequest {
                payload: vec![7; 8],
                durable: false,
            }
        });
        let path = tonic::codegen::http::uri::PathAndQuery::from_static("/weiqi.v1.GameService/Ping");
        let codec = tonic_prost::ProstCodec::<pb::PingRequest, pb::PingResponse>::default();
        grpc.client_streaming(tonic::Request::new(late), path, codec)
            .await
            .map(|r| r.into_inner())
    }
    async fn burst(srv: &Server) -> (usize, usize) {
        let mut clients = Vec::new();
        for _ in 0..4 {
            clients.push(srv.client().await);
        }
        let calls = (0..1000).map(|i| {
            let mut c = clients[i % clients.len()].clone();
            async move {
                c.ping(pb::PingRequest {
                    payload: vec![1; 64],
                    durable: true,
                })
                .await
            }
        });
        let results = futures::future::join_all(calls).await;
        let cut = results
            .iter()
            .filter(|r| matches!(r, Err(s) if matches!(s.code(), Code::Cancelled | Code::DeadlineExceeded)))
            .count();
        let ok = results.iter().filter(|r| r.is_ok()).count();
        (ok, cut)
    }
    let strict = Server::fresh_with("timeout-1ms", &[("WEIQI__LIMITS__REQUEST_TIMEOUT_MS", "1")]);
    let cut = slow_ping(&strict)
        .await
        .expect_err("a call whose message came 200 ms late was answered");
    assert!(
        matches!(cut.code(), Code::Cancelled | Code::DeadlineExceeded),
        "{cut:?}"
    );
    let relaxed = Server::fresh("timeout-default");
    assert_eq!(slow_ping(&relaxed).await.unwrap().payload, vec![7; 8]);
    assert_eq!(burst(&relaxed).await, (1000, 0));
}
