//! Seating (C1): creating a game, joining it, deciding colours (fixed, random or nigiri),
//! and starting play once everyone is seated.

use weiqi_clock::Ms;

use super::Tx;
use crate::commit;
use crate::settings::validate_settings;
use crate::types::*;

/// The event that creates a game: the host's settings, checked against their bounds.
pub(super) fn create(
    by: Actor,
    settings: &Settings,
    nigiri_commitment: Option<&str>,
    host: Option<&PlayerRef>,
    now: Ms,
) -> Result<EventKind, Rejection> {
    if by != Actor::Host {
        return Err(Rejection::NotPermitted("only the host creates a game".into()));
    }
    if settings.rated && host.is_none() {
        return Err(Rejection::NotPermitted("a rated game needs a signed-in host".into()));
    }
    validate_settings(settings, nigiri_commitment)?;
    if settings
        .scheduled_start
        .is_some_and(|t| t > now.saturating_add(limits::MAX_SCHEDULE_AHEAD_MS))
    {
        return Err(Rejection::BadSetting {
            field: SettingField::ScheduledStart,
            message: "a scheduled start is at most 30 days ahead".into(),
        });
    }
    Ok(EventKind::Created {
        settings: settings.clone(),
        nigiri_commitment: nigiri_commitment.map(str::to_string),
        host: host.cloned(),
    })
}

impl Tx<'_> {
    pub(super) fn join(
        &mut self,
        by: Actor,
        player: Option<&PlayerRef>,
        nigiri_guess: Option<Parity>,
        entropy: u64,
    ) -> Result<(), Rejection> {
        self.phase_is(&[Phase::WaitingForOpponent])?;
        if by != Actor::Guest {
            return Err(Rejection::NotPermitted("only the guest joins".into()));
        }
        if let Some(reserved) = &self.settings().reserved_guest
            && player.is_none_or(|p| p.id != *reserved)
        {
            return Err(Rejection::NotPermitted(
                "the guest seat is kept for another player".into(),
            ));
        }
        if self.settings().rated {
            let Some(player) = player else {
                return Err(Rejection::NotPermitted("a rated game needs a signed-in player".into()));
            };
            if self.g.players[0].as_ref().is_some_and(|host| host.id == player.id) {
                return Err(Rejection::NotPermitted(
                    "a player cannot hold both seats of a rated game".into(),
                ));
            }
        }
        let joined = EventKind::Joined {
            player: player.cloned(),
        };
        if !self.settings().variant.is_standard() {
            // The variant: seat stones first, and the bids decide the colours.
            self.emit(joined);
            return Ok(());
        }
        let black = match (self.settings().colors, nigiri_guess) {
            (ColorChoice::HostBlack, _) => Seat::Host,
            (ColorChoice::HostWhite, _) => Seat::Guest,
            (ColorChoice::Random, _) if entropy & 1 == 0 => Seat::Host,
            (ColorChoice::Random, _) => Seat::Guest,
            (ColorChoice::Nigiri, None) => {
                return Err(Rejection::InvalidArgument("nigiri needs a guess (odd or even)".into()));
            }
            (ColorChoice::Nigiri, Some(guess)) => {
                // Colours wait for the host's reveal.
                self.emit(joined);
                self.emit(EventKind::NigiriGuessed { guess });
                return Ok(());
            }
        };
        self.emit(joined);
        self.emit(EventKind::ColorsAssigned { black });
        self.start_play_if_ready();
        Ok(())
    }

    /// The host reveals the nigiri (C1): a right guess of the parity takes Black.
    pub(super) fn reveal_nigiri(&mut self, by: Actor, stones: u32, nonce: &str) -> Result<(), Rejection> {
        self.phase_is(&[Phase::Nigiri])?;
        if by != Actor::Host {
            return Err(Rejection::NotPermitted("only the host reveals the nigiri".into()));
        }
        if self.g.nigiri_commitment.as_deref() != Some(&commit::nigiri_commitment(stones, nonce)) {
            return Err(Rejection::CommitmentMismatch);
        }
        let Some((guess, _)) = self.g.nigiri_guess else {
            return Err(Rejection::NothingPending("no nigiri guess".into()));
        };
        let odd = stones % 2 == 1;
        let guess_correct = odd == (guess == Parity::Odd);
        self.emit(EventKind::NigiriRevealed {
            stones,
            nonce: nonce.to_string(),
            guess_correct,
        });
        let black = if guess_correct { Seat::Guest } else { Seat::Host };
        self.emit(EventKind::ColorsAssigned { black });
        self.start_play_if_ready();
        Ok(())
    }

    /// Starts play once colours are known and, for a scheduled game, both have checked in
    /// (C4); with free handicap, Black first places the stones, on Black's clock.
    pub(super) fn start_play_if_ready(&mut self) {
        let s = self.settings();
        let scheduled = s.scheduled_start.is_some();
        let free = s.free_handicap && s.handicap >= 2;
        // A scheduled game starts when both are present and the start has come
        // (`settle_scheduled_start` starts one both reached early).
        let start = s.scheduled_start.unwrap_or(0);
        if scheduled && (self.g.checked_in != [true, true] || self.now < start) {
            return;
        }
        if free {
            self.emit(EventKind::PlacementStarted);
            return;
        }
        let first = self.state().to_move();
        self.emit(EventKind::PlayStarted { first });
    }
}
