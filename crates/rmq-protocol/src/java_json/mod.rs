//! The fastjson 1.2.83 dialects of the JSON bodies: the default one (Java's
//! `RemotingSerializable.encode`) and the standard one a GET_ROUTEINFO_BY_TOPIC
//! answer uses for 4.9.4+ clients (`SerializerFeature.BrowserCompatible`).
//!
//! Bodies are ordinary serde structs; this module only supplies what serde_json
//! cannot express by configuration:
//!
//! * **Emit** ([`to_vec`]): a custom [`serde_json::ser::Formatter`] per
//!   [`Dialect`]. fastjson's default dialect writes integer map keys *without*
//!   quotes (`{0:"127.0.0.1:10911"}`, not valid JSON) and escapes a peculiar
//!   set of characters (U+007F–U+009F, U+2028/2029, uppercase `\u00XX`);
//!   the standard ("BrowserCompatible") dialect escapes `/` and every
//!   character ≥ U+007F and writes longs beyond ±(2^53−1) as strings. None of
//!   that is a serde_json option, so the formatter is hand-written. Property
//!   order is the struct's field order (declared alphabetically, as fastjson's
//!   `SortField`); maps are `BTreeMap`s, so both dialects write them sorted —
//!   the standard dialect requires that, and the default dialect's Java hash
//!   order is something no receiver relies on.
//! * **Parse** ([`from_slice`]): fastjson accepts unquoted object keys, so a
//!   pre-pass quotes bare keys (only when there are any; strings are skipped
//!   correctly), then serde_json parses. Leniency that fastjson applies while
//!   binding (numbers as strings and back, nulls, `{"$ref":…}` objects where a
//!   map is expected) is `rmq_wire::lenient`'s, the rules the JSON header is
//!   read with too, used through `#[serde(deserialize_with)]` on every body field.
//!
//! Parsing never panics; serde_json bounds nesting depth, the pre-pass is a
//! single iterative scan.

mod emit;
mod parse;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::BodyError;

pub use parse::quote_bare_keys;

/// Which of the two fastjson outputs to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Dialect {
    /// fastjson defaults: unquoted integer map keys, raw UTF-8. Used for every
    /// body except qualifying route responses.
    #[default]
    Default,
    /// BrowserCompatible + MapSortField: quoted keys, ASCII-only output, `\/`,
    /// big longs as strings. Only the GET_ROUTEINFO_BY_TOPIC response for
    /// clients with version ≥ 401 or `acceptStandardJsonOnly=true`.
    Standard,
}

/// Serializes `value` in `dialect`.
///
/// # Errors
/// Only what `value`'s `Serialize` implementation reports (e.g. a map whose
/// keys are neither strings nor integers). Never for the body types of this
/// crate; use [`JavaJson::to_json`] for those.
pub fn to_vec<T: Serialize + ?Sized>(value: &T, dialect: Dialect) -> Result<Vec<u8>, BodyError> {
    let mut out = Vec::with_capacity(128);
    let mut ser =
        serde_json::Serializer::with_formatter(&mut out, emit::JavaFormatter::new(dialect));
    value.serialize(&mut ser)?;
    Ok(out)
}

/// Parses fastjson text (either dialect, or anything else fastjson accepts
/// that a peer is known to send: unquoted integer map keys, numbers given as
/// strings, `$ref` objects).
///
/// # Errors
/// [`BodyError::Json`] for malformed text or values of the wrong shape.
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, BodyError> {
    let text = quote_bare_keys(bytes);
    Ok(serde_json::from_slice(&text)?)
}

/// A body that travels as fastjson text.
///
/// Implemented by every body type of this crate; the methods are the intended
/// way to encode and decode them.
pub trait JavaJson: Serialize + DeserializeOwned {
    /// The body's bytes in `dialect`.
    ///
    /// # Panics
    /// Only if `Serialize` fails, which cannot happen for the types of this
    /// crate (string or integer map keys, writing into a `Vec`).
    fn to_json(&self, dialect: Dialect) -> Vec<u8> {
        to_vec(self, dialect).expect("body types of rmq-protocol always serialize")
    }

    /// Decodes a body; see [`from_slice`].
    ///
    /// # Errors
    /// [`BodyError::Json`] for malformed text.
    fn from_json(bytes: &[u8]) -> Result<Self, BodyError> {
        from_slice(bytes)
    }
}

#[cfg(test)]
mod tests;
