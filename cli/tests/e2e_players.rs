//! Players against the real server: guests and a platform's JWT players sit in games, a
//! rated game updates both ratings (Glicko-2), the leaderboard and the history follow,
//! and bad credentials are refused with their reason.

mod support;

use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use serde_json::json;
use support::*;
use tonic::Code;
use tonic::transport::Channel;
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::player_service_client::PlayerServiceClient;

const SECRET: &str = "platform-shared-secret";
const ISSUER: &str = "https://platform.example";

fn jwt(sub: &str, name: &str, exp_from_now_s: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let claims = json!({"sub": sub, "name": name, "iss": ISSUER, "exp": now + exp_from_now_s});
    encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(SECRET.as_bytes()).unwrap(),
    )
    .unwrap()
}

/// A well-formed token signed with a key that is not the platform's.
fn forged() -> String {
    let claims = json!({"sub": "p-17", "iss": ISSUER, "exp": 4_000_000_000u64});
    encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(b"not-the-platform-secret").unwrap(),
    )
    .unwrap()
}

type Games = weiqi_proto::v1::game_service_client::GameServiceClient<Channel>;

/// Both services' clients over one connection.
async fn clients(server: &Server) -> (Games, PlayerServiceClient<Channel>) {
    let channel = Channel::from_shared(format!("http://{}", server.addr))
        .unwrap()
        .connect()
        .await
        .unwrap();
    (Games::new(channel.clone()), PlayerServiceClient::new(channel))
}

async fn guest(p: &mut PlayerServiceClient<Channel>, name: &str) -> (String, String) {
    let r = p
        .register_guest(pb::RegisterGuestRequest { name: name.into() })
        .await
        .unwrap()
        .into_inner();
    (r.player.unwrap().player_id, r.token)
}

fn rated_settings() -> pb::GameSettings {
    pb::GameSettings {
        board_size: 9,
        color_choice: pb::ColorChoice::HostBlack as i32,
        rated: true,
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rated_game_between_guests_updates_both_ratings() {
    let server = Server::fresh_with(
        "players",
        &[
            ("WEIQI__IDENTITY__JWT_HS256_SECRET", SECRET),
            ("WEIQI__IDENTITY__JWT_ISSUER", ISSUER),
        ],
    );
    let (mut games, mut players) = clients(&server).await;
    let (alice, alice_token) = guest(&mut players, "Alice").await;
    let (bob, bob_token) = guest(&mut players, "Bob").await;
    assert!(alice.starts_with("guest:") && alice != bob);

    // A rated game needs a signed-in host.
    let anonymous = games
        .create_game(pb::CreateGameRequest {
            settings: Some(rated_settings()),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(anonymous.code(), Code::PermissionDenied, "{anonymous:?}");

    let created = games
        .create_game(authed(
            pb::CreateGameRequest {
                settings: Some(rated_settings()),
                ..Default::default()
            },
            &alice_token,
        ))
        .await
        .unwrap()
        .into_inner();
    let host = created.state.unwrap().host_player.unwrap();
    assert_eq!((host.player_id.as_str(), host.name.as_str()), (alice.as_str(), "Alice"));
    let id = created.game_id;

    // Nobody holds both seats of a rated game; no half-joined game is left behind.
    let twice = games
        .join_game(authed(
            pb::JoinGameRequest {
                game_id: id.clone(),
                ..Default::default()
            },
            &alice_token,
        ))
        .await
        .unwrap_err();
    assert_eq!(twice.code(), Code::PermissionDenied, "{twice:?}");
    assert!(twice.message().contains("both seats"), "{twice:?}");
    let still_open = state(&mut games, &id).await;
    assert_eq!(still_open.phase, pb::Phase::WaitingForOpponent as i32);

    let joined = games
        .join_game(authed(
            pb::JoinGameRequest {
                game_id: id.clone(),
                ..Default::default()
            },
            &bob_token,
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(joined.state.unwrap().guest_player.unwrap().player_id, bob);
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

    // Bob (White) won: up from 1500, Alice down as much; both less uncertain.
    let rating = |p: pb::Player| p.ratings.into_iter().find(|r| r.board_size == 9).unwrap();
    let get = |id: &str| pb::GetPlayerRequest { player_id: id.into() };
    let b = rating(
        players
            .get_player(get(&bob))
            .await
            .unwrap()
            .into_inner()
            .player
            .unwrap(),
    );
    let a = rating(
        players
            .get_player(get(&alice))
            .await
            .unwrap()
            .into_inner()
            .player
            .unwrap(),
    );
    assert!(b.rating > 1500.0 && a.rating < 1500.0, "{a:?} {b:?}");
    assert!(((b.rating - 1500.0) + (a.rating - 1500.0)).abs() < 1e-6);
    assert!(b.deviation < 350.0 && a.deviation < 350.0);
    assert_eq!((a.games, b.games), (1, 1));
    assert!(b.rank.ends_with('k'), "{}", b.rank);

    let board = players
        .list_players(pb::ListPlayersRequest {
            board_size: 9,
            limit: 10,
        })
        .await
        .unwrap()
        .into_inner()
        .players;
    let order: Vec<_> = board.iter().map(|p| p.player_id.as_str()).collect();
    assert_eq!(order, [bob.as_str(), alice.as_str()]);
    let history = players
        .get_rating_history(pb::GetRatingHistoryRequest {
            player_id: alice.clone(),
            board_size: 9,
            limit: 0,
        })
        .await
        .unwrap()
        .into_inner()
        .changes;
    assert_eq!(history.len(), 1);
    assert_eq!((history[0].game_id.as_str(), history[0].score), (id.as_str(), 0.0));
    assert_eq!(history[0].rating_before, 1500.0);
    assert_eq!(history[0].rating, a.rating);
    // One provisional rating after one game (deviation above 160), as apps show it ("?").
    assert!(a.provisional && b.provisional, "{a:?}");

    // Each player's finished games, a page at a time: a casual game after the rated one.
    let casual = games
        .create_game(authed(
            pb::CreateGameRequest {
                settings: Some(pb::GameSettings {
                    rated: false,
                    ..rated_settings()
                }),
                ..Default::default()
            },
            &bob_token,
        ))
        .await
        .unwrap()
        .into_inner();
    let joined = games
        .join_game(authed(
            pb::JoinGameRequest {
                game_id: casual.game_id.clone(),
                ..Default::default()
            },
            &alice_token,
        ))
        .await
        .unwrap()
        .into_inner();
    play(
        &mut games,
        &Game {
            id: casual.game_id.clone(),
            black: casual.seat_token.clone(),
            white: joined.seat_token,
        },
        &casual.seat_token,
        2,
        2,
    )
    .await
    .unwrap();
    games
        .resign(authed(
            pb::ResignRequest {
                mutation: m(&casual.game_id, ""),
            },
            &casual.seat_token,
        ))
        .await
        .unwrap();
    let page = |token: &str| pb::ListPlayerGamesRequest {
        player_id: alice.clone(),
        page_size: 1,
        page_token: token.into(),
    };
    let first = players.list_player_games(page("")).await.unwrap().into_inner();
    let [newest] = &first.games[..] else {
        panic!("{first:?}")
    };
    assert_eq!(
        (
            newest.game_id.as_str(),
            newest.result.as_str(),
            newest.score,
            newest.rated
        ),
        (casual.game_id.as_str(), "W+R", 1.0, false)
    );
    assert_eq!(newest.color, pb::Color::White as i32);
    assert_eq!(newest.opponent.as_ref().unwrap().player_id, bob);
    let second = players
        .list_player_games(page(&first.next_page_token))
        .await
        .unwrap()
        .into_inner();
    let [older] = &second.games[..] else {
        panic!("{second:?}")
    };
    assert_eq!(
        (older.game_id.as_str(), older.score, older.rated),
        (id.as_str(), 0.0, true)
    );
    assert!(second.next_page_token.is_empty(), "the last page");
    let forged = players.list_player_games(page("not-a-token")).await.unwrap_err();
    assert_eq!(
        (forged.code(), reason(&forged).as_str()),
        (Code::InvalidArgument, "bad_page_token")
    );

    // Unknown players and sizes without ratings get typed errors.
    let missing = players.get_player(get("guest:nobody")).await.unwrap_err();
    assert_eq!(
        (missing.code(), reason(&missing).as_str()),
        (Code::NotFound, "player_not_found")
    );
    let size = players
        .list_players(pb::ListPlayersRequest {
            board_size: 7,
            limit: 0,
        })
        .await
        .unwrap_err();
    assert_eq!(size.code(), Code::InvalidArgument);
    let name = players
        .register_guest(pb::RegisterGuestRequest { name: " \n ".into() })
        .await
        .unwrap_err();
    assert_eq!(name.code(), Code::InvalidArgument);
    // A control character is refused, not silently stripped (`bad\x01name` once became
    // `badname`).
    let name = players
        .register_guest(pb::RegisterGuestRequest {
            name: "bad\x01name".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        (name.code(), reason(&name).as_str()),
        (Code::InvalidArgument, "bad_setting")
    );
    // A name is one player's: another guest cannot take it in another case or spacing,
    // and is told so in a way an app can act on.
    guest(&mut players, "Dana").await;
    let twin = players
        .register_guest(pb::RegisterGuestRequest { name: " dana ".into() })
        .await
        .unwrap_err();
    assert_eq!(
        (twin.code(), reason(&twin).as_str()),
        (Code::AlreadyExists, "name_taken")
    );
    guest(&mut players, "Dana 2").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn platform_tokens_sign_players_in_and_bad_ones_are_refused() {
    let server = Server::fresh_with(
        "players-jwt",
        &[
            ("WEIQI__IDENTITY__JWT_HS256_SECRET", SECRET),
            ("WEIQI__IDENTITY__JWT_ISSUER", ISSUER),
        ],
    );
    let (mut games, mut players) = clients(&server).await;

    let token = jwt("p-17", "Ke Jie", 3600);
    let me = players
        .who_am_i(authed(pb::WhoAmIRequest {}, &token))
        .await
        .unwrap()
        .into_inner()
        .player
        .unwrap();
    assert_eq!(
        (me.player_id.as_str(), me.name.as_str(), me.guest),
        ("p-17", "Ke Jie", false)
    );
    let created = games
        .create_game(authed(
            pb::CreateGameRequest {
                settings: Some(rated_settings()),
                ..Default::default()
            },
            &token,
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(created.state.unwrap().host_player.unwrap().player_id, "p-17");
    // The platform's player is known from then on.
    let known = players
        .get_player(pb::GetPlayerRequest {
            player_id: "p-17".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .player
        .unwrap();
    assert!(known.ratings.is_empty(), "no rated game yet");

    for (bad, why) in [
        (jwt("p-17", "Ke Jie", -3600), "token_expired"),
        (forged(), "bad_signature"),
        ("0123456789abcdef".to_string(), "unknown_guest"),
    ] {
        let e = games
            .create_game(authed(
                pb::CreateGameRequest {
                    settings: Some(rated_settings()),
                    ..Default::default()
                },
                &bad,
            ))
            .await
            .unwrap_err();
        assert_eq!((e.code(), reason(&e).as_str()), (Code::Unauthenticated, why), "{e:?}");
    }
    let nobody = players.who_am_i(pb::WhoAmIRequest {}).await.unwrap_err();
    assert_eq!(
        (nobody.code(), reason(&nobody).as_str()),
        (Code::Unauthenticated, "credential_missing")
    );
}

/// `weiqi bot` signs in with a player credential: the games it opens name its account.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_signs_in_as_its_account() {
    let server = Server::fresh("players-bot");
    let (mut games, mut players) = clients(&server).await;
    let (bot_id, bot_token) = guest(&mut players, "RandomBot").await;
    let engine = format!("{} gtp --player uniform", env!("CARGO_BIN_EXE_weiqi"));
    let mut bot = std::process::Command::new(env!("CARGO_BIN_EXE_weiqi"))
        .args([
            "bot",
            "--server",
            &format!("http://{}", server.addr),
            "--engine",
            &engine,
        ])
        .args(["--seek", "size=9,komi=7.5,time=none"])
        .env("WEIQI_PLAYER_TOKEN", &bot_token)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut host = None;
    for _ in 0..100 {
        let lobby = games
            .list_games(pb::ListGamesRequest { limit: 10 })
            .await
            .unwrap()
            .into_inner();
        if let Some(open) = lobby.open.first() {
            host = state(&mut games, &open.game_id).await.host_player;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let _ = bot.kill();
    let _ = bot.wait();
    let host = host.expect("the bot opened a game");
    assert_eq!((host.player_id, host.name), (bot_id, "RandomBot".to_string()));
}
