//! ROCKETMQ binary header (serialize type 1).
//!
//! STUB: to be implemented.

use bytes::BytesMut;

use super::HeaderDecodeError;
use crate::command::RemotingCommand;

/// Decodes a binary header. The body is left `None`.
pub fn decode(_bytes: &[u8]) -> Result<RemotingCommand, HeaderDecodeError> {
    Err(HeaderDecodeError::Json("not implemented".into()))
}

/// Appends the binary header of `command` to `dst`.
pub fn encode(_command: &RemotingCommand, _dst: &mut BytesMut) {}
