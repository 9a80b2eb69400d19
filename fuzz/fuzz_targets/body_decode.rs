//! Fuzzes every body decoder of `rmq-protocol` but the REGISTER_BROKER
//! body's own (`register_body_decode` has that one).
//!
//! The first input byte picks the body (modulo the table below), the rest is
//! the body's bytes:
//!
//! | byte | body | decoder |
//! |---|---|---|
//! | 0 | `TopicRouteData` (GET_ROUTEINFO_BY_TOPIC, REGISTER_TOPIC) | JSON |
//! | 1 | `TopicQueueMappingInfo` | JSON |
//! | 2 | `ClusterInfo` | JSON |
//! | 3 | `TopicConfig` | JSON |
//! | 4 | `TopicConfig` | text form of the compressed body |
//! | 5 | `TopicConfigSerializeWrapper` (the pre-3.0.11 REGISTER_BROKER body) | JSON |
//! | 6 | `DataVersion` | JSON |
//! | 7 | `KvTable` | JSON |
//! | 8 | `KvConfigSerializeWrapper` (`kvConfig.json`) | JSON |
//! | 9 | `TopicList` | JSON |
//! | 10 | `GetBrokerMemberGroupResponseBody` | JSON |
//! | 11 | `SyncStateSet` | JSON |
//! | 12 | `ElectMasterResponseBody` | JSON |
//! | 13 | `BrokerReplicasInfo` | JSON |
//! | 14 | `BrokerNames` (CONTROLLER_GET_SYNC_STATE_DATA request) | JSON |
//! | 15 | the REGISTER_BROKER dispatch, `RegisterBrokerBody::decode_request`, pre-3.0.11 | JSON |
//!
//! Nothing may panic. Whatever decodes must re-encode, in both fastjson
//! dialects, to bytes that decode to the same value; where a module also
//! writes a 4.x flavor, that output must decode too.
//!
//! Run from `fuzz/`: `RUSTC_BOOTSTRAP=1 cargo fuzz run body_decode -- -max_total_time=60`
//! (`scripts/fuzz-smoke.sh` first seeds `corpus/body_decode` with the bodies
//! captured from Java).

#![no_main]

use std::fmt::Debug;

use libfuzzer_sys::fuzz_target;
use rmq_protocol::{
    BodyFlavor, BrokerNames, BrokerReplicasInfo, ClusterInfo, DataVersion, Dialect,
    ElectMasterResponseBody, GetBrokerMemberGroupResponseBody, JavaJson, KvConfigSerializeWrapper,
    KvTable, RegisterBrokerBody, SyncStateSet, TopicConfig, TopicConfigSerializeWrapper, TopicList,
    TopicQueueMappingInfo, TopicRouteData,
};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    match selector % 16 {
        0 => check::<TopicRouteData>(body),
        1 => check::<TopicQueueMappingInfo>(body),
        2 => check::<ClusterInfo>(body),
        3 => check::<TopicConfig>(body),
        4 => topic_config_text(body),
        5 => {
            if let Some(wrapper) = json::<TopicConfigSerializeWrapper>(body) {
                let v4 =
                    TopicConfigSerializeWrapper::from_json(&wrapper.to_json_flavor(BodyFlavor::V4))
                        .expect("4.x wrapper output decodes");
                assert_eq!(v4.data_version.counter, wrapper.data_version.counter);
                assert_eq!(
                    v4.topic_config_table.len(),
                    wrapper.topic_config_table.len()
                );
            }
        }
        6 => {
            if let Some(version) = json::<DataVersion>(body) {
                let v4 = DataVersion::from_json(&version.to_json_flavor(BodyFlavor::V4))
                    .expect("4.x data version decodes");
                // 4.x has no stateVersion: it reads back as 0.
                assert_eq!(
                    v4,
                    DataVersion {
                        state_version: 0,
                        ..version
                    }
                );
            }
        }
        7 => check::<KvTable>(body),
        8 => check::<KvConfigSerializeWrapper>(body),
        9 => check::<TopicList>(body),
        10 => check::<GetBrokerMemberGroupResponseBody>(body),
        11 => check::<SyncStateSet>(body),
        12 => check::<ElectMasterResponseBody>(body),
        13 => check::<BrokerReplicasInfo>(body),
        14 => check::<BrokerNames>(body),
        _ => old_register_body(body),
    }
});

fn check<T: JavaJson + PartialEq + Debug>(bytes: &[u8]) {
    json::<T>(bytes);
}

/// Decodes `bytes` as `T`; if that works, checks that both dialects' output
/// decodes back to the same value, and returns it.
fn json<T: JavaJson + PartialEq + Debug>(bytes: &[u8]) -> Option<T> {
    let value = T::from_json(bytes).ok()?;
    for dialect in [Dialect::Default, Dialect::Standard] {
        let text = value.to_json(dialect);
        let again = T::from_json(&text).unwrap_or_else(|error| {
            panic!(
                "{dialect:?} output does not decode ({error}): {}",
                String::from_utf8_lossy(&text)
            )
        });
        assert_eq!(
            again,
            value,
            "{dialect:?}: {}",
            String::from_utf8_lossy(&text)
        );
    }
    Some(value)
}

/// The space-separated text form. It cannot carry `order` or `topicSysFlag`,
/// a name with a space, or attributes with a space (Java splits on every
/// space); whatever it can carry must survive.
fn topic_config_text(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let Ok(config) = TopicConfig::decode_text(text) else {
        return;
    };
    for with_attributes in [true, false] {
        let encoded = config.encode_text(with_attributes);
        let again = TopicConfig::decode_text(&encoded)
            .unwrap_or_else(|error| panic!("{encoded:?} does not decode: {error}"));
        let mut expected = config.clone();
        if !with_attributes {
            expected.attributes.clear();
        }
        if carries(&expected) {
            assert_eq!(again, expected, "{encoded:?}");
        }
    }
}

/// Whether the text form can carry `config` (see `topic_config_text`).
fn carries(config: &TopicConfig) -> bool {
    !config.topic_name.contains(' ')
        && config
            .attributes
            .iter()
            .all(|(k, v)| !k.contains(' ') && !v.contains(' '))
}

/// A pre-3.0.11 REGISTER_BROKER body goes through the request dispatch: it is
/// a bare wrapper, and its filter-server list is "not provided".
fn old_register_body(bytes: &[u8]) {
    let Ok(body) = RegisterBrokerBody::decode_request(Some(bytes), false, 36) else {
        assert!(TopicConfigSerializeWrapper::from_json(bytes).is_err());
        return;
    };
    assert_eq!(body.filter_server_list, None);
    let again = RegisterBrokerBody::decode_request(
        Some(
            &body
                .topic_config_serialize_wrapper
                .to_json_flavor(BodyFlavor::V4),
        ),
        false,
        36,
    )
    .expect("4.x wrapper output decodes as an old register body");
    assert_eq!(
        again
            .topic_config_serialize_wrapper
            .topic_config_table
            .len(),
        body.topic_config_serialize_wrapper.topic_config_table.len()
    );
}
