//! Direct challenges, the pure part: who may challenge whom, who may answer or cancel,
//! when a challenge expires, and the game an accepted one pairs. The service's players
//! module reads and writes them in the store around these rules.

use weiqi_game::{ColorChoice, PlayerRef, Settings};

use crate::{Challenge, ChallengeState, Pairing, Refusal};

/// Open challenges per challenger.
pub const MAX_OPEN_CHALLENGES: usize = 20;
/// How long a challenge waits for its answer.
pub const CHALLENGE_TTL_MS: u64 = 10 * 60_000;

/// Whether `me` may challenge `them` at all: nobody challenges themself. (Checked first,
/// before the request's settings are read, and again by [`challenge`].)
pub fn may_challenge(me: &str, them: &str) -> Result<(), Refusal> {
    if them == me {
        return Err(Refusal::SelfChallenge {
            player_id: them.to_string(),
        });
    }
    Ok(())
}

/// A new open challenge from `me` to `them` (who must be online: their feed open until
/// `them_online_until` or later).
pub fn challenge(
    id: String,
    me: PlayerRef,
    them: PlayerRef,
    settings: Settings,
    them_online_until: u64,
    now: u64,
) -> Result<Challenge, Refusal> {
    may_challenge(&me.id, &them.id)?;
    if them_online_until < now {
        return Err(Refusal::OpponentOffline { player_id: them.id });
    }
    Ok(Challenge {
        id,
        challenger: me,
        challenged: them,
        settings,
        state: ChallengeState::Open,
        reason: String::new(),
        game_id: None,
        created_ms: now,
        expires_ms: now + CHALLENGE_TTL_MS,
    })
}

/// Whether `me` may act on `c` now: as its challenger (to cancel it) or as the challenged
/// (to answer it). An open challenge past its time is refused as expired: the caller marks
/// it so in the store.
pub fn may_act(c: &Challenge, me: &str, as_challenger: bool, now: u64) -> Result<(), Refusal> {
    let party = if as_challenger { &c.challenger } else { &c.challenged };
    if party.id != me {
        return Err(Refusal::NotYourChallenge {
            id: c.id.clone(),
            as_challenger,
        });
    }
    if c.state != ChallengeState::Open {
        return Err(closed(c));
    }
    if now >= c.expires_ms {
        return Err(Refusal::ChallengeExpired { id: c.id.clone() });
    }
    Ok(())
}

/// The refusal for a challenge that is no longer open.
pub fn closed(c: &Challenge) -> Refusal {
    Refusal::ChallengeClosed {
        id: c.id.clone(),
        state: c.state,
    }
}

/// The id of the pairing an accepted challenge makes (its game's id derives from it).
pub fn pairing_id(c: &Challenge) -> String {
    format!("c:{}", c.id)
}

/// The pairing an accepted challenge makes: the challenger hosts; the guest seat is kept
/// for the challenged player; nigiri, which needs both players' secrets, is drawn by the
/// server instead.
pub fn pairing_of(c: &Challenge, game_id: String, now: u64) -> Pairing {
    let mut settings = c.settings.clone();
    settings.reserved_guest = Some(c.challenged.id.clone());
    if settings.colors == ColorChoice::Nigiri {
        settings.colors = ColorChoice::Random;
    }
    Pairing {
        id: pairing_id(c),
        game_id,
        host: c.challenger.clone(),
        guest: c.challenged.clone(),
        settings,
        created_ms: now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn player(id: &str) -> PlayerRef {
        PlayerRef {
            id: id.into(),
            name: id.into(),
            bot: false,
        }
    }

    fn open() -> Challenge {
        challenge("c1".into(), player("a"), player("b"), Settings::casual(9), 10, 0).expect("open")
    }

    #[test]
    fn nobody_challenges_themself_or_someone_offline() {
        let s = Settings::casual(9);
        let me = challenge("c".into(), player("a"), player("a"), s.clone(), 10, 0);
        assert_eq!(me.unwrap_err().reason(), "self_challenge");
        let gone = challenge("c".into(), player("a"), player("b"), s, 99, 100);
        assert_eq!(gone.unwrap_err().reason(), "opponent_offline");
    }

    #[test]
    fn only_its_parties_act_on_a_challenge_while_it_is_open_and_in_time() {
        let c = open();
        assert_eq!(may_act(&c, "b", false, 1), Ok(()));
        assert_eq!(may_act(&c, "a", true, 1), Ok(()));
        assert_eq!(may_act(&c, "a", false, 1).unwrap_err().reason(), "not_challenged");
        assert_eq!(may_act(&c, "b", true, 1).unwrap_err().reason(), "not_challenger");
        let late = may_act(&c, "b", false, CHALLENGE_TTL_MS);
        assert_eq!(late.unwrap_err().reason(), "challenge_expired");
        let declined = Challenge {
            state: ChallengeState::Declined,
            ..c
        };
        assert_eq!(
            may_act(&declined, "b", false, 1).unwrap_err().reason(),
            "challenge_closed"
        );
    }

    #[test]
    fn an_accepted_nigiri_challenge_pairs_a_random_colour_game_kept_for_the_challenged() {
        let mut c = open();
        c.settings.colors = ColorChoice::Nigiri;
        let p = pairing_of(&c, "g".into(), 5);
        assert_eq!(p.settings.colors, ColorChoice::Random);
        assert_eq!(p.settings.reserved_guest.as_deref(), Some("b"));
        assert_eq!(
            (p.id.as_str(), p.host.id.as_str(), p.guest.id.as_str()),
            ("c:c1", "a", "b")
        );
    }
}
