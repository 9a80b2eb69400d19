//! fastjson's coercions for the typed fields of the JSON header.
//!
//! Each type reads one header value the way fastjson would for the Java field
//! behind it, so that what Java accepts we accept: ints from numbers, numeric
//! strings and booleans; the language from a name in any case or an ordinal;
//! strings from any scalar (and nested JSON as its text); `extFields` with
//! null entries removed. The header visitor in `json` decides which key gets
//! which type.

use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::Deserialize;

use crate::code::LanguageCode;
use crate::ext_fields::ExtFields;

/// An `int` field as fastjson reads it: a number, a numeric string, a
/// boolean (1/0), or null/`""` for the default 0. Out-of-range is an error.
pub(super) struct Int(pub(super) i32);

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IntVisitor;
        impl Visitor<'_> for IntVisitor {
            type Value = Int;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a 32-bit integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int, E> {
                i32::try_from(v)
                    .map(Int)
                    .map_err(|_| E::custom(format!("int value {v} overflows")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int, E> {
                i32::try_from(v)
                    .map(Int)
                    .map_err(|_| E::custom(format!("int value {v} overflows")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Int, E> {
                // Java's Number.intValue() truncates toward zero.
                let truncated = v.trunc();
                if truncated >= f64::from(i32::MIN) && truncated <= f64::from(i32::MAX) {
                    Ok(Int(truncated as i32))
                } else {
                    Err(E::custom(format!("int value {v} overflows")))
                }
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Int, E> {
                Ok(Int(i32::from(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Int, E> {
                if v.is_empty() || v.eq_ignore_ascii_case("null") {
                    return Ok(Int(0));
                }
                v.parse()
                    .map(Int)
                    .map_err(|_| E::custom(format!("{v:?} is not an int")))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Int, E> {
                Ok(Int(0))
            }
        }
        deserializer.deserialize_any(IntVisitor)
    }
}

/// The `language` field: a name (any case; unknown → OTHER), an ordinal, or
/// null for the default JAVA.
pub(super) struct Language(pub(super) LanguageCode);

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

/// A string-typed value: strings as they are, and what fastjson converts to
/// strings: numbers and booleans in their JSON form, objects and arrays as
/// their compact JSON text. `null` is handled by the surrounding `Option`.
pub(super) struct Text(pub(super) String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(Text(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Text, E> {
                Ok(Text(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Text, E> {
                // Debug keeps a trailing `.0`, closer to Java's BigDecimal text.
                Ok(Text(format!("{v:?}")))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Text, A::Error> {
                let value =
                    serde_json::Value::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(Text(value.to_string()))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Text, A::Error> {
                let value =
                    serde_json::Value::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
                Ok(Text(value.to_string()))
            }
        }
        deserializer.deserialize_any(TextVisitor)
    }
}

/// The `extFields` object. A `null` value means the key is absent.
pub(super) struct Ext(pub(super) ExtFields);

impl<'de> Deserialize<'de> for Ext {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ExtVisitor;
        impl<'de> Visitor<'de> for ExtVisitor {
            type Value = Ext;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an extFields object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ext, A::Error> {
                let mut ext = ExtFields::new();
                while let Some((key, value)) = map.next_entry::<String, Option<Text>>()? {
                    // Last one wins, as in Java's HashMap; a null removes an earlier value.
                    match value {
                        Some(Text(value)) => ext.insert(key, value),
                        None => ext.remove(&key),
                    };
                }
                Ok(Ext(ext))
            }
        }
        deserializer.deserialize_map(ExtVisitor)
    }
}
