//! Traces: OpenTelemetry spans for each call, exported over OTLP/HTTP when
//! `otlp_endpoint` is set, and nothing at all when it is not (no layer is installed, so
//! the spans below cost what a disabled `tracing` span costs).
//!
//! A call's span (`rpc`, made by [`crate::rpc_metrics`]) continues the caller's W3C trace
//! context (`traceparent`); inside it the hub's `hub.command` (with the game id),
//! `hub.decide` and `store.append`, and the store's own spans for the database's
//! statements (`db.commit`, `db.append_group`).

use opentelemetry::propagation::Extractor;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tonic::codegen::http;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The target of every span a trace is made of: the logs leave it out, the trace takes
/// nothing else (a span no layer wants is never made).
pub const TARGET: &str = "weiqi::trace";

/// How long the exporter waits to batch spans before sending them.
const EXPORT_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

/// The exporting layer, right above the registry, taking only [`TARGET`]'s spans.
pub type OtelLayer = tracing_subscriber::filter::Filtered<
    tracing_opentelemetry::OpenTelemetryLayer<tracing_subscriber::Registry, opentelemetry_sdk::trace::Tracer>,
    tracing_subscriber::filter::Targets,
    tracing_subscriber::Registry,
>;

/// Keeps the exporter; dropped (at exit), it sends what is left.
pub struct Traces(Option<SdkTracerProvider>);

impl Drop for Traces {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = p.shutdown();
        }
    }
}

/// The OpenTelemetry layer for the subscriber, when `endpoint` (an OTLP/HTTP collector's
/// base URL, as `http://collector:4318`) is set; spans go to `{endpoint}/v1/traces`.
pub fn layer(endpoint: &str) -> anyhow::Result<(Option<OtelLayer>, Traces)> {
    use tracing_subscriber::Layer;
    if endpoint.is_empty() {
        return Ok((None, Traces(None)));
    }
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(format!("{}/v1/traces", endpoint.trim_end_matches('/')))
        .build()?;
    let batch = opentelemetry_sdk::trace::BatchSpanProcessor::builder(exporter)
        .with_batch_config(
            opentelemetry_sdk::trace::BatchConfigBuilder::default()
                .with_scheduled_delay(EXPORT_EVERY)
                .build(),
        )
        .build();
    let provider = SdkTracerProvider::builder()
        .with_span_processor(batch)
        .with_resource(
            opentelemetry_sdk::Resource::builder()
                .with_service_name("weiqi")
                .build(),
        )
        .build();
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    let tracer = provider.tracer("weiqi");
    let only_ours = tracing_subscriber::filter::Targets::new().with_target(TARGET, tracing::Level::INFO);
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_filter(only_ours);
    Ok((Some(layer), Traces(Some(provider))))
}

/// A call's headers as the propagator reads them.
struct Headers<'a>(&'a http::HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

/// The span of one call, continuing the caller's trace when it sent one.
pub fn call_span(method: &str, path: &str, headers: &http::HeaderMap) -> tracing::Span {
    let span = tracing::info_span!(
        target: TARGET,
        "rpc",
        otel.name = %path.trim_start_matches('/'),
        otel.kind = "server",
        rpc.system = "grpc",
        rpc.method = %method,
    );
    if !span.is_disabled() {
        let parent = opentelemetry::global::get_text_map_propagator(|p| p.extract(&Headers(headers)));
        let _ = span.set_parent(parent);
    }
    span
}
