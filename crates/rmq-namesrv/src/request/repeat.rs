//! A REGISTER_BROKER body told apart from the broker's last one without
//! being decoded.
//!
//! Brokers re-register every 30 s and with every new DataVersion, and Java
//! brokers write the body from the same maps in the same order each time:
//! the bytes repeat but for the DataVersion's object. Decoding them is most
//! of a registration's CPU, so the body is fingerprinted whole but for that
//! object (located by [`common::head`], which reads only the body's start),
//! and a registration whose fingerprint the route table recorded for the
//! broker's last one is applied without its topics
//! ([`SharedRoutes::register_repeated`](crate::route::SharedRoutes::register_repeated)).
//!
//! The fingerprint is XXH3's 128-bit hash, seeded at random once per
//! process: two different bodies of one broker match by chance with a
//! probability of about 2^-128, and since the seed never leaves the process,
//! no colliding pair can be prepared offline. A cryptographic keyed hash
//! would also resist a sender searching for a collision online, but costs
//! several times as much per byte, for nothing: a body is only ever matched
//! against its own broker's last body, under the same header identity, so
//! whoever could send a colliding body could as well have sent the body it
//! collides with, which is all the match makes of it.

use std::hash::{BuildHasher, RandomState};
use std::sync::OnceLock;

use rmq_protocol::register::common;
use rmq_protocol::version::V3_0_11;
use rmq_protocol::DataVersion;
use xxhash_rust::xxh3::Xxh3;

/// A body that starts as Java brokers write it ([`common::head`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepeatedBody {
    /// The body but its DataVersion's object, with the broker name and the
    /// request version.
    pub fingerprint: u128,
    /// The body's DataVersion.
    pub data_version: DataVersion,
    /// The body's filter servers.
    pub filter_servers: Vec<String>,
}

impl RepeatedBody {
    /// The fingerprint of `body`, sent by `broker_name` in a request of
    /// `version`; `None` for a compressed or pre-3.0.11 body, one that
    /// does not start as [`common::head`] reads, or one with more than
    /// `limit` filter servers (decoding it refuses it).
    pub fn of(
        body: &[u8],
        compressed: bool,
        version: i32,
        broker_name: &str,
        limit: usize,
    ) -> Option<RepeatedBody> {
        if compressed || version < V3_0_11 {
            return None;
        }
        let head = common::head(body, limit)?;
        let (before, after) = (
            &body[..head.data_version_at.start],
            &body[head.data_version_at.end..],
        );
        let mut hasher = Xxh3::with_seed(seed());
        // Lengths first, so that no two different inputs run together alike.
        hasher.update(&version.to_le_bytes());
        hasher.update(&(broker_name.len() as u64).to_le_bytes());
        hasher.update(broker_name.as_bytes());
        hasher.update(&(before.len() as u64).to_le_bytes());
        hasher.update(before);
        hasher.update(after);
        Some(RepeatedBody {
            fingerprint: hasher.digest128(),
            data_version: head.data_version,
            filter_servers: head.filter_server_list,
        })
    }
}

/// The process's seed, drawn from the standard library's per-process
/// random keys.
fn seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| RandomState::new().hash_one("REGISTER_BROKER body"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(counter: i64, filters: &str, perm: i32) -> Vec<u8> {
        format!(
            r#"{{"filterServerList":[{filters}],"topicConfigSerializeWrapper":{{"dataVersion":{{"counter":{counter},"stateVersion":0,"timestamp":17}},"topicConfigTable":{{"T":{{"attributes":{{}},"order":false,"perm":{perm},"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"T","topicSysFlag":0,"writeQueueNums":4}}}},"topicQueueMappingDetailMap":{{}},"topicQueueMappingInfoMap":{{}}}}}}"#
        )
        .into_bytes()
    }

    fn of(body: &[u8]) -> Option<RepeatedBody> {
        RepeatedBody::of(body, false, 500, "broker-a", 10)
    }

    #[test]
    fn only_the_data_version_is_left_out() {
        let first = of(&body(1, "", 6)).unwrap();
        let again = of(&body(2, "", 6)).unwrap();
        assert_eq!(first.fingerprint, again.fingerprint);
        assert_eq!(again.data_version, DataVersion::new(2, 0, 17));
        assert_ne!(first.fingerprint, of(&body(1, "", 7)).unwrap().fingerprint);
        let filtered = of(&body(1, r#""f:1""#, 6)).unwrap();
        assert_ne!(first.fingerprint, filtered.fingerprint);
        assert_eq!(filtered.filter_servers, vec!["f:1".to_owned()]);
    }

    #[test]
    fn the_broker_name_and_request_version_count() {
        let bytes = body(1, "", 6);
        let first = of(&bytes).unwrap().fingerprint;
        let renamed = RepeatedBody::of(&bytes, false, 500, "broker-b", 10).unwrap();
        let other_version = RepeatedBody::of(&bytes, false, 501, "broker-a", 10).unwrap();
        assert_ne!(first, renamed.fingerprint);
        assert_ne!(first, other_version.fingerprint);
    }

    #[test]
    fn other_bodies_are_not_fingerprinted() {
        let bytes = body(1, "", 6);
        assert_eq!(RepeatedBody::of(&bytes, true, 500, "broker-a", 10), None);
        assert_eq!(RepeatedBody::of(&bytes, false, 36, "broker-a", 10), None);
        assert_eq!(of(br#"{"topicConfigSerializeWrapper":{}}"#), None);
        let over = body(1, r#""f:1","f:2""#, 6);
        assert_eq!(RepeatedBody::of(&over, false, 500, "broker-a", 1), None);
        let odd_version = String::from_utf8(bytes).unwrap().replace(":1,", ":1.0,");
        assert_eq!(of(odd_version.as_bytes()), None);
    }
}
