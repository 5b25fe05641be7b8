//! Times every call by method (`weiqi_rpc_duration_seconds{method}`) as a tower layer
//! around the whole server, so that handlers do not time themselves. The label is the
//! method's name when the path is one the server serves (read from the services'
//! descriptors), and `other` for anything else: a client cannot add label values, and
//! with them memory, by calling made-up paths.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use prometheus::HistogramVec;
use prost::Message;
use tonic::codegen::http;
use tracing::Instrument;

/// The layer: one per server.
#[derive(Clone)]
pub struct RpcMetricsLayer {
    histogram: HistogramVec,
    /// `/package.Service/Method` of every method served.
    known: Arc<HashSet<String>>,
}

impl RpcMetricsLayer {
    /// `descriptor_sets`: the encoded `FileDescriptorSet`s of the services served.
    pub fn new(histogram: HistogramVec, descriptor_sets: &[&[u8]]) -> RpcMetricsLayer {
        let mut known = HashSet::new();
        for set in descriptor_sets {
            let Ok(set) = prost_types::FileDescriptorSet::decode(*set) else {
                continue;
            };
            for file in &set.file {
                for service in &file.service {
                    for method in &service.method {
                        known.insert(format!("/{}.{}/{}", file.package(), service.name(), method.name()));
                    }
                }
            }
        }
        RpcMetricsLayer {
            histogram,
            known: Arc::new(known),
        }
    }

    /// The label of a request path.
    fn method<'a>(&self, path: &'a str) -> &'a str {
        if self.known.contains(path) {
            path.rsplit('/').next().unwrap_or("other")
        } else {
            "other"
        }
    }
}

impl<S> tower_layer::Layer<S> for RpcMetricsLayer {
    type Service = RpcMetrics<S>;

    fn layer(&self, inner: S) -> RpcMetrics<S> {
        RpcMetrics {
            inner,
            layer: self.clone(),
        }
    }
}

/// The layer's service: starts a timer when a call arrives, stops it when the answer (or
/// a stream's headers) is ready.
#[derive(Clone)]
pub struct RpcMetrics<S> {
    inner: S,
    layer: RpcMetricsLayer,
}

impl<S, B> tower_service::Service<http::Request<B>> for RpcMetrics<S>
where
    S: tower_service::Service<http::Request<B>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let method = self.layer.method(request.uri().path());
        let timer = self.layer.histogram.with_label_values(&[method]).start_timer();
        // The call's span (a path the server does not serve is named `other`, as its
        // label is: a client cannot make up span names either).
        let path = if method == "other" {
            "other"
        } else {
            request.uri().path()
        };
        let span = crate::traces::call_span(method, path, request.headers());
        let answer = span.in_scope(|| self.inner.call(request));
        Box::pin(
            async move {
                let r = answer.await;
                drop(timer);
                r
            }
            .instrument(span),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_served_methods_are_labels() {
        let h = HistogramVec::new(prometheus::HistogramOpts::new("t", "t"), &["method"]).unwrap();
        let layer = RpcMetricsLayer::new(h, &[weiqi_proto::FILE_DESCRIPTOR_SET]);
        assert_eq!(layer.method("/weiqi.v1.GameService/Play"), "Play");
        assert_eq!(layer.method("/weiqi.v1.GameService/WatchGame"), "WatchGame");
        assert_eq!(layer.method("/weiqi.v1.GameService/NoSuchMethod"), "other");
        assert_eq!(layer.method("/anything/else"), "other");
    }
}
