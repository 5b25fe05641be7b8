//! WatchGame with one encoding of each item for all of a game's watchers.
//!
//! tonic's generated route converts and encodes every item of every stream: ten thousand
//! watchers of one game cost ten thousand conversions of the same event and game state to
//! protobuf and ten thousand encodings of it, a quarter of the server's time. This route,
//! in front of the generated service, answers WatchGame itself with items encoded once
//! ([`crate::hub::Published::wire`]) and copied into each stream's frame; every other
//! method goes on to the generated service. A client sees the same bytes from either.

use std::convert::Infallible;
use std::sync::Arc;

use futures::{Stream, StreamExt};
use prost::Message;
use prost::bytes::{Buf, BufMut};
use prost::encoding::{DecodeContext, WireType};
use tonic::codegen::{Body, BoxFuture, Context, Poll, Service, StdError, http};
use tonic::{Request, Response, Status};
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::game_service_server::GameServiceServer;
use weiqi_store::EventStore;

use crate::convert;
use crate::hub::Broadcast;
use crate::service::GameSvc;

const WATCH_GAME: &str = "/weiqi.v1.GameService/WatchGame";

/// The game service, with WatchGame answered from shared encodings.
pub struct SharedWatch<S> {
    generated: GameServiceServer<GameSvc<S>>,
    svc: Arc<GameSvc<S>>,
    /// The largest request accepted (the generated service's own limit).
    max_decoding_bytes: usize,
}

impl<S> Clone for SharedWatch<S> {
    fn clone(&self) -> Self {
        SharedWatch {
            generated: self.generated.clone(),
            svc: self.svc.clone(),
            max_decoding_bytes: self.max_decoding_bytes,
        }
    }
}

impl<S: EventStore> SharedWatch<S> {
    pub fn new(svc: GameSvc<S>, max_decoding_bytes: usize) -> SharedWatch<S> {
        let svc = Arc::new(svc);
        SharedWatch {
            generated: GameServiceServer::from_arc(svc.clone()).max_decoding_message_size(max_decoding_bytes),
            svc,
            max_decoding_bytes,
        }
    }
}

impl<S> tonic::server::NamedService for SharedWatch<S> {
    const NAME: &'static str = pb::game_service_server::SERVICE_NAME;
}

impl<S, B> Service<http::Request<B>> for SharedWatch<S>
where
    S: EventStore,
    B: Body + Send + 'static,
    B::Error: Into<StdError> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        if req.uri().path() != WATCH_GAME {
            return self.generated.call(req);
        }
        let (svc, max) = (self.svc.clone(), self.max_decoding_bytes);
        Box::pin(async move {
            let codec = tonic_prost::ProstCodec::<Encoded, pb::WatchGameRequest>::default();
            let mut grpc = tonic::server::Grpc::new(codec).apply_max_message_size_config(Some(max), None);
            Ok(grpc.server_streaming(Watch(svc), req).await)
        })
    }
}

/// WatchGame's handler on this route.
struct Watch<S>(Arc<GameSvc<S>>);

type EncodedStream = std::pin::Pin<Box<dyn Stream<Item = Result<Encoded, Status>> + Send>>;

impl<S: EventStore> tonic::server::ServerStreamingService<pb::WatchGameRequest> for Watch<S> {
    type Response = Encoded;
    type ResponseStream = EncodedStream;
    type Future = BoxFuture<Response<EncodedStream>, Status>;

    fn call(&mut self, request: Request<pb::WatchGameRequest>) -> Self::Future {
        let svc = self.0.clone();
        Box::pin(async move {
            let items = svc.watch_items(request).await?;
            let out: EncodedStream = Box::pin(items.map(|item| item.map(Encoded::of)));
            Ok(Response::new(out))
        })
    }
}

/// A broadcast item as an encoded `WatchGameResponse` (the first stream to send an item
/// encodes it; the rest find it done). Encode only: nothing decodes into it.
#[derive(Debug, Default)]
pub struct Encoded(Option<Broadcast>);

impl Encoded {
    fn of(b: Broadcast) -> Encoded {
        b.wire.get_or_init(|| convert::watched_to(&b).encode_to_vec());
        Encoded(Some(b))
    }

    fn bytes(&self) -> &[u8] {
        self.0.as_ref().and_then(|b| b.wire.get()).map_or(&[], Vec::as_slice)
    }
}

impl Message for Encoded {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        buf.put_slice(self.bytes());
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), prost::DecodeError> {
        prost::encoding::skip_field(wire_type, tag, buf, ctx)
    }

    fn encoded_len(&self) -> usize {
        self.bytes().len()
    }

    fn clear(&mut self) {
        self.0 = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::Published;
    use weiqi_game::{Event, EventKind, Game};

    #[test]
    fn an_item_encodes_to_the_generated_message_bytes() {
        let mut game = Game::new();
        let events = game
            .decide_in_place(
                weiqi_game::Actor::Host,
                &weiqi_game::Command::Create {
                    host: None,
                    settings: convert::settings_from(
                        Some(&pb::GameSettings {
                            board_size: 9,
                            ..Default::default()
                        }),
                        0,
                    )
                    .unwrap(),
                    nigiri_commitment: None,
                },
                5,
            )
            .unwrap();
        let event: Event = events[0].clone();
        assert!(matches!(event.kind, EventKind::Created { .. }));
        let b = Published::new(event, crate::hub::GameView::of("g1", &game, 5));
        let expected = convert::watched_to(&b).encode_to_vec();
        let first = Encoded::of(b.clone());
        let second = Encoded::of(b);
        assert_eq!(first.encode_to_vec(), expected);
        assert_eq!(second.encoded_len(), expected.len());
        let back = pb::WatchGameResponse::decode(second.encode_to_vec().as_slice()).unwrap();
        assert_eq!(back.state.unwrap().game_id, "g1");
    }
}
