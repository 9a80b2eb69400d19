//! JSON header (serialize type 0), byte-compatible with what Java emits.
//!
//! STUB: to be implemented.

use bytes::BytesMut;

use super::HeaderDecodeError;
use crate::command::RemotingCommand;

/// Decodes a JSON header. The body is left `None`.
pub fn decode(_bytes: &[u8]) -> Result<RemotingCommand, HeaderDecodeError> {
    Err(HeaderDecodeError::Json("not implemented".into()))
}

/// Appends the JSON header of `command` to `dst`.
pub fn encode(_command: &RemotingCommand, _dst: &mut BytesMut) {}
