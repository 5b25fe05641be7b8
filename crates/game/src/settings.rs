//! A new game's settings, checked against their bounds: a refusal names the setting.

use crate::commit;
use crate::types::*;

/// Every bound of [`Settings`] (and the nigiri commitment that goes with them).
pub(crate) fn validate_settings(s: &Settings, commitment: Option<&str>) -> Result<(), Rejection> {
    let bad = |field: SettingField, message: String| Err(Rejection::BadSetting { field, message });
    if !(weiqi_rules::MIN_SIZE..=weiqi_rules::MAX_SIZE).contains(&s.size) {
        return bad(
            SettingField::BoardSize,
            format!("board size {} is not in 2..=25", s.size),
        );
    }
    if let Err(e) = s.rules.validate() {
        return bad(SettingField::Komi, e.to_string());
    }
    let clock = |e: weiqi_clock::SettingError| match e {
        weiqi_clock::SettingError::OutOfRange { field, .. } => Rejection::BadSetting {
            field: if field == weiqi_clock::ClockField::LagAllowance {
                SettingField::LagAllowance
            } else {
                SettingField::Time { control: s.time, field }
            },
            message: e.to_string(),
        },
    };
    s.time.validate().map_err(clock)?;
    s.lag.validate().map_err(clock)?;
    if s.max_lateness_ms > limits::MAX_LATENESS_MS {
        return bad(
            SettingField::MaxLateness,
            format!("lateness is at most {} ms", limits::MAX_LATENESS_MS),
        );
    }
    if !(limits::MIN_NIGIRI_TIMEOUT_MS..=limits::MAX_NIGIRI_TIMEOUT_MS).contains(&s.nigiri_timeout_ms) {
        return bad(SettingField::NigiriTimeout, "the nigiri timeout is 1 s to 1 day".into());
    }
    if !s.variant.is_standard() {
        let clash = if s.handicap != 0 {
            Some("the variant's seat stones replace handicap stones")
        } else if s.scheduled_start.is_some() {
            Some("a variant game starts when both players are seated, not at a scheduled time")
        } else if s.colors == ColorChoice::Nigiri {
            Some("in the variant the bids decide the colours, not nigiri")
        } else {
            None
        };
        if let Some(why) = clash {
            return bad(SettingField::Variant, why.into());
        }
    }
    if s.handicap == 1 {
        return bad(SettingField::Handicap, "a handicap is 0 or 2..9 stones".into());
    }
    if s.free_handicap {
        if s.handicap > (s.size as u32 * s.size as u32) / 2 {
            return bad(
                SettingField::Handicap,
                format!("{} free handicap stones do not fit", s.handicap),
            );
        }
    } else if let Err(e) = weiqi_rules::fixed_handicap(s.size, s.handicap) {
        return bad(SettingField::Handicap, e.to_string());
    }
    match (s.colors, commitment) {
        (ColorChoice::Nigiri, Some(c)) if commit::is_digest(c) => {}
        (ColorChoice::Nigiri, _) => {
            return bad(
                SettingField::NigiriCommitment,
                "nigiri needs the host's SHA-256 commitment (64 hex digits)".into(),
            );
        }
        (_, Some(_)) => {
            return bad(
                SettingField::NigiriCommitment,
                "a nigiri commitment is only for nigiri".into(),
            );
        }
        _ => {}
    }
    Ok(())
}
