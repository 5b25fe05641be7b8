//! What every store must do, written once and run over each backend (memory, SQLite,
//! PostgreSQL), and the fixtures the store tests share.
#![allow(dead_code)]

use weiqi_game::{Actor, Command, Event, Game, Phase, Settings};
use weiqi_store::{Append, EventStore, SqliteStore, StoreError, Summary};

pub fn summary() -> Summary {
    Summary {
        phase: Phase::Playing,
        board_size: 9,
        move_number: 0,
        rules: "chinese".into(),
        finished: false,
    }
}

pub fn created() -> Vec<Event> {
    let cmd = Command::Create {
        host: None,
        settings: Settings::casual(9),
        nigiri_commitment: None,
    };
    Game::new().decide(Actor::Host, &cmd, 0).unwrap()
}

/// The events of the guest joining a game that holds `log`, at time `at`.
pub fn joined(log: &[Event], at: u64) -> Vec<Event> {
    let cmd = Command::Join {
        player: None,
        nigiri_guess: None,
        entropy: 0,
    };
    Game::from_events(log).unwrap().decide(Actor::Guest, &cmd, at).unwrap()
}

pub fn append(id: &str, expected: u64, events: Vec<Event>) -> Append {
    Append {
        game_id: id.into(),
        expected_seq: expected,
        events,
        host_token_hash: Some("h".into()),
        guest_token_hash: None,
        request_id: Some(format!("req-{expected}")),
        summary: Some(summary()),
        move_number: 0,
        wake_ms: None,
        now_ms: 1,
    }
}

pub async fn open(name: &str) -> (SqliteStore, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("weiqi-store-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("db.sqlite3");
    (SqliteStore::open(&path).await.unwrap(), path)
}

/// A fresh PostgreSQL database for one test, or `None` (skipped) without a server.
pub async fn pg(name: &str) -> Option<String> {
    let Ok(admin) = std::env::var("WEIQI_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var_os("WEIQI_REQUIRE_POSTGRES").is_none(),
            "WEIQI_REQUIRE_POSTGRES is set but WEIQI_TEST_POSTGRES_URL is not"
        );
        eprintln!("skipped: set WEIQI_TEST_POSTGRES_URL to run the PostgreSQL store tests");
        return None;
    };
    use sqlx::{Connection, Executor};
    let db = format!("weiqi_t_{}_{name}", std::process::id());
    let mut conn = sqlx::PgConnection::connect(&admin).await.expect("PostgreSQL");
    conn.execute(format!("DROP DATABASE IF EXISTS {db}").as_str())
        .await
        .unwrap();
    conn.execute(format!("CREATE DATABASE {db}").as_str()).await.unwrap();
    let base = admin.split('?').next().unwrap();
    let (server, _) = base.rsplit_once('/').expect("a database in the URL");
    Some(format!("{server}/{db}"))
}

/// The contract every store keeps: optimistic concurrency, request ids, heartbeat, and
/// everything acknowledged still there after reopening.
pub async fn append_load_and_conflicts_on<S: EventStore>(store: S, reopen: impl AsyncFnOnce(S) -> S) {
    let events = created();
    store.append(append("g1", 0, events.clone())).await.unwrap();
    // Creating the same game again conflicts.
    assert!(matches!(
        store.append(append("g1", 0, events.clone())).await,
        Err(StoreError::Conflict { .. })
    ));
    // The right append succeeds; the same again, now at a stale seq, conflicts.
    let join = joined(&events, 5);
    store.append(append("g1", 1, join.clone())).await.unwrap();
    assert!(matches!(
        store.append(append("g1", 1, join.clone())).await,
        Err(StoreError::Conflict { expected: 1, .. })
    ));
    let loaded = store.load("g1").await.unwrap().unwrap();
    assert_eq!(loaded.events.len(), 1 + join.len());
    assert_eq!(loaded.responses.len(), 2);
    assert!(store.load("nope").await.unwrap().is_none());
    // Events that do not number on from the expected sequence number are refused, and
    // nothing is stored.
    let mut gap = joined(&events, 6);
    gap[0].seq += 1;
    assert!(matches!(
        store.append(append("g1", 1 + join.len() as u64, gap)).await,
        Err(StoreError::Corrupt { .. })
    ));
    assert_eq!(store.load("g1").await.unwrap().unwrap().events, loaded.events);
    // Catching up reads what follows a sequence number, with its request ids and the
    // game's token hashes.
    let since = store.load_since("g1", 1).await.unwrap().unwrap();
    assert_eq!(since.events, loaded.events[1..]);
    assert_eq!(since.responses, [("req-1".to_string(), 2)]);
    assert_eq!(since.host_token_hash.as_deref(), Some("h"));
    let none_newer = store.load_since("g1", 1 + join.len() as u64).await.unwrap().unwrap();
    assert!(none_newer.events.is_empty() && none_newer.responses.is_empty());
    assert!(store.load_since("nope", 0).await.unwrap().is_none());
    store.heartbeat(42).await.unwrap();
    assert_eq!(store.last_heartbeat().await.unwrap(), Some(42));
    // Everything acknowledged is there after reopening.
    let store = reopen(store).await;
    let unfinished = store.load_unfinished().await.unwrap();
    assert_eq!(unfinished.len(), 1);
    assert_eq!(
        Game::from_events(&unfinished[0].events).unwrap().seq(),
        1 + join.len() as u64
    );
    assert_eq!(store.last_heartbeat().await.unwrap(), Some(42));
}

/// The barrier: appends whose callers gave up on them (cancelled after a few
/// microseconds, as a client deadline does) are settled, committed or refused, once it
/// returns; nothing more lands afterwards.
pub async fn barrier_settles_cancelled_appends_on<S: EventStore + Clone>(store: S) {
    let join = joined(&created(), 5);
    // Enough that the writers are still busy when the barrier is called.
    let n = 1000;
    let mut creates = Vec::new();
    for i in 0..n {
        let s = store.clone();
        creates.push(tokio::spawn(async move {
            s.append(append(&format!("b{i}"), 0, created())).await
        }));
    }
    for t in creates {
        t.await.unwrap().unwrap();
    }
    let mut tasks = Vec::new();
    for i in 0..n {
        let (s, join) = (store.clone(), join.clone());
        tasks.push(tokio::spawn(async move {
            let a = append(&format!("b{i}"), 1, join);
            let _ = tokio::time::timeout(std::time::Duration::from_micros(i % 50), s.append(a)).await;
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    store.barrier().await.unwrap();
    let seqs = |store: S| async move {
        let mut out = Vec::new();
        for i in 0..n {
            let g = store.load(&format!("b{i}")).await.unwrap().unwrap();
            out.push(g.events.last().unwrap().seq);
        }
        out
    };
    let settled = seqs(store.clone()).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(seqs(store).await, settled, "an append landed after the barrier");
}

pub async fn concurrent_appends_on<S: EventStore + Clone>(store: S) {
    let mut tasks = Vec::new();
    for i in 0..200 {
        let s = store.clone();
        tasks.push(tokio::spawn(async move {
            // Two writers race for every game id: exactly one wins.
            s.append(append(&format!("g{}", i / 2), 0, created())).await
        }));
    }
    let mut ok = 0;
    let mut conflicts = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(()) => ok += 1,
            Err(StoreError::Conflict { .. }) => conflicts += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!((ok, conflicts), (100, 100));
    assert_eq!(store.load_unfinished().await.unwrap().len(), 100);
    // Then two guests race to join every game (appends to existing games, written in
    // groups: the two appends of one game may meet in one group): one wins per game.
    let join = joined(&created(), 5);
    let mut tasks = Vec::new();
    for i in 0..200 {
        let (s, join) = (store.clone(), join.clone());
        tasks.push(tokio::spawn(async move {
            let mut a = append(&format!("g{}", i / 2), 1, join);
            a.request_id = Some(format!("join-{i}"));
            s.append(a).await.map(|()| i)
        }));
    }
    let mut winners = Vec::new();
    for t in tasks {
        match t.await.unwrap() {
            Ok(i) => winners.push(i),
            Err(StoreError::Conflict { expected: 1, .. }) => {}
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(winners.len(), 100);
    for i in winners {
        let g = store.load(&format!("g{}", i / 2)).await.unwrap().unwrap();
        assert_eq!(g.events.len(), 1 + join.len(), "game g{}", i / 2);
        // The winner's request id is the one stored.
        assert!(g.responses.contains(&(format!("join-{i}"), 2)), "{:?}", g.responses);
    }
}

pub async fn interleaved_games_load_apart_on<S: EventStore>(store: S, reopen: impl AsyncFnOnce(S) -> S) {
    let ids: Vec<String> = (0..5).map(|i| format!("game-{i}")).collect();
    let mut logs: Vec<Vec<Event>> = Vec::new();
    for id in &ids {
        let events = created();
        store.append(append(id, 0, events.clone())).await.unwrap();
        logs.push(events);
    }
    for (k, id) in ids.iter().enumerate() {
        let join = joined(&logs[k], 10 + k as u64);
        let mut a = append(id, logs[k].len() as u64, join.clone());
        // The last game is over (its summary says so).
        a.summary = Some(Summary {
            finished: k == 4,
            ..summary()
        });
        store.append(a).await.unwrap();
        logs[k].extend(join);
    }
    let store = reopen(store).await;
    let mut unfinished = store.load_unfinished().await.unwrap();
    unfinished.sort_by(|a, b| a.game_id.cmp(&b.game_id));
    assert_eq!(
        unfinished.iter().map(|g| g.game_id.as_str()).collect::<Vec<_>>(),
        ["game-0", "game-1", "game-2", "game-3"]
    );
    for (k, g) in unfinished.iter().enumerate() {
        assert_eq!(g.events, logs[k], "{}", g.game_id);
        assert_eq!(g.responses, vec![("req-0".to_string(), 1), ("req-1".to_string(), 2)]);
        assert_eq!(g.host_token_hash.as_deref(), Some("h"));
    }
    let finished = store.load("game-4").await.unwrap().expect("kept");
    assert_eq!(finished.events, logs[4]);
}

/// A rating rule that shows lost updates: every game moves the winner up 5 and the loser
/// down 5 from what the store holds.
fn plus_five(
    black: Option<weiqi_players::RatingRow>,
    white: Option<weiqi_players::RatingRow>,
    g: &weiqi_players::RatedGame,
) -> [(f64, weiqi_players::RatingRow); 2] {
    let side = |r: Option<weiqi_players::RatingRow>, score: f64| {
        let before = r.map_or(1500.0, |r| r.rating);
        let after = weiqi_players::RatingRow {
            board_size: g.board_size,
            rating: before + 10.0 * (score - 0.5),
            deviation: 100.0,
            volatility: 0.06,
            games: r.map_or(0, |r| r.games) + 1,
            last_ms: g.at_ms,
        };
        (before, after)
    };
    [side(black, g.black_score), side(white, 1.0 - g.black_score)]
}

/// Accounts and ratings: guests found by their token's hash, platform players kept
/// current, each rated game applied once, concurrent games of the same players applied one
/// after the other (no lost update), the leaderboard and the history.
pub async fn players_on<S: weiqi_store::PlayerStore + weiqi_store::PlayedGames + weiqi_store::Reviews + Clone>(
    store: S,
) {
    use weiqi_players::{PlayerRecord, RatedGame};
    played_on(&store).await;
    reviews_on(&store).await;
    let rec = |id: &str, guest: bool| PlayerRecord {
        id: id.into(),
        name: id.to_uppercase(),
        bot: false,
        guest,
        created_ms: 1,
    };
    assert!(
        store
            .register_guest(rec("guest:a", true), "hash-a".into())
            .await
            .unwrap()
    );
    assert_eq!(
        store.guest_by_token("hash-a".into()).await.unwrap(),
        Some(rec("guest:a", true))
    );
    // A name is one player's, whatever its case and surrounding spaces; nothing of the
    // refused registration is kept.
    let twin = PlayerRecord {
        name: "  guest:A ".into(),
        ..rec("guest:twin", true)
    };
    assert!(!store.register_guest(twin, "hash-twin".into()).await.unwrap());
    assert_eq!(store.guest_by_token("hash-twin".into()).await.unwrap(), None);
    assert!(store.player("guest:twin".into()).await.unwrap().is_none());
    assert_eq!(store.guest_by_token("hash-x".into()).await.unwrap(), None);
    store.upsert_player(rec("p-b", false)).await.unwrap();
    store
        .upsert_player(PlayerRecord {
            name: "Renamed".into(),
            bot: true,
            ..rec("p-b", false)
        })
        .await
        .unwrap();
    let (b, ratings) = store.player("p-b".into()).await.unwrap().unwrap();
    assert_eq!((b.name.as_str(), b.bot, ratings.len()), ("Renamed", true, 0));

    // Ten games at once, guest:a Black winning each.
    let games = (0..10).map(|i| {
        let s = store.clone();
        tokio::spawn(async move {
            s.rate_game(
                RatedGame {
                    game_id: format!("g{i}"),
                    board_size: 9,
                    at_ms: 100 + i,
                    black: "guest:a".into(),
                    white: "p-b".into(),
                    black_score: 1.0,
                },
                plus_five,
            )
            .await
            .unwrap()
        })
    });
    for g in games.collect::<Vec<_>>() {
        assert!(g.await.unwrap(), "each game is applied");
    }
    let again = RatedGame {
        game_id: "g3".into(),
        board_size: 9,
        at_ms: 103,
        black: "guest:a".into(),
        white: "p-b".into(),
        black_score: 0.0,
    };
    assert!(!store.rate_game(again, plus_five).await.unwrap(), "a game counts once");

    let (_, a) = store.player("guest:a".into()).await.unwrap().unwrap();
    assert_eq!((a.len(), a[0].rating, a[0].games), (1, 1550.0, 10), "no update lost");
    let board = store.leaderboard(9, 10).await.unwrap();
    let order: Vec<_> = board.iter().map(|(p, r)| (p.id.as_str(), r.rating)).collect();
    assert_eq!(order, [("guest:a", 1550.0), ("p-b", 1450.0)]);
    assert!(store.leaderboard(19, 10).await.unwrap().is_empty());
    assert_eq!(
        store.rating_history("p-b".into(), 9, 3).await.unwrap().len(),
        3,
        "limited"
    );
    let history = store.rating_history("p-b".into(), 9, 100).await.unwrap();
    assert_eq!((history[0].game_id.as_str(), history[0].score), ("g9", 0.0));
    assert!(history.windows(2).all(|w| w[0].at_ms >= w[1].at_ms), "newest first");
    // The games were applied in whatever order they arrived, each from the one before.
    let mut steps: Vec<_> = history.iter().map(|h| (h.rating_before, h.rating)).collect();
    steps.sort_by(|a, b| b.0.total_cmp(&a.0));
    let expected: Vec<_> = (0..10)
        .map(|i| (1500.0 - 5.0 * i as f64, 1495.0 - 5.0 * i as f64))
        .collect();
    assert_eq!(steps, expected);
}

/// Challenges, seeks, pairings, player feeds, presence and pending ratings: each change
/// that pairs players happens once, however many callers race for it.
pub async fn matchmaking_on<S: weiqi_store::Accounts + Clone>(store: S) {
    use weiqi_game::PlayerRef;
    use weiqi_players::{Challenge, ChallengeState, Pairing, PlayerEventKind, Seek};
    let who = |id: &str| PlayerRef {
        id: id.into(),
        name: id.to_uppercase(),
        bot: false,
    };
    let challenge = |id: &str, from: &str, to: &str| Challenge {
        id: id.into(),
        challenger: who(from),
        challenged: who(to),
        settings: Settings::casual(9),
        state: ChallengeState::Open,
        reason: String::new(),
        game_id: None,
        created_ms: 10,
        expires_ms: 1_000,
    };
    let pairing = |id: &str, game: &str, host: &str, guest: &str| Pairing {
        id: id.into(),
        game_id: game.into(),
        host: who(host),
        guest: who(guest),
        settings: Settings::casual(9),
        created_ms: 20,
    };
    // Challenges: at most `max_open` open per challenger; answered once.
    assert!(store.create_challenge(challenge("c1", "a", "b"), 2).await.unwrap());
    assert!(store.create_challenge(challenge("c2", "a", "c"), 2).await.unwrap());
    assert!(!store.create_challenge(challenge("c3", "a", "d"), 2).await.unwrap());
    assert_eq!(store.challenge("c3".into()).await.unwrap(), None);
    assert_eq!(store.open_challenges("a".into()).await.unwrap().len(), 2);
    let p = pairing("c:c1", "g1", "a", "b");
    assert!(
        store
            .answer_challenge(
                "c1".into(),
                ChallengeState::Accepted,
                String::new(),
                Some(p.clone()),
                30
            )
            .await
            .unwrap()
    );
    assert!(
        !store
            .answer_challenge("c1".into(), ChallengeState::Cancelled, String::new(), None, 31)
            .await
            .unwrap()
    );
    assert!(
        store
            .answer_challenge("c2".into(), ChallengeState::Declined, "board_size".into(), None, 32)
            .await
            .unwrap()
    );
    let c1 = store.challenge("c1".into()).await.unwrap().unwrap();
    assert_eq!(
        (c1.state, c1.game_id.as_deref()),
        (ChallengeState::Accepted, Some("g1"))
    );
    let c2 = store.challenge("c2".into()).await.unwrap().unwrap();
    assert_eq!((c2.state, c2.reason.as_str()), (ChallengeState::Declined, "board_size"));
    // The pairing waits for its game; started once.
    assert_eq!(store.pairing_of("g1".into()).await.unwrap(), Some(p.clone()));
    assert_eq!(store.unstarted_pairings(100).await.unwrap(), std::slice::from_ref(&p));
    assert!(store.pairing_started("c:c1".into()).await.unwrap());
    assert!(!store.pairing_started("c:c1".into()).await.unwrap());
    assert!(store.unstarted_pairings(100).await.unwrap().is_empty());
    // Feeds: b received c1 and heard it accepted; c received c2 and declined it.
    let kinds = |events: Vec<weiqi_players::PlayerEvent>| {
        events
            .into_iter()
            .map(|e| match e.kind {
                PlayerEventKind::ChallengeReceived { challenge } => format!("received {}", challenge.id),
                PlayerEventKind::ChallengeAnswered { challenge } => {
                    format!("{} {}", challenge.state.name(), challenge.id)
                }
                PlayerEventKind::Matched { seek_id, game_id } => format!("matched {seek_id} {game_id}"),
                other => format!("{other:?}"),
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        kinds(store.player_events_of("b".into(), 0, 10).await.unwrap()),
        ["received c1", "accepted c1"]
    );
    assert_eq!(
        kinds(store.player_events_of("c".into(), 0, 10).await.unwrap()),
        ["received c2", "declined c2"]
    );
    let all = store.player_events_after(0, 100).await.unwrap();
    assert_eq!(all.len(), 6);
    assert!(all.windows(2).all(|w| w[0].seq < w[1].seq));
    assert_eq!(store.last_player_event().await.unwrap(), all[5].seq);
    assert_eq!(store.player_events_after(all[4].seq, 100).await.unwrap().len(), 1);
    // Seeks: one open per player, cancelled only by its player, oldest first.
    let seek = |id: &str, player: &str, at: u64| Seek {
        id: id.into(),
        player: who(player),
        rating: 1500.0,
        sizes: vec![9, 13],
        main_min_ms: 60_000,
        main_max_ms: 600_000,
        rated: true,
        window: 200.0,
        handicap: false,
        created_ms: at,
    };
    assert!(store.add_seek(seek("s1", "a", 5)).await.unwrap());
    assert!(!store.add_seek(seek("s1b", "a", 6)).await.unwrap());
    assert!(!store.cancel_seek("s1".into(), "b".into()).await.unwrap());
    assert!(store.cancel_seek("s1".into(), "a".into()).await.unwrap());
    // Seeks made in the same millisecond keep their order of arrival, whatever their ids
    // (the older seek's player hosts and chooses the size), even after the newest of
    // them went and another came.
    for (id, player) in [("zz", "q1"), ("mm", "q2"), ("aa", "q3")] {
        assert!(store.add_seek(seek(id, player, 1)).await.unwrap());
    }
    assert!(store.cancel_seek("aa".into(), "q3".into()).await.unwrap());
    assert!(store.add_seek(seek("bb", "q4", 1)).await.unwrap());
    let ids: Vec<String> = store.seeks().await.unwrap().into_iter().map(|s| s.id).collect();
    assert_eq!(ids, ["zz", "mm", "bb"]);
    for (id, player) in [("zz", "q1"), ("mm", "q2"), ("bb", "q4")] {
        assert!(store.cancel_seek(id.into(), player.into()).await.unwrap());
    }
    let n = 8;
    for i in 0..n {
        assert!(
            store
                .add_seek(seek(&format!("s{i}"), &format!("p{i}"), 100 - i))
                .await
                .unwrap()
        );
    }
    let open = store.seeks().await.unwrap();
    assert_eq!(
        open[0],
        seek(&format!("s{}", n - 1), &format!("p{}", n - 1), 100 - (n - 1))
    );
    assert_eq!(open.len(), n as usize);
    // Racing pairings of overlapping pairs: every seek is taken at most once.
    let mut races = Vec::new();
    for i in 0..n {
        for j in 0..n {
            if i == j {
                continue;
            }
            let store = store.clone();
            let p = pairing(
                &format!("s:{i}:{j}"),
                &format!("g{i}-{j}"),
                &format!("p{i}"),
                &format!("p{j}"),
            );
            races.push(tokio::spawn(async move {
                let (a, b) = (format!("s{i}"), format!("s{j}"));
                let won = store
                    .pair_seeks([(a, format!("p{i}")), (b, format!("p{j}"))], p)
                    .await
                    .unwrap();
                won.then_some((i, j))
            }));
        }
    }
    let mut taken = std::collections::HashSet::new();
    let mut pairs = 0;
    for r in races {
        if let Some((i, j)) = r.await.unwrap() {
            assert!(taken.insert(i) && taken.insert(j), "seek paired twice");
            pairs += 1;
        }
    }
    assert!(pairs >= 1);
    assert_eq!(store.seeks().await.unwrap().len(), n as usize - 2 * pairs);
    // Presence and pending ratings.
    assert_eq!(store.online_until("a".into()).await.unwrap(), 0);
    store.seen(vec!["a".into()], 500).await.unwrap();
    store.seen(vec!["a".into()], 400).await.unwrap();
    assert_eq!(store.online_until("a".into()).await.unwrap(), 500);
    store.expect_rating("g1".into(), 7).await.unwrap();
    store.expect_rating("g1".into(), 8).await.unwrap();
    assert_eq!(store.pending_ratings(10).await.unwrap(), [("g1".to_string(), 7)]);
    store.drop_pending_rating("g1".into()).await.unwrap();
    assert!(store.pending_ratings(10).await.unwrap().is_empty());
    // Challenges made in the same millisecond list in order of arrival, whatever their ids.
    for (id, from) in [("k9", "r1"), ("k1", "r2"), ("k5", "r3")] {
        assert!(store.create_challenge(challenge(id, from, "r0"), 2).await.unwrap());
    }
    let ids: Vec<String> = store
        .open_challenges("r0".into())
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(ids, ["k9", "k1", "k5"]);
}

/// Tournaments: an append lands only on the log's exact length (two servers deciding the
/// same step: one wins); the listing follows the phase; a tournament's pairings are stored
/// once.
pub async fn tournaments_on<S: weiqi_store::TournamentStore + weiqi_store::SeekStore + Clone + 'static>(store: S) {
    use weiqi_game::PlayerRef;
    use weiqi_players::Pairing;
    use weiqi_tournament::{Entrant, Seeding, TournamentEvent, TournamentPhase, TournamentSettings};
    let settings = TournamentSettings {
        name: "Cup".into(),
        groups: 1,
        group_size: 4,
        game: Settings::casual(9),
        seeding: Seeding::Random,
        knockout: false,
        round_starts_ms: vec![],
        round_break_ms: 0,
        check_in_window_ms: 0,
    };
    let created = TournamentEvent::Created {
        id: "t1".into(),
        settings,
        organizer: "o".into(),
        at_ms: 5,
    };
    let entrant = |k: u32| TournamentEvent::Registered {
        entrant: Entrant {
            player_id: format!("p{k}"),
            name: format!("P{k}"),
            bot: false,
            rating: 1500.0,
        },
    };
    let reg = TournamentPhase::Registration;
    assert!(
        store
            .append_tournament("t1".into(), 0, vec![created.clone()], reg)
            .await
            .unwrap()
    );
    assert!(
        !store
            .append_tournament("t1".into(), 0, vec![created.clone()], reg)
            .await
            .unwrap(),
        "created twice"
    );
    assert!(
        store
            .append_tournament("t1".into(), 1, vec![entrant(1), entrant(2)], reg)
            .await
            .unwrap()
    );
    assert!(
        !store
            .append_tournament("t1".into(), 1, vec![entrant(3)], reg)
            .await
            .unwrap(),
        "stale"
    );
    assert!(
        !store
            .append_tournament("t1".into(), 5, vec![entrant(3)], reg)
            .await
            .unwrap(),
        "ahead"
    );
    // Racing appends of the same step: exactly one lands.
    let racers: Vec<_> = (0..4)
        .map(|k| {
            let s = store.clone();
            tokio::spawn(async move {
                s.append_tournament("t1".into(), 3, vec![entrant(10 + k)], reg)
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut won = 0;
    for r in racers {
        won += usize::from(r.await.unwrap());
    }
    assert_eq!(won, 1);
    let events = store.tournament_events("t1".into()).await.unwrap();
    assert_eq!(events.len(), 4);
    assert_eq!(events[0], created);
    assert_eq!(events[1], entrant(1));
    assert!(store.tournament_events("nope".into()).await.unwrap().is_empty());
    let rows = store.tournaments(true, 10).await.unwrap();
    assert_eq!((rows.len(), rows[0].name.as_str(), rows[0].phase), (1, "Cup", reg));
    let done = TournamentEvent::Finished {
        champion: None,
        at_ms: 9,
    };
    assert!(
        store
            .append_tournament("t1".into(), 4, vec![done], TournamentPhase::Finished)
            .await
            .unwrap()
    );
    assert!(store.tournaments(true, 10).await.unwrap().is_empty());
    assert_eq!(
        store.tournaments(false, 10).await.unwrap()[0].phase,
        TournamentPhase::Finished
    );
    // A tournament board's pairing: stored once, found by its game.
    let who = |id: &str| PlayerRef {
        id: id.into(),
        name: id.into(),
        bot: false,
    };
    let p = Pairing {
        id: "t:t1:r1:g0:b0:a0".into(),
        game_id: "tg1".into(),
        host: who("p1"),
        guest: who("p2"),
        settings: Settings::casual(9),
        created_ms: 7,
    };
    assert!(store.add_pairing(p.clone()).await.unwrap());
    assert!(!store.add_pairing(p.clone()).await.unwrap());
    assert_eq!(store.pairing_of("tg1".into()).await.unwrap(), Some(p));
}

/// Reviews: read back as written (passes and points, both colours, every rate), the first
/// one written stays when a second replica stores its own, none for a game not reviewed.
async fn reviews_on<S: weiqi_store::Reviews>(store: &S) {
    use weiqi_gtp::{GameReview, MoveReview};
    use weiqi_rules::{Color, Move, Point};
    let mv = |number: usize, color: Color, played: Move, best: Move, loss: f64| MoveReview {
        number,
        color,
        played,
        black_before: 0.5,
        black_after: 0.25 + loss,
        best,
        black_after_best: 0.75,
        loss,
    };
    let review = GameReview {
        visits: 100,
        moves: vec![
            mv(
                1,
                Color::Black,
                Move::Place(Point { x: 2, y: 2 }),
                Move::Place(Point { x: 4, y: 4 }),
                0.125,
            ),
            mv(2, Color::White, Move::Pass, Move::Place(Point { x: 0, y: 8 }), 0.5),
            mv(3, Color::Black, Move::Pass, Move::Pass, 0.0),
        ],
    };
    assert_eq!(store.review("rv1".into()).await.unwrap(), None);
    assert_eq!(store.put_review("rv1".into(), review.clone(), 5).await.unwrap(), review);
    assert_eq!(store.review("rv1".into()).await.unwrap(), Some(review.clone()));
    // A second review of the same game (another replica's): the first is the game's.
    let other = GameReview {
        visits: 7,
        moves: review.moves[..1].to_vec(),
    };
    assert_eq!(store.put_review("rv1".into(), other, 6).await.unwrap(), review);
    assert_eq!(store.review("rv1".into()).await.unwrap(), Some(review));
}

/// A player's finished games: newest first, ties by game id (last first), a page at a time
/// from the mark of the last row seen, a game recorded twice kept once as first recorded,
/// an anonymous opponent none.
async fn played_on<S: weiqi_store::PlayedGames>(store: &S) {
    use weiqi_game::PlayerRef;
    use weiqi_players::played::{PageAfter, PlayedGame};
    use weiqi_rules::Color;
    let row = |player: &str, game: &str, ended_ms: u64, opponent: Option<&str>| PlayedGame {
        player_id: player.into(),
        game_id: game.into(),
        board_size: 9,
        color: Color::White,
        opponent: opponent.map(|o| PlayerRef {
            id: o.into(),
            name: o.to_uppercase(),
            bot: o == "robot",
        }),
        result: "W+R".into(),
        score: 1.0,
        rated: true,
        ended_ms,
    };
    store
        .record_played(vec![
            row("pa", "g1", 10, Some("pb")),
            row("pa", "g2", 20, None),
            row("pa", "g3", 20, Some("robot")),
            row("pb", "g1", 10, Some("pa")),
        ])
        .await
        .unwrap();
    // Recorded again (a retry after a failure): the first row stays.
    store
        .record_played(vec![PlayedGame {
            result: "B+R".into(),
            ..row("pa", "g1", 10, Some("pb"))
        }])
        .await
        .unwrap();
    let first = store.played_games("pa".into(), None, 2).await.unwrap();
    assert_eq!(first, [row("pa", "g3", 20, Some("robot")), row("pa", "g2", 20, None)]);
    let after = PageAfter {
        ended_ms: 20,
        game_id: "g2".into(),
    };
    let rest = store.played_games("pa".into(), Some(after), 2).await.unwrap();
    assert_eq!(rest, [row("pa", "g1", 10, Some("pb"))]);
    assert!(store.played_games("nobody".into(), None, 5).await.unwrap().is_empty());
}
