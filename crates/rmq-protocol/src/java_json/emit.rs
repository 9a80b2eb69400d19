//! The serde_json formatter that writes fastjson's two dialects.
//!
//! serde_json's map-key serializer writes an integer key as `begin_string`,
//! `write_i64`, `end_string`. The formatter therefore defers the opening quote
//! of every object key; if the next thing written is an integer and the
//! dialect is [`Dialect::Default`], both quotes are dropped, giving fastjson's
//! `{0:"addr"}`. String escaping is done here entirely (serde_json hands over
//! unescaped fragments and the escapes it would make), so the output is
//! fastjson 1.2.83's byte for byte (`SerializeWriter.writeStringWithDoubleQuote`).

use std::fmt::Display;
use std::io::{self, Write};

use serde_json::ser::{CharEscape, Formatter};

use super::Dialect;

/// Largest magnitude the standard dialect writes as a JSON number
/// (2^53 − 1, `BrowserCompatible`); beyond it longs are quoted.
const MAX_SAFE_INTEGER: i128 = 9_007_199_254_740_991;

/// Where in an object key the formatter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    /// Not inside a key (writing values, or between entries).
    Outside,
    /// `begin_object_key` seen, nothing written for the key yet.
    Start,
    /// The key's opening quote was swallowed; it is written as soon as the
    /// key turns out to be textual.
    QuotePending,
    /// Inside a quoted key.
    Quoted,
    /// Inside an unquoted integer key.
    Bare,
}

/// Formatter for one serialization in one dialect.
#[derive(Debug)]
pub(crate) struct JavaFormatter {
    dialect: Dialect,
    key: Key,
}

impl JavaFormatter {
    pub(crate) fn new(dialect: Dialect) -> Self {
        JavaFormatter {
            dialect,
            key: Key::Outside,
        }
    }

    /// Writes the deferred opening quote of a textual key.
    fn open_key<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        if self.key == Key::QuotePending {
            self.key = Key::Quoted;
            w.write_all(b"\"")?;
        }
        Ok(())
    }

    /// Writes an integer as a key or a value. `safe` says whether it lies
    /// within ±(2^53 − 1).
    fn integer<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        v: impl Display,
        safe: bool,
    ) -> io::Result<()> {
        match (self.key, self.dialect) {
            (Key::QuotePending, Dialect::Default) => {
                self.key = Key::Bare;
                write!(w, "{v}")
            }
            (Key::QuotePending, Dialect::Standard) => {
                self.open_key(w)?;
                write!(w, "{v}")
            }
            (Key::Outside, Dialect::Standard) if !safe => write!(w, "\"{v}\""),
            _ => write!(w, "{v}"),
        }
    }
}

fn safe(v: impl Into<i128>) -> bool {
    v.into().abs() <= MAX_SAFE_INTEGER
}

impl Formatter for JavaFormatter {
    fn write_bool<W: ?Sized + Write>(&mut self, w: &mut W, value: bool) -> io::Result<()> {
        self.open_key(w)?;
        w.write_all(if value { b"true" } else { b"false" })
    }

    fn write_i8<W: ?Sized + Write>(&mut self, w: &mut W, v: i8) -> io::Result<()> {
        self.integer(w, v, true)
    }

    fn write_i16<W: ?Sized + Write>(&mut self, w: &mut W, v: i16) -> io::Result<()> {
        self.integer(w, v, true)
    }

    fn write_i32<W: ?Sized + Write>(&mut self, w: &mut W, v: i32) -> io::Result<()> {
        self.integer(w, v, true)
    }

    fn write_i64<W: ?Sized + Write>(&mut self, w: &mut W, v: i64) -> io::Result<()> {
        self.integer(w, v, safe(v))
    }

    fn write_i128<W: ?Sized + Write>(&mut self, w: &mut W, v: i128) -> io::Result<()> {
        self.integer(w, v, v.checked_abs().is_some_and(|a| a <= MAX_SAFE_INTEGER))
    }

    fn write_u8<W: ?Sized + Write>(&mut self, w: &mut W, v: u8) -> io::Result<()> {
        self.integer(w, v, true)
    }

    fn write_u16<W: ?Sized + Write>(&mut self, w: &mut W, v: u16) -> io::Result<()> {
        self.integer(w, v, true)
    }

    fn write_u32<W: ?Sized + Write>(&mut self, w: &mut W, v: u32) -> io::Result<()> {
        self.integer(w, v, true)
    }

    fn write_u64<W: ?Sized + Write>(&mut self, w: &mut W, v: u64) -> io::Result<()> {
        self.integer(w, v, safe(v))
    }

    fn write_u128<W: ?Sized + Write>(&mut self, w: &mut W, v: u128) -> io::Result<()> {
        self.integer(w, v, v <= MAX_SAFE_INTEGER as u128)
    }

    fn write_f32<W: ?Sized + Write>(&mut self, w: &mut W, v: f32) -> io::Result<()> {
        self.open_key(w)?;
        write!(w, "{v}")
    }

    fn write_f64<W: ?Sized + Write>(&mut self, w: &mut W, v: f64) -> io::Result<()> {
        self.open_key(w)?;
        write!(w, "{v}")
    }

    fn begin_string<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        if self.key == Key::Start {
            self.key = Key::QuotePending;
            Ok(())
        } else {
            w.write_all(b"\"")
        }
    }

    fn end_string<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        match self.key {
            Key::Bare => Ok(()),
            // An empty textual key: nothing opened it yet.
            Key::QuotePending => {
                self.key = Key::Quoted;
                w.write_all(b"\"\"")
            }
            _ => w.write_all(b"\""),
        }
    }

    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        self.open_key(w)?;
        write_fragment(w, fragment, self.dialect)
    }

    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        escape: CharEscape,
    ) -> io::Result<()> {
        self.open_key(w)?;
        let short: &[u8] = match escape {
            CharEscape::Quote => b"\\\"",
            CharEscape::ReverseSolidus => b"\\\\",
            CharEscape::Solidus => b"\\/",
            CharEscape::Backspace => b"\\b",
            CharEscape::FormFeed => b"\\f",
            CharEscape::LineFeed => b"\\n",
            CharEscape::CarriageReturn => b"\\r",
            CharEscape::Tab => b"\\t",
            CharEscape::AsciiControl(byte) => return write!(w, "\\u{:04X}", byte),
        };
        w.write_all(short)
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.key = Key::Start;
        if first {
            Ok(())
        } else {
            w.write_all(b",")
        }
    }

    fn end_object_key<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.key = Key::Outside;
        Ok(())
    }
}

/// Whether `c` (not one serde_json already escapes) needs `\uXXXX` in `dialect`.
fn needs_escape(c: char, dialect: Dialect) -> bool {
    match dialect {
        Dialect::Default => matches!(c, '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}'),
        Dialect::Standard => c == '/' || c >= '\u{7f}',
    }
}

/// Writes an unescaped run of string content, escaping what fastjson escapes
/// beyond JSON's mandatory set.
fn write_fragment<W: ?Sized + Write>(w: &mut W, s: &str, dialect: Dialect) -> io::Result<()> {
    let mut start = 0;
    for (i, c) in s.char_indices() {
        if !needs_escape(c, dialect) {
            continue;
        }
        w.write_all(&s.as_bytes()[start..i])?;
        if c == '/' {
            w.write_all(b"\\/")?;
        } else {
            for unit in c.encode_utf16(&mut [0; 2]) {
                write!(w, "\\u{unit:04X}")?;
            }
        }
        start = i + c.len_utf8();
    }
    w.write_all(&s.as_bytes()[start..])
}
