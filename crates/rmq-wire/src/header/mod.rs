//! The two header serializations: JSON (`json`) and ROCKETMQ binary (`binary`).
//!
//! Both decode into a [`RemotingCommand`] without body; the frame layer adds
//! the body and the serialize type.

pub mod binary;
pub mod json;

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
    /// A string is not valid UTF-8.
    #[error("{0} is not valid UTF-8")]
    Utf8(&'static str),
    /// Bytes remain after the declared sections of a binary header.
    #[error("{0} trailing bytes after the binary header's ext fields")]
    Trailing(usize),
}

