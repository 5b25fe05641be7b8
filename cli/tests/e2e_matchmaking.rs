//! Challenges, automatch and players' feeds against the real server: a challenge declined
//! with its reason creates nothing, an accepted one starts the game with both seats
//! handed out (the challenger's on its feed), bad requests get typed errors, seeks pair
//! oldest first, two replicas on one PostgreSQL pair every seek once, and ratings a
//! stopped server left unapplied are applied when it comes back.

mod support;

use std::collections::HashMap;
use std::time::Duration;

use support::*;
use tonic::Code;
use tonic::transport::Channel;
use tonic::{Request, Streaming};
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::player_service_client::PlayerServiceClient;
use weiqi_proto::v1::watch_player_response::Event;

type Players = PlayerServiceClient<Channel>;

async fn players(server: &Server) -> Players {
    PlayerServiceClient::connect(format!("http://{}", server.addr))
        .await
        .unwrap()
}

/// A guest: (player id, token).
async fn guest(p: &mut Players, name: &str) -> (String, String) {
    let r = p
        .register_guest(pb::RegisterGuestRequest { name: name.into() })
        .await
        .unwrap()
        .into_inner();
    (r.player.unwrap().player_id, r.token)
}

/// A player's feed, once the server has it open (`subscribed` received).
async fn feed(p: &mut Players, token: &str) -> Streaming<pb::WatchPlayerResponse> {
    let mut s = p
        .watch_player(authed(pb::WatchPlayerRequest { after_seq: 0 }, token))
        .await
        .unwrap()
        .into_inner();
    let first = next(&mut s).await;
    assert!(matches!(first, Event::Subscribed(_)), "{first:?}");
    s
}

async fn next(s: &mut Streaming<pb::WatchPlayerResponse>) -> Event {
    tokio::time::timeout(Duration::from_secs(15), s.message())
        .await
        .expect("a feed event within 15 s")
        .unwrap()
        .expect("the feed stays open")
        .event
        .unwrap()
}

fn nine(rated: bool) -> pb::GameSettings {
    pb::GameSettings {
        board_size: 9,
        color_choice: pb::ColorChoice::HostBlack as i32,
        rated,
        ..Default::default()
    }
}

async fn challenge(
    p: &mut Players,
    token: &str,
    to: &str,
    settings: pb::GameSettings,
) -> Result<pb::ChallengeInfo, tonic::Status> {
    let r = p
        .challenge(authed(
            pb::ChallengeRequest {
                player_id: to.into(),
                settings: Some(settings),
            },
            token,
        ))
        .await?;
    Ok(r.into_inner().challenge.unwrap())
}

async fn answer(
    p: &mut Players,
    token: &str,
    id: &str,
    accept: bool,
    reason: pb::DeclineReason,
) -> Result<pb::AnswerChallengeResponse, tonic::Status> {
    Ok(p.answer_challenge(authed(
        pb::AnswerChallengeRequest {
            challenge_id: id.into(),
            accept,
            reason: reason as i32,
        },
        token,
    ))
    .await?
    .into_inner())
}

fn refused<T: std::fmt::Debug>(r: Result<T, tonic::Status>, code: Code, why: &str) {
    let e = r.expect_err("refused");
    assert_eq!((e.code(), reason(&e).as_str()), (code, why), "{e:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn challenges_are_declined_with_a_reason_or_start_a_game() {
    let server = Server::fresh("challenges");
    let mut p = players(&server).await;
    let mut games = server.client().await;
    let (alice, alice_t) = guest(&mut p, "Alice").await;
    let (bob, bob_t) = guest(&mut p, "Bob").await;
    let (_, carol_t) = guest(&mut p, "Carol").await;

    // Bad challenges: an unknown player, oneself, a player who is offline, bad settings.
    refused(
        challenge(&mut p, &alice_t, "guest:nobody", nine(false)).await,
        Code::NotFound,
        "player_not_found",
    );
    refused(
        challenge(&mut p, &alice_t, &alice, nine(false)).await,
        Code::InvalidArgument,
        "self_challenge",
    );
    refused(
        challenge(&mut p, &alice_t, &bob, nine(false)).await,
        Code::FailedPrecondition,
        "opponent_offline",
    );
    let unauthenticated = p
        .challenge(Request::new(pb::ChallengeRequest {
            player_id: bob.clone(),
            settings: Some(nine(false)),
        }))
        .await;
    assert_eq!(unauthenticated.unwrap_err().code(), Code::Unauthenticated);

    let mut alice_feed = feed(&mut p, &alice_t).await;
    let mut bob_feed = feed(&mut p, &bob_t).await;
    let mut huge = nine(false);
    huge.board_size = 40;
    assert_eq!(
        challenge(&mut p, &alice_t, &bob, huge).await.unwrap_err().code(),
        Code::InvalidArgument
    );

    // Declined with a reason: both feeds hear it, and no game exists.
    let c = challenge(&mut p, &alice_t, &bob, nine(true)).await.unwrap();
    assert_eq!(c.status, pb::ChallengeStatus::Open as i32);
    let Event::ChallengeReceived(got) = next(&mut bob_feed).await else {
        panic!("challenge expected")
    };
    assert_eq!(got.challenge_id, c.challenge_id);
    assert_eq!(got.challenger.unwrap().player_id, alice);
    assert!(got.settings.unwrap().rated);
    let declined = answer(&mut p, &bob_t, &c.challenge_id, false, pb::DeclineReason::BoardSize)
        .await
        .unwrap();
    assert!(declined.game_id.is_empty() && declined.seat_token.is_empty());
    for f in [&mut alice_feed, &mut bob_feed] {
        let Event::ChallengeAnswered(a) = next(f).await else {
            panic!("answer expected")
        };
        assert_eq!(a.status, pb::ChallengeStatus::Declined as i32);
        assert_eq!(a.decline_reason, pb::DeclineReason::BoardSize as i32);
    }
    let lobby = games
        .list_games(pb::ListGamesRequest { limit: 10 })
        .await
        .unwrap()
        .into_inner();
    assert!(lobby.open.is_empty() && lobby.playing.is_empty(), "{lobby:?}");
    refused(
        answer(&mut p, &bob_t, &c.challenge_id, true, pb::DeclineReason::Unspecified).await,
        Code::FailedPrecondition,
        "challenge_closed",
    );

    // Accepted: the game starts at once; the challenger's seat comes on its feed.
    let c = challenge(&mut p, &alice_t, &bob, nine(true)).await.unwrap();
    let Event::ChallengeReceived(_) = next(&mut bob_feed).await else {
        panic!("challenge expected")
    };
    refused(
        answer(&mut p, &carol_t, &c.challenge_id, true, pb::DeclineReason::Unspecified).await,
        Code::PermissionDenied,
        "not_challenged",
    );
    let accepted = answer(&mut p, &bob_t, &c.challenge_id, true, pb::DeclineReason::Unspecified)
        .await
        .unwrap();
    assert!(!accepted.seat_token.is_empty());
    let game_id = accepted.game_id.clone();
    let mut alice_seat = String::new();
    for _ in 0..2 {
        match next(&mut alice_feed).await {
            Event::ChallengeAnswered(a) => {
                assert_eq!(
                    (a.status, a.game_id.as_str()),
                    (pb::ChallengeStatus::Accepted as i32, game_id.as_str())
                );
            }
            Event::GameStarted(s) => {
                assert_eq!(s.game_id, game_id);
                alice_seat = s.seat_token;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(!alice_seat.is_empty());
    let seat = p
        .get_seat(authed(
            pb::GetSeatRequest {
                game_id: game_id.clone(),
            },
            &alice_t,
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(seat.seat_token, alice_seat);
    refused(
        p.get_seat(authed(
            pb::GetSeatRequest {
                game_id: game_id.clone(),
            },
            &carol_t,
        ))
        .await,
        Code::PermissionDenied,
        "not_your_game",
    );
    let s = state(&mut games, &game_id).await;
    assert_eq!(s.phase, pb::Phase::Playing as i32);
    assert_eq!(s.host_player.unwrap().player_id, alice);
    assert_eq!(s.guest_player.unwrap().player_id, bob);
    // Alice (the host) is Black, as she asked.
    let g = Game {
        id: game_id.clone(),
        black: alice_seat,
        white: accepted.seat_token,
    };
    play(&mut games, &g, &g.black, 2, 2).await.unwrap();
    play(&mut games, &g, &g.white, 6, 6).await.unwrap();
    games
        .resign(authed(
            pb::ResignRequest {
                mutation: m(&game_id, ""),
            },
            &g.white,
        ))
        .await
        .unwrap();
    let mut bob_saw_start = false;
    loop {
        match next(&mut bob_feed).await {
            Event::ChallengeAnswered(_) => {}
            Event::GameStarted(s) => bob_saw_start = s.game_id == game_id,
            Event::GameEnded(e) => {
                assert_eq!((e.game_id.as_str(), e.result.as_str()), (game_id.as_str(), "B+R"));
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(bob_saw_start);

    // Cancelled by the challenger: the challenged hears it and can no longer accept.
    let c = challenge(&mut p, &alice_t, &bob, nine(false)).await.unwrap();
    let listed = p
        .list_challenges(authed(pb::ListChallengesRequest {}, &bob_t))
        .await
        .unwrap()
        .into_inner()
        .challenges;
    assert_eq!(listed.len(), 1);
    p.cancel_challenge(authed(
        pb::CancelChallengeRequest {
            challenge_id: c.challenge_id.clone(),
        },
        &alice_t,
    ))
    .await
    .unwrap();
    loop {
        if let Event::ChallengeAnswered(a) = next(&mut bob_feed).await
            && a.challenge_id == c.challenge_id
        {
            assert_eq!(a.status, pb::ChallengeStatus::Cancelled as i32);
            break;
        }
    }
    refused(
        answer(&mut p, &bob_t, &c.challenge_id, true, pb::DeclineReason::Unspecified).await,
        Code::FailedPrecondition,
        "challenge_closed",
    );
}

fn seek(sizes: &[u32], min_s: u32, max_s: u32) -> pb::SeekRequest {
    pb::SeekRequest {
        board_sizes: sizes.to_vec(),
        main_time_min_s: min_s,
        main_time_max_s: max_s,
        rated: true,
        rating_window: 0,
        handicap: false,
    }
}

/// The next `matched` on a feed (skipping what came before), then its `game_started`:
/// (game id, seat token).
async fn matched(f: &mut Streaming<pb::WatchPlayerResponse>) -> (String, String) {
    loop {
        if let Event::Matched(m) = next(f).await {
            loop {
                if let Event::GameStarted(s) = next(f).await {
                    assert_eq!((&s.game_id, &s.seat_token), (&m.game_id, &m.seat_token));
                    return (m.game_id, m.seat_token);
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeks_pair_into_a_rated_game() {
    let server = Server::fresh("seeks");
    let mut p = players(&server).await;
    let mut games = server.client().await;
    let (a, a_t) = guest(&mut p, "A").await;
    let (b, b_t) = guest(&mut p, "B").await;

    // Bad seeks.
    refused(
        p.seek(authed(seek(&[9], 600, 60), &a_t)).await,
        Code::InvalidArgument,
        "empty_range",
    );
    assert_eq!(
        p.seek(authed(seek(&[], 60, 600), &a_t)).await.unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(
        p.seek(authed(seek(&[7], 60, 600), &a_t)).await.unwrap_err().code(),
        Code::InvalidArgument
    );
    let first = p.seek(authed(seek(&[9], 60, 600), &a_t)).await.unwrap().into_inner();
    refused(
        p.seek(authed(seek(&[9], 60, 600), &a_t)).await,
        Code::AlreadyExists,
        "duplicate_seek",
    );
    refused(
        p.cancel_seek(authed(
            pb::CancelSeekRequest {
                seek_id: first.seek_id.clone(),
            },
            &b_t,
        ))
        .await,
        Code::NotFound,
        "seek_not_found",
    );
    p.cancel_seek(authed(
        pb::CancelSeekRequest {
            seek_id: first.seek_id.clone(),
        },
        &a_t,
    ))
    .await
    .unwrap();

    // Two compatible seeks: one rated 9x9 game at the shorter common main time.
    let mut fa = feed(&mut p, &a_t).await;
    let mut fb = feed(&mut p, &b_t).await;
    p.seek(authed(seek(&[9, 13], 60, 600), &a_t)).await.unwrap();
    p.seek(authed(seek(&[13, 9], 120, 900), &b_t)).await.unwrap();
    let (game_a, seat_a) = matched(&mut fa).await;
    let (game_b, seat_b) = matched(&mut fb).await;
    assert_eq!(game_a, game_b);
    assert_ne!(seat_a, seat_b);
    let s = state(&mut games, &game_a).await;
    let settings = s.settings.clone().unwrap();
    assert_eq!((settings.board_size, settings.rated), (9, true));
    let Some(pb::time_control::Kind::ByoYomi(t)) = settings.time_control.unwrap().kind else {
        panic!("byo-yomi expected")
    };
    assert_eq!((t.main_ms, t.periods, t.period_ms), (120_000, 3, 30_000));
    let seated: Vec<String> = [s.host_player.unwrap(), s.guest_player.unwrap()]
        .into_iter()
        .map(|p| p.player_id)
        .collect();
    assert_eq!(seated, [a.clone(), b.clone()], "the older seek hosts");
    // The seats work: whoever is Black moves first.
    let black_is_host = s.black_seat == pb::Seat::Host as i32;
    let (black, white) = if black_is_host {
        (seat_a, seat_b)
    } else {
        (seat_b, seat_a)
    };
    let g = Game {
        id: game_a,
        black,
        white,
    };
    play(&mut games, &g, &g.black, 4, 4).await.unwrap();
    play(&mut games, &g, &g.white, 2, 2).await.unwrap();
    // The seeks are gone: seeking again is not a duplicate.
    let again = p.seek(authed(seek(&[19], 60, 600), &a_t)).await.unwrap().into_inner();
    p.cancel_seek(authed(pb::CancelSeekRequest { seek_id: again.seek_id }, &a_t))
        .await
        .unwrap();
}

/// Two replicas on one PostgreSQL, twelve players seeking at once, half through each:
/// every player is matched exactly once, into games of two different players.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_pair_every_seek_once() {
    let Some(url) = pg("automatch").await else { return };
    let replica = |name: &str| {
        let dir = std::env::temp_dir().join(format!("weiqi-e2e-{}-pg-automatch-{name}", std::process::id()));
        Server::start_with(dir, &[("WEIQI__DATABASE_URL", url.as_str())])
    };
    let servers = [replica("a"), replica("b")];
    let mut clients = [players(&servers[0]).await, players(&servers[1]).await];
    let n = 12;
    let mut people = Vec::new();
    for i in 0..n {
        let (id, token) = guest(&mut clients[i % 2], &format!("P{i}")).await;
        let f = feed(&mut clients[i % 2], &token).await;
        people.push((id, token, f));
    }
    let seeks = people.iter().enumerate().map(|(i, (_, token, _))| {
        let mut c = clients[i % 2].clone();
        let token = token.clone();
        tokio::spawn(async move { c.seek(authed(seek(&[9], 60, 600), &token)).await.map(|_| ()) })
    });
    for s in seeks.collect::<Vec<_>>() {
        s.await.unwrap().unwrap();
    }
    let mut games: HashMap<String, Vec<String>> = HashMap::new();
    for (id, _, f) in &mut people {
        let (game, _) = matched(f).await;
        games.entry(game).or_default().push(id.clone());
    }
    assert_eq!(games.len(), n / 2, "{games:?}");
    let mut c = servers[1].client().await;
    for (game, ids) in &games {
        assert_eq!(ids.len(), 2);
        assert_ne!(ids[0], ids[1]);
        let s = state(&mut c, game).await;
        let mut seated = [s.host_player.unwrap().player_id, s.guest_player.unwrap().player_id];
        let mut expected = [ids[0].clone(), ids[1].clone()];
        seated.sort();
        expected.sort();
        assert_eq!(seated, expected);
    }
    // Nobody was paired twice: no feed has a second match (give the matchmakers time).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for (_, _, f) in &mut people {
        let extra = tokio::time::timeout(Duration::from_millis(50), f.message()).await;
        if let Ok(Ok(Some(e))) = extra {
            assert!(!matches!(e.event, Some(Event::Matched(_))), "{e:?}");
        }
    }
}

/// A server that stops between a rated game's last move and the rating update applies the
/// rating when it starts again (its state rebuilt by hand: the game over, its rating
/// still pending).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ratings_left_unapplied_are_applied_after_a_restart() {
    let server = Server::fresh("rating-recovery");
    let mut p = players(&server).await;
    let mut games = server.client().await;
    let (a, a_t) = guest(&mut p, "A").await;
    let (b, b_t) = guest(&mut p, "B").await;
    let created = games
        .create_game(authed(
            pb::CreateGameRequest {
                settings: Some(nine(true)),
                ..Default::default()
            },
            &a_t,
        ))
        .await
        .unwrap()
        .into_inner();
    let id = created.game_id.clone();
    let joined = games
        .join_game(authed(
            pb::JoinGameRequest {
                game_id: id.clone(),
                ..Default::default()
            },
            &b_t,
        ))
        .await
        .unwrap()
        .into_inner();
    let g = Game {
        id: id.clone(),
        black: created.seat_token,
        white: joined.seat_token,
    };
    play(&mut games, &g, &g.black, 2, 2).await.unwrap();
    play(&mut games, &g, &g.white, 6, 6).await.unwrap();
    games
        .resign(authed(pb::ResignRequest { mutation: m(&id, "") }, &g.black))
        .await
        .unwrap();
    let dir = server.crash();

    // As if it had stopped before rating: the game is over, its rating pending.
    {
        use sqlx::{Connection, Executor};
        let url = format!("sqlite://{}", dir.join("weiqi.sqlite3").display());
        let mut db = sqlx::SqliteConnection::connect(&url).await.unwrap();
        for q in [
            "DELETE FROM rated_games",
            "DELETE FROM ratings",
            "DELETE FROM rating_history",
        ] {
            db.execute(q).await.unwrap();
        }
        db.execute(format!("INSERT INTO rating_pending (game_id, at_ms) VALUES ('{id}', 1)").as_str())
            .await
            .unwrap();
        db.close().await.unwrap();
    }
    let server = Server::start(dir);
    let mut p = players(&server).await;
    for (who, won) in [(a, false), (b, true)] {
        let player = p
            .get_player(pb::GetPlayerRequest { player_id: who })
            .await
            .unwrap()
            .into_inner()
            .player
            .unwrap();
        let r = player
            .ratings
            .iter()
            .find(|r| r.board_size == 9)
            .expect("rated after the restart");
        assert_eq!(r.games, 1);
        assert_eq!(r.rating > 1500.0, won, "{r:?}");
    }
}

/// `weiqi bot --challenges` signed in as a player: it declines a challenge its filters
/// refuse, with the reason, and accepts and plays one they pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_answers_challenges_by_its_filters() {
    use std::process::{Command, Stdio};
    let server = Server::fresh("bot-challenges");
    let mut p = players(&server).await;
    let (bot_id, bot_t) = guest(&mut p, "Robo").await;
    let (_, me_t) = guest(&mut p, "Human").await;
    let engine = format!("{} gtp --player light", env!("CARGO_BIN_EXE_weiqi"));
    let bot = Command::new(env!("CARGO_BIN_EXE_weiqi"))
        .args([
            "bot",
            "--server",
            &format!("http://{}", server.addr),
            "--engine",
            &engine,
        ])
        .args(["--challenges", "--sizes", "9", "--games", "1", "--max-games", "1"])
        .env("WEIQI_PLAYER_TOKEN", &bot_t)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn weiqi bot");
    let mut mine = feed(&mut p, &me_t).await;
    // Online once its feed is open.
    let mut thirteen = nine(false);
    thirteen.board_size = 13;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let refused = loop {
        match challenge(&mut p, &me_t, &bot_id, thirteen.clone()).await {
            Ok(c) => break c,
            Err(e) if reason(&e) == "opponent_offline" && std::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("{e:?}"),
        }
    };
    let Event::ChallengeAnswered(a) = next(&mut mine).await else {
        panic!("answer expected")
    };
    assert_eq!(a.challenge_id, refused.challenge_id);
    assert_eq!(
        (a.status, a.decline_reason),
        (
            pb::ChallengeStatus::Declined as i32,
            pb::DeclineReason::BoardSize as i32
        )
    );

    // 9x9, the bot White: it answers our move, then we resign.
    let mut settings = nine(false);
    settings.color_choice = pb::ColorChoice::HostBlack as i32;
    challenge(&mut p, &me_t, &bot_id, settings).await.unwrap();
    let seat = loop {
        if let Event::GameStarted(s) = next(&mut mine).await {
            break s;
        }
    };
    let mut games = server.client().await;
    let g = Game {
        id: seat.game_id.clone(),
        black: seat.seat_token,
        white: String::new(),
    };
    play(&mut games, &g, &g.black, 4, 4).await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while state(&mut games, &g.id).await.move_number < 2 {
        assert!(std::time::Instant::now() < deadline, "the bot did not move");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    games
        .resign(authed(pb::ResignRequest { mutation: m(&g.id, "") }, &g.black))
        .await
        .unwrap();
    let out = tokio::task::spawn_blocking(move || bot.wait_with_output().unwrap())
        .await
        .unwrap();
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["finished"], 1, "{summary}");
    assert_eq!(summary["games"][0]["result"], "W+R", "{summary}");
}
