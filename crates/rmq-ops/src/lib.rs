//! Waymark's operators' surface, shared by the NameServer and the
//! controller: the HTTP port ([`http`]: health, readiness, Prometheus
//! metrics, the dashboard; each server adds its own JSON API), the metrics
//! every server keeps ([`metrics`], [`process`]), log set-up ([`logging`])
//! and what a build says about itself ([`build`]).
//!
//! What a server's tables mean is the server's business: it registers its
//! own collectors and API routes.

pub mod build;
pub mod http;
pub mod logging;
pub mod metrics;
pub mod process;

pub use prometheus_client;
