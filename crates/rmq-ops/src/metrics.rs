//! Metrics every Waymark server keeps: requests by request and response
//! code with their latency ([`RequestMetrics`]), what the transport counted
//! ([`TransportCollector`]: connections, bytes, refusals, together with the
//! server's own refusals, [`Refusals`]) and the build ([`build_info`]).
//! Names and labels are documented in docs/metrics.md.
//!
//! Label values come from fixed tables only (Java's code names, refusal
//! kinds): a peer sending made-up request codes adds one `UNKNOWN` series,
//! not one per code.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use rmq_transport::{Refusal, ServerStats};
use rmq_wire::{RequestCode, ResponseCode};

/// Labels of a request count.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RequestLabels {
    request: &'static str,
    response: &'static str,
}

/// Labels of a latency histogram.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RequestCodeLabel {
    request: &'static str,
}

fn latency_histogram() -> Histogram {
    // 25 µs to ~13 s, doubling: a route query is tens of µs, a large
    // registration or an fsync'd write milliseconds.
    Histogram::new(exponential_buckets(0.000_025, 2.0, 20))
}

/// Requests by request code and response code, and their latency by
/// request code (from the request read to the answer handed to the writer).
#[derive(Debug, Clone)]
pub struct RequestMetrics {
    requests: Family<RequestLabels, Counter>,
    durations: Family<RequestCodeLabel, Histogram, fn() -> Histogram>,
}

impl Default for RequestMetrics {
    fn default() -> Self {
        RequestMetrics {
            requests: Family::default(),
            durations: Family::new_with_constructor(latency_histogram),
        }
    }
}

impl RequestMetrics {
    /// Adds the families to `registry` (they share their counts with `self`).
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "waymark_requests",
            "Requests answered, by request code and response code (`none`: one-way, nothing sent)",
            self.requests.clone(),
        );
        registry.register(
            "waymark_request_duration_seconds",
            "Time from a request read to its answer queued, by request code",
            self.durations.clone(),
        );
    }

    /// Counts one request.
    pub fn observe(&self, request: RequestCode, response: Option<ResponseCode>, took: Duration) {
        let request = request.java_name();
        let response = response.map_or("none", ResponseCode::java_name);
        self.requests
            .get_or_create(&RequestLabels { request, response })
            .inc();
        self.durations
            .get_or_create(&RequestCodeLabel { request })
            .observe(took.as_secs_f64());
    }
}

/// Refusals a server makes itself (beyond the transport's), by kind; the
/// kinds are fixed when it starts.
#[derive(Debug)]
pub struct Refusals {
    kinds: Vec<(&'static str, AtomicU64)>,
}

impl Refusals {
    /// Counters for `kinds`, all zero.
    pub fn new(kinds: &[&'static str]) -> Refusals {
        Refusals {
            kinds: kinds
                .iter()
                .map(|kind| (*kind, AtomicU64::new(0)))
                .collect(),
        }
    }

    /// Counts one refusal of `kind`.
    ///
    /// # Panics
    /// If `kind` is not one of the kinds given to [`Refusals::new`]: a
    /// programming error, caught by any test that reaches the call.
    pub fn refused(&self, kind: &'static str) {
        let (_, count) = self
            .kinds
            .iter()
            .find(|(known, _)| *known == kind)
            .unwrap_or_else(|| panic!("refusal kind {kind:?} was not declared"));
        count.fetch_add(1, Ordering::Relaxed);
    }

    /// The count of `kind` (0 for an undeclared kind).
    pub fn count(&self, kind: &str) -> u64 {
        self.kinds
            .iter()
            .find(|(known, _)| *known == kind)
            .map_or(0, |(_, count)| count.load(Ordering::Relaxed))
    }
}

/// Exports a server's [`ServerStats`] and [`Refusals`] at each scrape.
#[derive(Debug)]
pub struct TransportCollector {
    stats: Arc<ServerStats>,
    refusals: Arc<Refusals>,
}

impl TransportCollector {
    /// Exports `stats` and `refusals`.
    pub fn new(stats: Arc<ServerStats>, refusals: Arc<Refusals>) -> TransportCollector {
        TransportCollector { stats, refusals }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct KindLabel {
    kind: &'static str,
}

impl Collector for TransportCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let stats = self.stats.snapshot();
        let counters = [
            (
                "waymark_connections_opened",
                "Connections accepted and handed to the server (after TLS and any PROXY header).",
                stats.connections_opened,
            ),
            (
                "waymark_received_bytes",
                "Bytes read from connections.",
                stats.bytes_read,
            ),
            (
                "waymark_sent_bytes",
                "Bytes written to connections.",
                stats.bytes_written,
            ),
        ];
        for (name, help, value) in counters {
            let counter = ConstCounter::new(value);
            counter.encode(encoder.encode_descriptor(
                name,
                help,
                None,
                counter.metric_type(),
            )?)?;
        }
        let open = ConstGauge::new(stats.connections_open() as i64);
        open.encode(encoder.encode_descriptor(
            "waymark_connections_open",
            "Connections open now.",
            None,
            open.metric_type(),
        )?)?;
        let mut family = encoder.encode_descriptor(
            "waymark_refusals",
            "Requests, frames and connections refused by a budget or limit, by kind (docs/metrics.md lists the kinds).",
            None,
            prometheus_client::metrics::MetricType::Counter,
        )?;
        let transport = Refusal::ALL
            .iter()
            .map(|refusal| (refusal.name(), stats.refused(*refusal)));
        let own = self
            .refusals
            .kinds
            .iter()
            .map(|(kind, count)| (*kind, count.load(Ordering::Relaxed)));
        for (kind, count) in transport.chain(own) {
            let counter = ConstCounter::new(count);
            counter.encode(family.encode_family(&KindLabel { kind })?)?;
        }
        Ok(())
    }
}

/// Labels of the build info.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct BuildLabels {
    version: &'static str,
    revision: &'static str,
    role: &'static str,
}

/// `waymark_build_info{version, revision, role} 1`, registered in `registry`.
pub fn build_info(registry: &mut Registry, role: &'static str) {
    let info: Family<BuildLabels, Gauge> = Family::default();
    info.get_or_create(&BuildLabels {
        version: crate::build::VERSION,
        revision: crate::build::GIT_REVISION,
        role,
    })
    .set(1);
    registry.register(
        "waymark_build_info",
        "Always 1; the labels say which build and role this process is",
        info,
    );
}

/// The registry in Prometheus' text format (version 0.0.4).
pub fn render(registry: &Registry) -> String {
    let mut text = String::new();
    // Writing into a String cannot fail.
    let _ = prometheus_client::encoding::prometheus_text::encode(&mut text, registry);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_counted_by_code_and_unknown_codes_share_one_series() {
        let metrics = RequestMetrics::default();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        let took = Duration::from_micros(40);
        metrics.observe(
            RequestCode::GetRouteInfoByTopic,
            Some(ResponseCode::Success),
            took,
        );
        metrics.observe(
            RequestCode::GetRouteInfoByTopic,
            Some(ResponseCode::TopicNotExist),
            took,
        );
        metrics.observe(
            RequestCode::from(9_999_001),
            Some(ResponseCode::RequestCodeNotSupported),
            took,
        );
        metrics.observe(
            RequestCode::from(9_999_002),
            Some(ResponseCode::RequestCodeNotSupported),
            took,
        );
        let text = render(&registry);
        assert!(
            text.contains(
                r#"waymark_requests_total{request="GET_ROUTEINFO_BY_TOPIC",response="SUCCESS"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#"waymark_requests_total{request="UNKNOWN",response="REQUEST_CODE_NOT_SUPPORTED"} 2"#),
            "{text}"
        );
        assert!(
            text.contains(
                r#"waymark_request_duration_seconds_count{request="GET_ROUTEINFO_BY_TOPIC"} 2"#
            ),
            "{text}"
        );
    }

    #[test]
    fn transport_and_server_refusals_share_one_family() {
        let refusals = Arc::new(Refusals::new(&["pool_busy"]));
        refusals.refused("pool_busy");
        let mut registry = Registry::default();
        registry.register_collector(Box::new(TransportCollector::new(
            Arc::default(),
            refusals.clone(),
        )));
        let text = render(&registry);
        assert!(
            text.contains(r#"waymark_refusals_total{kind="pool_busy"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"waymark_refusals_total{kind="connection_limit"} 0"#),
            "{text}"
        );
        assert_eq!(
            text.matches("# TYPE waymark_refusals_total counter")
                .count(),
            1,
            "{text}"
        );
    }
}
