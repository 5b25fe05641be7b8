//! Tournaments against the real server (C9, C4): eight scripted players (gRPC clients, as
//! a bot would be) play two groups of four and the knockout on 9x9, one of them absent
//! for a game (a forfeit), with ties the head-to-head result breaks; the standings and
//! the bracket match an independent computation here. The server is killed and started
//! again mid-tournament. With two servers on one PostgreSQL, the one that started the
//! tournament is killed mid-round and the other finishes it.

mod support;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use support::*;
use tonic::Code;
use tonic::transport::Channel;
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::game_service_client::GameServiceClient;
use weiqi_proto::v1::player_service_client::PlayerServiceClient;
use weiqi_proto::v1::tournament_service_client::TournamentServiceClient;

type Tournaments = TournamentServiceClient<Channel>;

/// Where the players find the server (it changes when a test restarts it).
type Address = Arc<RwLock<String>>;

async fn tournaments(addr: &str) -> Tournaments {
    TournamentServiceClient::connect(format!("http://{addr}"))
        .await
        .unwrap()
}

/// A guest: (player id, token).
async fn guest(addr: &str, name: &str) -> (String, String) {
    let mut p = PlayerServiceClient::connect(format!("http://{addr}")).await.unwrap();
    let r = p
        .register_guest(pb::RegisterGuestRequest { name: name.into() })
        .await
        .unwrap()
        .into_inner();
    (r.player.unwrap().player_id, r.token)
}

fn settings(groups: u32, group_size: u32) -> pb::TournamentSettings {
    pb::TournamentSettings {
        name: "Autumn cup".into(),
        groups,
        group_size,
        game: Some(pb::GameSettings {
            board_size: 9,
            komi: Some(7.0),
            // Short clocks: five minutes and 3x10 s byo-yomi.
            time_control: Some(pb::TimeControl {
                kind: Some(pb::time_control::Kind::ByoYomi(pb::time_control::ByoYomi {
                    main_ms: 300_000,
                    periods: 3,
                    period_ms: 10_000,
                })),
            }),
            ..Default::default()
        }),
        seeding: pb::Seeding::Random as i32,
        knockout: true,
        round_starts_ms: vec![],
        round_break_ms: 200,
        // Long enough for a check-in across the server's restart on a loaded machine;
        // the absent player's forfeit waits this long.
        check_in_window_ms: 6_000,
    }
}

async fn create(t: &mut Tournaments, token: &str, s: pb::TournamentSettings) -> pb::Tournament {
    t.create_tournament(authed(pb::CreateTournamentRequest { settings: Some(s) }, token))
        .await
        .unwrap()
        .into_inner()
        .tournament
        .unwrap()
}

async fn register(t: &mut Tournaments, token: &str, id: &str) -> Result<pb::Tournament, tonic::Status> {
    let r = t
        .register_for_tournament(authed(
            pb::RegisterForTournamentRequest {
                tournament_id: id.into(),
            },
            token,
        ))
        .await?;
    Ok(r.into_inner().tournament.unwrap())
}

async fn start(t: &mut Tournaments, token: &str, id: &str, seed: u64) -> Result<pb::Tournament, tonic::Status> {
    let r = t
        .start_tournament(authed(
            pb::StartTournamentRequest {
                tournament_id: id.into(),
                seed,
            },
            token,
        ))
        .await?;
    Ok(r.into_inner().tournament.unwrap())
}

async fn get(addr: &str, id: &str) -> Result<pb::Tournament, tonic::Status> {
    let mut t = TournamentServiceClient::connect(format!("http://{addr}"))
        .await
        .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
    let r = t
        .get_tournament(pb::GetTournamentRequest {
            tournament_id: id.into(),
        })
        .await?;
    Ok(r.into_inner().tournament.unwrap())
}

fn refused<T: std::fmt::Debug>(r: Result<T, tonic::Status>, code: Code, why: &str) {
    let e = r.expect_err("refused");
    assert_eq!((e.code(), reason(&e).as_str()), (code, why), "{e:?}");
}

/// What a scripted player does in one game.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Plan {
    Win,
    Lose,
    /// Never checks in (C4: forfeits past the check-in window).
    Absent,
}

type Script = Arc<dyn Fn(&str, &pb::TournamentRound, &pb::TournamentBoard) -> Plan + Send + Sync>;

/// Plays one game as planned: seat, check in, and the loser resigns once play starts.
/// Done when the game has started (a winner) or ended.
async fn play_board(addr: &str, token: &str, game_id: &str, plan: Plan) -> Result<(), tonic::Status> {
    let unavailable = |e: tonic::transport::Error| tonic::Status::unavailable(e.to_string());
    let mut players = PlayerServiceClient::connect(format!("http://{addr}"))
        .await
        .map_err(unavailable)?;
    let mut games = GameServiceClient::connect(format!("http://{addr}"))
        .await
        .map_err(unavailable)?;
    let seat = players
        .get_seat(authed(
            pb::GetSeatRequest {
                game_id: game_id.into(),
            },
            token,
        ))
        .await?
        .into_inner();
    let mutation = || {
        Some(pb::Mutation {
            game_id: game_id.into(),
            request_id: String::new(),
            expected_move_number: None,
            ..Default::default()
        })
    };
    if seat
        .state
        .as_ref()
        .is_some_and(|s| s.phase == pb::Phase::Scheduled as i32)
    {
        // (Refused when checked in already, before a restart: fine.)
        let _ = games
            .check_in(authed(pb::CheckInRequest { mutation: mutation() }, &seat.seat_token))
            .await;
    }
    for _ in 0..200 {
        let s = games
            .get_game(pb::GetGameRequest {
                game_id: game_id.into(),
            })
            .await?
            .into_inner()
            .state
            .unwrap_or_default();
        if s.phase == pb::Phase::Finished as i32 {
            return Ok(());
        }
        if s.phase == pb::Phase::Playing as i32 {
            match plan {
                Plan::Lose => {
                    let _ = games
                        .resign(authed(pb::ResignRequest { mutation: mutation() }, &seat.seat_token))
                        .await;
                }
                _ => return Ok(()),
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(tonic::Status::deadline_exceeded(format!(
        "game {game_id} never started"
    )))
}

/// A player: watches the tournament and plays each of their boards as the script says,
/// until the tournament ends; retries through a server restart.
async fn player(addr: Address, tid: String, me: String, token: String, script: Script) {
    let mut done: HashSet<String> = HashSet::new();
    for _ in 0..1200 {
        let a = addr.read().unwrap().clone();
        let t = match get(&a, &tid).await {
            Ok(t) => t,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        if t.phase == pb::TournamentPhase::Finished as i32 {
            return;
        }
        if let Some(round) = t.rounds.last() {
            for b in &round.boards {
                let mine = b.black_player_id == me || b.white_player_id == me;
                if !mine || b.walkover || b.result != 0 || done.contains(&b.game_id) {
                    continue;
                }
                let plan = script(&me, round, b);
                if plan == Plan::Absent || play_board(&a, &token, &b.game_id, plan).await.is_ok() {
                    done.insert(b.game_id.clone());
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    panic!("{me}: the tournament did not finish");
}

/// Guests "P1".."Pn" (the lower number the stronger): their numbers by player id, and
/// their (player id, token) in order.
async fn entrants(addr: &str, n: u32) -> (HashMap<String, u32>, Vec<(String, String)>) {
    let mut names = HashMap::new();
    let mut tokens = Vec::new();
    for k in 1..=n {
        let (id, token) = guest(addr, &format!("P{k}")).await;
        names.insert(id.clone(), k);
        tokens.push((id, token));
    }
    (names, tokens)
}

/// One scripted player task per entrant.
fn spawn_players(
    addr: &Address,
    id: &str,
    tokens: &[(String, String)],
    script: &Script,
) -> Vec<tokio::task::JoinHandle<()>> {
    tokens
        .iter()
        .map(|(me, token)| {
            tokio::spawn(player(
                addr.clone(),
                id.to_string(),
                me.clone(),
                token.clone(),
                script.clone(),
            ))
        })
        .collect()
}

/// The tournament once finished, after every player task has ended.
async fn the_end(addr: &Address, id: &str, players: Vec<tokio::task::JoinHandle<()>>) -> pb::Tournament {
    let done = wait_for(addr, id, "the end", |t| t.phase == pb::TournamentPhase::Finished as i32).await;
    for p in players {
        tokio::time::timeout(Duration::from_secs(30), p).await.unwrap().unwrap();
    }
    done
}

/// Until `done` holds of the tournament (read through `addr`), or 60 s.
async fn wait_for(addr: &Address, id: &str, what: &str, done: impl Fn(&pb::Tournament) -> bool) -> pb::Tournament {
    for _ in 0..600 {
        let a = addr.read().unwrap().clone();
        if let Ok(t) = get(&a, id).await
            && done(&t)
        {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

/// Player names are "P1".."P8": the lower number is the stronger player.
fn number_of(names: &HashMap<String, u32>, id: &str) -> u32 {
    names[id]
}

/// The independent computation: C9's points (3 a win, 0 a loss or forfeit), ties broken
/// by the game between the two tied players.
fn expected_order(members: &[String], wins: &HashSet<(String, String)>) -> Vec<String> {
    let points = |p: &String| {
        3 * members
            .iter()
            .filter(|q| wins.contains(&(p.clone(), (*q).clone())))
            .count()
    };
    let mut order = members.to_vec();
    order.sort_by(|a, b| {
        points(b).cmp(&points(a)).then_with(|| {
            // (This script never makes a three-way tie.)
            if wins.contains(&(a.clone(), b.clone())) {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Greater
            }
        })
    });
    order
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_players_two_groups_a_forfeit_a_restart_and_the_knockout() {
    let server = Server::fresh("tournament");
    let addr: Address = Arc::new(RwLock::new(server.addr.clone()));
    let a = server.addr.clone();
    let mut t = tournaments(&a).await;
    let (_, org) = guest(&a, "Organizer").await;
    let (names, tokens) = entrants(&a, 8).await;

    // Bad requests: each a typed error, nothing half-created.
    let mut bad = settings(3, 4);
    refused(
        t.create_tournament(authed(
            pb::CreateTournamentRequest {
                settings: Some(bad.clone()),
            },
            &org,
        ))
        .await,
        Code::InvalidArgument,
        "invalid_tournament_settings",
    );
    bad.groups = 2;
    bad.check_in_window_ms = -1;
    refused(
        t.create_tournament(authed(pb::CreateTournamentRequest { settings: Some(bad) }, &org))
            .await,
        Code::InvalidArgument,
        "bad_setting",
    );
    refused(
        t.create_tournament(pb::CreateTournamentRequest {
            settings: Some(settings(2, 4)),
        })
        .await,
        Code::Unauthenticated,
        "credential_missing",
    );
    let small = create(&mut t, &org, settings(2, 4)).await;
    for (_, token) in &tokens[..3] {
        register(&mut t, token, &small.tournament_id).await.unwrap();
    }
    refused(
        start(&mut t, &org, &small.tournament_id, 1).await,
        Code::FailedPrecondition,
        "too_few_players",
    );

    let cup = create(&mut t, &org, settings(2, 4)).await;
    let id = cup.tournament_id.clone();
    for (_, token) in &tokens {
        register(&mut t, token, &id).await.unwrap();
    }
    refused(
        register(&mut t, &tokens[0].1, &id).await,
        Code::AlreadyExists,
        "already_registered",
    );
    refused(
        register(&mut t, &org, &id).await,
        Code::ResourceExhausted,
        "tournament_full",
    );
    refused(
        start(&mut t, &tokens[0].1, &id, 7).await,
        Code::PermissionDenied,
        "not_organizer",
    );
    let started = start(&mut t, &org, &id, 20261201).await.unwrap();
    assert_eq!(started.seed, 20261201, "the published seed");
    assert_eq!(started.rounds.len(), 1, "round 1 paired at the start");
    let groups: Vec<Vec<String>> = started.groups.iter().map(|g| g.player_ids.clone()).collect();
    assert_eq!(groups.iter().map(Vec::len).collect::<Vec<_>>(), [4, 4]);

    // The script. In each group, by strength a < b < c < d: the stronger wins, except b
    // beats a and d beats b. So a and b tie on 6 (b won their game) and c and d on 3 (c
    // won theirs). In group B, d does not come to the game against b: b wins by forfeit
    // (C4), and group B has no tie.
    let by_strength: Vec<Vec<String>> = groups
        .iter()
        .map(|g| {
            let mut g = g.clone();
            g.sort_by_key(|p| names[p]);
            g
        })
        .collect();
    let upsets: HashSet<(String, String)> = by_strength
        .iter()
        .flat_map(|g| [(g[1].clone(), g[0].clone()), (g[3].clone(), g[1].clone())])
        .collect();
    let absent = (by_strength[1][3].clone(), by_strength[1][1].clone());
    let script: Script = {
        let names = names.clone();
        let (upsets, absent) = (upsets.clone(), absent.clone());
        Arc::new(move |me: &str, round: &pb::TournamentRound, b: &pb::TournamentBoard| {
            let other = if b.black_player_id == me {
                &b.white_player_id
            } else {
                &b.black_player_id
            };
            if round.stage == pb::TournamentStage::Groups as i32
                && (me, other.as_str()) == (absent.0.as_str(), absent.1.as_str())
            {
                return Plan::Absent;
            }
            let stronger = number_of(&names, me) < number_of(&names, other);
            let upset = round.stage == pb::TournamentStage::Groups as i32
                && (upsets.contains(&(me.to_string(), other.clone()))
                    || upsets.contains(&(other.clone(), me.to_string())));
            if stronger != upset { Plan::Win } else { Plan::Lose }
        })
    };
    let players = spawn_players(&addr, &id, &tokens, &script);

    // A restart mid-tournament: round 2 paired, its games on; the server killed and
    // started again on the same data; the players carry on through it.
    wait_for(&addr, &id, "round 2", |t| t.rounds.len() == 2).await;
    let dir = server.crash();
    let server = Server::start(dir);
    *addr.write().unwrap() = server.addr.clone();

    let done = the_end(&addr, &id, players).await;

    // The standings, by an independent computation from what was played.
    let mut wins: HashSet<(String, String)> = HashSet::new();
    for g in &by_strength {
        for i in 0..4 {
            for j in i + 1..4 {
                let (x, y) = (g[i].clone(), g[j].clone());
                let upset = upsets.contains(&(y.clone(), x.clone()));
                let forfeit = (y.clone(), x.clone()) == absent;
                wins.insert(if upset && !forfeit { (y, x) } else { (x, y) });
            }
        }
    }
    for (k, g) in done.groups.iter().enumerate() {
        let got: Vec<String> = g.standings.iter().map(|s| s.player_id.clone()).collect();
        assert_eq!(got, expected_order(&g.player_ids, &wins), "group {}", g.group);
        assert_eq!(g.group, ["A", "B"][k]);
    }
    let a_group = &done.groups[0].standings;
    assert_eq!(
        a_group.iter().map(|s| s.points).collect::<Vec<_>>(),
        [6, 6, 3, 3],
        "group A: two ties, each broken head-to-head (C9)"
    );
    assert_eq!((a_group[0].head_to_head, a_group[1].head_to_head), (3, 0));
    let b_group = &done.groups[1].standings;
    assert_eq!(b_group.iter().map(|s| s.points).collect::<Vec<_>>(), [9, 6, 3, 0]);
    // The forfeit: a finished game whose result is White or Black by forfeit.
    let forfeit_board = done
        .rounds
        .iter()
        .flat_map(|r| &r.boards)
        .find(|b| {
            let pair = [b.black_player_id.clone(), b.white_player_id.clone()];
            pair.contains(&absent.0) && pair.contains(&absent.1)
        })
        .unwrap();
    let mut games = GameServiceClient::connect(format!("http://{}", server.addr))
        .await
        .unwrap();
    let record = sgf(&mut games, &forfeit_board.game_id).await;
    assert!(record.contains("+F]"), "a forfeit: {record}");

    // The knockout: A1-B2 and B1-A2, then the final; the stronger player won each.
    let knockout: Vec<&pb::TournamentRound> = done
        .rounds
        .iter()
        .filter(|r| r.stage == pb::TournamentStage::Knockout as i32)
        .collect();
    assert_eq!(done.rounds.len(), 5);
    assert_eq!(knockout.len(), 2);
    let first = |g: usize, place: usize| done.groups[g].standings[place].player_id.clone();
    let semi: Vec<HashSet<String>> = knockout[0]
        .boards
        .iter()
        .map(|b| HashSet::from([b.black_player_id.clone(), b.white_player_id.clone()]))
        .collect();
    assert_eq!(
        semi,
        [
            HashSet::from([first(0, 0), first(1, 1)]),
            HashSet::from([first(1, 0), first(0, 1)])
        ]
    );
    let stronger = |x: String, y: String| if names[&x] < names[&y] { x } else { y };
    let finalists = [stronger(first(0, 0), first(1, 1)), stronger(first(1, 0), first(0, 1))];
    assert_eq!(done.champion_id, stronger(finalists[0].clone(), finalists[1].clone()));
    // Knockout games cannot end drawn: a half-point komi.
    let final_board = &knockout[1].boards[0];
    let final_state = state(&mut games, &final_board.game_id).await;
    let s = final_state.settings.unwrap();
    assert_eq!((s.komi, s.mode), (Some(7.5), pb::RefereeMode::Tournament as i32));

    // Exports: the cross table (JSON, CSV) and every game's SGF.
    let mut t = tournaments(&server.addr).await;
    let export = t
        .export_tournament(pb::ExportTournamentRequest {
            tournament_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    let json: serde_json::Value = serde_json::from_str(&export.cross_table_json).unwrap();
    assert_eq!(json["champion"], done.champion_id.as_str());
    assert_eq!(json["groups"][0]["rows"][0]["player_id"], first(0, 0).as_str());
    let csv: Vec<&str> = export.cross_table_csv.lines().collect();
    assert_eq!(csv.len(), 9, "a header and eight players");
    assert!(csv[0].starts_with("group,place,player_id,name,points"));
    assert!(
        csv.iter().any(|l| l.starts_with("B,1,") && l.contains(",9,")),
        "{csv:?}"
    );
    // 12 group games and 3 knockout games.
    assert_eq!(export.games.len(), 15);
    assert!(
        export
            .games
            .iter()
            .all(|g| g.sgf.starts_with("(;") && g.sgf.contains("SZ[9]"))
    );
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_going_away_mid_round_does_not_stop_the_tournament() {
    let Some(url) = pg("tournament").await else { return };
    let start_replica = |name: &str| {
        let dir = std::env::temp_dir().join(format!("weiqi-e2e-{}-tournament-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Server::start_with(dir, &[("WEIQI__DATABASE_URL", url.as_str())])
    };
    let first = start_replica("a");
    let second = start_replica("b");
    let mut t = tournaments(&first.addr).await;
    let (_, org) = guest(&first.addr, "Organizer").await;
    let (names, tokens) = entrants(&first.addr, 4).await;
    let cup = create(&mut t, &org, settings(2, 2)).await;
    let id = cup.tournament_id.clone();
    for (_, token) in &tokens {
        register(&mut t, token, &id).await.unwrap();
    }
    // A spectator watches through the second replica: every change made through either.
    let mut watch = tournaments(&second.addr)
        .await
        .watch_tournament(pb::WatchTournamentRequest {
            tournament_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    let watched = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(m) = watch.message().await.unwrap() {
            seen.push(m.tournament.unwrap());
        }
        seen
    });
    // The first replica starts it (and creates round 1's games), then goes away; the
    // players only ever talk to the second.
    start(&mut t, &org, &id, 5).await.unwrap();
    let _ = first.crash();
    let addr: Address = Arc::new(RwLock::new(second.addr.clone()));
    let script: Script = {
        let names = names.clone();
        Arc::new(move |me: &str, _: &pb::TournamentRound, b: &pb::TournamentBoard| {
            let other = if b.black_player_id == me {
                &b.white_player_id
            } else {
                &b.black_player_id
            };
            if names[me] < names[other] {
                Plan::Win
            } else {
                Plan::Lose
            }
        })
    };
    let players = spawn_players(&addr, &id, &tokens, &script);
    let done = the_end(&addr, &id, players).await;
    // The watch saw the tournament move on, version by version, and closed at the end.
    let seen = tokio::time::timeout(Duration::from_secs(10), watched)
        .await
        .unwrap()
        .unwrap();
    assert!(seen.len() >= 3, "{} updates", seen.len());
    assert!(seen.windows(2).all(|w| w[0].version < w[1].version));
    assert_eq!(seen[0].phase, pb::TournamentPhase::Registration as i32);
    let last = seen.last().unwrap();
    assert_eq!(
        (last.phase, &last.champion_id),
        (pb::TournamentPhase::Finished as i32, &done.champion_id)
    );
    let p1 = names.iter().find(|(_, k)| **k == 1).unwrap().0;
    assert_eq!(&done.champion_id, p1);
    assert_eq!(done.rounds.len(), 3, "the groups' round, the semi-finals, the final");
    drop(second);
}

/// A tournament of two players in one group (one game), started: (tournament, the
/// organizer's client, [(player id, token)] in registration order, the game's id).
async fn two_player_tournament(
    server: &Server,
    check_in_window_ms: i64,
) -> (pb::Tournament, Tournaments, Vec<(String, String)>, String) {
    let mut t = tournaments(&server.addr).await;
    let (_, organizer) = guest(&server.addr, "TD").await;
    let mut s = settings(1, 2);
    s.knockout = false;
    s.check_in_window_ms = check_in_window_ms;
    let created = create(&mut t, &organizer, s).await;
    let mut players = Vec::new();
    for name in ["P1", "P2"] {
        let (id, token) = guest(&server.addr, name).await;
        register(&mut t, &token, &created.tournament_id).await.unwrap();
        players.push((id, token));
    }
    let started = start(&mut t, &organizer, &created.tournament_id, 7).await.unwrap();
    let game_id = started.rounds[0].boards[0].game_id.clone();
    (started, t, players, game_id)
}

/// The seat token of `token`'s player in a tournament game.
async fn seat(addr: &str, token: &str, game_id: &str) -> pb::GetSeatResponse {
    let mut p = PlayerServiceClient::connect(format!("http://{addr}")).await.unwrap();
    p.get_seat(authed(
        pb::GetSeatRequest {
            game_id: game_id.into(),
        },
        token,
    ))
    .await
    .unwrap()
    .into_inner()
}

/// The row player's cells of the cross table's CSV, by player id.
async fn cross_table_cells(t: &mut Tournaments, id: &str) -> HashMap<String, String> {
    let export = t
        .export_tournament(pb::ExportTournamentRequest {
            tournament_id: id.into(),
        })
        .await
        .unwrap()
        .into_inner();
    let json: serde_json::Value = serde_json::from_str(&export.cross_table_json).unwrap();
    json["groups"][0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let cells: Vec<String> = row["cells"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap().to_string())
                .filter(|c| c != "*")
                .collect();
            (row["player_id"].as_str().unwrap().to_string(), cells.concat())
        })
        .collect()
}

/// C4, C9 (issue 43): an entrant who never checks in forfeits when the check-in window
/// closes, and the tournament records it and finishes, with nobody calling anything but
/// reads. The cross-table marks the forfeit `W+`/`L-`, as a walkover.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_absent_entrant_forfeits_and_the_tournament_finishes_by_itself() {
    let server = Server::fresh("tournament-absent");
    let window = 1_500;
    let (started, mut t, players, game_id) = two_player_tournament(&server, window).await;
    let board = &started.rounds[0].boards[0];
    let (present, absent) = if board.black_player_id == players[0].0 {
        (&players[0], &players[1])
    } else {
        (&players[1], &players[0])
    };
    // The present player checks in (at or after the start: early is fine too).
    let s = seat(&server.addr, &present.1, &game_id).await;
    let forfeit_at = s.state.as_ref().unwrap().forfeit_at_ms.expect("a countdown");
    assert_eq!(forfeit_at, board.starts_ms + window + 1);
    let mut games = server.client().await;
    check_in(&mut games, &game_id, &s.seat_token).await;

    // Nobody calls again: the game ends at the window's close, the tournament after it.
    let addr: Address = Arc::new(RwLock::new(server.addr.clone()));
    let done = wait_for(&addr, &started.tournament_id, "finished", |t| {
        t.phase == pb::TournamentPhase::Finished as i32
    })
    .await;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    // The director looks every second; slack for a loaded machine.
    assert!(
        now_ms - forfeit_at < 6_000,
        "finished {} ms after the forfeit was due",
        now_ms - forfeit_at
    );
    assert_eq!(done.champion_id, present.0);
    let b = &done.rounds[0].boards[0];
    assert!(b.forfeit && !b.walkover, "{b:?}");
    let st = state(&mut games, &game_id).await;
    assert_eq!(st.result.unwrap().reason, pb::EndReason::Forfeit as i32);
    let cells = cross_table_cells(&mut t, &started.tournament_id).await;
    assert_eq!((cells[&present.0].as_str(), cells[&absent.0].as_str()), ("W+", "L-"));
}

/// C9 (issue 43): a withdrawal after the start forfeits the game already created (here
/// waiting for its start, nobody checked in) before the call returns: the game ends as a
/// forfeit, the board is recorded, and the cross-table reads `W+`/`L-`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_withdrawal_forfeits_the_game_already_created() {
    let server = Server::fresh("tournament-withdraw");
    // A window far longer than the test: only the withdrawal can end the game.
    let (started, mut t, players, game_id) = two_player_tournament(&server, 600_000).await;
    let mut games = server.client().await;
    assert_eq!(state(&mut games, &game_id).await.phase, pb::Phase::Scheduled as i32);
    let (stays, leaves) = (&players[0], &players[1]);
    let after = t
        .withdraw_from_tournament(authed(
            pb::WithdrawFromTournamentRequest {
                tournament_id: started.tournament_id.clone(),
            },
            &leaves.1,
        ))
        .await
        .unwrap()
        .into_inner()
        .tournament
        .unwrap();
    // Already in the answer: recorded, and the only round over.
    let b = &after.rounds[0].boards[0];
    assert!(b.forfeit, "{b:?}");
    let stays_black = b.black_player_id == stays.0;
    let want = if stays_black {
        pb::BoardResult::BlackWins
    } else {
        pb::BoardResult::WhiteWins
    };
    assert_eq!(b.result, want as i32);
    assert_eq!(after.phase, pb::TournamentPhase::Finished as i32);
    assert_eq!(after.champion_id, stays.0);
    let st = state(&mut games, &game_id).await;
    assert_eq!(st.phase, pb::Phase::Finished as i32);
    let r = st.result.unwrap();
    let winner = if stays_black {
        pb::Color::Black
    } else {
        pb::Color::White
    };
    assert_eq!((r.reason, r.winner), (pb::EndReason::Forfeit as i32, winner as i32));
    let cells = cross_table_cells(&mut t, &started.tournament_id).await;
    assert_eq!((cells[&stays.0].as_str(), cells[&leaves.0].as_str()), ("W+", "L-"));
}
