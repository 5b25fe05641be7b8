//! The player's web app on its own listener (`web_listen`): the bundle built from `web/`
//! (committed in `web/dist`, embedded at compile time, so serving needs no Node), and the
//! game service over gRPC-Web on the same origin, so the page needs no CORS and no
//! address to be configured.
//!
//! Limits here: the game service is the same one as on the gRPC listener (message size,
//! per-client quotas keyed by the peer's address); static files are a few fixed,
//! in-memory answers. The listener does not cap its connections as the gRPC one does:
//! put a proxy in front of it when it faces the internet.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tonic::transport::server::TcpConnectInfo;

/// One embedded file of the bundle.
struct Asset {
    body: &'static [u8],
    content_type: &'static str,
}

const INDEX: Asset = Asset {
    body: include_bytes!("../../../web/dist/index.html"),
    content_type: "text/html; charset=utf-8",
};
const APP_JS: Asset = Asset {
    body: include_bytes!("../../../web/dist/app.js"),
    content_type: "text/javascript; charset=utf-8",
};
const APP_CSS: Asset = Asset {
    body: include_bytes!("../../../web/dist/app.css"),
    content_type: "text/css; charset=utf-8",
};

/// The page may call another service with `?api=ORIGIN`, hence `connect-src` beyond self.
const CSP: &str = "default-src 'self'; connect-src 'self' http: https:; img-src 'self' data: blob:; \
                   style-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

fn serve(asset: &'static Asset) -> Response {
    let mut r = asset.body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(asset.content_type));
    // The bundle changes with the binary: always revalidate (it is small and local).
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    r
}

/// The app's routes around `grpc` (the game service's routes, already speaking gRPC-Web).
pub fn router(grpc: axum::Router) -> axum::Router {
    grpc.route("/", get(|| async { serve(&INDEX) }))
        .route("/index.html", get(|| async { serve(&INDEX) }))
        .route("/app.js", get(|| async { serve(&APP_JS) }))
        .route("/app.css", get(|| async { serve(&APP_CSS) }))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found") })
        .layer(axum::middleware::map_request(peer_for_tonic))
}

/// Tonic reads a caller's address (per-client quotas) from `TcpConnectInfo`; axum gives
/// it as `ConnectInfo`.
async fn peer_for_tonic(mut req: Request) -> Request {
    if let Some(ConnectInfo(addr)) = req.extensions().get::<ConnectInfo<SocketAddr>>().copied() {
        req.extensions_mut().insert(TcpConnectInfo {
            local_addr: None,
            remote_addr: Some(addr),
        });
    }
    req
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded bundle is the app: the page loads the script and the stylesheet.
    #[test]
    fn bundle_is_embedded() {
        let index = std::str::from_utf8(INDEX.body).unwrap();
        assert!(index.contains("app.js") && index.contains("app.css"));
        assert!(APP_JS.body.len() > 10_000, "app.js is the built bundle");
        assert!(!APP_CSS.body.is_empty());
    }
}
