//! What a server needs to answer a request it will not decode: the code,
//! opaque and flag of a header, and its longest ext field, read without
//! building the command.
//!
//! A header over the server's limit is not decoded (that is what the limit
//! spares), yet the frame it came in is whole and within the frame limit,
//! so the connection is still in step: answered with an error under the
//! request's opaque, the peer learns why, and its next request is served.
//! In a ROCKETMQ header the three numbers sit at fixed offsets; in a JSON
//! header one pass over the text finds them, skipping strings and nested
//! values without allocating or recursing (Java writes the keys in
//! alphabetical order, so `opaque` comes after `extFields`, the large part).

use std::ops::{Deref, DerefMut};

use super::binary;
use super::cursor::Cursor;

/// The fields of a header that an answer to it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderPeek {
    /// The request code (0 when the header has none, as decoding gives).
    pub code: i32,
    /// The opaque the answer must carry (0 when the header has none).
    pub opaque: i32,
    /// The flag: whether the command is a response or one-way.
    pub flag: i32,
    /// The ext field with the longest value, by key, and that value's
    /// length in bytes as sent (escapes included in JSON); `None` when the
    /// header has no ext fields or they could not be walked.
    pub longest_field: Option<(String, usize)>,
}

/// Reads the code, opaque, flag and longest ext field of a header of
/// serialize type `serialize_type` (the frame's type byte) without decoding
/// it. `None` when the type is unknown or the header is not shaped as one:
/// there is then no opaque to answer under.
pub fn peek(serialize_type: u8, header: &[u8]) -> Option<HeaderPeek> {
    match serialize_type {
        0 => peek_json(header),
        1 => peek_binary(header),
        _ => None,
    }
}

/// Keys are shown up to this many characters.
const SHOWN_KEY_CHARS: usize = 64;

fn shown_key(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw)
        .chars()
        .take(SHOWN_KEY_CHARS)
        .collect()
}

fn peek_binary(header: &[u8]) -> Option<HeaderPeek> {
    let fixed = header.get(..binary::FIXED_LEN)?;
    let be32 =
        |at: usize| i32::from_be_bytes([fixed[at], fixed[at + 1], fixed[at + 2], fixed[at + 3]]);
    let code = i32::from(i16::from_be_bytes([fixed[0], fixed[1]]));
    Some(HeaderPeek {
        code,
        opaque: be32(5),
        flag: be32(9),
        longest_field: longest_binary_field(header, be32(13)),
    })
}

/// The longest value of a binary header's map, walking the lengths only.
fn longest_binary_field(header: &[u8], remark_len: i32) -> Option<(String, usize)> {
    let mut at = binary::FIXED_LEN.checked_add(usize::try_from(remark_len).ok()?)?;
    let length_at = |at: usize, width: usize| -> Option<usize> {
        let bytes = header.get(at..at.checked_add(width)?)?;
        let value = match bytes {
            [a, b] => i32::from(i16::from_be_bytes([*a, *b])),
            [a, b, c, d] => i32::from_be_bytes([*a, *b, *c, *d]),
            _ => return None,
        };
        usize::try_from(value).ok()
    };
    let map_len = length_at(at, 4)?;
    at += 4;
    let end = at.checked_add(map_len)?.min(header.len());
    let mut longest: Option<(&[u8], usize)> = None;
    while at < end {
        let key_len = length_at(at, 2)?;
        let key = header.get(at + 2..(at + 2).checked_add(key_len)?)?;
        at += 2 + key_len;
        let value_len = length_at(at, 4)?;
        at = at.checked_add(4)?.checked_add(value_len)?;
        if longest.is_none_or(|(_, len)| value_len > len) {
            longest = Some((key, value_len));
        }
    }
    longest.map(|(key, len)| (shown_key(key), len))
}

fn peek_json(header: &[u8]) -> Option<HeaderPeek> {
    let mut scan = Lenient(Cursor::new(header));
    let mut peek = HeaderPeek {
        code: 0,
        opaque: 0,
        flag: 0,
        longest_field: None,
    };
    scan.skip_whitespace();
    scan.expect(b'{')?;
    scan.skip_whitespace();
    if scan.eat(b'}') {
        return Some(peek);
    }
    loop {
        let key = scan.string()?;
        // A key spelled with escapes is not compared: guessing its meaning
        // could answer under the wrong opaque.
        if key.contains(&b'\\') {
            return None;
        }
        scan.skip_whitespace();
        scan.expect(b':')?;
        scan.skip_whitespace();
        match key {
            b"code" => peek.code = scan.integer()?,
            b"opaque" => peek.opaque = scan.integer()?,
            b"flag" => peek.flag = scan.integer()?,
            b"extFields" if scan.peek() == Some(b'{') => {
                peek.longest_field = scan.longest_member()?;
            }
            _ => scan.skip_value()?,
        }
        scan.skip_whitespace();
        if scan.eat(b'}') {
            return Some(peek);
        }
        scan.expect(b',')?;
        scan.skip_whitespace();
    }
}

/// A JSON header read as fastjson reads one; every method answers `None`
/// where the text is not JSON as expected.
struct Lenient<'a>(Cursor<'a>);

impl<'a> Deref for Lenient<'a> {
    type Target = Cursor<'a>;
    fn deref(&self) -> &Cursor<'a> {
        &self.0
    }
}

impl DerefMut for Lenient<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl<'a> Lenient<'a> {
    /// A string's raw bytes between its quotes (escapes left as written).
    fn string(&mut self) -> Option<&'a [u8]> {
        self.expect(b'"')?;
        let start = self.pos;
        loop {
            match self.peek()? {
                b'"' => break,
                b'\\' => self.pos += 2,
                _ => self.pos += 1,
            }
        }
        let raw = self.bytes.get(start..self.pos)?;
        self.pos += 1;
        Some(raw)
    }

    /// An integer as fastjson takes one for an `int` field: a number, a
    /// quoted number, or `null` (0).
    fn integer(&mut self) -> Option<i32> {
        let text = match self.peek()? {
            b'"' => self.string()?,
            b'n' => {
                self.skip_value()?;
                return Some(0);
            }
            _ => {
                let start = self.pos;
                while let Some(b'-' | b'+' | b'0'..=b'9') = self.peek() {
                    self.pos += 1;
                }
                &self.bytes[start..self.pos]
            }
        };
        std::str::from_utf8(text).ok()?.trim().parse().ok()
    }

    /// Skips one value of any kind. Nested objects and arrays are skipped
    /// by counting brackets outside strings, not by recursion, so nesting
    /// depth costs no stack.
    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth -= 1,
                        _ => {}
                    }
                    self.pos += 1;
                    if depth == 0 {
                        return Some(());
                    }
                }
            }
            _ => {
                let start = self.pos;
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.pos += 1;
                }
                (self.pos > start).then_some(())
            }
        }
    }

    /// The member of the object at the cursor with the longest string
    /// value, by key, and that value's length; the object is consumed.
    fn longest_member(&mut self) -> Option<Option<(String, usize)>> {
        self.expect(b'{')?;
        self.skip_whitespace();
        let mut longest: Option<(&[u8], usize)> = None;
        if self.eat(b'}') {
            return Some(None);
        }
        loop {
            let key = self.string()?;
            self.skip_whitespace();
            self.expect(b':')?;
            self.skip_whitespace();
            let quoted = self.peek() == Some(b'"');
            let start = self.pos;
            self.skip_value()?;
            // A string's length is its content's, without the quotes.
            let len = self.pos - start - if quoted { 2 } else { 0 };
            if longest.is_none_or(|(_, longest)| len > longest) {
                longest = Some((key, len));
            }
            self.skip_whitespace();
            if self.eat(b'}') {
                break;
            }
            self.expect(b',')?;
            self.skip_whitespace();
        }
        Some(longest.map(|(key, len)| (shown_key(key), len)))
    }
}

#[cfg(test)]
mod tests {
    use bytes::BytesMut;

    use super::*;
    use crate::code::SerializeType;
    use crate::command::RemotingCommand;

    fn header_of(command: &RemotingCommand) -> (u8, Vec<u8>) {
        let mut frame = BytesMut::new();
        crate::frame::encode(command, &mut frame);
        let header_len = u32::from_be_bytes([0, frame[5], frame[6], frame[7]]) as usize;
        (frame[4], frame[8..8 + header_len].to_vec())
    }

    #[test]
    fn both_serializations_give_opaque_flag_code_and_the_longest_field() {
        for serialize_type in [SerializeType::Json, SerializeType::RocketMq] {
            let mut command = RemotingCommand::request(100, -7)
                .with_ext("namespace", "ns")
                .with_ext("value", "v\"\\".repeat(1000))
                .with_ext("key", "k")
                .with_remark("a remark {with} [brackets] and \"quotes\"")
                .with_serialize_type(serialize_type);
            command.flag = 2;
            let (type_byte, header) = header_of(&command);
            let peeked = peek(type_byte, &header).expect("peeked");
            assert_eq!((peeked.code, peeked.opaque, peeked.flag), (100, -7, 2));
            let (key, len) = peeked.longest_field.expect("a longest field");
            assert_eq!(key, "value");
            assert!(len >= 3000, "{serialize_type:?}: {len}");
        }
    }

    #[test]
    fn json_is_read_in_any_order_and_form_fastjson_takes() {
        let header = br#" { "extFields" : {"opaque":"9","n":{"x":[1,{"y":"}"}]}} , "opaque" : "41", "flag":null, "code":12 } "#;
        let peeked = peek(0, header).expect("peeked");
        assert_eq!((peeked.code, peeked.opaque, peeked.flag), (12, 41, 0));
        assert_eq!(peeked.longest_field.map(|(k, _)| k).as_deref(), Some("n"));
        assert_eq!(
            peek(0, br#"{"code":1}"#).map(|p| p.opaque),
            Some(0),
            "no opaque decodes as 0"
        );
    }

    #[test]
    fn what_is_not_a_header_gives_nothing() {
        for header in [
            &b""[..],
            b"[1]",
            b"{\"opaque\":",
            b"{\"opaque\":1",
            b"{\"op\\u0061que\":1}",
            b"{\"opaque\":\"x\"}",
            b"{\"extFields\":{\"a\":\"unterminated}",
            b"{\"a\":[[[[",
        ] {
            assert_eq!(
                peek(0, header),
                None,
                "{:?}",
                String::from_utf8_lossy(header)
            );
        }
        assert_eq!(peek(1, &[0; 16]), None, "shorter than the fixed fields");
        assert_eq!(peek(2, b"{}"), None, "unknown serialize type");
        // A binary header whose map lengths do not fit still has its opaque.
        let mut header = vec![0u8; binary::FIXED_LEN];
        header[5..9].copy_from_slice(&5i32.to_be_bytes());
        header.extend_from_slice(&1000i32.to_be_bytes());
        header.extend_from_slice(&[0, 200, b'k']);
        let peeked = peek(1, &header).expect("peeked");
        assert_eq!((peeked.opaque, peeked.longest_field), (5, None));
    }
}
