//! ROCKETMQ binary header (serialize type 1), Java's `RocketMQSerializable`.
//!
//! ```text
//! i16 code | u8 language | i16 version | i32 opaque | i32 flag
//! | i32 R | remark (R bytes) | i32 E | E bytes of (i16 keyLen, key, i32 valLen, value)*
//! ```
//!
//! Owns the header bytes only; the frame words around them are `frame`'s.
//! Decoding is stricter than Java where Java would misread the stream: every
//! length is checked against what is left, negative lengths are errors, and
//! the header must end exactly where the map section ends (Java takes the
//! body from wherever its reader stopped, so a sloppy H would shift it).

use bytes::{BufMut, BytesMut};

use super::HeaderDecodeError;
use crate::code::{LanguageCode, SerializeType};
use crate::command::RemotingCommand;
use crate::ext_fields::ExtFields;

/// Bytes before the remark: code, language, version, opaque, flag, remark length.
pub(super) const FIXED_LEN: usize = 17;

/// Decodes a binary header. The body is left `None`; the serialize type is ROCKETMQ.
///
/// Zero-length strings are Java's null: an empty remark is `None`, an entry
/// with an empty key or value is absent. A zero-length map section is `None`.
///
/// # Errors
/// [`HeaderDecodeError::Truncated`] or [`HeaderDecodeError::NegativeLength`]
/// for a length that does not fit, [`HeaderDecodeError::Utf8`] for a string
/// that is not UTF-8, [`HeaderDecodeError::Trailing`] for bytes after the map.
pub fn decode(bytes: &[u8]) -> Result<RemotingCommand, HeaderDecodeError> {
    let mut reader = Reader { rest: bytes };
    let fixed = reader.take("fixed fields", FIXED_LEN)?;
    let be16 = |at: usize| i16::from_be_bytes([fixed[at], fixed[at + 1]]);
    let be32 =
        |at: usize| i32::from_be_bytes([fixed[at], fixed[at + 1], fixed[at + 2], fixed[at + 3]]);
    let code = i32::from(be16(0));
    let language = LanguageCode::from_code(fixed[2]);
    let version = i32::from(be16(3));
    let opaque = be32(5);
    let flag = be32(9);
    let remark = reader.string("remark", be32(13))?;
    let ext_len = reader.i32("extFields")?;
    let ext_bytes = reader.take("extFields", length("extFields", ext_len)?)?;
    if !reader.rest.is_empty() {
        return Err(HeaderDecodeError::Trailing(reader.rest.len()));
    }
    let ext_fields = if ext_bytes.is_empty() {
        None
    } else {
        Some(decode_map(ext_bytes)?)
    };
    Ok(RemotingCommand {
        code,
        language,
        version,
        opaque,
        flag,
        remark,
        ext_fields,
        serialize_type: SerializeType::RocketMq,
        body: None,
    })
}

/// Reads map entries until the section is used up exactly.
fn decode_map(section: &[u8]) -> Result<ExtFields, HeaderDecodeError> {
    let mut reader = Reader { rest: section };
    let mut ext = ExtFields::new();
    while !reader.rest.is_empty() {
        let key_len = reader.take("key", 2)?;
        let key_len = i32::from(i16::from_be_bytes([key_len[0], key_len[1]]));
        let key = reader.string("key", key_len)?;
        let value_len = reader.i32("value")?;
        let value = reader.string("value", value_len)?;
        // A null key or value (zero length) leaves nothing a reader could see.
        if let (Some(key), Some(value)) = (key, value) {
            ext.insert(key, value);
        }
    }
    Ok(ext)
}

/// Appends the binary header of `command` to `dst`, as Java writes it.
///
/// `code` and `version` are truncated to 16 bits as Java's `(short)` cast does.
/// Two kinds of entries are left out. Those with an empty key or value: Java
/// writes them with zero length, but every reader, Java's included, reads
/// them back as null, so omitting them changes nothing a receiver can see and
/// makes re-encoding a decoded header reproduce it. And those whose key
/// exceeds 32767 bytes, which the 16-bit length cannot express (Java would
/// write a corrupt length). Other lengths are not checked: a string beyond
/// 2 GiB could not be in a valid (≤ 16 MiB) frame anyway.
pub fn encode(command: &RemotingCommand, dst: &mut BytesMut) {
    let remark = command.remark.as_deref().unwrap_or_default();
    let entries = || {
        let ext = command.ext_fields.iter().flatten();
        ext.filter(|(key, value)| carries_entry(key, value))
    };
    let ext_len: usize = entries()
        .map(|(key, value)| 6 + key.len() + value.len())
        .sum();
    dst.reserve(FIXED_LEN + remark.len() + 4 + ext_len);
    dst.put_i16(command.code as i16);
    dst.put_u8(command.language.code());
    dst.put_i16(command.version as i16);
    dst.put_i32(command.opaque);
    dst.put_i32(command.flag);
    dst.put_i32(remark.len() as i32);
    dst.put_slice(remark.as_bytes());
    dst.put_i32(ext_len as i32);
    for (key, value) in entries() {
        dst.put_i16(key.len() as i16);
        dst.put_slice(key.as_bytes());
        dst.put_i32(value.len() as i32);
        dst.put_slice(value.as_bytes());
    }
}

/// Whether the 16-bit key length can hold `key`.
fn key_fits(key: &str) -> bool {
    key.len() <= i16::MAX as usize
}

/// Whether an entry is written and survives decoding: its key fits, and
/// neither side is empty (which Java reads as null).
pub(crate) fn carries_entry(key: &str, value: &str) -> bool {
    key_fits(key) && !key.is_empty() && !value.is_empty()
}

/// A declared length as `usize`; negative ones are errors.
fn length(field: &'static str, len: i32) -> Result<usize, HeaderDecodeError> {
    usize::try_from(len).map_err(|_| HeaderDecodeError::NegativeLength { field, len })
}

/// Checked reads from the front of a byte slice; never panics.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, field: &'static str, len: usize) -> Result<&'a [u8], HeaderDecodeError> {
        if len > self.rest.len() {
            return Err(HeaderDecodeError::Truncated {
                field,
                len,
                available: self.rest.len(),
            });
        }
        let (head, rest) = self.rest.split_at(len);
        self.rest = rest;
        Ok(head)
    }

    fn i32(&mut self, field: &'static str) -> Result<i32, HeaderDecodeError> {
        let b = self.take(field, 4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A string of `len` bytes; zero length is Java's null.
    fn string(
        &mut self,
        field: &'static str,
        len: i32,
    ) -> Result<Option<String>, HeaderDecodeError> {
        let bytes = self.take(field, length(field, len)?)?;
        if bytes.is_empty() {
            return Ok(None);
        }
        let text = std::str::from_utf8(bytes).map_err(|_| HeaderDecodeError::Utf8(field))?;
        Ok(Some(text.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(remark_len: i32, ext_len: i32, tail: &[u8]) -> Vec<u8> {
        let mut bytes = vec![0, 105, 0, 1, 0xdf, 0, 0, 0, 1, 0, 0, 0, 0];
        bytes.extend_from_slice(&remark_len.to_be_bytes());
        bytes.extend_from_slice(&ext_len.to_be_bytes());
        bytes.extend_from_slice(tail);
        bytes
    }

    #[test]
    fn lengths_are_checked_against_what_is_left() {
        assert!(matches!(
            decode(&[0; 16]),
            Err(HeaderDecodeError::Truncated {
                field: "fixed fields",
                len: 17,
                available: 16
            })
        ));
        assert_eq!(
            decode(&header(-1, 0, &[])),
            Err(HeaderDecodeError::NegativeLength {
                field: "remark",
                len: -1
            })
        );
        assert!(matches!(
            decode(&header(5, 0, &[])),
            Err(HeaderDecodeError::Truncated {
                field: "remark",
                len: 5,
                ..
            })
        ));
        assert!(matches!(
            decode(&header(0, 7, &[0, 1, b'k', 0, 0, 0, 1])),
            Err(HeaderDecodeError::Truncated {
                field: "value",
                len: 1,
                available: 0
            })
        ));
        assert_eq!(
            decode(&header(0, 2, &[0xff, 0xff])),
            Err(HeaderDecodeError::NegativeLength {
                field: "key",
                len: -1
            })
        );
        assert_eq!(
            decode(&header(0, 0, &[9])),
            Err(HeaderDecodeError::Trailing(1))
        );
        assert_eq!(
            decode(&header(0, 8, &[0, 1, 0xff, 0, 0, 0, 1, b'v'])),
            Err(HeaderDecodeError::Utf8("key"))
        );
    }

    #[test]
    fn empty_strings_read_as_null() {
        let decoded = decode(&header(0, 13, &[0, 1, b'k', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])).unwrap();
        assert_eq!(decoded.remark, None);
        // Both entries (empty value, then empty key and value) are Java nulls.
        assert_eq!(decoded.ext_fields, Some(ExtFields::new()));
        assert_eq!(decoded.code, 105);
        assert_eq!(decoded.version, 479);
    }
}
