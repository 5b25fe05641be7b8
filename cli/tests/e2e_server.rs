//! End-to-end: the real `weiqi serve` binary on a loopback port, driven by a real gRPC
//! client (tonic). Each test gets its own data folder.

mod support;

use std::time::Duration;

use support::*;
use tonic::Code;
use tonic::transport::Channel;
use tonic_types::StatusExt;
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::game_service_client::GameServiceClient;

/// C6, R8: a full game from creation to an agreed score.
#[tokio::test]
async fn full_game_to_agreed_score() {
    let srv = Server::fresh("full");
    let mut c = srv.client().await;
    let g = new_game(&mut c, 5, None).await;
    play(&mut c, &g, &g.black, 2, 2).await.unwrap();
    play(&mut c, &g, &g.white, 2, 1).await.unwrap();
    play(&mut c, &g, &g.black, 1, 2).await.unwrap();
    play(&mut c, &g, &g.white, 3, 2).await.unwrap();
    pass(&mut c, &g, &g.black).await;
    let r = pass(&mut c, &g, &g.white).await;
    assert_eq!(r.state.as_ref().unwrap().phase, pb::Phase::Scoring as i32);
    let acc = |t: &str| authed(pb::AcceptScoreRequest { mutation: m(&g.id, "") }, t);
    c.accept_score(acc(&g.black)).await.unwrap();
    let done = c
        .accept_score(acc(&g.white))
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap();
    let st = done.state.unwrap();
    assert_eq!(st.phase, pb::Phase::Finished as i32);
    let res = st.result.unwrap();
    assert_eq!(res.reason, pb::EndReason::Score as i32);
    assert_eq!(res.black_points + res.white_points, 25.0);
    let sgf = c
        .export_sgf(pb::ExportSgfRequest { game_id: g.id.clone() })
        .await
        .unwrap()
        .into_inner()
        .sgf;
    assert!(sgf.contains("RE[") && sgf.contains(";B[cc]"), "{sgf}");
    // The lobby no longer lists it as playing.
    let lobby = c
        .list_games(pb::ListGamesRequest { limit: 0 })
        .await
        .unwrap()
        .into_inner();
    assert!(lobby.playing.iter().all(|s| s.game_id != g.id));
}

/// C2: a game is lost on time with no client activity at all.
#[tokio::test]
async fn lost_on_time_without_activity() {
    let srv = Server::fresh("time");
    let mut c = srv.client().await;
    let time = pb::TimeControl {
        kind: Some(pb::time_control::Kind::Absolute(pb::time_control::Absolute {
            main_ms: 300,
        })),
    };
    let g = new_game(&mut c, 9, Some(time)).await;
    // Black's 300 ms plus the default lag allowance (1 s) run out with nobody calling.
    tokio::time::sleep(Duration::from_millis(2_000)).await;
    let st = state(&mut c, &g.id).await;
    assert_eq!(st.phase, pb::Phase::Finished as i32, "{st:?}");
    let r = st.result.unwrap();
    assert_eq!(
        (r.reason, r.winner),
        (pb::EndReason::Time as i32, pb::Color::White as i32)
    );
    assert!(st.black_clock.unwrap().flagged);
}

/// C3: an adjournment with a sealed move revealed on resume, and an illegal one
/// becoming a pass.
#[tokio::test]
async fn adjournment_with_sealed_move() {
    let srv = Server::fresh("seal");
    let mut c = srv.client().await;
    let g = new_game(&mut c, 9, None).await;
    play(&mut c, &g, &g.black, 4, 4).await.unwrap();
    let seal = |t: &str, p: pb::sealed_move::Move| {
        authed(
            pb::SealMoveRequest {
                mutation: m(&g.id, ""),
                sealed_move: Some(pb::SealedMove { r#move: Some(p) }),
            },
            t,
        )
    };
    let r = c
        .seal_move(seal(&g.white, pb::sealed_move::Move::Point(pb::Point { x: 2, y: 2 })))
        .await
        .unwrap()
        .into_inner();
    let st = r.result.as_ref().unwrap().state.as_ref().unwrap();
    assert_eq!(st.phase, pb::Phase::Adjourned as i32);
    assert_eq!(st.sealed_commitment.len(), 64);
    // Black (and spectators) see the commitment, not the move.
    let mut watch = c
        .watch_game(authed(
            pb::WatchGameRequest {
                game_id: g.id.clone(),
                since_seq: 0,
            },
            &g.black,
        ))
        .await
        .unwrap()
        .into_inner();
    let mut saw_sealed = false;
    while let Some(item) = watch.message().await.unwrap() {
        let e = item.event.unwrap();
        if e.kind == "move_sealed" {
            assert!(e.payload_json.contains("\"sealed\":null"), "{}", e.payload_json);
            saw_sealed = true;
            break;
        }
    }
    assert!(saw_sealed);
    let resumed = c
        .resume(authed(pb::ResumeRequest { mutation: m(&g.id, "") }, &g.black))
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap();
    let kinds: Vec<&str> = resumed.events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, ["resumed", "move_played"]);
    assert!(resumed.events[0].payload_json.contains("nonce"));
    assert_eq!(resumed.state.unwrap().board[2], "..o......");
    // Black seals a move on an occupied point: at resumption it counts as a pass.
    c.seal_move(seal(&g.black, pb::sealed_move::Move::Point(pb::Point { x: 2, y: 2 })))
        .await
        .unwrap();
    let resumed = c
        .resume(authed(pb::ResumeRequest { mutation: m(&g.id, "") }, &g.white))
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap();
    let kinds: Vec<&str> = resumed.events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, ["resumed", "move_voided"]);
    assert_eq!(resumed.state.unwrap().to_move, pb::Color::White as i32);
}

/// C6: a dispute is settled by play, then scoring starts again.
#[tokio::test]
async fn dispute_resolved_by_play() {
    let srv = Server::fresh("dispute");
    let mut c = srv.client().await;
    let g = new_game(&mut c, 5, None).await;
    play(&mut c, &g, &g.black, 2, 2).await.unwrap();
    pass(&mut c, &g, &g.white).await;
    pass(&mut c, &g, &g.black).await;
    c.propose_dead_stones(authed(
        pb::ProposeDeadStonesRequest {
            mutation: m(&g.id, ""),
            stones: vec![pb::Point { x: 2, y: 2 }],
        },
        &g.white,
    ))
    .await
    .unwrap();
    let r = c
        .dispute_score(authed(pb::DisputeScoreRequest { mutation: m(&g.id, "") }, &g.black))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(r.result.unwrap().state.unwrap().phase, pb::Phase::Playing as i32);
    play(&mut c, &g, &g.white, 0, 0).await.unwrap();
    play(&mut c, &g, &g.black, 1, 0).await.unwrap();
    pass(&mut c, &g, &g.white).await;
    let r = pass(&mut c, &g, &g.black).await;
    assert_eq!(r.state.unwrap().phase, pb::Phase::Scoring as i32);
}

/// Retries: the same request id returns the first answer and applies once; a stale
/// expected_move_number is FAILED_PRECONDITION with the current state.
#[tokio::test]
async fn retries_and_stale_calls() {
    let srv = Server::fresh("retry");
    let mut c = srv.client().await;
    let g = new_game(&mut c, 9, None).await;
    let req = || {
        authed(
            pb::PlayRequest {
                mutation: m(&g.id, "move-1"),
                point: pt(4, 4),
                lag_ms: 0,
            },
            &g.black,
        )
    };
    let first = c.play(req()).await.unwrap().into_inner();
    let again = c.play(req()).await.unwrap().into_inner();
    assert_eq!(first, again);
    assert_eq!(state(&mut c, &g.id).await.move_number, 1);

    let stale = pb::PlayRequest {
        mutation: Some(pb::Mutation {
            game_id: g.id.clone(),
            request_id: "w1".into(),
            expected_move_number: Some(0),
        }),
        point: pt(3, 3),
        lag_ms: 0,
    };
    let err = c.play(authed(stale, &g.white)).await.unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert_eq!(reason(&err), "stale");
    let info = err.get_details_error_info().unwrap();
    assert_eq!(info.metadata["move_number"], "1");
    let bytes = err
        .metadata()
        .get_bin("weiqi-game-state-bin")
        .unwrap()
        .to_bytes()
        .unwrap();
    let current = <pb::GameState as prost::Message>::decode(&bytes[..]).unwrap();
    assert_eq!(current.move_number, 1);
    assert_eq!(current.board[4], "....x....");

    // Illegal moves carry their reason; malformed input is INVALID_ARGUMENT.
    let err = play(&mut c, &g, &g.white, 4, 4).await.unwrap_err();
    assert_eq!(
        (err.code(), reason(&err)),
        (Code::FailedPrecondition, "occupied".to_string())
    );
    let err = play(&mut c, &g, &g.white, 9, 0).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let err = c
        .get_game(pb::GetGameRequest { game_id: "nope".into() })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
}

/// Seats: a wrong or missing token is PERMISSION_DENIED; the right token out of turn is
/// refused and changes nothing.
#[tokio::test]
async fn wrong_seat_token() {
    let srv = Server::fresh("seat");
    let mut c = srv.client().await;
    let g = new_game(&mut c, 9, None).await;
    let other = new_game(&mut c, 9, None).await;
    let err = play(&mut c, &g, &other.black, 4, 4).await.unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied);
    let err = c
        .play(pb::PlayRequest {
            mutation: m(&g.id, ""),
            point: pt(4, 4),
            lag_ms: 0,
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied);
    let err = play(&mut c, &g, &g.white, 4, 4).await.unwrap_err();
    assert_eq!(
        (err.code(), reason(&err)),
        (Code::FailedPrecondition, "not_your_turn".to_string())
    );
    assert_eq!(state(&mut c, &g.id).await.move_number, 0);
    // A third player cannot join.
    let err = c
        .join_game(pb::JoinGameRequest {
            game_id: g.id.clone(),
            request_id: String::new(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
}

/// C1: verifiable nigiri. The host commits to 7 stones, the guest guesses; a reveal that
/// does not match the commitment is refused and changes nothing; the right one assigns
/// colours by the guess (7 is odd, so "odd" takes Black).
#[tokio::test]
async fn nigiri_commit_guess_reveal() {
    let srv = Server::fresh("nigiri");
    let mut c = srv.client().await;
    // hex(sha256("7:moon-river")), computed outside this code base.
    let commitment = "320470a1da364d8e03c536dccee87fbb0951d8348211adafae63ee23c3c4e94a";
    let create = |commitment: &str| pb::CreateGameRequest {
        settings: Some(pb::GameSettings {
            board_size: 9,
            color_choice: pb::ColorChoice::Nigiri as i32,
            ..Default::default()
        }),
        nigiri_commitment: commitment.into(),
        ..Default::default()
    };
    // Nigiri without a commitment, or with a malformed one, is refused.
    for bad in ["", "not-a-digest"] {
        let err = c.create_game(create(bad)).await.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{bad:?}: {err:?}");
    }
    for (guess, host_is_black) in [(pb::Parity::Odd, false), (pb::Parity::Even, true)] {
        let created = c.create_game(create(commitment)).await.unwrap().into_inner();
        let id = created.game_id.clone();
        assert_eq!(created.state.unwrap().nigiri_commitment, commitment);
        // Joining nigiri needs a guess.
        let err = c
            .join_game(pb::JoinGameRequest {
                game_id: id.clone(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument);
        let joined = c
            .join_game(pb::JoinGameRequest {
                game_id: id.clone(),
                nigiri_guess: guess as i32,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        let st = joined.state.unwrap();
        assert_eq!(st.phase, pb::Phase::Nigiri as i32);
        assert_eq!(st.nigiri_guess, guess as i32);
        let reveal = |stones: u32, nonce: &str, token: &str| {
            authed(
                pb::RevealNigiriRequest {
                    mutation: m(&id, ""),
                    stones,
                    nonce: nonce.into(),
                },
                token,
            )
        };
        // Only the host reveals, and only what it committed to.
        let err = c
            .reveal_nigiri(reveal(7, "moon-river", &joined.seat_token))
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::PermissionDenied, "{err:?}");
        let err = c
            .reveal_nigiri(reveal(8, "moon-river", &created.seat_token))
            .await
            .unwrap_err();
        assert_eq!(
            (err.code(), reason(&err).as_str()),
            (Code::InvalidArgument, "commitment_mismatch")
        );
        assert_eq!(state(&mut c, &id).await.phase, pb::Phase::Nigiri as i32);
        let done = c
            .reveal_nigiri(reveal(7, "moon-river", &created.seat_token))
            .await
            .unwrap()
            .into_inner()
            .result
            .unwrap();
        let st = done.state.unwrap();
        assert_eq!(st.phase, pb::Phase::Playing as i32);
        let host_seat = if host_is_black { pb::Seat::Host } else { pb::Seat::Guest };
        assert_eq!(st.black_seat, host_seat as i32, "guess {guess:?}");
        let kinds: Vec<&str> = done.events.iter().map(|e| e.kind.as_str()).collect();
        assert!(kinds.contains(&"nigiri_revealed"), "{kinds:?}");
        // Black, whoever that is, moves first.
        let black = if host_is_black {
            &created.seat_token
        } else {
            &joined.seat_token
        };
        let g = Game {
            id: id.clone(),
            black: black.clone(),
            white: String::new(),
        };
        play(&mut c, &g, &g.black, 4, 4).await.unwrap();
    }
}

/// The host withdraws an open game: it leaves the lobby, ends with no result (SGF
/// `Void`), and can no longer be joined. Nobody else may cancel it.
#[tokio::test]
async fn host_cancels_open_game() {
    let srv = Server::fresh("cancel");
    let mut c = srv.client().await;
    let created = c
        .create_game(pb::CreateGameRequest::default())
        .await
        .unwrap()
        .into_inner();
    let id = created.game_id.clone();
    let cancel = |token: &str| authed(pb::CancelGameRequest { mutation: m(&id, "") }, token);
    let err = c.cancel_game(cancel("not-a-seat")).await.unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied);
    let lobby = |c: &mut GameServiceClient<Channel>| {
        let mut c = c.clone();
        async move {
            c.list_games(pb::ListGamesRequest::default())
                .await
                .unwrap()
                .into_inner()
        }
    };
    assert_eq!(lobby(&mut c).await.open.len(), 1);
    let result = c
        .cancel_game(cancel(&created.seat_token))
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap();
    let st = result.state.unwrap();
    assert_eq!(st.phase, pb::Phase::Finished as i32);
    assert_eq!(st.result.unwrap().reason, pb::EndReason::Cancelled as i32);
    assert!(lobby(&mut c).await.open.is_empty());
    let err = c
        .join_game(pb::JoinGameRequest {
            game_id: id.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(
        (err.code(), reason(&err).as_str()),
        (Code::FailedPrecondition, "wrong_phase")
    );
    let sgf = c
        .export_sgf(pb::ExportSgfRequest { game_id: id.clone() })
        .await
        .unwrap()
        .into_inner()
        .sgf;
    assert!(sgf.contains("RE[Void]"), "{sgf}");
}

/// WatchGame: reconnecting with since_seq replays exactly what was missed.
#[tokio::test]
async fn watch_reconnects_without_missing_events() {
    let srv = Server::fresh("watch");
    let mut c = srv.client().await;
    let g = new_game(&mut c, 9, None).await;
    play(&mut c, &g, &g.black, 0, 0).await.unwrap();
    let mut w = watch(&mut c, &g.id, 0).await;
    let mut seen = Vec::new();
    while seen.len() < 5 {
        let item = w.message().await.unwrap().unwrap();
        seen.push(item.event.unwrap().seq);
    }
    drop(w);
    // Moves while disconnected.
    play(&mut c, &g, &g.white, 1, 0).await.unwrap();
    play(&mut c, &g, &g.black, 2, 0).await.unwrap();
    let last = *seen.last().unwrap();
    let mut w = watch(&mut c, &g.id, last).await;
    let target = state(&mut c, &g.id).await.seq;
    while *seen.last().unwrap() < target {
        let item = w.message().await.unwrap().unwrap();
        seen.push(item.event.unwrap().seq);
    }
    // And live events keep coming on the same stream.
    play(&mut c, &g, &g.white, 3, 0).await.unwrap();
    let live = w.message().await.unwrap().unwrap();
    let e = live.event.unwrap();
    assert_eq!(e.kind, "move_played");
    assert_eq!(live.state.unwrap().move_number, 4);
    seen.push(e.seq);
    assert_eq!(
        seen,
        (1..=seen.len() as u64).collect::<Vec<_>>(),
        "contiguous, no gaps, no repeats"
    );
}

/// Durability: a crash mid-game loses no acknowledged move; play continues after restart.
#[tokio::test]
async fn restart_loses_no_acknowledged_move() {
    let srv = Server::fresh("restart");
    let mut c = srv.client().await;
    let time = pb::TimeControl {
        kind: Some(pb::time_control::Kind::Absolute(pb::time_control::Absolute {
            main_ms: 600_000,
        })),
    };
    let g = new_game(&mut c, 9, Some(time)).await;
    for (i, (x, y)) in [(4, 4), (3, 3), (5, 5), (2, 2)].into_iter().enumerate() {
        let t = if i % 2 == 0 { &g.black } else { &g.white };
        play(&mut c, &g, t, x, y).await.unwrap();
    }
    // More open games, White's clock running in each: every one is recovered and credited.
    let mut others = Vec::new();
    for _ in 0..30 {
        let o = new_game(&mut c, 9, Some(time)).await;
        play(&mut c, &o, &o.black, 4, 4).await.unwrap();
        others.push(o);
    }
    let mut others_before = Vec::new();
    for o in &others {
        others_before.push(state(&mut c, &o.id).await.white_clock.unwrap().main_ms);
    }
    let before = state(&mut c, &g.id).await;
    let dir = srv.crash();
    tokio::time::sleep(Duration::from_millis(5_000)).await;
    let srv = Server::start(dir);
    let mut c = srv.client().await;
    let after = state(&mut c, &g.id).await;
    assert_eq!(after.move_number, 4);
    assert_eq!(after.board, before.board);
    assert_eq!(after.phase, pb::Phase::Playing as i32);
    // The 1.5 s of downtime was not charged: Black's clock shows what it showed before,
    // within the heartbeat interval (100 ms here) and the restart itself.
    let (b0, b1) = (before.black_clock.unwrap().main_ms, after.black_clock.unwrap().main_ms);
    assert!(
        b0.abs_diff(b1) < 1_000,
        "clock moved by {} ms across the restart",
        b0.abs_diff(b1)
    );
    play(&mut c, &g, &g.black, 6, 6).await.unwrap();
    assert_eq!(state(&mut c, &g.id).await.move_number, 5);
    for (o, w0) in others.iter().zip(others_before) {
        let st = state(&mut c, &o.id).await;
        let w1 = st.white_clock.unwrap().main_ms;
        assert!(
            w0.abs_diff(w1) < 1_000,
            "game {}: clock moved by {} ms",
            o.id,
            w0.abs_diff(w1)
        );
        play(&mut c, o, &o.white, 3, 3).await.unwrap();
    }
}

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

/// A fresh PostgreSQL database, or `None` (skipped) without a server: as in the store's
/// tests, `WEIQI_TEST_POSTGRES_URL` names a database whose user may create databases, and
/// CI sets `WEIQI_REQUIRE_POSTGRES=1` so that a missing server fails instead.
async fn pg(name: &str) -> Option<String> {
    let Ok(admin) = std::env::var("WEIQI_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var_os("WEIQI_REQUIRE_POSTGRES").is_none(),
            "WEIQI_REQUIRE_POSTGRES is set but WEIQI_TEST_POSTGRES_URL is not"
        );
        eprintln!("skipped: set WEIQI_TEST_POSTGRES_URL to run against PostgreSQL");
        return None;
    };
    use sqlx::{Connection, Executor};
    let db = format!("weiqi_e2e_{}_{name}", std::process::id());
    let mut conn = sqlx::PgConnection::connect(&admin).await.expect("PostgreSQL");
    conn.execute(format!("DROP DATABASE IF EXISTS {db}").as_str())
        .await
        .unwrap();
    conn.execute(format!("CREATE DATABASE {db}").as_str()).await.unwrap();
    let (server, _) = admin.split('?').next().unwrap().rsplit_once('/').unwrap();
    Some(format!("{server}/{db}"))
}

/// A fresh PostgreSQL database for servers to share (`None`: PostgreSQL tests are off).
struct SharedDatabase {
    url: String,
    name: &'static str,
}

impl SharedDatabase {
    async fn new(name: &'static str) -> Option<SharedDatabase> {
        Some(SharedDatabase {
            url: pg(name).await?,
            name,
        })
    }

    /// Starts (or restarts) the server `replica` on the database, with a data folder of its own.
    fn replica(&self, replica: &str) -> Server {
        self.replica_with(replica, &[])
    }

    /// As [`SharedDatabase::replica`], with more settings.
    fn replica_with(&self, replica: &str, env: &[(&str, &str)]) -> Server {
        let dir = std::env::temp_dir().join(format!("weiqi-e2e-{}-pg-{}-{replica}", std::process::id(), self.name));
        let mut env = env.to_vec();
        env.push(("WEIQI__DATABASE_URL", self.url.as_str()));
        Server::start_with(dir, &env)
    }
}

/// Two replicas on one PostgreSQL database: a game created on one is played on the
/// other, each catching up with the other's moves before it answers, a spectator on one
/// sees the other's moves live, and the lobby lists every replica's games; when the first
/// replica crashes, the other goes on with every acknowledged move.
#[tokio::test]
async fn postgres_replicas_share_games() {
    let Some(db) = SharedDatabase::new("replicas").await else {
        return;
    };
    let (a, b) = (db.replica("a"), db.replica("b"));
    let (mut ca, mut cb) = (a.client().await, b.client().await);
    let g = new_game(&mut ca, 9, None).await;
    play(&mut ca, &g, &g.black, 4, 4).await.unwrap();
    // B loads the game from the database on first use, and plays on it.
    play(&mut cb, &g, &g.white, 3, 3).await.unwrap();
    assert_eq!(state(&mut cb, &g.id).await.move_number, 2);
    // A's copy is behind B's move: A catches up before it answers (a stale copy would say
    // "not your turn").
    assert_eq!(state(&mut ca, &g.id).await.move_number, 2);
    play(&mut ca, &g, &g.black, 5, 5).await.unwrap();
    // Commands do not read the database first: a copy that is behind finds out when its
    // command fails (here "not your turn", or a stale move number, or a conflicting
    // append) and runs it again on the game as stored.
    play(&mut cb, &g, &g.white, 7, 7).await.unwrap();
    let caught_up = a.metric("weiqi_catch_ups_total").await;
    let first = play_as(&mut ca, &g, &g.black, (1, 1), "pg-b", 4).await.unwrap();
    assert_eq!(a.metric("weiqi_catch_ups_total").await, caught_up + 1.0);
    assert_eq!(first.state.as_ref().unwrap().move_number, 5);
    // The same request retried through B (whose copy is now behind) gets the first
    // answer, and nothing is played twice.
    let again = play_as(&mut cb, &g, &g.black, (1, 1), "pg-b", 4).await.unwrap();
    assert_eq!(again.state, first.state);
    assert_eq!(again.events.len(), first.events.len());
    // A stale move number is still refused when it is stale in the database too, with the
    // current state attached.
    let stale = play_as(&mut cb, &g, &g.white, (2, 7), "pg-w", 4).await.unwrap_err();
    assert_eq!(
        (stale.code(), reason(&stale)),
        (Code::FailedPrecondition, "stale".into())
    );
    // A spectator on B sees A's next move live (B polls the games watched there).
    let seq = state(&mut cb, &g.id).await.seq;
    let mut watch = watch(&mut cb, &g.id, seq).await;
    play(&mut ca, &g, &g.white, 6, 6).await.unwrap();
    let seen = tokio::time::timeout(Duration::from_secs(10), watch.message())
        .await
        .expect("the move reaches a watcher on the other replica")
        .unwrap()
        .unwrap();
    assert_eq!(seen.event.unwrap().point, pt(6, 6));
    // The lobby is every replica's: B lists an open game created on A, and the game in
    // play at its current move.
    let open = open_game(&mut ca).await;
    let lobby = cb
        .list_games(pb::ListGamesRequest::default())
        .await
        .unwrap()
        .into_inner();
    let ids = |l: &[pb::GameSummary]| l.iter().map(|s| s.game_id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&lobby.open), vec![open]);
    assert_eq!(ids(&lobby.playing), vec![g.id.clone()]);
    assert_eq!(lobby.playing[0].move_number, 6);
    assert_eq!(lobby.playing[0].phase, pb::Phase::Playing as i32);
    // A crashes; B has every acknowledged move and goes on.
    let _ = a.crash();
    let st = state(&mut cb, &g.id).await;
    assert_eq!(st.move_number, 6);
    play(&mut cb, &g, &g.black, 2, 2).await.unwrap();
    // A restarted replica recovers the game from the database too.
    let a = db.replica("a");
    let mut ca = a.client().await;
    let st = state(&mut ca, &g.id).await;
    assert_eq!((st.move_number, st.board), (7, state(&mut cb, &g.id).await.board));
}

/// With PostgreSQL, a game whose server is gone still ends on time: another replica,
/// which never held the game, claims it once its clock is overdue and ticks it.
#[tokio::test]
async fn postgres_overdue_game_of_a_crashed_replica_ends_on_time() {
    let Some(db) = SharedDatabase::new("overdue").await else {
        return;
    };
    let (a, b) = (db.replica("a"), db.replica("b"));
    let mut ca = a.client().await;
    let time = pb::TimeControl {
        kind: Some(pb::time_control::Kind::Absolute(pb::time_control::Absolute {
            main_ms: 300,
        })),
    };
    // (Black's clock starts at the join, after `started`.)
    let started = std::time::Instant::now();
    let g = new_game(&mut ca, 9, Some(time)).await;
    let _ = a.crash();
    // On A, the game would have ended when Black's 300 ms and the lag allowance (1 s) ran
    // out. B claims games half a second past that, looking four times a second.
    let on_its_own = Duration::from_millis(1300);
    let mut cb = b.client().await;
    let st = loop {
        let st = state(&mut cb, &g.id).await;
        if st.phase == pb::Phase::Finished as i32 {
            break st;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "still {st:?}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    // Within about a second of the game's own end: 750 ms of claim grace and period, the
    // claim's and the test's round trips, and slack for a loaded machine. (The old
    // claims, 2 s late at the least, fail this.)
    let late = started.elapsed().saturating_sub(on_its_own);
    assert!(
        late < Duration::from_millis(1500),
        "ended {late:?} after its own deadline"
    );
    let r = st.result.unwrap();
    assert_eq!(
        (r.reason, r.winner),
        (pb::EndReason::Time as i32, pb::Color::White as i32)
    );
    assert!(st.black_clock.unwrap().flagged);
    assert_eq!(b.metric("weiqi_claims_total{kind=\"overdue\"}").await, 1.0);
    assert_eq!(b.metric("weiqi_games_finished_total").await, 1.0);
}

/// With PostgreSQL, an open game nobody joins is cancelled even when its server is gone:
/// another replica, which never held it, claims and cancels it once it is too old.
#[tokio::test]
async fn postgres_open_game_of_a_crashed_replica_expires() {
    let Some(db) = SharedDatabase::new("open_ttl").await else {
        return;
    };
    let ttl = [("WEIQI__OPEN_GAME_TTL_MS", "1500")];
    let (a, b) = (db.replica_with("a", &ttl), db.replica_with("b", &ttl));
    let mut ca = a.client().await;
    let open = open_game(&mut ca).await;
    let _ = a.crash();
    // B's lobby is read from the database (listing loads no game into B's memory).
    let mut cb = b.client().await;
    let started = std::time::Instant::now();
    loop {
        let lobby = cb
            .list_games(pb::ListGamesRequest::default())
            .await
            .unwrap()
            .into_inner();
        if lobby.open.is_empty() {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "still open: {lobby:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let st = state(&mut cb, &open).await;
    assert_eq!(st.phase, pb::Phase::Finished as i32);
    assert_eq!(st.result.unwrap().reason, pb::EndReason::Cancelled as i32);
    assert_eq!(b.metric("weiqi_claims_total{kind=\"open\"}").await, 1.0);
}

/// Streams end when their clients go away, whatever the game does: watchers of a quiet
/// game that cancel their calls or close their connections stop being counted at once,
/// and the server's memory does not grow with them.
#[tokio::test]
async fn watch_streams_end_with_their_clients() {
    let srv = Server::fresh("dead-watchers");
    let mut c = srv.client().await;
    let g = new_game(&mut c, 9, None).await;
    play(&mut c, &g, &g.black, 2, 2).await.unwrap();
    let baseline = srv.metric("weiqi_open_streams").await;
    // One round: `n` watchers over `conns` connections of their own, each having read
    // the game's backlog; then half are cancelled (streams dropped on open connections)
    // and the other half lose their connections. The game stays quiet throughout.
    let round = |n: usize| {
        let addr = format!("http://{}", srv.addr);
        let id = g.id.clone();
        async move {
            let mut channels = Vec::new();
            let mut streams = Vec::new();
            for i in 0..n {
                if i % 10 == 0 {
                    channels.push(Channel::from_shared(addr.clone()).unwrap().connect().await.unwrap());
                }
                let mut client = GameServiceClient::new(channels.last().unwrap().clone());
                let mut s = watch(&mut client, &id, 0).await;
                assert!(s.message().await.unwrap().is_some(), "the backlog arrives");
                streams.push(s);
            }
            (channels, streams)
        }
    };
    let open = |target: f64| {
        let srv = &srv;
        async move {
            let started = std::time::Instant::now();
            loop {
                let now = srv.metric("weiqi_open_streams").await;
                if now == target || started.elapsed() > Duration::from_secs(3) {
                    return now;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    let (channels, mut streams) = round(200).await;
    assert_eq!(open(baseline + 200.0).await, baseline + 200.0);
    // Cancelled: half the streams are dropped, their connections stay up.
    streams.truncate(100);
    assert_eq!(open(baseline + 100.0).await, baseline + 100.0, "cancelled streams end");
    // Connections closed (the clients' sockets go away with the last handle).
    drop(streams);
    drop(channels);
    assert_eq!(open(baseline).await, baseline, "streams of closed connections end");
    // Memory: after a first round has warmed the allocator, five more rounds of 300
    // watchers leave the server's resident memory where it was, give or take the
    // allocator's noise (-8..+2 MiB measured). Dead streams, each holding its task, its
    // channel and its buffered backlog (about 27 KiB), grew it 7-9 MiB a round: 37 MiB.
    let rss = || {
        let status = std::fs::read_to_string(format!("/proc/{}/status", srv.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap()
    };
    drop(round(300).await);
    assert_eq!(open(baseline).await, baseline);
    let warm = rss();
    for _ in 0..5 {
        drop(round(300).await);
        assert_eq!(open(baseline).await, baseline);
    }
    let grown = rss().saturating_sub(warm);
    assert!(
        grown < 16 * 1024,
        "resident memory grew by {grown} KiB over 1,500 dropped watchers"
    );
}
