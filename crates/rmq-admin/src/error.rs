//! What can go wrong talking to one NameServer or controller, and the
//! process exit codes.
//!
//! A [`CallError`] is always about one server: the caller pairs it with the
//! address. It never carries a backtrace; its `Display` is the one line an
//! operator reads, and [`CallError::to_json`] is what a script reads. Usage
//! errors are clap's business and never get here.

use std::io;

use rmq_transport::ClientError;
use rmq_wire::ResponseCode;
use serde_json::{json, Value};

/// Exit code: every server asked answered successfully (and, for `namesrv
/// diff`, they agree).
pub const EXIT_OK: u8 = 0;
/// Exit code: the NameServers disagree (`namesrv diff`), or some servers
/// failed while others answered.
pub const EXIT_PARTIAL: u8 = 1;
/// Exit code: bad flags or arguments (clap's own exit code for usage errors).
pub const EXIT_USAGE: u8 = 2;
/// Exit code: no server answered successfully.
pub const EXIT_FAILED: u8 = 3;

/// Why one request to one server did not give a usable answer.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The TCP connection could not be made.
    #[error("cannot connect: {0}")]
    Connect(#[source] io::Error),
    /// Connecting or the response took longer than `--timeout-ms`.
    #[error("no response within {0} ms")]
    Timeout(u64),
    /// The server closed the connection before answering.
    #[error("connection closed before the response arrived")]
    Closed,
    /// The server answered with a code other than SUCCESS.
    #[error("{} ({code}): {}", code_name(*code), one_line(remark.as_deref()))]
    Response {
        /// The response code.
        code: i32,
        /// The remark, as sent.
        remark: Option<String>,
    },
    /// The response came but its header or body could not be read.
    #[error("unreadable response: {0}")]
    Decode(String),
    /// The controller answered CONTROLLER_GET_METADATA_INFO without a leader
    /// address: its group has no leader it knows of (an election, or too few
    /// nodes up).
    #[error("knows no controller leader (no controllerLeaderAddress in its metadata)")]
    NoLeader,
    /// The answer lacks what was asked for, e.g. a cluster the NameServer
    /// does not list.
    #[error("not found: {0}")]
    NotFound(String),
    /// One step of a multi-request job (e.g. the route of one topic) failed.
    #[error("{step}: {source}")]
    Step {
        /// What was being fetched.
        step: String,
        /// What went wrong.
        source: Box<CallError>,
    },
}

impl CallError {
    /// Converts a transport error; `timeout_ms` is the limit that ran out.
    pub fn from_client(error: ClientError, timeout_ms: u64) -> CallError {
        match error {
            ClientError::Connect { source, .. } if source.kind() == io::ErrorKind::TimedOut => {
                CallError::Timeout(timeout_ms)
            }
            ClientError::Connect { source, .. } => CallError::Connect(source),
            ClientError::Timeout { .. } => CallError::Timeout(timeout_ms),
            ClientError::Closed { .. } => CallError::Closed,
        }
    }

    /// Wraps the error with the step it happened in.
    pub fn in_step(self, step: impl Into<String>) -> CallError {
        CallError::Step {
            step: step.into(),
            source: Box::new(self),
        }
    }

    /// The response code, if the server answered with an error code.
    pub fn response_code(&self) -> Option<i32> {
        match self {
            CallError::Response { code, .. } => Some(*code),
            CallError::Step { source, .. } => source.response_code(),
            _ => None,
        }
    }

    /// The machine-readable form: `kind`, `message`, and for error responses
    /// `code`, `codeName` and `remark`; `step` when the error is one step's.
    pub fn to_json(&self) -> Value {
        let kind = match self {
            CallError::Connect(_) => "connect",
            CallError::Timeout(_) => "timeout",
            CallError::Closed => "closed",
            CallError::Response { .. } => "response",
            CallError::Decode(_) => "decode",
            CallError::NoLeader => "noLeader",
            CallError::NotFound(_) => "notFound",
            CallError::Step { step, source } => {
                let mut inner = source.to_json();
                inner["step"] = Value::String(step.clone());
                inner["message"] = Value::String(self.to_string());
                return inner;
            }
        };
        let mut out = json!({ "kind": kind, "message": self.to_string() });
        if let CallError::Response { code, remark } = self {
            out["code"] = json!(code);
            out["codeName"] = json!(code_name(*code));
            out["remark"] = json!(remark);
        }
        out
    }
}

/// The Java name of a response code, `UNKNOWN` for codes Waymark does not name.
pub fn code_name(code: i32) -> &'static str {
    ResponseCode::from(code).java_name()
}

/// A remark on one line: Java remarks may contain newlines (TOPIC_NOT_EXIST
/// appends a FAQ link on a second line).
fn one_line(remark: Option<&str>) -> String {
    match remark {
        None => "(no remark)".to_owned(),
        Some(text) => text.split_whitespace().collect::<Vec<_>>().join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_errors_name_code_number_and_remark() {
        let error = CallError::Response {
            code: 16,
            remark: Some("Can not update config in black list.".into()),
        };
        assert_eq!(
            error.to_string(),
            "NO_PERMISSION (16): Can not update config in black list."
        );
        assert_eq!(error.to_json()["codeName"], "NO_PERMISSION");
        let multi = CallError::Response {
            code: 17,
            remark: Some("No topic route info for: T\nSee https://x".into()),
        };
        assert_eq!(
            multi.to_string(),
            "TOPIC_NOT_EXIST (17): No topic route info for: T See https://x"
        );
        let unknown = CallError::Response {
            code: 4242,
            remark: None,
        };
        assert_eq!(unknown.to_string(), "UNKNOWN (4242): (no remark)");
    }

    #[test]
    fn steps_keep_the_inner_kind_and_code() {
        let error = CallError::Timeout(3000).in_step("route of TopicTest");
        assert_eq!(
            error.to_string(),
            "route of TopicTest: no response within 3000 ms"
        );
        let value = error.to_json();
        assert_eq!(
            (value["kind"].as_str(), value["step"].as_str()),
            (Some("timeout"), Some("route of TopicTest"))
        );
        let coded = CallError::Response {
            code: 1,
            remark: None,
        }
        .in_step("topic list");
        assert_eq!(coded.response_code(), Some(1));
    }
}
