//! Kyu and dan ranks from a rating, by the formula OGS publishes:
//! `rank = 23.15 * ln(rating / 525)`, where rank 0 is 30 kyu, rank 29 is 1 kyu and rank 30
//! is 1 dan. A 1500 rating is 6 kyu; 1919 is 1 dan. Below 30 kyu and above 9 dan the rank
//! is held at those ends.

/// A rank: `30k` .. `1k`, `1d` .. `9d`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rank {
    Kyu(u8),
    Dan(u8),
}

/// The rank of a rating as a number (0 is 30 kyu, 30 is 1 dan): rank differences are
/// handicap stones on 19x19.
pub fn rank_value(rating: f64) -> f64 {
    if rating > 0.0 {
        23.15 * (rating / 525.0).ln()
    } else {
        0.0
    }
}

impl Rank {
    /// The rank of a rating.
    pub fn from_rating(rating: f64) -> Rank {
        let value = rank_value(rating);
        let whole = value.floor().clamp(0.0, 38.0) as u8;
        if whole < 30 {
            Rank::Kyu(30 - whole)
        } else {
            Rank::Dan(whole - 29)
        }
    }
}

impl std::fmt::Display for Rank {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rank::Kyu(k) => write!(f, "{k}k"),
            Rank::Dan(d) => write!(f, "{d}d"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_follow_the_published_formula() {
        assert_eq!(Rank::from_rating(1500.0).to_string(), "6k");
        assert_eq!(Rank::from_rating(1919.0).to_string(), "1d");
        assert_eq!(Rank::from_rating(1917.0).to_string(), "1k");
        assert_eq!(Rank::from_rating(100.0).to_string(), "30k");
        assert_eq!(Rank::from_rating(-5.0).to_string(), "30k");
        assert_eq!(Rank::from_rating(5000.0).to_string(), "9d");
        assert!(Rank::from_rating(1200.0) < Rank::from_rating(2100.0));
    }
}
