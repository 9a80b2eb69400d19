//! `DataVersion`: the version stamp of a broker's topic configuration.
//!
//! Brokers send it in every registration and in QUERY_DATA_VERSION; the
//! NameServer compares it (all three fields) to decide whether a broker's
//! topics changed. JSON: `{"counter":3,"stateVersion":0,"timestamp":1700000000000}`.

use rmq_wire::{lenient, lenient_bean};
use serde::{Deserialize, Serialize};

use crate::java_json::{self, Dialect, JavaJson};
use crate::BodyFlavor;

/// A broker's data version. Equality is on all three fields, as Java's
/// `DataVersion.equals`.
///
/// A missing `timestamp` reads as 0. (Java's constructor stamps
/// `System.currentTimeMillis()`, so two such versions never compare equal in
/// Java; no real broker omits the field.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DataVersion {
    /// Bumped on every change of the broker's topic config (Java `AtomicLong`).
    #[serde(deserialize_with = "lenient::value")]
    pub counter: i64,
    /// Controller epoch-like state version (4.x brokers never send it: 0).
    #[serde(deserialize_with = "lenient::value")]
    pub state_version: i64,
    /// Milliseconds since the epoch of the last change.
    #[serde(deserialize_with = "lenient::value")]
    pub timestamp: i64,
}

impl DataVersion {
    /// A version with the given fields.
    pub fn new(counter: i64, state_version: i64, timestamp: i64) -> Self {
        DataVersion {
            counter,
            state_version,
            timestamp,
        }
    }

    /// The JSON as a sender of `flavor` writes it: 4.x has no `stateVersion`.
    pub fn to_json_flavor(&self, flavor: BodyFlavor) -> Vec<u8> {
        match flavor {
            BodyFlavor::V5 => self.to_json(Dialect::Default),
            BodyFlavor::V4 => java_json::to_vec(&self.v4(), Dialect::Default)
                .expect("a DataVersion always serializes"),
        }
    }

    /// The 4.x view (no `stateVersion`), for embedding in 4.x bodies.
    pub(crate) fn v4(&self) -> DataVersionV4 {
        DataVersionV4 {
            counter: self.counter,
            timestamp: self.timestamp,
        }
    }
}

/// A DataVersion as 4.x Java writes it.
#[derive(Serialize)]
pub(crate) struct DataVersionV4 {
    counter: i64,
    timestamp: i64,
}

impl JavaJson for DataVersion {}
lenient_bean!(DataVersion);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::java_json::Dialect;

    #[test]
    fn matches_the_query_data_version_body_java_sends() {
        let v = DataVersion::new(3, 0, 1_700_000_000_000);
        let text = br#"{"counter":3,"stateVersion":0,"timestamp":1700000000000}"#;
        assert_eq!(v.to_json(Dialect::Default), text);
        assert_eq!(DataVersion::from_json(text).unwrap(), v);
    }

    #[test]
    fn reads_strings_missing_fields_and_nulls() {
        let v = DataVersion::from_json(br#"{"counter":"3","timestamp":null,"x":[1]}"#).unwrap();
        assert_eq!(v, DataVersion::new(3, 0, 0));
        assert_eq!(
            DataVersion::from_json(b"{}").unwrap(),
            DataVersion::default()
        );
        assert!(DataVersion::from_json(br#"{"counter":"three"}"#).is_err());
    }

    #[test]
    fn four_x_flavor_has_no_state_version() {
        let v = DataVersion::new(3, 7, 1_700_000_000_000);
        assert_eq!(
            v.to_json_flavor(BodyFlavor::V4),
            br#"{"counter":3,"timestamp":1700000000000}"#
        );
        assert_eq!(
            v.to_json_flavor(BodyFlavor::V5),
            v.to_json(Dialect::Default)
        );
    }

    #[test]
    fn standard_dialect_quotes_unsafe_longs() {
        let v = DataVersion::new(9_007_199_254_740_992, -9_007_199_254_740_991, 0);
        assert_eq!(
            v.to_json(Dialect::Standard),
            br#"{"counter":"9007199254740992","stateVersion":-9007199254740991,"timestamp":0}"#
        );
        assert_eq!(
            DataVersion::from_json(&v.to_json(Dialect::Standard)).unwrap(),
            v
        );
    }
}
