//! Round-robin schedules: Berger tables by the circle method, and the seeded draw.

/// A round's boards as `(black, white)` indexes into the group; with an odd count, the
/// player paired with the bye (index `n`) sits the round out and is left off.
pub type Round = Vec<(usize, usize)>;

/// The rounds of a round robin of `n` players (Berger tables: `n - 1` rounds for even
/// `n`, `n` for odd, everyone meeting everyone once). Circle method: the last player
/// stays put and the others turn; the top row of each board plays Black, and the fixed
/// player's colour alternates, so every player's Blacks and Whites differ by at most one.
pub fn round_robin(n: usize) -> Vec<Round> {
    if n < 2 {
        return Vec::new();
    }
    let m = n + n % 2;
    let mut ring: Vec<usize> = (0..m).collect();
    let mut rounds = Vec::with_capacity(m - 1);
    for r in 0..m - 1 {
        let mut round = Vec::with_capacity(m / 2);
        for k in 0..m / 2 {
            let (top, bottom) = (ring[k], ring[m - 1 - k]);
            let (black, white) = if k == 0 && r % 2 == 1 {
                (bottom, top)
            } else {
                (top, bottom)
            };
            if black < n && white < n {
                round.push((black, white));
            }
        }
        rounds.push(round);
        // The last position is fixed; the others turn by one.
        let last = ring[m - 2];
        ring.copy_within(0..m - 2, 1);
        ring[0] = last;
    }
    rounds
}

/// SplitMix64: the draw's generator, so that anyone can redo a draw from its published
/// seed (the rules crate's, whose outputs never change).
pub use weiqi_game::weiqi_rules::rng::SplitMix64;

/// Fisher–Yates with SplitMix64 from `seed`.
pub fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut rng = SplitMix64(seed);
    for i in (1..items.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        items.swap(i, j);
    }
}

/// Deals `order` into `groups` groups: in turn (a random draw), or snaking (1 A, 2 B, 3 B,
/// 4 A, ... for seeding by rating, so every group gets a strong and a weak player).
pub fn deal<T: Clone>(order: &[T], groups: usize, snake: bool) -> Vec<Vec<T>> {
    let mut out = vec![Vec::new(); groups];
    for (i, x) in order.iter().enumerate() {
        let lap = i / groups;
        let pos = i % groups;
        let g = if snake && lap % 2 == 1 { groups - 1 - pos } else { pos };
        out[g].push(x.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everyone_meets_everyone_once_with_balanced_colours() {
        for n in 2..=16 {
            let rounds = round_robin(n);
            assert_eq!(rounds.len(), if n % 2 == 0 { n - 1 } else { n });
            let mut met = vec![vec![0; n]; n];
            let mut blacks = vec![0i32; n];
            let mut games = vec![0i32; n];
            for round in &rounds {
                let mut busy = vec![false; n];
                for &(b, w) in round {
                    assert!(!busy[b] && !busy[w] && b != w);
                    busy[b] = true;
                    busy[w] = true;
                    met[b][w] += 1;
                    met[w][b] += 1;
                    blacks[b] += 1;
                    games[b] += 1;
                    games[w] += 1;
                }
            }
            for a in 0..n {
                for (b, &times) in met[a].iter().enumerate() {
                    assert_eq!(times, i32::from(a != b), "n={n}");
                }
                assert!(
                    (2 * blacks[a] - games[a]).abs() <= 1,
                    "n={n} player {a}: {} of {}",
                    blacks[a],
                    games[a]
                );
            }
        }
    }

    #[test]
    fn a_draw_is_redone_from_its_seed() {
        let mut a: Vec<u32> = (0..8).collect();
        let mut b = a.clone();
        shuffle(&mut a, 42);
        shuffle(&mut b, 42);
        assert_eq!(a, b);
        let mut c: Vec<u32> = (0..8).collect();
        shuffle(&mut c, 43);
        assert_ne!(a, c);
        assert_eq!(deal(&[1, 2, 3, 4], 2, true), vec![vec![1, 4], vec![2, 3]]);
        assert_eq!(deal(&[1, 2, 3, 4], 2, false), vec![vec![1, 3], vec![2, 4]]);
    }
}
