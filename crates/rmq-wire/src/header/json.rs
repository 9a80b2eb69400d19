//! JSON header (serialize type 0), byte-compatible with what Java emits.
//!
//! Owns the header object only (`{"code":..,"extFields":{..},..}`); the frame
//! words around it are `frame`'s, JSON bodies are `rmq-protocol`'s.
//!
//! Encoding is hand-written: it runs for every response, so it writes straight
//! into the output buffer with no intermediate value or allocation, in
//! fastjson's exact output: keys alphabetical, compact, and fastjson's
//! default-dialect string escaping (`"` and `\` escaped, the controls
//! `\b \t \n \f \r` by name, every other C0 control, U+007F–U+009F and
//! U+2028/U+2029 as uppercase `\uXXXX`, everything else, `/` included, as raw
//! UTF-8).
//!
//! Decoding first tries [`super::json_plain`], a scanner for the plain
//! shape peers write, which reads it at a fraction of the cost and gives the
//! same command. Everything else goes through serde_json with a hand-written visitor rather than a
//! derived struct or a `serde_json::Value`: the visitor reads the object in one
//! pass without building a tree, borrows unescaped keys from the input, and
//! applies fastjson's leniency per key (any order, unknown keys skipped, `null`
//! anywhere, numbers as strings and the other way round, language by name or
//! ordinal, duplicate keys last-wins), which derive attributes cannot express
//! without the same amount of code. The coercions themselves are
//! [`crate::lenient`]'s, shared with the bodies; only the language is read
//! here. serde_json's own parser gives well-tested strictness where fastjson
//! is strict too (syntax, UTF-8, nesting depth).

use std::fmt;

use bytes::{BufMut, BytesMut};
use serde::de::{self, Deserializer as _, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;

use super::HeaderDecodeError;
use crate::code::{LanguageCode, SerializeType};
use crate::command::RemotingCommand;
use crate::lenient::{self, Seed};

/// Decodes a JSON header. The body is left `None`; the serialize type is JSON.
///
/// # Errors
/// [`HeaderDecodeError::Json`] for text that is not one JSON object, or whose
/// known keys hold values fastjson could not convert either.
pub fn decode(bytes: &[u8]) -> Result<RemotingCommand, HeaderDecodeError> {
    match super::json_plain::decode(bytes) {
        Some(command) => Ok(command),
        None => decode_general(bytes),
    }
}

/// The general decoder, for every header the plain scanner leaves alone.
pub(super) fn decode_general(bytes: &[u8]) -> Result<RemotingCommand, HeaderDecodeError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let command = de
        .deserialize_map(HeaderVisitor)
        .and_then(|command| de.end().map(|()| command))
        .map_err(|err| HeaderDecodeError::Json(err.to_string()))?;
    Ok(command)
}

/// Appends the JSON header of `command` to `dst`, exactly as Java writes it.
pub fn encode(command: &RemotingCommand, dst: &mut BytesMut) {
    dst.reserve(estimated_len(command));
    dst.put_slice(b"{\"code\":");
    put_i32(dst, command.code);
    if let Some(ext) = &command.ext_fields {
        dst.put_slice(b",\"extFields\":{");
        for (index, (key, value)) in ext.iter().enumerate() {
            if index > 0 {
                dst.put_u8(b',');
            }
            put_string(dst, key);
            dst.put_u8(b':');
            put_string(dst, value);
        }
        dst.put_u8(b'}');
    }
    dst.put_slice(b",\"flag\":");
    put_i32(dst, command.flag);
    dst.put_slice(b",\"language\":\"");
    // Names are upper-case ASCII identifiers: nothing to escape.
    dst.put_slice(command.language.name().as_bytes());
    dst.put_slice(b"\",\"opaque\":");
    put_i32(dst, command.opaque);
    if let Some(remark) = &command.remark {
        dst.put_slice(b",\"remark\":");
        put_string(dst, remark);
    }
    // This encoder only writes JSON frames, so the type is always JSON.
    dst.put_slice(b",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":");
    put_i32(dst, command.version);
    dst.put_u8(b'}');
}

/// Room for the fixed keys plus the strings unescaped: one reservation for
/// the common case, growth only when escapes add bytes.
fn estimated_len(command: &RemotingCommand) -> usize {
    let ext: usize = command.ext_fields.as_ref().map_or(0, |ext| {
        16 + ext
            .iter()
            .map(|(k, v)| k.len() + v.len() + 6)
            .sum::<usize>()
    });
    let remark = command
        .remark
        .as_ref()
        .map_or(0, |remark| remark.len() + 12);
    120 + ext + remark
}

/// Writes a decimal `i32` without going through `fmt`.
fn put_i32(dst: &mut BytesMut, value: i32) {
    let mut buf = [0u8; 11];
    let mut pos = buf.len();
    let mut rest = value.unsigned_abs();
    loop {
        pos -= 1;
        buf[pos] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if value < 0 {
        pos -= 1;
        buf[pos] = b'-';
    }
    dst.put_slice(&buf[pos..]);
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Writes `text` as a JSON string in fastjson's default dialect: `"` and `\`,
/// the C0 controls (short forms where JSON has them), DEL and the C1 controls,
/// and U+2028/U+2029 are escaped; everything else is copied as raw UTF-8.
fn put_string(dst: &mut BytesMut, text: &str) {
    let bytes = text.as_bytes();
    dst.put_u8(b'"');
    let mut run_start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        // `text` is valid UTF-8, so a lead byte is followed by its continuation bytes.
        let (escape_len, escaped): (usize, Escape) = match byte {
            b'"' => (1, Escape::Short(b'"')),
            b'\\' => (1, Escape::Short(b'\\')),
            0x08 => (1, Escape::Short(b'b')),
            b'\t' => (1, Escape::Short(b't')),
            b'\n' => (1, Escape::Short(b'n')),
            0x0C => (1, Escape::Short(b'f')),
            b'\r' => (1, Escape::Short(b'r')),
            0x00..=0x1F | 0x7F => (1, Escape::Unicode(u16::from(byte))),
            0xC2 if matches!(bytes.get(i + 1), Some(0x80..=0x9F)) => {
                (2, Escape::Unicode(u16::from(bytes[i + 1])))
            }
            0xE2 if bytes.get(i + 1) == Some(&0x80)
                && matches!(bytes.get(i + 2), Some(0xA8 | 0xA9)) =>
            {
                (3, Escape::Unicode(0x2000 | u16::from(bytes[i + 2] & 0x3F)))
            }
            _ => {
                i += 1;
                continue;
            }
        };
        dst.put_slice(&bytes[run_start..i]);
        match escaped {
            Escape::Short(letter) => dst.put_slice(&[b'\\', letter]),
            Escape::Unicode(unit) => {
                let nibble = |shift: u16| HEX[usize::from((unit >> shift) & 0xF)];
                dst.put_slice(&[b'\\', b'u', nibble(12), nibble(8), nibble(4), nibble(0)]);
            }
        }
        i += escape_len;
        run_start = i;
    }
    dst.put_slice(&bytes[run_start..]);
    dst.put_u8(b'"');
}

/// How one character is escaped.
enum Escape {
    /// `\` plus a letter or the character itself.
    Short(u8),
    /// `\uXXXX` with this UTF-16 unit.
    Unicode(u16),
}

/// The header keys the decoder acts on; all others are skipped.
enum Key {
    Code,
    ExtFields,
    Flag,
    Language,
    Opaque,
    Remark,
    Version,
    Ignored,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a header key")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
                Ok(match key {
                    "code" => Key::Code,
                    "extFields" => Key::ExtFields,
                    "flag" => Key::Flag,
                    "language" => Key::Language,
                    "opaque" => Key::Opaque,
                    "remark" => Key::Remark,
                    "version" => Key::Version,
                    // serializeTypeCurrentRPC included: the frame's type byte wins.
                    _ => Key::Ignored,
                })
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

/// The `language` field: a name (any case; unknown → OTHER), an ordinal, or
/// null for the default JAVA.
struct Language(LanguageCode);

impl<'de> Deserialize<'de> for Language {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct LanguageVisitor;
        impl Visitor<'_> for LanguageVisitor {
            type Value = Language;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a language name or ordinal")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Language, E> {
                Ok(Language(
                    LanguageCode::from_name(v).unwrap_or(LanguageCode::Other),
                ))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Language, E> {
                // Java throws for an ordinal it lacks; being lenient costs nothing here.
                Ok(Language(
                    u8::try_from(v).map_or(LanguageCode::Other, LanguageCode::from_code),
                ))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Language, E> {
                u64::try_from(v).map_or(Ok(Language(LanguageCode::Other)), |v| self.visit_u64(v))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Language, E> {
                Ok(Language(LanguageCode::Java))
            }
        }
        deserializer.deserialize_any(LanguageVisitor)
    }
}

/// `extFields`, Java's `HashMap<String, String>`: see [`lenient::string_map`].
struct ExtFieldsSeed;

impl<'de> de::DeserializeSeed<'de> for ExtFieldsSeed {
    type Value = Option<crate::ext_fields::ExtFields>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        lenient::string_map(d)
    }
}

/// The command of a header with no keys: Java's default for each missing
/// (or null) key. Both decoders start from it.
pub(super) fn missing_keys_command() -> RemotingCommand {
    RemotingCommand {
        code: 0,
        language: LanguageCode::Java,
        version: 0,
        opaque: 0,
        flag: 0,
        remark: None,
        ext_fields: None,
        serialize_type: SerializeType::Json,
        body: None,
    }
}

/// Builds the command from the top-level object.
struct HeaderVisitor;

impl<'de> Visitor<'de> for HeaderVisitor {
    type Value = RemotingCommand;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON header object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RemotingCommand, A::Error> {
        // Java's defaults for a key that is missing (or null).
        let mut command = missing_keys_command();
        while let Some(key) = map.next_key::<Key>()? {
            // An int field that is null keeps Java's default, 0.
            match key {
                Key::Code => command.code = map.next_value_seed(Seed::new())?.unwrap_or(0),
                Key::Flag => command.flag = map.next_value_seed(Seed::new())?.unwrap_or(0),
                Key::Opaque => command.opaque = map.next_value_seed(Seed::new())?.unwrap_or(0),
                Key::Version => command.version = map.next_value_seed(Seed::new())?.unwrap_or(0),
                Key::Language => command.language = map.next_value::<Language>()?.0,
                Key::Remark => command.remark = map.next_value_seed(Seed::new())?,
                Key::ExtFields => command.ext_fields = map.next_value_seed(ExtFieldsSeed)?,
                Key::Ignored => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(text: &str) -> String {
        let mut dst = BytesMut::new();
        put_string(&mut dst, text);
        String::from_utf8(dst.to_vec()).unwrap()
    }

    #[test]
    fn strings_are_escaped_in_the_default_dialect() {
        // What fastjson 1.2.83 writes for this text (the remark of the
        // `1_system_error_response_escaping_example` Java vectors).
        let text = "a/bé中\"\\\n\u{1}\u{7f}\u{2028}";
        assert_eq!(escaped(text), r#""a/bé中\"\\\n\u0001\u007F\u2028""#);
        assert_eq!(
            escaped("\u{8}\t\u{c}\r\u{1b}\u{80}\u{9f}\u{a0}\u{2029}\u{2027}"),
            "\"\\b\\t\\f\\r\\u001B\\u0080\\u009F\u{a0}\\u2029\u{2027}\""
        );
    }

    #[test]
    fn integers_are_written_in_decimal() {
        for value in [0, 7, -1, 479, 99_999, i32::MAX, i32::MIN] {
            let mut dst = BytesMut::new();
            put_i32(&mut dst, value);
            assert_eq!(dst.as_ref(), value.to_string().as_bytes());
        }
    }
}
