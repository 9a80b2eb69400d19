//! fastjson 1.2.83's coercions while binding JSON to Java fields, as serde
//! helpers: the one place these rules live.
//!
//! The JSON header (`header::json`) reads its fields through them, and so do
//! `rmq-protocol`'s bodies. Every value is read as fastjson reads it into a
//! field of the Java type behind it (`TypeUtils.castToInt`, `castToLong`,
//! `castToBoolean`, `StringCodec`, `MapDeserializer`), so that what Java
//! accepts is accepted here:
//!
//! * `int`/`long`: numbers (a decimal truncated toward zero), numeric strings
//!   (commas removed; for `int` a trailing `.0…` too), booleans as 1/0;
//! * `boolean`: `true`/`false`, an integer (true iff 1), a decimal (true iff
//!   it truncates to 1), the strings of `castToBoolean`;
//! * strings: numbers and booleans as their text, objects and arrays as their
//!   compact JSON text;
//! * `null` anywhere means "absent" (the field keeps its Java default, a map or
//!   list entry is dropped); `""`, `"null"` and `"NULL"` are null for numbers
//!   and booleans;
//! * a `{"$ref":…}` object where a map or list is expected reads as empty
//!   (fastjson's shared-reference marker; the NameServer has no use for the
//!   referenced value), except in [`string_map`], Java's `Map<String, String>`.
//!
//! What this module does not own: which key of a header or body maps to which
//! type (the header visitor, the body structs), the parser's syntax (serde_json
//! plus `rmq-protocol`'s bare-key pre-pass), and ext-field text parsing for
//! typed custom headers (`ext_fields`, Java's `Integer.parseInt`).
//!
//! Where Waymark knowingly differs from Java: a decimal whose integer part
//! overflows the field is refused (Java keeps its low 32 or 64 bits), and a
//! decimal read as a string is written from its `f64` (`1.0` stays `1.0`, but
//! Java's `BigDecimal` text keeps `1.50` and writes `1E+20`).
//!
//! Fields use `#[serde(deserialize_with = "lenient::value")]` (Java default =
//! the Rust `Default`), `lenient::int_or::<N, _>` (a non-zero Java initializer)
//! or `lenient::opt` (a nullable Java field); [`Seed`] reads one value from a
//! hand-written visitor.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use serde::de::{
    self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Unexpected, Visitor,
};
use serde::Deserialize;

/// A value read with fastjson's coercions; `None` means JSON `null` (or a
/// string fastjson treats as null).
pub trait Lenient: Sized {
    /// Reads the value.
    ///
    /// # Errors
    /// The deserializer's error for a value fastjson could not convert either.
    fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error>;
}

/// A field whose Java default is the Rust `Default`.
///
/// # Errors
/// As [`Lenient::lenient`].
pub fn value<'de, D: Deserializer<'de>, T: Lenient + Default>(d: D) -> Result<T, D::Error> {
    Ok(T::lenient(d)?.unwrap_or_default())
}

/// An `int` field with a non-zero Java initializer.
///
/// # Errors
/// As [`Lenient::lenient`].
pub fn int_or<'de, const N: i32, D: Deserializer<'de>>(d: D) -> Result<i32, D::Error> {
    Ok(i32::lenient(d)?.unwrap_or(N))
}

/// A nullable Java field.
///
/// # Errors
/// As [`Lenient::lenient`].
pub fn opt<'de, D: Deserializer<'de>, T: Lenient>(d: D) -> Result<Option<T>, D::Error> {
    T::lenient(d)
}

/// A bean by its derived `Deserialize`, which has `#[serde(default)]` so that
/// unknown and `$ref` properties fall back to defaults. What
/// [`lenient_bean!`](crate::lenient_bean) implements [`Lenient`] with.
///
/// # Errors
/// The derived implementation's.
pub fn bean<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    Option::<T>::deserialize(d)
}

/// Implements [`Lenient`] for beans by their derived `Deserialize` (see [`bean`]).
#[macro_export]
macro_rules! lenient_bean {
    ($($ty:ty),* $(,)?) => {$(
        impl $crate::lenient::Lenient for $ty {
            fn lenient<'de, D: $crate::lenient::__private::Deserializer<'de>>(
                d: D,
            ) -> Result<Option<Self>, D::Error> {
                $crate::lenient::bean(d)
            }
        }
    )*};
}

#[doc(hidden)]
pub mod __private {
    pub use serde::Deserializer;
}

/// Reads one [`Lenient`] value, for a hand-written visitor
/// (`map.next_value_seed(Seed::<i32>::new())`).
pub struct Seed<T>(PhantomData<T>);

impl<T> Seed<T> {
    /// The seed for `T`.
    pub fn new() -> Self {
        Seed(PhantomData)
    }
}

impl<T> Default for Seed<T> {
    fn default() -> Self {
        Seed::new()
    }
}

impl<'de, T: Lenient> DeserializeSeed<'de> for Seed<T> {
    type Value = Option<T>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
        T::lenient(d)
    }
}

/// fastjson's null strings for numbers and booleans (case matters: `"Null"` is
/// an error in Java).
fn is_null_text(v: &str) -> bool {
    v.is_empty() || v == "null" || v == "NULL"
}

/// A Java integer type as fastjson narrows into it.
trait JavaInt: TryFrom<i64> + TryFrom<u64> + FromStr {
    /// `castToInt` strips a trailing `.0…` from a string; `castToLong` does not.
    const STRIPS_TRAILING_ZEROS: bool;
}

impl JavaInt for i32 {
    const STRIPS_TRAILING_ZEROS: bool = true;
}

impl JavaInt for i64 {
    const STRIPS_TRAILING_ZEROS: bool = false;
}

struct IntVisitor<T>(PhantomData<T>);

impl<T: JavaInt> Visitor<'_> for IntVisitor<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an integer of type {}", std::any::type_name::<T>())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<T>, E> {
        T::try_from(v)
            .map(Some)
            .map_err(|_| E::invalid_value(Unexpected::Signed(v), &self))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<T>, E> {
        T::try_from(v)
            .map(Some)
            .map_err(|_| E::invalid_value(Unexpected::Unsigned(v), &self))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Option<T>, E> {
        // BigDecimal.intValue()/longValue() truncate toward zero. Past the
        // type's range Java keeps the low bits; a wrapped value is refused here.
        let t = v.trunc();
        if t.is_finite() && t.abs() < 9.2e18 {
            T::try_from(t as i64)
                .map(Some)
                .map_err(|_| E::invalid_value(Unexpected::Float(v), &self))
        } else {
            Err(E::invalid_value(Unexpected::Float(v), &self))
        }
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Option<T>, E> {
        self.visit_i64(i64::from(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<T>, E> {
        // TypeUtils.castToInt / castToLong
        if is_null_text(v) {
            return Ok(None);
        }
        let mut text = Cow::Borrowed(v);
        if v.contains(',') {
            text = Cow::Owned(v.replace(',', ""));
        }
        let mut digits: &str = &text;
        if T::STRIPS_TRAILING_ZEROS {
            // The pattern `\.0*$`: the last dot, if only zeros follow it.
            if let Some(dot) = digits.rfind('.') {
                if digits[dot + 1..].bytes().all(|b| b == b'0') {
                    digits = &digits[..dot];
                }
            }
        }
        digits
            .parse()
            .map(Some)
            .map_err(|_| E::invalid_value(Unexpected::Str(v), &self))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }
}

macro_rules! lenient_int {
    ($($ty:ty),*) => {$(
        impl Lenient for $ty {
            fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
                d.deserialize_any(IntVisitor::<$ty>(PhantomData))
            }
        }
    )*};
}
lenient_int!(i32, i64);

struct BoolVisitor;

impl Visitor<'_> for BoolVisitor {
    type Value = Option<bool>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a boolean")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Option<bool>, E> {
        Ok(Some(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<bool>, E> {
        // BooleanCodec reads an integer literal as an int (overflow is an error).
        i32::try_from(v)
            .map(|v| Some(v == 1))
            .map_err(|_| E::invalid_value(Unexpected::Signed(v), &self))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<bool>, E> {
        i32::try_from(v)
            .map(|v| Some(v == 1))
            .map_err(|_| E::invalid_value(Unexpected::Unsigned(v), &self))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Option<bool>, E> {
        // castToBoolean: intValue(BigDecimal) == 1, narrowed as for an int.
        let t = v.trunc();
        if t >= f64::from(i32::MIN) && t <= f64::from(i32::MAX) {
            Ok(Some(t == 1.0))
        } else {
            Err(E::invalid_value(Unexpected::Float(v), &self))
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<bool>, E> {
        // TypeUtils.castToBoolean
        match v {
            _ if is_null_text(v) => Ok(None),
            "1" | "T" => Ok(Some(true)),
            "0" | "N" => Ok(Some(false)),
            _ if v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("y") => Ok(Some(true)),
            _ if v.eq_ignore_ascii_case("false") || v.eq_ignore_ascii_case("f") => Ok(Some(false)),
            _ => Err(E::invalid_value(Unexpected::Str(v), &self)),
        }
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<bool>, E> {
        Ok(None)
    }
}

impl Lenient for bool {
    fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        d.deserialize_any(BoolVisitor)
    }
}

struct StringVisitor;

impl<'de> Visitor<'de> for StringVisitor {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<String>, E> {
        Ok(Some(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Option<String>, E> {
        Ok(Some(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<String>, E> {
        Ok(Some(v.to_string()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<String>, E> {
        Ok(Some(v.to_string()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Option<String>, E> {
        // Java writes the BigDecimal, which keeps `1.0`; Debug does too.
        Ok(Some(format!("{v:?}")))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Option<String>, E> {
        Ok(Some(v.to_string()))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<String>, A::Error> {
        // StringCodec parses the object and takes its toString(): JSON text.
        let value = serde_json::Value::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Ok(Some(value.to_string()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<String>, A::Error> {
        let value = serde_json::Value::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
        Ok(Some(value.to_string()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<String>, E> {
        Ok(None)
    }
}

impl Lenient for String {
    fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        d.deserialize_any(StringVisitor)
    }
}

/// A map key: JSON keys are text (after `rmq-protocol`'s bare-key pre-pass),
/// typed by parsing.
pub trait MapKey: Ord + Sized {
    /// Parses the key text; `None` if it is not of this type.
    fn parse_key(text: &str) -> Option<Self>;
}

impl MapKey for String {
    fn parse_key(text: &str) -> Option<Self> {
        Some(text.to_owned())
    }
}

impl MapKey for i32 {
    fn parse_key(text: &str) -> Option<Self> {
        text.parse().ok()
    }
}

impl MapKey for i64 {
    fn parse_key(text: &str) -> Option<Self> {
        text.parse().ok()
    }
}

/// Collects the entries of a JSON array or, for a `$ref` object or any other
/// object in list position, nothing.
struct SeqVisitor<C, T>(PhantomData<(C, T)>);

impl<'de, C, T> Visitor<'de> for SeqVisitor<C, T>
where
    C: Default + Extend<T>,
    T: Lenient,
{
    type Value = Option<C>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<C>, A::Error> {
        let mut out = C::default();
        while let Some(item) = seq.next_element_seed(Seed::<T>::new())? {
            out.extend(item);
        }
        Ok(Some(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<C>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Some(C::default()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<C>, E> {
        Ok(None)
    }
}

impl<T: Lenient> Lenient for Vec<T> {
    fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        d.deserialize_any(SeqVisitor::<Self, T>(PhantomData))
    }
}

impl<T: Lenient + Ord> Lenient for BTreeSet<T> {
    fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        d.deserialize_any(SeqVisitor::<Self, T>(PhantomData))
    }
}

/// Reads an object into a map. Duplicate keys: the last wins, and a `null`
/// removes an earlier value (Java's `HashMap.put(key, null)`).
struct MapVisitor<K, V> {
    /// Whether `$ref` is skipped as fastjson's reference marker rather than
    /// kept as a data key.
    skip_ref: bool,
    types: PhantomData<(K, V)>,
}

impl<'de, K: MapKey, V: Lenient> Visitor<'de> for MapVisitor<K, V> {
    type Value = Option<BTreeMap<K, V>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<BTreeMap<K, V>>, A::Error> {
        let mut out = BTreeMap::new();
        while let Some(key) = map.next_key::<String>()? {
            if self.skip_ref && key == "$ref" {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let Some(k) = K::parse_key(&key) else {
                return Err(de::Error::invalid_value(
                    Unexpected::Str(&key),
                    &"an integer map key",
                ));
            };
            match map.next_value_seed(Seed::<V>::new())? {
                Some(v) => out.insert(k, v),
                None => out.remove(&k),
            };
        }
        Ok(Some(out))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<BTreeMap<K, V>>, E> {
        Ok(None)
    }
}

/// A body's map: `$ref` stands for fastjson's reference marker wherever it
/// stands in the object. (Java's own parser resolves it for integer keys and
/// fails on it for bean values; reading it as no entry is Waymark's leniency.)
impl<K: MapKey, V: Lenient> Lenient for BTreeMap<K, V> {
    fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        d.deserialize_any(MapVisitor::<K, V> {
            skip_ref: true,
            types: PhantomData,
        })
    }
}

/// Java's `Map<String, String>` exactly as fastjson's `MapDeserializer` reads
/// it: `$ref` is an ordinary key there. The header's `extFields`.
///
/// # Errors
/// For anything but an object or `null`, or a value that is not a scalar,
/// object or array.
pub fn string_map<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<BTreeMap<String, String>>, D::Error> {
    d.deserialize_any(MapVisitor::<String, String> {
        skip_ref: false,
        types: PhantomData,
    })
}

#[cfg(test)]
mod tests;
