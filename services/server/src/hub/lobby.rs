//! The lobby: what each game in memory shows without its lock, and the lists built from
//! it (or, with a cluster, from the store, which sees every server's games).

use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};

use weiqi_game::{Game, Ms, Phase};
use weiqi_store::{EventStore, Lobby, LobbyRow, Summary};

use super::{Hub, HubError};

/// What the lobby shows of a game in memory, readable without the game's lock: listing
/// never waits for a busy game. (Under load a game's lock is held while its events are on
/// their way to disk, and a lobby that locked each game in turn took 7 s for 1,000 games.)
pub struct Listing {
    /// Server time of the game's creation: the lobby shows the newest first.
    pub created_ms: Ms,
    pub board_size: u32,
    pub rules: String,
    /// The phase, as its index in [`Phase::ALL`].
    phase: AtomicU8,
    move_number: AtomicU32,
    /// The last event's sequence number.
    seq: AtomicU64,
}

impl Listing {
    pub(super) fn of(g: &Game, created_ms: Ms) -> Listing {
        // Board size and rules as the stored lobby row has them.
        let Summary { board_size, rules, .. } = summary(g);
        let l = Listing {
            created_ms,
            board_size,
            rules,
            phase: AtomicU8::new(0),
            move_number: AtomicU32::new(0),
            seq: AtomicU64::new(0),
        };
        l.update(g);
        l
    }

    /// Follows the game after a change (board size and rules never change).
    pub(super) fn update(&self, g: &Game) {
        let phase = Phase::ALL.iter().position(|&p| p == g.phase()).unwrap_or(0);
        self.phase.store(phase as u8, Ordering::Relaxed);
        self.move_number.store(g.move_number() as u32, Ordering::Relaxed);
        self.seq.store(g.seq(), Ordering::Relaxed);
    }

    pub fn seq(&self) -> u64 {
        self.seq.load(Ordering::Relaxed)
    }

    pub fn phase(&self) -> Phase {
        Phase::ALL[self.phase.load(Ordering::Relaxed) as usize % Phase::ALL.len()]
    }

    pub fn move_number(&self) -> u32 {
        self.move_number.load(Ordering::Relaxed)
    }

    fn row(&self, game_id: &str) -> LobbyRow {
        LobbyRow {
            game_id: game_id.to_string(),
            phase: self.phase(),
            board_size: self.board_size,
            move_number: self.move_number(),
            rules: self.rules.clone(),
        }
    }
}

/// The lobby row the store keeps beside a game's log.
pub(super) fn summary(g: &Game) -> Summary {
    let s = g.settings();
    Summary {
        phase: g.phase(),
        board_size: s.map_or(0, |s| s.size as u32),
        move_number: g.move_number() as u32,
        rules: s.map(|s| weiqi_rules::sgf::rules_name(&s.rules)).unwrap_or_default(),
        finished: g.phase() == Phase::Finished,
    }
}

impl<S: EventStore> Hub<S> {
    /// The lobby: the newest `limit` games waiting for an opponent, and the newest `limit`
    /// in play (everything after the opponent arrived and before the end). With a cluster,
    /// every server's games, from the store; otherwise the games in memory (every game in
    /// progress is there), from their listings alone: no game's lock is taken.
    pub async fn lobby(&self, limit: usize) -> Result<Lobby, HubError> {
        if let Some(cluster) = &self.cluster {
            return Ok(cluster.lobby(limit).await?);
        }
        type Listed = (Ms, LobbyRow);
        let (mut open, mut playing): (Vec<Listed>, Vec<Listed>) = (Vec::new(), Vec::new());
        for (id, slot) in self.games.read().expect("lock").iter() {
            let l = &slot.listing;
            match l.phase() {
                Phase::WaitingForOpponent => open.push((l.created_ms, l.row(id))),
                Phase::Finished => {}
                _ => playing.push((l.created_ms, l.row(id))),
            }
        }
        let newest_first = |a: &Listed, b: &Listed| (b.0, &b.1.game_id).cmp(&(a.0, &a.1.game_id));
        let mut lists = [open, playing].map(|mut list| {
            if list.len() > limit {
                list.select_nth_unstable_by(limit, newest_first);
                list.truncate(limit);
            }
            list.sort_unstable_by(newest_first);
            list.into_iter().map(|(_, row)| row).collect::<Vec<_>>()
        });
        Ok(Lobby {
            playing: std::mem::take(&mut lists[1]),
            open: std::mem::take(&mut lists[0]),
        })
    }
}
