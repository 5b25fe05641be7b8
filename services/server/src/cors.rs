//! CORS for the browsers that need it. A page on another origin calls through gRPC-Web and
//! sends `Origin`; native gRPC clients (mobile apps, bots, backends) never do, and for them
//! tower-http's layer still built and added its `Vary` header to every answer, 1.5% of the
//! server's CPU at a human pace. Requests without `Origin` bypass it. (So a proxy in front
//! that strips `Origin` would leave browsers without the CORS headers, and an `OPTIONS`
//! request without it is not answered as a preflight: browsers always send it on both.)

use std::task::{Context, Poll};

use anyhow::Context as _;
use futures::future::Either;
use tonic::codegen::http::{HeaderName, HeaderValue, Method, Request, Response, header::ORIGIN};
use tower_http::cors::{AllowOrigin, Cors, CorsLayer};
use tower_layer::Layer;
use tower_service::Service;

/// [`CorsLayer`] applied only to requests that carry an `Origin` header.
#[derive(Clone)]
pub struct BrowserCorsLayer(CorsLayer);

impl BrowserCorsLayer {
    /// CORS for browsers calling through gRPC-Web from another origin: the preflight allows
    /// POST with the headers gRPC-Web clients send (the bearer token included), and the
    /// answer exposes gRPC's status headers (a call that fails at once has them as headers,
    /// not in the body's trailers frame). `origins`: `*`, a comma-separated list, or empty
    /// for none.
    pub fn new(origins: &str) -> anyhow::Result<BrowserCorsLayer> {
        let origins = origins.trim();
        if origins.is_empty() {
            return Ok(BrowserCorsLayer(CorsLayer::new()));
        }
        let allow = if origins == "*" {
            AllowOrigin::any()
        } else {
            let list = origins
                .split(',')
                .map(|o| HeaderValue::from_str(o.trim()).with_context(|| format!("CORS origin {o:?}")))
                .collect::<anyhow::Result<Vec<_>>>()?;
            AllowOrigin::list(list)
        };
        let request = [
            "content-type",
            "x-grpc-web",
            "x-user-agent",
            "grpc-timeout",
            "authorization",
            crate::ROUTE_HEADER,
        ];
        let exposed = [
            "grpc-status",
            "grpc-message",
            "grpc-status-details-bin",
            crate::status::STATE_TRAILER,
        ];
        Ok(BrowserCorsLayer(
            CorsLayer::new()
                .allow_origin(allow)
                .allow_methods([Method::POST])
                .allow_headers(request.map(HeaderName::from_static))
                .expose_headers(exposed.map(HeaderName::from_static))
                .max_age(std::time::Duration::from_secs(86_400)),
        ))
    }
}

impl<S> Layer<S> for BrowserCorsLayer {
    type Service = BrowserCors<S>;

    fn layer(&self, inner: S) -> BrowserCors<S> {
        BrowserCors(self.0.layer(inner))
    }
}

/// The service [`BrowserCorsLayer`] makes. One inner service, called through the CORS
/// wrapper or directly (its `poll_ready` is the inner one's, so a call reserves one slot of
/// whatever limits the inner stack keeps, whichever way it goes).
#[derive(Clone)]
pub struct BrowserCors<S>(Cors<S>);

impl<S, B, R> Service<Request<B>> for BrowserCors<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    R: Default,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = Either<<Cors<S> as Service<Request<B>>>::Future, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        if req.headers().contains_key(ORIGIN) {
            Either::Left(self.0.call(req))
        } else {
            Either::Right(self.0.get_mut().call(req))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    /// An inner service answering 200 with no headers.
    #[derive(Clone)]
    struct Empty;
    impl Service<Request<()>> for Empty {
        type Response = Response<String>;
        type Error = Infallible;
        type Future = std::future::Ready<Result<Response<String>, Infallible>>;
        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }
        fn call(&mut self, _: Request<()>) -> Self::Future {
            std::future::ready(Ok(Response::new(String::new())))
        }
    }

    async fn call(origin: Option<&str>) -> Response<String> {
        let mut svc = BrowserCorsLayer::new("*").unwrap().layer(Empty);
        let mut req = Request::post("/weiqi.v1.GameService/Ping");
        if let Some(o) = origin {
            req = req.header(ORIGIN, o);
        }
        std::future::poll_fn(|cx| svc.poll_ready(cx)).await.unwrap();
        svc.call(req.body(()).unwrap()).await.unwrap()
    }

    /// `cors_allowed_origins`: any, a list, none; a value no header can carry is an error
    /// at start, not a silently open (or closed) server.
    #[test]
    fn cors_origins_parse() {
        for ok in [
            "*",
            "",
            "https://play.example",
            "https://a.example, https://b.example:8443",
        ] {
            assert!(BrowserCorsLayer::new(ok).is_ok(), "{ok:?}");
        }
        assert!(BrowserCorsLayer::new("https://a.example,bad\norigin").is_err());
    }

    /// A browser's call (with `Origin`) gets the CORS headers; a native client's call the
    /// inner answer untouched.
    #[tokio::test]
    async fn only_calls_with_an_origin_get_cors_headers() {
        let browser = call(Some("https://play.example")).await;
        assert_eq!(browser.headers()["access-control-allow-origin"], "*");
        assert!(browser.headers().contains_key("access-control-expose-headers"));
        assert!(browser.headers().contains_key("vary"));
        let native = call(None).await;
        assert!(native.headers().is_empty(), "{:?}", native.headers());
    }
}
