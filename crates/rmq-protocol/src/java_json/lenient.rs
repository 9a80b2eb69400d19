//! fastjson's coercions while binding JSON to Java beans, as serde helpers.
//!
//! Every body field is read through [`Lenient`]: integers accept numbers and
//! numeric strings, booleans accept `"true"`/`1`/…, strings accept numbers,
//! `null` anywhere means "absent" (the field keeps its Java default, a map or
//! list entry is dropped), and a `{"$ref":…}` object where a map or list is
//! expected reads as empty (fastjson's shared-reference marker; the NameServer
//! has no use for the referenced value).
//!
//! Fields use `#[serde(deserialize_with = "lenient::value")]` (Java default =
//! the Rust `Default`), `lenient::int_or::<N, _>` (a non-zero Java initializer)
//! or `lenient::opt` (a nullable Java field).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use serde::de::{
    self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Unexpected, Visitor,
};

/// A value read with fastjson's coercions; `None` means JSON `null` (or an
/// empty string where fastjson treats it as null).
pub(crate) trait Lenient: Sized {
    /// Reads the value.
    fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error>;
}

/// A field whose Java default is the Rust `Default`.
pub(crate) fn value<'de, D: Deserializer<'de>, T: Lenient + Default>(d: D) -> Result<T, D::Error> {
    Ok(T::lenient(d)?.unwrap_or_default())
}

/// An `int` field with a non-zero Java initializer.
pub(crate) fn int_or<'de, const N: i32, D: Deserializer<'de>>(d: D) -> Result<i32, D::Error> {
    Ok(i32::lenient(d)?.unwrap_or(N))
}

/// A nullable Java field.
pub(crate) fn opt<'de, D: Deserializer<'de>, T: Lenient>(d: D) -> Result<Option<T>, D::Error> {
    T::lenient(d)
}

/// Implements [`Lenient`] for a bean by its derived `Deserialize` (which has
/// `#[serde(default)]`, so unknown and `$ref` properties fall back to defaults).
macro_rules! lenient_bean {
    ($($ty:ty),* $(,)?) => {$(
        impl $crate::java_json::lenient::Lenient for $ty {
            fn lenient<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
                <Option<$ty> as serde::Deserialize>::deserialize(d)
            }
        }
    )*};
}
pub(crate) use lenient_bean;

/// Seed that reads one [`Lenient`] value out of a map or sequence.
struct Seed<T>(PhantomData<T>);

impl<'de, T: Lenient> DeserializeSeed<'de> for Seed<T> {
    type Value = Option<T>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
        T::lenient(d)
    }
}

struct IntVisitor<T>(PhantomData<T>);

impl<'de, T> Visitor<'de> for IntVisitor<T>
where
    T: TryFrom<i64> + TryFrom<u64> + FromStr,
{
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
        // fastjson narrows a decimal by truncation (BigDecimal.intValue()).
        let t = v.trunc();
        if t.is_finite() && t.abs() < 9.2e18 {
            self.visit_i64(t as i64)
        } else {
            Err(E::invalid_value(Unexpected::Float(v), &self))
        }
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Option<T>, E> {
        self.visit_i64(i64::from(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<T>, E> {
        if v.is_empty() || v == "null" || v == "NULL" {
            return Ok(None);
        }
        v.parse()
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

impl<'de> Visitor<'de> for BoolVisitor {
    type Value = Option<bool>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a boolean")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Option<bool>, E> {
        Ok(Some(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<bool>, E> {
        Ok(Some(v == 1))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<bool>, E> {
        Ok(Some(v == 1))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<bool>, E> {
        // TypeUtils.castToBoolean
        match v {
            "" | "null" | "NULL" => Ok(None),
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
        Ok(Some(v.to_string()))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Option<String>, E> {
        Ok(Some(v.to_string()))
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

/// A map key: JSON keys are text (after the bare-key pre-pass), typed by parsing.
pub(crate) trait MapKey: Ord + Sized {
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
        while let Some(item) = seq.next_element_seed(Seed::<T>(PhantomData))? {
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

struct MapVisitor<K, V>(PhantomData<(K, V)>);

impl<'de, K: MapKey, V: Lenient> Visitor<'de> for MapVisitor<K, V> {
    type Value = Option<BTreeMap<K, V>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<BTreeMap<K, V>>, A::Error> {
        let mut out = BTreeMap::new();
        while let Some(key) = map.next_key::<String>()? {
            // fastjson treats `$ref` as its reference marker wherever it
            // stands in an object, never as a data key.
            if key == "$ref" {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let Some(k) = K::parse_key(&key) else {
                return Err(de::Error::invalid_value(
                    Unexpected::Str(&key),
                    &"an integer map key",
                ));
            };
            if let Some(v) = map.next_value_seed(Seed::<V>(PhantomData))? {
                out.insert(k, v);
            }
        }
        Ok(Some(out))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<BTreeMap<K, V>>, E> {
        Ok(None)
    }
}

impl<K: MapKey, V: Lenient> Lenient for BTreeMap<K, V> {
    fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        d.deserialize_any(MapVisitor::<K, V>(PhantomData))
    }
}
