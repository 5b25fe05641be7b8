//! The player's calls: each mutating request as the domain command it carries. With the
//! service's one handler for them ([`crate::service`]), a new call is a line here and a
//! line there.

use tonic::Status;
use weiqi_game::Command;
use weiqi_proto::v1 as pb;
use weiqi_rules::{Move, Point};

use crate::auth;
use crate::convert;
use crate::status;

/// A request that runs one command for the seat its bearer token holds.
pub trait PlayerCall: Send + Sync + 'static {
    /// The response, which carries the command's result.
    type Reply: Send + 'static;
    /// The game, request id and expected move number.
    fn mutation(&self) -> Option<&pb::Mutation>;
    /// The command, checked as far as the wire allows (points within the largest board;
    /// the referee checks the rest against the game).
    fn command(&self) -> Result<Command, Status>;
    fn reply(result: pb::CommandResult) -> Self::Reply;
}

macro_rules! player_calls {
    ($($req:ident => $reply:ident: |$r:pat_param| $cmd:expr;)*) => {$(
        impl PlayerCall for pb::$req {
            type Reply = pb::$reply;
            fn mutation(&self) -> Option<&pb::Mutation> {
                self.mutation.as_ref()
            }
            fn command(&self) -> Result<Command, Status> {
                let $r = self;
                $cmd
            }
            fn reply(result: pb::CommandResult) -> pb::$reply {
                pb::$reply { result: Some(result) }
            }
        }
    )*};
}

player_calls! {
    PlayRequest => PlayResponse: |r| Ok(Command::Play {
        point: convert::point_from(r.point.as_ref())?,
        lag_ms: r.lag_ms,
    });
    PassRequest => PassResponse: |r| Ok(Command::Pass { lag_ms: r.lag_ms });
    ResignRequest => ResignResponse: |_| Ok(Command::Resign);
    CancelGameRequest => CancelGameResponse: |_| Ok(Command::Cancel);
    DeclareEndRequest => DeclareEndResponse: |_| Ok(Command::DeclareEnd);
    AcceptScoreRequest => AcceptScoreResponse: |_| Ok(Command::AcceptScore);
    DisputeScoreRequest => DisputeScoreResponse: |_| Ok(Command::DisputeScore);
    RequestUndoRequest => RequestUndoResponse: |_| Ok(Command::RequestUndo);
    OfferDrawRequest => OfferDrawResponse: |_| Ok(Command::OfferDraw);
    ResumeRequest => ResumeResponse: |_| Ok(Command::Resume);
    CheckInRequest => CheckInResponse: |_| Ok(Command::CheckIn);
    PlaceSeatStoneRequest => PlaceSeatStoneResponse: |r| Ok(Command::PlaceSeatStone {
        point: convert::point_from(r.point.as_ref())?,
    });
    CommitBidRequest => CommitBidResponse: |r| Ok(Command::CommitBid { commitment: r.commitment.clone() });
    RevealBidRequest => RevealBidResponse: |r| {
        if r.nonce.len() > 256 {
            return Err(status::invalid("the bid nonce is at most 256 characters"));
        }
        Ok(Command::RevealBid { komi: r.komi, nonce: r.nonce.clone() })
    };
    ClaimTimeoutRequest => ClaimTimeoutResponse: |_| Ok(Command::ClaimTimeout);
    ClaimAbandonedRequest => ClaimAbandonedResponse: |r| Ok(Command::ClaimAbandoned { draw: r.draw });
    AnswerUndoRequest => AnswerUndoResponse: |r| Ok(Command::AnswerUndo { accept: r.accept });
    AnswerDrawRequest => AnswerDrawResponse: |r| Ok(Command::AnswerDraw { accept: r.accept });
    RevealNigiriRequest => RevealNigiriResponse: |r| {
        if r.nonce.len() > 256 {
            return Err(status::invalid("the nigiri nonce is at most 256 characters"));
        }
        Ok(Command::RevealNigiri { stones: r.stones, nonce: r.nonce.clone() })
    };
    ProposeDeadStonesRequest => ProposeDeadStonesResponse: |r| Ok(Command::ProposeDead {
        stones: points_from(&r.stones, "stones")?,
    });
    PlaceHandicapRequest => PlaceHandicapResponse: |r| Ok(Command::PlaceHandicap {
        points: points_from(&r.stones, "stones")?,
    });
    AdjournRequest => AdjournResponse: |r| seal(r.sealed_move.as_ref());
    SealMoveRequest => SealMoveResponse: |r| seal(r.sealed_move.as_ref());
}

/// A sealed move (C3). The nonce that hides it is the server's, so it is unguessable.
fn seal(s: Option<&pb::SealedMove>) -> Result<Command, Status> {
    let mv = match s.and_then(|s| s.r#move.as_ref()) {
        Some(pb::sealed_move::Move::Point(p)) => Move::Place(convert::point_from(Some(p))?),
        Some(pb::sealed_move::Move::Pass(true)) => Move::Pass,
        _ => return Err(status::invalid("sealed_move needs a point or pass = true")),
    };
    Ok(Command::Seal {
        mv,
        nonce: auth::random_hex(16),
    })
}

/// A list of points from the wire: each within the largest board, and no more than it
/// holds (a longer list is refused before any work is done on it; the referee checks the
/// points against the game's board).
fn points_from(points: &[pb::Point], field: &str) -> Result<Vec<Point>, Status> {
    let max = weiqi_rules::MAX_SIZE as usize;
    if points.len() > max * max {
        return Err(status::bad_request(
            field,
            format!("at most {} points (a {max}x{max} board)", max * max),
        ));
    }
    points.iter().map(|p| convert::point_from(Some(p))).collect()
}
