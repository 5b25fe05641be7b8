//! Automatch, the pure part: which open seeks pair, oldest first, and the game a pair
//! plays. No IO: the matchmaker loop (`matchmaker.rs`) reads the seeks and claims pairs
//! in the store, which refuses a seek that another server paired meanwhile.

use weiqi_game::{ColorChoice, PlayerRef, Settings, TimeControl};
use weiqi_rating::rank_value;

use crate::{Pairing, RATED_SIZES, RatingRow, Refusal, Seek};

/// The rating window a seek starts with when it names none.
pub const DEFAULT_WINDOW: f64 = 300.0;
/// How fast a waiting seek's window widens, rating points per second, and its widest.
pub const WIDEN_PER_S: f64 = 10.0;
pub const MAX_WINDOW: f64 = 1000.0;
/// Byo-yomi after the main time in automatch games.
pub const PERIODS: u32 = 3;
pub const PERIOD_MS: u64 = 30_000;

/// The longest main time a seek may ask for.
pub const MAX_SEEK_MAIN_S: u32 = 3 * 3600;

/// What a player asks of automatch, as their request says it.
#[derive(Debug, Clone, PartialEq)]
pub struct SeekAsk {
    /// Board sizes accepted, preferred first.
    pub sizes: Vec<u32>,
    pub main_min_s: u32,
    pub main_max_s: u32,
    pub rated: bool,
    /// Rating difference accepted at once; 0 for [`DEFAULT_WINDOW`].
    pub rating_window: u32,
    pub handicap: bool,
}

/// Why `ask` is refused, if it is (checked before anything is read for it).
pub fn validate(ask: &SeekAsk) -> Result<(), Refusal> {
    if ask.sizes.is_empty() || ask.sizes.iter().any(|s| !RATED_SIZES.contains(s)) {
        return Err(Refusal::bad("board_sizes", "one or more of 9, 13 and 19"));
    }
    if ask.main_min_s > ask.main_max_s {
        return Err(Refusal::EmptyRange {
            min_s: ask.main_min_s,
            max_s: ask.main_max_s,
        });
    }
    if ask.main_max_s > MAX_SEEK_MAIN_S {
        return Err(Refusal::bad("main_time_max_s", format!("at most {MAX_SEEK_MAIN_S} s")));
    }
    if f64::from(ask.rating_window) > MAX_WINDOW {
        return Err(Refusal::bad("rating_window", "at most 1000"));
    }
    Ok(())
}

/// The seek `player` (rated `ratings`) makes of `ask`, or why it is refused. The rating
/// it is paired by is the player's at their preferred size (a new player's otherwise).
pub fn seek(id: String, player: PlayerRef, ratings: &[RatingRow], ask: SeekAsk, now: u64) -> Result<Seek, Refusal> {
    validate(&ask)?;
    let rating = ratings
        .iter()
        .find(|r| r.board_size == ask.sizes[0])
        .map_or(weiqi_rating::Rating::default().rating, |r| r.rating);
    Ok(Seek {
        id,
        player,
        rating,
        sizes: ask.sizes,
        main_min_ms: u64::from(ask.main_min_s) * 1000,
        main_max_ms: u64::from(ask.main_max_s) * 1000,
        rated: ask.rated,
        window: if ask.rating_window == 0 {
            DEFAULT_WINDOW
        } else {
            f64::from(ask.rating_window)
        },
        handicap: ask.handicap,
        created_ms: now,
    })
}

/// The rating difference a seek accepts at `now_ms`.
pub fn window(s: &Seek, now_ms: u64) -> f64 {
    let waited_s = now_ms.saturating_sub(s.created_ms) as f64 / 1000.0;
    (s.window + WIDEN_PER_S * waited_s).min(MAX_WINDOW.max(s.window))
}

/// Whether two seeks make a game at `now_ms`: different players, the same rated choice,
/// a common size, overlapping main times, and ratings within both windows.
pub fn compatible(a: &Seek, b: &Seek, now_ms: u64) -> bool {
    a.player.id != b.player.id
        && a.rated == b.rated
        && a.sizes.iter().any(|s| b.sizes.contains(s))
        && a.main_min_ms.max(b.main_min_ms) <= a.main_max_ms.min(b.main_max_ms)
        && (a.rating - b.rating).abs() <= window(a, now_ms).min(window(b, now_ms))
}

/// Pairs `seeks` (oldest first): each seek, oldest first, with the oldest compatible seek
/// still unpaired. Returns index pairs, the older first; no seek is in two.
pub fn pair_up(seeks: &[Seek], now_ms: u64) -> Vec<(usize, usize)> {
    let mut taken = vec![false; seeks.len()];
    let mut pairs = Vec::new();
    for i in 0..seeks.len() {
        if taken[i] {
            continue;
        }
        if let Some(j) = (i + 1..seeks.len()).find(|&j| !taken[j] && compatible(&seeks[i], &seeks[j], now_ms)) {
            taken[i] = true;
            taken[j] = true;
            pairs.push((i, j));
        }
    }
    pairs
}

/// Handicap stones for a rank difference on a board (a stone is worth about one rank on
/// 19x19, two on 13x13, four on 9x9, as servers commonly scale it), at most 9 (5 on 9x9).
pub fn handicap_stones(rank_difference: f64, size: u8) -> u32 {
    let per_stone = match size {
        19 => 1.0,
        13 => 2.0,
        _ => 4.0,
    };
    let most = if size >= 13 { 9.0 } else { 5.0 };
    (rank_difference.abs() / per_stone).floor().clamp(0.0, most) as u32
}

/// The game two compatible seeks play: `(settings, host is the older seek's player)`.
/// The size is the older seeker's first choice the other accepts; the main time the
/// shortest both accept, then byo-yomi; colours at random. With a handicap (both accept
/// one and their ranks differ by a stone or more) the weaker player hosts and takes
/// Black, with komi 0.5 and no stones for one stone's difference (R9).
pub fn game_for(older: &Seek, newer: &Seek) -> (Settings, bool) {
    let size = older
        .sizes
        .iter()
        .copied()
        .find(|s| newer.sizes.contains(s))
        .unwrap_or(19) as u8;
    let mut s = Settings::casual(size);
    s.rated = older.rated && newer.rated;
    s.time = TimeControl::ByoYomi {
        main_ms: older.main_min_ms.max(newer.main_min_ms),
        periods: PERIODS,
        period_ms: PERIOD_MS,
    };
    s.colors = ColorChoice::Random;
    let mut older_hosts = true;
    if older.handicap && newer.handicap {
        let diff = rank_value(older.rating) - rank_value(newer.rating);
        let stones = handicap_stones(diff, size);
        if stones >= 1 {
            older_hosts = diff < 0.0;
            s.colors = ColorChoice::HostBlack;
            s.rules = s.rules.with_komi(0.5);
            s.handicap = if stones >= 2 { stones } else { 0 };
        }
    }
    (s, older_hosts)
}

/// The id of the pairing two matched seeks make (its game's id derives from it).
pub fn pairing_id(older: &Seek, newer: &Seek) -> String {
    format!("s:{}:{}", older.id, newer.id)
}

/// The pairing two compatible seeks make, its game `game_id` (see [`game_for`]): the
/// guest's seat is kept for the guest.
pub fn pairing_of(older: &Seek, newer: &Seek, game_id: String, now: u64) -> Pairing {
    let (mut settings, older_hosts) = game_for(older, newer);
    let (host, guest) = if older_hosts { (older, newer) } else { (newer, older) };
    settings.reserved_guest = Some(guest.player.id.clone());
    Pairing {
        id: pairing_id(older, newer),
        game_id,
        host: host.player.clone(),
        guest: guest.player.clone(),
        settings,
        created_ms: now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seek's request is refused by its own fields, whoever asks (before any read).
    #[test]
    fn bad_seeks_are_refused_by_their_fields() {
        let ask = SeekAsk {
            sizes: vec![9],
            main_min_s: 60,
            main_max_s: 600,
            rated: true,
            rating_window: 0,
            handicap: false,
        };
        assert_eq!(validate(&ask), Ok(()));
        let reason = |a: SeekAsk| validate(&a).unwrap_err().reason();
        assert_eq!(
            reason(SeekAsk {
                sizes: vec![7],
                ..ask.clone()
            }),
            "bad_request"
        );
        assert_eq!(
            reason(SeekAsk {
                main_min_s: 700,
                ..ask.clone()
            }),
            "empty_range"
        );
        assert_eq!(
            reason(SeekAsk {
                main_max_s: MAX_SEEK_MAIN_S + 1,
                ..ask.clone()
            }),
            "bad_request"
        );
        assert_eq!(
            reason(SeekAsk {
                rating_window: 1001,
                ..ask
            }),
            "bad_request"
        );
    }
    use proptest::prelude::*;
    use weiqi_game::PlayerRef;

    fn seek(id: usize, rating: f64, sizes: &[u32], at: u64) -> Seek {
        Seek {
            id: format!("s{id}"),
            player: PlayerRef {
                id: format!("p{id}"),
                name: String::new(),
                bot: false,
            },
            rating,
            sizes: sizes.to_vec(),
            main_min_ms: 60_000,
            main_max_ms: 600_000,
            rated: true,
            window: 200.0,
            handicap: false,
            created_ms: at,
        }
    }

    #[test]
    fn the_oldest_seek_takes_the_oldest_compatible_one() {
        let seeks = [
            seek(0, 1500.0, &[9], 0),
            seek(1, 1500.0, &[19], 1),
            seek(2, 1550.0, &[9, 19], 2),
            seek(3, 1500.0, &[9], 3),
        ];
        // s1 (19 only) and s3 (9 only) share no size: s1 waits.
        assert_eq!(pair_up(&seeks, 10), vec![(0, 2)]);
    }

    #[test]
    fn the_rating_window_widens_as_a_seek_waits() {
        let (a, b) = (seek(0, 1500.0, &[9], 0), seek(1, 1900.0, &[9], 0));
        assert!(!compatible(&a, &b, 0));
        // 200 + 10/s: 400 apart after 20 s.
        assert!(!compatible(&a, &b, 19_000));
        assert!(compatible(&a, &b, 20_000));
        // Never wider than 1000.
        let far = seek(2, 3000.0, &[9], 0);
        assert!(!compatible(&a, &far, 3_600_000));
    }

    #[test]
    fn seeks_differ_in_what_they_refuse() {
        let a = seek(0, 1500.0, &[9], 0);
        let mut casual = seek(1, 1500.0, &[9], 0);
        casual.rated = false;
        assert!(!compatible(&a, &casual, 0));
        let mut slow = seek(2, 1500.0, &[9], 0);
        slow.main_min_ms = 700_000;
        slow.main_max_ms = 900_000;
        assert!(!compatible(&a, &slow, 0));
        let mut same = seek(0, 1500.0, &[9], 0);
        same.id = "other".into();
        assert!(!compatible(&a, &same, 0), "a player never plays themself");
    }

    #[test]
    fn a_pair_plays_the_older_choice_at_the_shortest_common_time() {
        let mut a = seek(0, 1500.0, &[13, 9], 0);
        let mut b = seek(1, 1500.0, &[9, 13], 1);
        a.main_min_ms = 120_000;
        b.main_min_ms = 300_000;
        let (s, older_hosts) = game_for(&a, &b);
        assert_eq!(s.size, 13);
        assert!(s.rated && older_hosts);
        assert_eq!(s.colors, ColorChoice::Random);
        assert_eq!(
            s.time,
            TimeControl::ByoYomi {
                main_ms: 300_000,
                periods: 3,
                period_ms: 30_000
            }
        );
    }

    /// R9: the weaker player takes Black with the stones, and komi 0.5.
    #[test]
    fn handicaps_follow_the_rank_difference_r9() {
        let mut strong = seek(0, 1919.0, &[19], 0); // 1d (rank 30.0)
        let mut weak = seek(1, 1500.0, &[19], 1); // 6k (rank 24.3): 5 stones
        strong.handicap = true;
        weak.handicap = true;
        let (s, older_hosts) = game_for(&strong, &weak);
        assert!(!older_hosts, "the weaker (newer) player hosts");
        assert_eq!((s.colors, s.handicap, s.rules.komi), (ColorChoice::HostBlack, 5, 0.5));
        weak.handicap = false;
        let (s, _) = game_for(&strong, &weak);
        assert_eq!((s.colors, s.handicap), (ColorChoice::Random, 0));
        assert_eq!(handicap_stones(6.9, 9), 1);
        assert_eq!(handicap_stones(30.0, 9), 5);
        assert_eq!(handicap_stones(-12.0, 13), 6);
    }

    proptest! {
        /// Every pair is compatible, no seek is in two pairs, and no two seeks left
        /// unpaired could have been paired (the greedy pass leaves none behind).
        #[test]
        fn pairings_are_compatible_disjoint_and_maximal(
            raw in proptest::collection::vec((0usize..5, 1200.0f64..2200.0, 0u8..7, 0u64..60_000, any::<bool>()), 0..24),
            now in 0u64..120_000,
        ) {
            let mut seeks: Vec<Seek> = raw
                .iter()
                .enumerate()
                .map(|(i, &(player, rating, sizes, at, rated))| {
                    let all = [9, 13, 19];
                    let sizes: Vec<u32> = (0..3).filter(|b| sizes & (1 << b) != 0).map(|b| all[b]).collect();
                    let mut s = seek(i, rating, if sizes.is_empty() { &[9] } else { &sizes }, at);
                    s.player.id = format!("p{player}");
                    s.rated = rated;
                    s
                })
                .collect();
            seeks.sort_by_key(|s| s.created_ms);
            let pairs = pair_up(&seeks, now);
            let mut used = vec![false; seeks.len()];
            for &(i, j) in &pairs {
                prop_assert!(i < j && compatible(&seeks[i], &seeks[j], now));
                prop_assert!(!used[i] && !used[j]);
                used[i] = true;
                used[j] = true;
            }
            for i in 0..seeks.len() {
                for j in i + 1..seeks.len() {
                    prop_assert!(used[i] || used[j] || !compatible(&seeks[i], &seeks[j], now));
                }
            }
        }
    }
}
