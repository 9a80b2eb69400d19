//! Decoding a REGISTER_BROKER body within a bound on its collections, so a
//! hostile body is refused before it is materialized.
//!
//! A body's memory is dominated by its collections: topics, static-topic
//! mappings, filter servers. A 16 MiB frame of JSON, or 64 MiB of inflated
//! binary, holds millions of tiny entries, each of which becomes a `String`
//! and a map node (a 2-million-topic body took 1.9 GB). So:
//!
//! * compressed bodies declare their counts up front: a count over the bound
//!   is refused before any entry is read;
//! * JSON bodies are first scanned without building anything (serde's
//!   `IgnoredAny`, constant memory), counting the entries of those
//!   collections and stopping at the first one past the bound. Bodies too
//!   short to hold more entries than the bound skip the scan.
//!
//! The scan counts what the decoder would read: duplicates and `null` entries
//! count, so the bound holds for what gets built.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::java_json::quote_bare_keys;
use crate::BodyError;

/// A REGISTER_BROKER body that could not be decoded within its bound.
#[derive(Debug, thiserror::Error)]
pub enum RegisterDecodeError {
    /// One of the body's collections has more entries than allowed; nothing
    /// past the bound was built.
    #[error("the body carries more than {limit} {what}")]
    TooMany {
        /// The collection: `topics`, `static-topic mappings`, `filter servers`.
        what: &'static str,
        /// The bound it exceeds.
        limit: usize,
    },
    /// The body is malformed.
    #[error(transparent)]
    Body(#[from] BodyError),
}

/// Topics.
pub(super) const TOPICS: &str = "topics";
/// Static-topic mappings.
pub(super) const MAPPINGS: &str = "static-topic mappings";
/// Filter servers.
pub(super) const FILTERS: &str = "filter servers";

/// Where the counted collections sit in a JSON body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Layout {
    /// `RegisterBrokerBody`: `filterServerList` and
    /// `topicConfigSerializeWrapper.{topicConfigTable, topicQueueMappingInfoMap}`.
    Body,
    /// A bare `TopicConfigSerializeWrapper` (pre-3.0.11 bodies).
    Wrapper,
    /// A JSON array (the filter-server section of a compressed body).
    List,
}

/// Fails when a JSON text in `layout` has a counted collection of more than
/// `limit` entries. Text that does not parse is left to the real decoder,
/// which reports it as Java would.
pub(super) fn check_json(
    bytes: &[u8],
    layout: Layout,
    limit: usize,
) -> Result<(), RegisterDecodeError> {
    // Every entry takes at least two bytes (`0,` in an array, `a:0,` in an
    // object), so a shorter text cannot exceed the bound.
    if bytes.len() / 2 <= limit {
        return Ok(());
    }
    let text = quote_bare_keys(bytes);
    let exceeded = Cell::new(None);
    let scan = Scan {
        layout,
        limit,
        exceeded: &exceeded,
    };
    let mut de = serde_json::Deserializer::from_slice(&text);
    let _ = scan.deserialize(&mut de);
    match exceeded.get() {
        Some(what) => Err(RegisterDecodeError::TooMany { what, limit }),
        None => Ok(()),
    }
}

/// Refuses a declared count of a compressed body over `limit`.
pub(super) fn check_count(
    count: i32,
    what: &'static str,
    limit: usize,
) -> Result<(), RegisterDecodeError> {
    match usize::try_from(count) {
        Ok(count) if count > limit => Err(RegisterDecodeError::TooMany { what, limit }),
        _ => Ok(()),
    }
}

/// Walks a JSON value in `layout`, counting the collections.
#[derive(Clone, Copy)]
struct Scan<'a> {
    layout: Layout,
    limit: usize,
    exceeded: &'a Cell<Option<&'static str>>,
}

/// Counts the entries of one collection (an object or an array).
#[derive(Clone, Copy)]
struct Count<'a> {
    what: &'static str,
    limit: usize,
    exceeded: &'a Cell<Option<&'static str>>,
}

impl<'a> Scan<'a> {
    fn count(self, what: &'static str) -> Count<'a> {
        Count {
            what,
            limit: self.limit,
            exceeded: self.exceeded,
        }
    }
}

/// The member names the scan looks at; any other is skipped.
enum Member {
    Wrapper,
    Topics,
    Mappings,
    Filters,
    Other,
}

impl<'de> de::Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Member, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = Member;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Member, E> {
                Ok(match name {
                    "topicConfigSerializeWrapper" => Member::Wrapper,
                    "topicConfigTable" => Member::Topics,
                    "topicQueueMappingInfoMap" => Member::Mappings,
                    "filterServerList" => Member::Filters,
                    _ => Member::Other,
                })
            }
        }
        d.deserialize_str(Name)
    }
}

impl<'de> DeserializeSeed<'de> for Scan<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        if self.layout == Layout::List {
            return self.count(FILTERS).deserialize(d);
        }
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Scan<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(member) = map.next_key::<Member>()? {
            match (self.layout, member) {
                (Layout::Body, Member::Wrapper) => map.next_value_seed(Scan {
                    layout: Layout::Wrapper,
                    ..self
                })?,
                (Layout::Body, Member::Filters) => map.next_value_seed(self.count(FILTERS))?,
                (Layout::Wrapper, Member::Topics) => map.next_value_seed(self.count(TOPICS))?,
                (Layout::Wrapper, Member::Mappings) => map.next_value_seed(self.count(MAPPINGS))?,
                _ => map.next_value::<IgnoredAny>().map(drop)?,
            }
        }
        Ok(())
    }

    // Anything but an object holds nothing to count.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Count<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl Count<'_> {
    /// Records and reports the entry past the bound.
    fn over<E: de::Error>(self, entries: usize) -> Result<(), E> {
        if entries > self.limit {
            self.exceeded.set(Some(self.what));
            return Err(E::custom(format_args!(
                "more than {} {}",
                self.limit, self.what
            )));
        }
        Ok(())
    }
}

impl<'de> Visitor<'de> for Count<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut entries = 0usize;
        while map.next_key::<IgnoredAny>()?.is_some() {
            map.next_value::<IgnoredAny>()?;
            entries += 1;
            self.over(entries)?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut entries = 0usize;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            entries += 1;
            self.over(entries)?;
        }
        Ok(())
    }

    // A scalar where a collection belongs holds nothing (the decoder reads it
    // as empty or refuses it).
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}
