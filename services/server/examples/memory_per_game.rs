//! What a game in play holds in a server's memory: the bytes the hub keeps allocated (a
//! counting allocator, so no allocator retention or shared buffers count), on the SQLite
//! store as served. GAMES 19x19 games (1,000 by default) are each played to M moves of
//! random legal moves with request ids, as clients send them, for M of 10, 50, 150 and
//! 250; also the bytes while every game is unpacked, for comparison.
//!
//! `cargo run --release -p weiqi-server --example memory_per_game [GAMES]`

use std::alloc::System;
use std::sync::Arc;

use rand::SeedableRng;
use rand::rngs::SmallRng;
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};
use tokio::sync::watch;
use weiqi_game::{Actor, Command, Seat, Settings};
use weiqi_rules::{Move, Policy, Rules, State};
use weiqi_server::hub::{Hub, Mutation};
use weiqi_server::metrics::Metrics;
use weiqi_store::SqliteStore;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Bytes allocated and not freed so far.
fn live_bytes() -> isize {
    let s = GLOBAL.stats();
    // (A reallocation is already counted in both: `bytes_reallocated` is their net.)
    s.bytes_allocated as isize - s.bytes_deallocated as isize
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let games: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let dir = std::env::temp_dir().join(format!("weiqi-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let store = SqliteStore::open(&dir.join("weiqi.db")).await?;
    let (_stop, rx) = watch::channel(false);
    // Packed after every command, as games at a human pace are.
    let hub = Arc::new(Hub::new(store, vec![9; 32], Metrics::new(), rx).with_park_after(0));
    // Warm-up: the store's and the runtime's own buffers are not the games'.
    play(&hub, 20, 50, 1).await?;
    hub.evict_idle(0);
    for moves in [10, 50, 150, 250] {
        let before = live_bytes();
        let ids = play(&hub, games, moves, moves as u64).await?;
        let at_rest = live_bytes() - before;
        for id in &ids {
            hub.view(id).await?;
        }
        let live = live_bytes() - before;
        let log = hub.stored_log(&ids[0]).await?;
        let (b, parked) = (live_bytes(), weiqi_game::Game::from_events(&log)?.park());
        let game = live_bytes() - b;
        drop(parked);
        println!(
            "{games} games of 19x19 at {moves} moves: {:.1} KB a game at rest ({:.1} KB of it the packed game), {:.1} KB unpacked; its log as events would be {:.1} KB",
            at_rest as f64 / games as f64 / 1e3,
            game as f64 / 1e3,
            live as f64 / games as f64 / 1e3,
            (log.len() * std::mem::size_of::<weiqi_game::Event>()) as f64 / 1e3
        );
        hub.evict_idle(0);
    }
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

/// Creates `games` games and plays each to `moves` moves (fewer if it ends), one game
/// after another; returns their ids.
async fn play(hub: &Arc<Hub<SqliteStore>>, games: usize, moves: usize, seed: u64) -> anyhow::Result<Vec<String>> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut ids = Vec::with_capacity(games);
    for g in 0..games {
        let id = hub.create(Settings::casual(19), None, None, "").await?.game_id;
        hub.join(&id, None, None, "").await?;
        let mut local = State::new(19, Rules::default())?;
        for k in 0..moves {
            let mv = local.choose_random(Policy::Light, &mut rng);
            // (Casual games: the host plays Black.)
            let seat = if local.to_move().index() == 0 {
                Seat::Host
            } else {
                Seat::Guest
            };
            let cmd = match mv {
                Move::Place(point) => Command::Play { point, lag_ms: 0 },
                Move::Pass => Command::Pass { lag_ms: 0 },
            };
            let m = Mutation {
                request_id: format!("g{g}-m{k}"),
                expected_move_number: Some(k as u32),
            };
            hub.run(&id, Actor::from(seat), cmd, m).await?;
            local.play(mv)?;
            if local.is_over() {
                break;
            }
        }
        ids.push(id);
    }
    Ok(ids)
}
