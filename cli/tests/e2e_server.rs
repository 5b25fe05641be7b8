//! End-to-end: the real `weiqi serve` binary on a loopback port, driven by a real gRPC
//! client (tonic), through whole games: scoring, time, adjournment, disputes, retries,
//! seats, nigiri, cancellation, restarts. Each test gets its own data folder.

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
    let sgf = support::sgf(&mut c, &g.id).await;
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
    // Black's 300 ms plus the default lag allowance (1 s) run out with nobody calling;
    // then the server's timer ends the game (with slack for a loaded machine).
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    let st = until_finished(&mut c, &g.id, Duration::from_secs(10)).await;
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
    let mut watch = watch_as(&mut c, &g.id, 0, &g.black).await;
    let mut saw_sealed = false;
    while let Some(item) = watch.message().await.unwrap() {
        let Some(e) = item.event else { continue };
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
            ..Default::default()
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

/// A mutation's `view`: the basic answer leaves out the board and the settings and is
/// otherwise the game's state after the command (less than a third of the full answer's
/// bytes on 19x19); an unknown view is refused and changes nothing.
#[tokio::test]
async fn basic_answers_leave_out_the_board() {
    let srv = Server::fresh("views");
    let mut c = srv.client().await;
    let g = new_game(&mut c, 19, None).await;
    let play_in = |x: u32, view: i32, token: &str| {
        authed(
            pb::PlayRequest {
                mutation: Some(pb::Mutation {
                    game_id: g.id.clone(),
                    view,
                    ..Default::default()
                }),
                point: pt(x, 3),
                lag_ms: 0,
            },
            token,
        )
    };
    let full = c
        .play(play_in(3, pb::StateView::Full as i32, &g.black))
        .await
        .unwrap()
        .into_inner();
    let basic = c
        .play(play_in(15, pb::StateView::Basic as i32, &g.white))
        .await
        .unwrap()
        .into_inner();
    let (full, basic) = (full.result.unwrap(), basic.result.unwrap());
    let (f, b) = (full.state.clone().unwrap(), basic.state.clone().unwrap());
    assert_eq!(f.board.len(), 19);
    assert!(f.settings.is_some());
    assert!(b.board.is_empty() && b.settings.is_none(), "{b:?}");
    assert_eq!((b.move_number, b.to_move), (2, pb::Color::Black as i32));
    assert_eq!(b.last_move, pt(15, 3));
    assert_eq!(basic.events.len(), 1);
    assert!(
        prost::Message::encoded_len(&basic) * 3 < prost::Message::encoded_len(&full),
        "the basic answer is the smaller: {} against {} bytes",
        prost::Message::encoded_len(&basic),
        prost::Message::encoded_len(&full)
    );
    // The game itself has both stones, whatever the answers carried.
    assert_eq!(state(&mut c, &g.id).await.board[3], "...x...........o...");
    let err = c.play(play_in(9, 7, &g.black)).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(state(&mut c, &g.id).await.move_number, 2);
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
    let sgf = support::sgf(&mut c, &id).await;
    assert!(sgf.contains("RE[Void]"), "{sgf}");
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
    // The 5 s of downtime was not charged: Black's clock shows what it showed before,
    // within the heartbeat interval (100 ms here) and the restart itself.
    let (b0, b1) = (before.black_clock.unwrap().main_ms, after.black_clock.unwrap().main_ms);
    assert!(
        b0.abs_diff(b1) < 1_000,
        "clock moved by {} ms across the restart",
        b0.abs_diff(b1)
    );
    play(&mut c, &g, &g.black, 6, 6).await.unwrap();
    assert_eq!(state(&mut c, &g.id).await.move_number, 5);
    // Every clock read before any move (each a durable write): the clocks keep running
    // while the others are read, as they did before the crash.
    let mut others_after = Vec::new();
    for o in &others {
        others_after.push(state(&mut c, &o.id).await.white_clock.unwrap().main_ms);
    }
    for ((o, w0), w1) in others.iter().zip(others_before).zip(others_after) {
        assert!(
            w0.abs_diff(w1) < 1_000,
            "game {}: clock moved by {} ms",
            o.id,
            w0.abs_diff(w1)
        );
        play(&mut c, o, &o.white, 3, 3).await.unwrap();
    }
}
