//! What a server has seen, as plain counters for whoever exports them
//! (`rmq-ops` renders them as Prometheus metrics): connections accepted and
//! closed, bytes in and out, and every refusal the transport's budgets made.
//!
//! Relaxed atomics, bumped where the event happens; a reader gets a
//! [`StatsSnapshot`]. One [`ServerStats`] per server ([`ServerConfig::stats`](crate::ServerConfig::stats)),
//! so the NameServer and an embedded controller count apart.

use std::sync::atomic::{AtomicU64, Ordering};

/// Why the transport refused a peer something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// A new connection over `maxConnections`: closed at once.
    ConnectionLimit,
    /// A new connection over `maxConnectionsPerIp`: closed at once.
    ConnectionLimitPerIp,
    /// A frame that cannot be a request (bad length word, frame over the
    /// frame limit, a header over `maxHeaderBytes` with no opaque to answer
    /// under): the connection closed.
    MalformedFrame,
    /// A large frame that did not arrive whole in `frameReadTimeoutSeconds`:
    /// the connection closed.
    FrameTimeout,
    /// A request with a header field over `maxHeaderFieldBytes`: answered
    /// INVALID_PARAMETER.
    HeaderFieldTooLong,
    /// A request with a header over `maxHeaderBytes`, in a frame within the
    /// frame limit: dropped undecoded and answered INVALID_PARAMETER.
    HeaderTooLarge,
    /// A connection whose unread responses reached its budget: not read
    /// until its peer reads (counted once per stall).
    ResponsesOverBudget,
}

impl Refusal {
    /// Every kind, in the order of [`StatsSnapshot::refusals`].
    pub const ALL: [Refusal; 7] = [
        Refusal::ConnectionLimit,
        Refusal::ConnectionLimitPerIp,
        Refusal::MalformedFrame,
        Refusal::FrameTimeout,
        Refusal::HeaderFieldTooLong,
        Refusal::HeaderTooLarge,
        Refusal::ResponsesOverBudget,
    ];

    /// The label exporters use.
    pub fn name(self) -> &'static str {
        match self {
            Refusal::ConnectionLimit => "connection_limit",
            Refusal::ConnectionLimitPerIp => "connection_limit_per_ip",
            Refusal::MalformedFrame => "malformed_frame",
            Refusal::FrameTimeout => "frame_timeout",
            Refusal::HeaderFieldTooLong => "header_field_too_long",
            Refusal::HeaderTooLarge => "header_too_large",
            Refusal::ResponsesOverBudget => "responses_over_budget",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// A server's counters.
#[derive(Debug, Default)]
pub struct ServerStats {
    accepted: AtomicU64,
    closed: AtomicU64,
    bytes_read: AtomicU64,
    bytes_written: AtomicU64,
    refusals: [AtomicU64; Refusal::ALL.len()],
}

/// The counters at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StatsSnapshot {
    /// Connections handed to the service (after TLS and PROXY header).
    pub connections_opened: u64,
    /// Of those, closed.
    pub connections_closed: u64,
    /// Bytes read from connections (after TLS).
    pub bytes_read: u64,
    /// Bytes written to connections (before TLS).
    pub bytes_written: u64,
    /// Refusals by [`Refusal::ALL`] order.
    pub refusals: [u64; Refusal::ALL.len()],
}

impl ServerStats {
    pub(crate) fn opened(&self) {
        self.accepted.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn closed(&self) {
        self.closed.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn read(&self, bytes: usize) {
        self.bytes_read.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    pub(crate) fn written(&self, bytes: usize) {
        self.bytes_written
            .fetch_add(bytes as u64, Ordering::Relaxed);
    }

    pub(crate) fn refused(&self, refusal: Refusal) {
        self.refusals[refusal.index()].fetch_add(1, Ordering::Relaxed);
    }

    /// The counters now.
    pub fn snapshot(&self) -> StatsSnapshot {
        StatsSnapshot {
            connections_opened: self.accepted.load(Ordering::Relaxed),
            connections_closed: self.closed.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            bytes_written: self.bytes_written.load(Ordering::Relaxed),
            refusals: std::array::from_fn(|i| self.refusals[i].load(Ordering::Relaxed)),
        }
    }
}

impl StatsSnapshot {
    /// Connections open now.
    pub fn connections_open(&self) -> u64 {
        self.connections_opened
            .saturating_sub(self.connections_closed)
    }

    /// The count of one kind of refusal.
    pub fn refused(&self, refusal: Refusal) -> u64 {
        self.refusals[refusal.index()]
    }
}
