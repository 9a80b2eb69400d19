//! What a registration cycle reports: per NameServer and per batch results,
//! what was applied from the answers, and why a cycle was skipped.
//!
//! Plain values; a failure at one NameServer is an entry here, never an
//! error of the cycle (as in Java, where each NameServer's failure is logged
//! and the next periodic cycle is the retry).

use std::fmt;
use std::time::Duration;

use rmq_protocol::{DataVersion, KvTable};

use crate::error::NsError;

/// What a successful REGISTER_BROKER answer carried.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NsReply {
    /// The master's address (slaves whose master is alive).
    pub master_addr: Option<String>,
    /// The master's HA address.
    pub ha_server_addr: Option<String>,
    /// The `ORDER_TOPIC_CONFIG` KV table, when the NameServer returns one.
    pub order_topic_config: Option<KvTable>,
}

/// The result of one request to one NameServer.
#[derive(Debug)]
pub struct NsResult<T> {
    /// The NameServer.
    pub addr: String,
    /// How long it took, connect included.
    pub elapsed: Duration,
    /// What came of it.
    pub outcome: Result<T, NsError>,
}

/// One REGISTER_BROKER body sent to every NameServer.
#[derive(Debug)]
pub struct BatchReport {
    /// Topics in the body.
    pub topics: usize,
    /// Body bytes.
    pub body_len: usize,
    /// One entry per NameServer, in completion order. `Ok(None)` for a
    /// one-way send that was written.
    pub results: Vec<NsResult<Option<NsReply>>>,
}

/// Why a cycle sent nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// The registrar is shutting down.
    Shutdown,
    /// No NameServer address is known.
    NoNameServer,
    /// QUERY_DATA_VERSION found every NameServer up to date.
    NotNeeded,
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Skip::Shutdown => "shutting down",
            Skip::NoNameServer => "no name server",
            Skip::NotNeeded => "not needed (data version unchanged)",
        })
    }
}

/// The result of one `register_all` (or incremental registration).
#[derive(Debug)]
pub struct RegisterReport {
    /// The broker id registered.
    pub broker_id: i64,
    /// The DataVersion sent.
    pub data_version: DataVersion,
    /// Set when nothing was sent.
    pub skipped: Option<Skip>,
    /// One entry per body (several with split registration).
    pub batches: Vec<BatchReport>,
    /// The answer that was applied (first success of the last batch that
    /// had one).
    pub applied: Option<NsReply>,
    /// Time spent building and encoding the bodies.
    pub build_time: Duration,
    /// Time of the whole cycle.
    pub elapsed: Duration,
}

impl RegisterReport {
    pub(crate) fn new(broker_id: i64, data_version: DataVersion) -> RegisterReport {
        RegisterReport {
            broker_id,
            data_version,
            skipped: None,
            batches: Vec::new(),
            applied: None,
            build_time: Duration::ZERO,
            elapsed: Duration::ZERO,
        }
    }

    /// Every failure, as (NameServer, error), across batches.
    pub fn failures(&self) -> impl Iterator<Item = (&str, &NsError)> {
        self.batches.iter().flat_map(|b| {
            b.results
                .iter()
                .filter_map(|r| r.outcome.as_ref().err().map(|e| (r.addr.as_str(), e)))
        })
    }

    /// NameServers that accepted every batch.
    pub fn succeeded(&self) -> Vec<&str> {
        let Some(first) = self.batches.first() else {
            return Vec::new();
        };
        first
            .results
            .iter()
            .map(|r| r.addr.as_str())
            .filter(|addr| {
                self.batches.iter().all(|b| {
                    b.results
                        .iter()
                        .any(|r| r.addr == *addr && r.outcome.is_ok())
                })
            })
            .collect()
    }

    /// NameServers the cycle addressed.
    pub fn attempted(&self) -> usize {
        self.batches.first().map_or(0, |b| b.results.len())
    }

    /// Topics sent, over all batches.
    pub fn topics(&self) -> usize {
        self.batches.iter().map(|b| b.topics).sum()
    }

    /// Body bytes, over all batches.
    pub fn body_bytes(&self) -> usize {
        self.batches.iter().map(|b| b.body_len).sum()
    }

    /// True when something was sent and every NameServer accepted every batch.
    pub fn is_success(&self) -> bool {
        self.skipped.is_none() && self.attempted() > 0 && self.failures().next().is_none()
    }
}
