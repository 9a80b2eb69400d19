//! Error types of the crate: bad configuration (fatal, at construction) and
//! the failure of one request to one NameServer (reported, never fatal).
//!
//! A failed request is data in a [`RegisterReport`](crate::RegisterReport):
//! the next periodic run is the retry, as in Java.

use std::io;
use std::time::Duration;

use rmq_transport::ClientError;

/// A configuration the registrar refuses to run with.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Java aborts startup for a slave whose `brokerId` is not > 0.
    #[error("a slave needs a brokerId > 0, got {0}")]
    SlaveId(i64),
    /// A required name is empty.
    #[error("{0} must not be blank")]
    Blank(&'static str),
    /// An address is not `host:port`.
    #[error("{addr:?} is not host:port")]
    Address {
        /// The offending text.
        addr: String,
    },
    /// An option value that does not parse.
    #[error("bad value {value:?} for {key}")]
    Value {
        /// The option's Java name.
        key: String,
        /// The value given.
        value: String,
    },
    /// `splitRegistrationSize` of 0 would never finish a batch.
    #[error("splitRegistrationSize must be > 0")]
    SplitSize,
    /// 4.x brokers had no acting-master support.
    #[error("enableSlaveActingMaster needs the 5.x flavour")]
    ActingMasterOnV4,
    /// The TLS settings cannot be used (`useTLS`/`tls.enable` with
    /// `tls.client.*` keys that do not work).
    #[error("TLS: {0}")]
    Tls(#[source] rmq_transport::tls::TlsError),
    /// An address-service URL this crate cannot fetch.
    #[error("unsupported address service URL {url:?}: {reason}")]
    Url {
        /// The URL.
        url: String,
        /// Why.
        reason: &'static str,
    },
}

/// Why one request to one NameServer failed.
#[derive(Debug, thiserror::Error)]
pub enum NsError {
    /// Connecting, sending or waiting for the answer failed.
    #[error(transparent)]
    Transport(#[from] ClientError),
    /// The whole exchange (connect + request) did not finish in time.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The NameServer answered with a non-SUCCESS code, e.g. NO_PERMISSION
    /// (16) from a NameServer with authentication on, whose remark says why.
    #[error("rejected with {} ({code}): {}", code_name(*code), remark.as_deref().unwrap_or("(no remark)"))]
    Rejected {
        /// The response code.
        code: i32,
        /// The response remark.
        remark: Option<String>,
    },
    /// The answer was SUCCESS but its header or body could not be read.
    #[error("unreadable response: {0}")]
    BadResponse(String),
}

impl NsError {
    /// True when the NameServer could not be reached at all.
    pub fn is_unreachable(&self) -> bool {
        matches!(self, NsError::Transport(ClientError::Connect { .. }))
    }

    /// The response code, for a [`NsError::Rejected`].
    pub fn code(&self) -> Option<i32> {
        match self {
            NsError::Rejected { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// Java's name of a response code (`NO_PERMISSION`), `UNKNOWN` for codes
/// Waymark does not name: operators search logs for the Java name.
fn code_name(code: i32) -> &'static str {
    rmq_wire::ResponseCode::from(code).java_name()
}

/// Why the HTTP address service gave no list.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// Connecting, writing or reading failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The exchange did not finish within the timeout.
    #[error("address service timed out after {0:?}")]
    Timeout(Duration),
    /// A status other than 200.
    #[error("address service answered HTTP {0}")]
    Status(u16),
    /// Not an HTTP/1.x response this client understands.
    #[error("malformed HTTP response: {0}")]
    Malformed(&'static str),
}

/// Why one exchange with the controller failed. Never fatal: the agent
/// retries on its schedule, as Java's `ReplicasManager` does.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// Connecting, sending or waiting for the answer failed.
    #[error(transparent)]
    Transport(#[from] ClientError),
    /// A controller did not answer (or could not be reached) in time.
    #[error("{0}: no answer within {1:?}")]
    Timeout(String, Duration),
    /// No controller named a leader (all unreachable, or an election is on).
    #[error("no controller leader known (asked {0})")]
    NoLeader(String),
    /// The controller answered with a code the caller cannot use.
    #[error("controller answered {} ({code}): {}", code_name(*code), remark.as_deref().unwrap_or("(no remark)"))]
    Rejected {
        /// The response code.
        code: i32,
        /// The response remark.
        remark: Option<String>,
    },
    /// The answer's header or body could not be read.
    #[error("unreadable controller answer: {0}")]
    BadResponse(String),
    /// Reading or writing the identity files failed.
    #[error("broker identity file: {0}")]
    Io(#[from] io::Error),
    /// The identity file belongs to another broker set (Java refuses to
    /// start such a broker, at every retry).
    #[error("{file} names {found:?}, but this broker is {expected:?}")]
    IdentityMismatch {
        /// Which file.
        file: String,
        /// `cluster#brokerName` in the file.
        found: String,
        /// `cluster#brokerName` configured.
        expected: String,
    },
    /// The set has no master and the election named none (Java retries
    /// its start-up sequence).
    #[error("the broker set has no master and the election named none")]
    NoMaster,
    /// The agent is stopped.
    #[error("the controller agent is stopped")]
    Stopped,
}

impl ControllerError {
    /// The response code, for a [`ControllerError::Rejected`].
    pub fn code(&self) -> Option<i32> {
        match self {
            ControllerError::Rejected { code, .. } => Some(*code),
            _ => None,
        }
    }
}
