//! The bot's player feed: challenges arrive on `WatchPlayer` (no polling); each is
//! accepted when it passes the bot's filters and the bot has room for a game, and declined
//! otherwise with the machine-readable reason (as lichess-bot and gtp2ogs answer).

use std::time::Duration;

use tokio::sync::mpsc;
use tonic::transport::Channel;
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::player_service_client::PlayerServiceClient;
use weiqi_proto::v1::watch_player_response::Event;

use super::play::Seat;
use super::spec::JoinFilter;
use super::{authed, log};

/// Follows the bot's feed, sending each challenge received to `out`; reconnects (resuming
/// after the last event seen) while the bot runs.
pub async fn listen(channel: Channel, token: String, out: mpsc::Sender<pb::ChallengeInfo>) {
    let mut players = PlayerServiceClient::new(channel);
    let mut after = 0;
    loop {
        match players
            .watch_player(authed(pb::WatchPlayerRequest { after_seq: after }, &token))
            .await
        {
            Ok(stream) => {
                let mut stream = stream.into_inner();
                log("feed_open", "", "");
                while let Ok(Some(e)) = stream.message().await {
                    after = after.max(e.seq);
                    if let Some(Event::ChallengeReceived(c)) = e.event
                        && out.send(c).await.is_err()
                    {
                        return;
                    }
                }
            }
            Err(s) => log("feed_failed", "", s.message()),
        }
        if out.is_closed() {
            return;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Accepts `c` (returning the bot's seat) or declines it with its reason.
pub async fn answer(
    mut players: PlayerServiceClient<Channel>,
    token: &str,
    c: &pb::ChallengeInfo,
    filter: &JoinFilter,
    busy: bool,
) -> Option<Seat> {
    let refusal = if busy {
        Some((pb::DeclineReason::TooManyGames, "no room for another game".to_string()))
    } else {
        c.settings
            .as_ref()
            .and_then(|s| filter.refuses(s))
            .map(|r| (r.reason, r.why))
    };
    let accept = refusal.is_none();
    let (reason, why) = refusal.unwrap_or((pb::DeclineReason::Unspecified, String::new()));
    let answered = players
        .answer_challenge(authed(
            pb::AnswerChallengeRequest {
                challenge_id: c.challenge_id.clone(),
                accept,
                reason: reason as i32,
            },
            token,
        ))
        .await;
    match answered {
        Ok(r) if accept => {
            let r = r.into_inner();
            Some(Seat {
                game_id: r.game_id,
                token: r.seat_token,
                host: false,
            })
        }
        Ok(_) => {
            log("declined", "", &format!("{}: {why}", c.challenge_id));
            None
        }
        Err(s) => {
            log("answer_failed", "", &format!("{}: {}", c.challenge_id, s.message()));
            None
        }
    }
}
