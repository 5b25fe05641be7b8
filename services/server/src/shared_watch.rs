//! WatchGame with one encoding of each item for all of a game's watchers.
//!
//! tonic's generated route converts, encodes and copies every item of every stream: ten
//! thousand watchers of one game cost ten thousand conversions of the same event and game
//! state to protobuf, ten thousand encodings and ten thousand copies. This route, in front
//! of the generated service, answers WatchGame itself: each item is converted and framed
//! once ([`crate::hub::Published::wire`], gRPC's length-prefixed message) and every stream
//! hands the same bytes to HTTP/2 by reference. Every other method goes on to the generated
//! service. A client sees the same bytes, headers and trailers from either.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use futures::StreamExt;
use http_body::Frame;
use http_body_util::BodyExt;
use prost::Message;
use tonic::codegen::{Body, BoxFuture, Context, Poll, Service, StdError, http};
use tonic::metadata::MetadataMap;
use tonic::{Request, Status};
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::game_service_server::GameServiceServer;
use weiqi_store::EventStore;

use crate::convert;
use crate::hub::Broadcast;
use crate::service::{GameSvc, Watching};
use crate::status;

const WATCH_GAME: &str = "/weiqi.v1.GameService/WatchGame";

/// gRPC's message prefix: a compression flag and the message's length (big-endian).
const PREFIX: usize = 5;

/// The game service, with WatchGame answered from shared encodings.
pub struct SharedWatch<S> {
    generated: GameServiceServer<GameSvc<S>>,
    svc: Arc<GameSvc<S>>,
    /// The largest request accepted (the generated service's own limit).
    max_decoding_bytes: usize,
    /// WatchGame only, every other method UNIMPLEMENTED (the spectators' listener).
    watch_only: bool,
}

impl<S> Clone for SharedWatch<S> {
    fn clone(&self) -> Self {
        SharedWatch {
            generated: self.generated.clone(),
            svc: self.svc.clone(),
            max_decoding_bytes: self.max_decoding_bytes,
            watch_only: self.watch_only,
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
            watch_only: false,
        }
    }

    /// The same service answering WatchGame only, for the spectators' listener: what runs
    /// there runs at nice 19 (`crate::delivery`), and a move, a timer or a database
    /// connection started by a call there would be slowed with the spectators.
    pub fn watch_only(&self) -> SharedWatch<S> {
        SharedWatch {
            watch_only: true,
            ..self.clone()
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
    B::Data: Send,
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
            if self.watch_only {
                let status = Status::unimplemented(
                    "this is the spectators' listener: it serves WatchGame only; call the server's main address",
                );
                return Box::pin(async move { Ok(status.into_http()) });
            }
            return self.generated.call(req);
        }
        let (svc, max) = (self.svc.clone(), self.max_decoding_bytes);
        Box::pin(async move { Ok(watch(&svc, max, req).await.unwrap_or_else(Status::into_http)) })
    }
}

/// WatchGame: the request read and checked, then the game's items as they come.
async fn watch<S: EventStore, B>(
    svc: &GameSvc<S>,
    max: usize,
    req: http::Request<B>,
) -> Result<http::Response<tonic::body::Body>, Status>
where
    B: Body + Send + 'static,
    B::Error: Into<StdError>,
{
    let (parts, body) = req.into_parts();
    check_encoding(&parts.headers)?;
    let message = read_request(body, max).await?;
    let request = Request::from_parts(MetadataMap::from_headers(parts.headers), parts.extensions, message);
    let items = svc.watch_items(request).await?;
    // (Boxed as tonic's own body type, which tonic then takes as it is: another body type
    // gets a layer that maps its errors, on every item's way.)
    let mut response = http::Response::new(tonic::body::Body::new(WatchBody { items, done: false }.boxed_unsync()));
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/grpc"),
    );
    Ok(response)
}

/// Requests are read uncompressed only (as the generated route, with no compression
/// enabled, does): any other `grpc-encoding` is refused at once, naming the one accepted.
fn check_encoding(headers: &http::HeaderMap) -> Result<(), Status> {
    match headers.get("grpc-encoding").map(http::HeaderValue::as_bytes) {
        None | Some(b"identity") => Ok(()),
        Some(other) => {
            let mut status = Status::unimplemented(format!(
                "Content is compressed with `{}` which isn't supported",
                String::from_utf8_lossy(other)
            ));
            status.metadata_mut().insert(
                "grpc-accept-encoding",
                tonic::metadata::MetadataValue::from_static("identity"),
            );
            Err(status)
        }
    }
}

/// The request's one message: read up to its end and no further (a client need not close
/// its side first), and never more than `max` bytes of message, as the generated route does:
/// the buffer holds at most the prefix and the message, whatever the chunks.
async fn read_request<B>(body: B, max: usize) -> Result<pb::WatchGameRequest, Status>
where
    B: Body,
    B::Error: Into<StdError>,
{
    let mut body = std::pin::pin!(body);
    let mut buf = BytesMut::new();
    // The bytes still missing: of the prefix, then of the message it announces.
    let missing = |buf: &BytesMut| -> Result<usize, Status> {
        if buf.len() < PREFIX {
            return Ok(PREFIX - buf.len());
        }
        let len = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
        if len > max {
            return Err(Status::out_of_range(format!(
                "Error, decoded message length too large: found {len} bytes, the limit is: {max} bytes"
            )));
        }
        Ok(PREFIX + len - buf.len())
    };
    while missing(&buf)? > 0 {
        match body.frame().await {
            Some(Ok(frame)) => {
                let Ok(mut data) = frame.into_data() else { continue };
                while data.has_remaining() {
                    let need = missing(&buf)?;
                    if need == 0 {
                        break;
                    }
                    let chunk = data.chunk();
                    let n = chunk.len().min(need);
                    buf.put_slice(&chunk[..n]);
                    data.advance(n);
                }
            }
            Some(Err(e)) => return Err(Status::from_error(e.into())),
            None => break,
        }
    }
    if buf.is_empty() {
        return Err(Status::internal("Missing request message."));
    }
    if missing(&buf)? > 0 {
        return Err(Status::internal("the request message ended early"));
    }
    if buf[0] != 0 {
        return Err(Status::internal(
            "protocol error: received message with compressed-flag but no grpc-encoding was specified",
        ));
    }
    pb::WatchGameRequest::decode(&buf[PREFIX..]).map_err(|e| Status::internal(e.to_string()))
}

/// A WatchGame response: each item's shared frame, then the status as trailers.
struct WatchBody<S: EventStore> {
    items: Watching<S>,
    done: bool,
}

impl<S: EventStore> Body for WatchBody<S> {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        if self.done {
            return Poll::Ready(None);
        }
        let end = match std::task::ready!(self.items.poll_next_unpin(cx)) {
            Some(Ok(item)) => return Poll::Ready(Some(Ok(Frame::data(framed(&item))))),
            Some(Err(e)) => status::hub_error(e),
            None => Status::ok(""),
        };
        self.done = true;
        let mut trailers = http::HeaderMap::new();
        end.add_header(&mut trailers)?;
        Poll::Ready(Some(Ok(Frame::trailers(trailers))))
    }

    fn is_end_stream(&self) -> bool {
        self.done
    }
}

/// An item as a `WatchGameResponse` in gRPC's framing, made by the first stream to send it.
fn framed(b: &Broadcast) -> Bytes {
    b.wire.get_or_init(|| grpc_frame(&convert::watched_to(b))).clone()
}

/// A message in gRPC's framing: uncompressed, its length, its bytes.
fn grpc_frame(message: &impl Message) -> Bytes {
    let len = message.encoded_len();
    let mut out = BytesMut::with_capacity(PREFIX + len);
    out.put_u8(0);
    out.put_u32(len as u32);
    message.encode(&mut out).expect("capacity reserved");
    out.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::Published;
    use weiqi_game::{Event, EventKind, Game};

    #[test]
    fn an_item_is_the_generated_message_in_grpc_framing() {
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
        let first = framed(&b);
        let second = framed(&b);
        assert_eq!(first[0], 0, "not compressed");
        assert_eq!(
            u32::from_be_bytes(first[1..5].try_into().unwrap()) as usize,
            expected.len()
        );
        assert_eq!(&first[PREFIX..], expected.as_slice());
        assert_eq!(
            first.as_ptr(),
            second.as_ptr(),
            "the second stream shares the first's bytes"
        );
        let back = pb::WatchGameResponse::decode(&second[PREFIX..]).unwrap();
        assert_eq!(back.state.unwrap().game_id, "g1");
    }

    /// The request is read as far as its one message and no further, and a message over
    /// the limit is refused from its prefix, before its bytes arrive.
    #[tokio::test]
    async fn the_request_is_read_to_its_message_and_bounded() {
        let framed = grpc_frame(&pb::WatchGameRequest {
            game_id: "g1".into(),
            since_seq: 3,
        })
        .to_vec();
        // A body that sends the message and then never ends.
        let frames = futures::stream::iter([Ok::<_, Infallible>(Frame::data(Bytes::from(framed.clone())))])
            .chain(futures::stream::pending());
        let body = http_body_util::StreamBody::new(frames);
        let got = read_request(body, 64).await.unwrap();
        assert_eq!((got.game_id.as_str(), got.since_seq), ("g1", 3));
        let mut huge = vec![0];
        huge.extend(1_000_000u32.to_be_bytes());
        let body = http_body_util::StreamBody::new(
            futures::stream::iter([Ok::<_, Infallible>(Frame::data(Bytes::from(huge)))])
                .chain(futures::stream::pending()),
        );
        assert_eq!(
            read_request(body, 64).await.unwrap_err().code(),
            tonic::Code::OutOfRange
        );
        let empty = http_body_util::Empty::<Bytes>::new();
        assert_eq!(read_request(empty, 64).await.unwrap_err().code(), tonic::Code::Internal);
        let mut compressed = framed.clone();
        compressed[0] = 1;
        let body = http_body_util::Full::new(Bytes::from(compressed));
        assert_eq!(read_request(body, 64).await.unwrap_err().code(), tonic::Code::Internal);
        // A message that ends early, and one whose chunks run past it (the rest is left).
        let body = http_body_util::Full::new(Bytes::from(framed[..framed.len() - 1].to_vec()));
        assert_eq!(read_request(body, 64).await.unwrap_err().code(), tonic::Code::Internal);
        let mut longer = framed.clone();
        longer.extend([0u8; 100]);
        let got = read_request(http_body_util::Full::new(Bytes::from(longer)), 64)
            .await
            .unwrap();
        assert_eq!(got.game_id, "g1");
        // The message split across chunks, the prefix too.
        let chunks: Vec<_> = framed
            .chunks(2)
            .map(|c| Ok::<_, Infallible>(Frame::data(Bytes::copy_from_slice(c))))
            .collect();
        let got = read_request(http_body_util::StreamBody::new(futures::stream::iter(chunks)), 64)
            .await
            .unwrap();
        assert_eq!(got.since_seq, 3);
    }

    #[test]
    fn compressed_requests_are_refused_naming_the_accepted_encoding() {
        let mut headers = http::HeaderMap::new();
        assert!(check_encoding(&headers).is_ok());
        headers.insert("grpc-encoding", http::HeaderValue::from_static("identity"));
        assert!(check_encoding(&headers).is_ok());
        headers.insert("grpc-encoding", http::HeaderValue::from_static("gzip"));
        let status = check_encoding(&headers).unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unimplemented);
        assert_eq!(status.metadata().get("grpc-accept-encoding").unwrap(), "identity");
    }
}
