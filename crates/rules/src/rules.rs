//! Rule sets: the choices R5 (suicide), R6 (repetition), R8/R10 (scoring) and R9 (komi,
//! handicap compensation) leave open, and the named presets users know.

use std::fmt;
use std::str::FromStr;

/// Repetition rule (R6).
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum KoRule {
    /// Only the immediate recapture of a single stone is forbidden; longer cycles are
    /// reported by [`crate::State::cycle_detected`] (C7).
    Simple,
    /// No move may recreate an earlier whole-board position, whoever is to move.
    Positional,
    /// No move may recreate an earlier position with the same player to move.
    Situational,
}

/// Counting method (R8, R10).
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ScoringRule {
    /// Stones plus surrounded empty points (Chinese, 数子法).
    Area,
    /// Surrounded empty points plus prisoners (Japanese/Korean).
    Territory,
}

/// Points White receives in a handicap game (R9).
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum HandicapBonus {
    /// No compensation.
    Zero,
    /// N points for N stones (Chinese: Black gives back N/2 stones).
    N,
    /// N-1 points (AGA).
    NMinusOne,
}

impl HandicapBonus {
    /// White's bonus in points for `stones` handicap stones (0 or 1 stone: no handicap).
    pub fn points(self, stones: u32) -> f64 {
        if stones < 2 {
            return 0.0;
        }
        match self {
            HandicapBonus::Zero => 0.0,
            HandicapBonus::N => stones as f64,
            HandicapBonus::NMinusOne => (stones - 1) as f64,
        }
    }
}

/// A complete rule set. Build one from a [`Preset`] and change fields as needed.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Rules {
    pub ko: KoRule,
    pub scoring: ScoringRule,
    /// Whether a move that leaves its own chain without liberties is legal (the chain is
    /// then removed). R5 default: forbidden.
    pub suicide_allowed: bool,
    pub handicap_bonus: HandicapBonus,
    /// Points added to White's score. Any finite value, integral included (R9).
    pub komi: f64,
}

impl Default for Rules {
    fn default() -> Rules {
        Preset::Chinese.rules()
    }
}

/// Invalid rule parameters.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RulesError {
    #[error("unknown rules preset {0:?} (known: chinese, tromp-taylor, japanese, korean, aga, new-zealand, ing)")]
    UnknownPreset(String),
    #[error("komi {0} is not a finite number of at most 1000 points")]
    BadKomi(f64),
}

impl Rules {
    /// Rejects a komi that is not finite or absurdly large.
    pub fn validate(&self) -> Result<(), RulesError> {
        if !self.komi.is_finite() || self.komi.abs() > 1000.0 {
            return Err(RulesError::BadKomi(self.komi));
        }
        Ok(())
    }

    /// The same rules with another ko rule.
    pub fn with_ko(mut self, ko: KoRule) -> Rules {
        self.ko = ko;
        self
    }

    /// The same rules with suicide allowed or not.
    pub fn with_suicide(mut self, allowed: bool) -> Rules {
        self.suicide_allowed = allowed;
        self
    }

    /// The same rules with another komi.
    pub fn with_komi(mut self, komi: f64) -> Rules {
        self.komi = komi;
        self
    }
}

/// Named rule sets. Where KataGo has a preset of the same name this matches its definition,
/// except `chinese`, which is KataGo's `chinese-ogs` (positional superko, R6 default), and
/// `ing`, whose ko rule here is situational superko (KataGo uses its Spight variant).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Preset {
    Chinese,
    TrompTaylor,
    Japanese,
    Korean,
    Aga,
    NewZealand,
    Ing,
}

impl Preset {
    pub const ALL: [Preset; 7] = [
        Preset::Chinese,
        Preset::TrompTaylor,
        Preset::Japanese,
        Preset::Korean,
        Preset::Aga,
        Preset::NewZealand,
        Preset::Ing,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Chinese => "chinese",
            Preset::TrompTaylor => "tromp-taylor",
            Preset::Japanese => "japanese",
            Preset::Korean => "korean",
            Preset::Aga => "aga",
            Preset::NewZealand => "new-zealand",
            Preset::Ing => "ing",
        }
    }

    pub fn rules(self) -> Rules {
        use HandicapBonus::*;
        use KoRule::*;
        use ScoringRule::*;
        let (ko, scoring, suicide_allowed, handicap_bonus, komi) = match self {
            Preset::Chinese => (Positional, Area, false, N, 7.5),
            Preset::TrompTaylor => (Positional, Area, true, Zero, 7.5),
            Preset::Japanese | Preset::Korean => (Simple, Territory, false, Zero, 6.5),
            Preset::Aga => (Situational, Area, false, NMinusOne, 7.5),
            Preset::NewZealand => (Situational, Area, true, Zero, 7.5),
            Preset::Ing => (Situational, Area, true, N, 7.5),
        };
        Rules {
            ko,
            scoring,
            suicide_allowed,
            handicap_bonus,
            komi,
        }
    }

    /// Maps an SGF `RU` value to a preset, leniently (`Chinese`, `NZ`, `GOE`, `AGA`, ...).
    pub fn from_sgf_ru(ru: &str) -> Option<Preset> {
        let s = ru.trim().to_ascii_lowercase().replace([' ', '_'], "-");
        match s.as_str() {
            "nz" => Some(Preset::NewZealand),
            "goe" => Some(Preset::Ing),
            "tt" | "tromptaylor" => Some(Preset::TrompTaylor),
            "cn" | "chinese-ogs" | "chinese-kgs" => Some(Preset::Chinese),
            "jp" => Some(Preset::Japanese),
            "ko" | "kr" => Some(Preset::Korean),
            _ => s.parse().ok(),
        }
    }
}

impl FromStr for Preset {
    type Err = RulesError;
    fn from_str(s: &str) -> Result<Preset, RulesError> {
        let lower = s.trim().to_ascii_lowercase();
        Preset::ALL
            .into_iter()
            .find(|p| p.name() == lower)
            .ok_or_else(|| RulesError::UnknownPreset(s.to_string()))
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chinese_is_the_default_r6_r9() {
        let r = Rules::default();
        assert_eq!(r.ko, KoRule::Positional);
        assert_eq!(r.scoring, ScoringRule::Area);
        assert!(!r.suicide_allowed);
        assert_eq!(r.komi, 7.5);
        // R9: a 3-stone game gives White 3 points (Black returns 1.5 stones).
        assert_eq!(r.handicap_bonus.points(3), 3.0);
    }

    #[test]
    fn presets_round_trip_by_name() {
        for p in Preset::ALL {
            assert_eq!(p.name().parse::<Preset>().unwrap(), p);
        }
        assert!("foo".parse::<Preset>().is_err());
        assert_eq!(Preset::from_sgf_ru("NZ"), Some(Preset::NewZealand));
        assert_eq!(Preset::from_sgf_ru("Japanese"), Some(Preset::Japanese));
    }

    #[test]
    fn komi_must_be_finite() {
        assert!(Rules::default().with_komi(f64::NAN).validate().is_err());
        assert!(Rules::default().with_komi(0.0).validate().is_ok());
        assert!(Rules::default().with_komi(-3.0).validate().is_ok());
    }
}
