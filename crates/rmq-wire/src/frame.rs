//! Frames: the length word, the type-and-header-length word, header and body.
//!
//! ```text
//! u32 length = 4 + H + B | u8 serialize type | u24 H | header (H bytes) | body (B bytes)
//! ```
//!
//! [`check`] says whether a buffer holds a whole frame (an incomplete frame is
//! "need more bytes", not an error); [`decode`] turns one whole frame into a
//! [`RemotingCommand`]; [`encode`] writes one. Limits are Java's exactly,
//! except that a reader may raise the length limit ([`check_within`]), as
//! Java's `com.rocketmq.remoting.frameMaxLength` does.

use bytes::{BufMut, Bytes, BytesMut};

use crate::code::SerializeType;
use crate::command::RemotingCommand;
use crate::header::{self, HeaderDecodeError};

/// Largest allowed value of the length word by default: a whole frame,
/// prefix included, is at most 16 MiB (Java's
/// `LengthFieldBasedFrameDecoder(16777216, 0, 4, 0, 4)`).
pub const MAX_LENGTH_FIELD: usize = 16_777_212;

/// Java's default for `com.rocketmq.remoting.frameMaxLength`: the largest
/// whole frame, length prefix included.
pub const DEFAULT_MAX_FRAME_BYTES: usize = MAX_LENGTH_FIELD + 4;

/// The largest length word a frame limit of `max_frame_bytes` (a whole frame,
/// prefix included, as Java's `frameMaxLength` counts) allows.
pub fn max_length_field(max_frame_bytes: usize) -> usize {
    max_frame_bytes.saturating_sub(4)
}

/// Smallest valid length word: the type-and-header-length word alone.
const MIN_LENGTH_FIELD: usize = 4;

/// A frame that cannot be decoded. The connection it came on must be closed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The length word is above the reader's limit ([`MAX_LENGTH_FIELD`]
    /// unless raised).
    #[error("frame length {length} exceeds the maximum of {max}")]
    TooLong {
        /// The length word.
        length: usize,
        /// The largest length word the reader accepts.
        max: usize,
    },
    /// The length word is too small to hold the header-length word.
    #[error("frame length {0} is shorter than the 4-byte header-length word")]
    TooShort(usize),
    /// The header length is larger than the frame.
    #[error("header length {header} exceeds frame length {frame}")]
    HeaderTooLong {
        /// Declared header length.
        header: usize,
        /// Length word of the frame.
        frame: usize,
    },
    /// The serialize-type byte is neither 0 (JSON) nor 1 (ROCKETMQ).
    #[error("unknown serialize type {0}")]
    UnknownSerializeType(u8),
    /// The header bytes are malformed.
    #[error("malformed {kind} header: {source}")]
    Header {
        /// `JSON` or `ROCKETMQ`.
        kind: &'static str,
        /// What was wrong.
        #[source]
        source: HeaderDecodeError,
    },
}

/// Whether a buffer starts with a whole frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameStatus {
    /// More bytes are needed; `needed` is the total the frame will take once
    /// its length word is known (or 4 while it is not).
    Incomplete {
        /// Total bytes the frame needs, prefix included.
        needed: usize,
    },
    /// A whole frame of `len` bytes (prefix included) is at the buffer's start.
    Complete {
        /// Total length of the frame, prefix included.
        len: usize,
    },
}

/// Checks the start of `buf` without consuming it, with Java's default
/// limit. Errors only for a length word that no valid frame can have.
pub fn check(buf: &[u8]) -> Result<FrameStatus, FrameError> {
    check_within(buf, MAX_LENGTH_FIELD)
}

/// [`check`] with the largest acceptable length word given (see
/// [`max_length_field`]).
pub fn check_within(buf: &[u8], max_length_field: usize) -> Result<FrameStatus, FrameError> {
    let Some(word) = buf.get(..4) else {
        return Ok(FrameStatus::Incomplete { needed: 4 });
    };
    let length = u32::from_be_bytes([word[0], word[1], word[2], word[3]]) as usize;
    if length > max_length_field {
        return Err(FrameError::TooLong {
            length,
            max: max_length_field,
        });
    }
    if length < MIN_LENGTH_FIELD {
        return Err(FrameError::TooShort(length));
    }
    let total = 4 + length;
    if buf.len() < total {
        Ok(FrameStatus::Incomplete { needed: total })
    } else {
        Ok(FrameStatus::Complete { len: total })
    }
}

/// Decodes one whole frame (length prefix included, as [`check`] measured it).
/// The body shares `frame`'s memory. The length limit is the reader's, applied
/// by [`check_within`] before the bytes were read; here the frame is in
/// memory already and any length a length word can hold is decoded.
pub fn decode(frame: Bytes) -> Result<RemotingCommand, FrameError> {
    let len = match check_within(&frame, u32::MAX as usize)? {
        FrameStatus::Complete { len } => len,
        FrameStatus::Incomplete { needed } => return Err(FrameError::TooShort(needed - 4)),
    };
    let length = len - 4;
    let type_byte = frame[4];
    let header_len = u32::from_be_bytes([0, frame[5], frame[6], frame[7]]) as usize;
    if header_len > length - 4 {
        return Err(FrameError::HeaderTooLong {
            header: header_len,
            frame: length,
        });
    }
    let serialize_type =
        SerializeType::from_code(type_byte).ok_or(FrameError::UnknownSerializeType(type_byte))?;
    let header_bytes = &frame[8..8 + header_len];
    let mut command = match serialize_type {
        SerializeType::Json => {
            header::json::decode(header_bytes).map_err(|source| FrameError::Header {
                kind: "JSON",
                source,
            })?
        }
        SerializeType::RocketMq => {
            header::binary::decode(header_bytes).map_err(|source| FrameError::Header {
                kind: "ROCKETMQ",
                source,
            })?
        }
    };
    command.serialize_type = serialize_type;
    command.body = (len > 8 + header_len).then(|| frame.slice(8 + header_len..len));
    Ok(command)
}

/// The code, opaque, flag and longest ext field of the whole frame at the
/// start of `frame` (as [`check`] measured it), read without decoding its
/// header ([`header::peek`]): what an answer refusing the frame needs.
/// `None` when the frame is malformed (a header longer than the frame, an
/// unknown serialize type, a header not shaped as one).
pub fn peek(frame: &[u8]) -> Option<header::HeaderPeek> {
    let len = match check_within(frame, u32::MAX as usize).ok()? {
        FrameStatus::Complete { len } => len,
        FrameStatus::Incomplete { .. } => return None,
    };
    let &[type_byte, a, b, c] = frame.get(4..8)? else {
        return None;
    };
    let header_len = u32::from_be_bytes([0, a, b, c]) as usize;
    let end = 8usize.checked_add(header_len).filter(|end| *end <= len)?;
    header::peek(type_byte, frame.get(8..end)?)
}

/// Appends the frame of `command`, in its `serialize_type`, to `dst`.
/// Gives the same bytes every time for the same command.
pub fn encode(command: &RemotingCommand, dst: &mut BytesMut) {
    let start = dst.len();
    dst.put_u64(0); // both words, patched once the header length is known
    match command.serialize_type {
        SerializeType::Json => header::json::encode(command, dst),
        SerializeType::RocketMq => header::binary::encode(command, dst),
    }
    let header_len = dst.len() - start - 8;
    let body = command.body.as_deref().unwrap_or_default();
    dst.extend_from_slice(body);
    let length = (dst.len() - start - 4) as u32;
    let type_and_len =
        (u32::from(command.serialize_type.code()) << 24) | (header_len as u32 & 0xFF_FFFF);
    dst[start..start + 4].copy_from_slice(&length.to_be_bytes());
    dst[start + 4..start + 8].copy_from_slice(&type_and_len.to_be_bytes());
}

/// Encodes `command` into a fresh buffer.
pub fn encode_to_bytes(command: &RemotingCommand) -> Bytes {
    let mut dst = BytesMut::new();
    encode(command, &mut dst);
    dst.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peek_reads_a_whole_frame_and_refuses_a_header_longer_than_it() {
        let mut command = RemotingCommand::request(112, 9).with_ext("namespace", "ns");
        command.flag = 2;
        let frame = encode_to_bytes(&command.with_body(&b"body"[..]));
        let peeked = peek(&frame).expect("peeked");
        assert_eq!((peeked.code, peeked.opaque, peeked.flag), (112, 9, 2));
        assert_eq!(peek(&frame[..frame.len() - 1]), None, "not whole");
        let mut longer = frame.to_vec();
        longer[7] = longer[7].wrapping_add(10);
        assert_eq!(peek(&longer), None, "header past the frame's end");
    }

    #[test]
    fn check_needs_the_length_word_then_the_whole_frame() {
        assert_eq!(check(&[0, 0]), Ok(FrameStatus::Incomplete { needed: 4 }));
        assert_eq!(
            check(&[0, 0, 0, 5, 0]),
            Ok(FrameStatus::Incomplete { needed: 9 })
        );
    }

    #[test]
    fn check_enforces_java_limits() {
        let max = (MAX_LENGTH_FIELD as u32).to_be_bytes();
        assert_eq!(
            check(&max),
            Ok(FrameStatus::Incomplete {
                needed: MAX_LENGTH_FIELD + 4
            })
        );
        let over = (MAX_LENGTH_FIELD as u32 + 1).to_be_bytes();
        assert_eq!(
            check(&over),
            Err(FrameError::TooLong {
                length: MAX_LENGTH_FIELD + 1,
                max: MAX_LENGTH_FIELD
            })
        );
        assert_eq!(check(&[0, 0, 0, 3]), Err(FrameError::TooShort(3)));
    }

    #[test]
    fn a_raised_limit_admits_longer_frames_and_no_more() {
        let limit = max_length_field(64 << 20);
        assert_eq!(limit, (64 << 20) - 4);
        assert_eq!(max_length_field(DEFAULT_MAX_FRAME_BYTES), MAX_LENGTH_FIELD);
        let over_default = (MAX_LENGTH_FIELD as u32 + 1).to_be_bytes();
        assert_eq!(
            check_within(&over_default, limit),
            Ok(FrameStatus::Incomplete {
                needed: MAX_LENGTH_FIELD + 5
            })
        );
        let over = (limit as u32 + 1).to_be_bytes();
        assert_eq!(
            check_within(&over, limit),
            Err(FrameError::TooLong {
                length: limit + 1,
                max: limit
            })
        );
    }

    #[test]
    fn decode_rejects_header_longer_than_frame_and_bad_type() {
        let frame = Bytes::from_static(&[0, 0, 0, 6, 0, 0, 0, 3, b'{', b'}']);
        assert_eq!(
            decode(frame),
            Err(FrameError::HeaderTooLong {
                header: 3,
                frame: 6
            })
        );
        let frame = Bytes::from_static(&[0, 0, 0, 6, 2, 0, 0, 2, b'{', b'}']);
        assert_eq!(decode(frame), Err(FrameError::UnknownSerializeType(2)));
    }
}
