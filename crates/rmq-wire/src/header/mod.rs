//! The two header serializations: JSON (`json`) and ROCKETMQ binary (`binary`).
//!
//! Both decode into a [`RemotingCommand`] without body; the frame layer adds
//! the body and the serialize type. [`normalize`] states what a round trip
//! through either format loses, so tests and fuzzers can compare commands.

use crate::code::{LanguageCode, SerializeType};
use crate::command::RemotingCommand;

pub mod binary;
mod cursor;
pub mod json;
mod json_plain;
pub mod peek;

pub use peek::{peek, HeaderPeek};

/// A header whose bytes cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderDecodeError {
    /// The JSON text is not a valid header object.
    #[error("{0}")]
    Json(String),
    /// A binary header field runs past the header's end or declares an impossible length.
    #[error("{field} length {len} exceeds the {available} bytes left in the header")]
    Truncated {
        /// Which part: `remark`, `extFields`, `key`, `value`, `fixed fields`.
        field: &'static str,
        /// The declared or required length.
        len: usize,
        /// What was available.
        available: usize,
    },
    /// A binary header declares a negative length (Java fails reading it too).
    #[error("{field} length {len} is negative")]
    NegativeLength {
        /// Which part: `remark`, `extFields`, `key`, `value`.
        field: &'static str,
        /// The declared length.
        len: i32,
    },
    /// A string is not valid UTF-8.
    #[error("{0} is not valid UTF-8")]
    Utf8(&'static str),
    /// Bytes remain after the declared sections of a binary header.
    #[error("{0} trailing bytes after the binary header's ext fields")]
    Trailing(usize),
}

/// What `command` becomes after one encode and decode in its own serialize
/// type, i.e. the Java-compatible losses made explicit:
///
/// * both: an empty body is no body (the wire cannot tell them apart);
/// * JSON: an `Unknown` language is written as `OTHER`;
/// * ROCKETMQ: `code` and `version` are truncated to 16 bits, an empty remark
///   is no remark, entries with an empty key or value vanish (and keys longer
///   than 32767 bytes, which the format cannot carry), and an empty map is no map.
///
/// `decode(encode(c)) == normalize(c)` holds for every command, and
/// `normalize` is idempotent.
pub fn normalize(command: &RemotingCommand) -> RemotingCommand {
    let mut out = command.clone();
    if out.body.as_ref().is_some_and(|body| body.is_empty()) {
        out.body = None;
    }
    match out.serialize_type {
        SerializeType::Json => {
            if let LanguageCode::Unknown(_) = out.language {
                out.language = LanguageCode::Other;
            }
        }
        SerializeType::RocketMq => {
            out.code = i32::from(out.code as i16);
            out.version = i32::from(out.version as i16);
            out.remark = out.remark.filter(|remark| !remark.is_empty());
            if let Some(ext) = &mut out.ext_fields {
                ext.retain(|key, value| binary::carries_entry(key, value));
            }
            out.ext_fields = out.ext_fields.filter(|ext| !ext.is_empty());
        }
    }
    out
}
