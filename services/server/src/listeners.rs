//! The server's sockets: the gRPC listener (with gRPC-Web), the spectators' one on their own
//! runtime, and the plain HTTP ones beside them (metrics, the web app).

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tracing::warn;

use crate::limits::Limits;
use crate::rpc_metrics::RpcMetricsLayer;
use crate::{cors, transport};

/// How the gRPC services are served, the same on every gRPC listener.
#[derive(Clone)]
pub struct Grpc {
    pub routes: tonic::service::Routes,
    pub limits: Limits,
    pub cors_allowed_origins: String,
    pub rpc_metrics: RpcMetricsLayer,
    /// Counts the connections refused over `limits.max_connections` (a listener's own).
    pub refused: prometheus::IntCounter,
}

impl Grpc {
    /// Serves `listener` until `shutdown`, then drains. The listener's connections are
    /// served on the runtime that polls the returned future.
    pub fn serve(
        &self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<impl Future<Output = Result<(), tonic::transport::Error>> + Send + 'static> {
        let ms = Duration::from_millis;
        let limits = &self.limits;
        Ok(tonic::transport::Server::builder()
            .max_concurrent_streams(Some(limits.max_streams_per_connection))
            .http2_max_pending_accept_reset_streams(Some(limits.max_pending_reset_streams))
            .http2_keepalive_interval(Some(ms(limits.keepalive_interval_ms)))
            .http2_keepalive_timeout(Some(ms(limits.keepalive_timeout_ms)))
            .http2_max_header_list_size(Some(limits.max_header_bytes))
            .timeout(ms(limits.request_timeout_ms))
            .accept_http1(true)
            // Outermost, so a browser's preflight is answered before gRPC-Web translation.
            .layer(cors::BrowserCorsLayer::new(&self.cors_allowed_origins)?)
            .layer(self.rpc_metrics.clone())
            .layer(tonic_web::GrpcWebLayer::new())
            .add_routes(self.routes.clone())
            // Our own listener (bound first, to learn the port) loses the builder's
            // TCP_NODELAY: set it here. With Nagle's algorithm on, answers waited for the
            // client's ACKs.
            .serve_with_incoming_shutdown(
                transport::limited(
                    tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true)),
                    limits.max_connections,
                    self.refused.clone(),
                ),
                shutdown,
            ))
    }

    /// Serves the spectators' listener (bound by [`bind_spectators`]) on `delivery` (the
    /// spectators' runtime, [`crate::delivery`]) until the server stops. Its connections,
    /// and the streams on them, are that runtime's: their work waits for the players'.
    pub fn serve_spectators(
        &self,
        socket: tokio::net::TcpSocket,
        delivery: &tokio::runtime::Handle,
        mut stop: watch::Receiver<bool>,
    ) -> anyhow::Result<()> {
        // Registered with the spectators' runtime, whose thread then waits on its socket
        // (tokio's own backlog, for a crowd that connects at once).
        let _entered = delivery.enter();
        let listener = socket.listen(SPECTATORS_BACKLOG)?;
        let serving = self.serve(listener, async move {
            let _ = stop.wait_for(|s| *s).await;
        })?;
        delivery.spawn(async move {
            if let Err(e) = serving.await {
                warn!(error = %e, "the spectators' listener stopped");
            }
        });
        Ok(())
    }
}

/// The spectators' listener's queue of connections not yet accepted (as tokio's `bind`).
const SPECTATORS_BACKLOG: u32 = 1024;

/// Binds the spectators' listener (`spectators_listen`) and its address: with the players'
/// one, before anything is served, so that an address in use stops the start-up at once.
/// (It listens once served, on the spectators' runtime.)
pub fn bind_spectators(listen: &str) -> anyhow::Result<(tokio::net::TcpSocket, SocketAddr)> {
    use std::net::ToSocketAddrs;
    let what = || format!("binding {listen} (spectators_listen)");
    let addr = listen
        .to_socket_addrs()
        .with_context(what)?
        .next()
        .with_context(|| format!("{listen} (spectators_listen) names no address"))?;
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()
    } else {
        tokio::net::TcpSocket::new_v6()
    }?;
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr).with_context(what)?;
    let bound = socket.local_addr()?;
    Ok((socket, bound))
}

/// An HTTP listener beside the gRPC one (metrics, the web app), stopped with the server.
/// Empty `listen` disables it; an address that cannot be bound disables it with a warning,
/// so that a busy port never keeps the game service from starting.
pub async fn side_listener(
    listen: &str,
    what: &str,
    mut stop: watch::Receiver<bool>,
    app: axum::Router,
) -> anyhow::Result<Option<SocketAddr>> {
    if listen.is_empty() {
        return Ok(None);
    }
    let l = match TcpListener::bind(listen).await {
        Ok(l) => l,
        Err(e) => {
            warn!(error = %e, addr = %listen, "{what} disabled");
            return Ok(None);
        }
    };
    let addr = l.local_addr()?;
    let app = app.into_make_service_with_connect_info::<SocketAddr>();
    tokio::spawn(async move {
        let _ = axum::serve(l, app)
            .with_graceful_shutdown(async move {
                let _ = stop.changed().await;
            })
            .await;
    });
    Ok(Some(addr))
}
