//! The JSON bodies of the controller requests:
//! `SyncStateSet`, `ElectMasterResponseBody`, `BrokerReplicasInfo` and the
//! broker-name list of CONTROLLER_GET_SYNC_STATE_DATA.
//!
//! Controller bodies use fastjson's default dialect: alphabetical
//! properties, unquoted integer map keys (`{1:"10.0.0.1:30911"}`), null
//! properties left out.

use std::collections::{BTreeMap, BTreeSet};

use rmq_wire::{lenient, lenient_bean};
use serde::{Deserialize, Serialize};

use crate::java_json::JavaJson;
use crate::member_group::BrokerMemberGroup;

/// The master and the replicas in sync with it, with the epoch that
/// versions the set (`SyncStateSet`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SyncStateSet {
    /// Controller ids; sorted (Java writes a `HashSet`, which for small ids
    /// iterates in ascending order).
    #[serde(deserialize_with = "lenient::value")]
    pub sync_state_set: BTreeSet<i64>,
    /// Grows by one with every change of the set.
    #[serde(deserialize_with = "lenient::value")]
    pub sync_state_set_epoch: i32,
}

impl JavaJson for SyncStateSet {}

/// The CONTROLLER_ELECT_MASTER response body (`ElectMasterResponseBody`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ElectMasterResponseBody {
    /// Every registered replica of the set; only when a new master was
    /// elected.
    #[serde(
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub broker_member_group: Option<BrokerMemberGroup>,
    /// The SSS after the election: `{new master}`, or the current set when
    /// the old master is still alive.
    #[serde(deserialize_with = "lenient::value")]
    pub sync_state_set: BTreeSet<i64>,
}

impl JavaJson for ElectMasterResponseBody {}

/// One replica in CONTROLLER_GET_SYNC_STATE_DATA (`ReplicaIdentity`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReplicaIdentity {
    /// Whether it heartbeats the answering controller in time.
    #[serde(deserialize_with = "lenient::value")]
    pub alive: bool,
    /// Its address.
    #[serde(deserialize_with = "lenient::value")]
    pub broker_address: String,
    /// Its controller id.
    #[serde(deserialize_with = "lenient::value")]
    pub broker_id: i64,
    /// The broker set.
    #[serde(deserialize_with = "lenient::value")]
    pub broker_name: String,
}

/// One broker set in CONTROLLER_GET_SYNC_STATE_DATA (`ReplicasInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReplicasInfo {
    /// Registered replicas in the SSS.
    #[serde(deserialize_with = "lenient::value")]
    pub in_sync_replicas: Vec<ReplicaIdentity>,
    /// The master's address; absent without a master.
    #[serde(
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub master_address: Option<String>,
    /// The master's controller id; absent without a master.
    #[serde(
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub master_broker_id: Option<i64>,
    /// The master epoch.
    #[serde(deserialize_with = "lenient::value")]
    pub master_epoch: i32,
    /// Registered replicas outside the SSS.
    #[serde(deserialize_with = "lenient::value")]
    pub not_in_sync_replicas: Vec<ReplicaIdentity>,
    /// The SSS epoch.
    #[serde(deserialize_with = "lenient::value")]
    pub sync_state_set_epoch: i32,
}

/// The CONTROLLER_GET_SYNC_STATE_DATA response body (`BrokerReplicasInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BrokerReplicasInfo {
    /// Broker name → its replicas; sets the controller does not know are
    /// left out.
    #[serde(deserialize_with = "lenient::value")]
    pub replicas_info_table: BTreeMap<String, ReplicasInfo>,
}

impl JavaJson for BrokerReplicasInfo {}

/// The CONTROLLER_GET_SYNC_STATE_DATA request body: a JSON array of broker
/// names (`["broker-a","broker-b"]`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BrokerNames(#[serde(deserialize_with = "lenient::value")] pub Vec<String>);

impl JavaJson for BrokerNames {}

lenient_bean!(
    SyncStateSet,
    ElectMasterResponseBody,
    ReplicaIdentity,
    ReplicasInfo,
    BrokerReplicasInfo
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dialect;

    fn text<T: JavaJson>(body: &T) -> String {
        String::from_utf8(body.to_json(Dialect::Default)).unwrap()
    }

    #[test]
    fn sync_state_set_as_java_writes_it() {
        let body = SyncStateSet {
            sync_state_set: [1, 2].into(),
            sync_state_set_epoch: 2,
        };
        let json = r#"{"syncStateSet":[1,2],"syncStateSetEpoch":2}"#;
        assert_eq!(text(&body), json);
        assert_eq!(SyncStateSet::from_json(json.as_bytes()).unwrap(), body);
        assert_eq!(
            text(&SyncStateSet::default()),
            r#"{"syncStateSet":[],"syncStateSetEpoch":0}"#
        );
    }

    #[test]
    fn elect_master_body_with_and_without_the_member_group() {
        let elected = ElectMasterResponseBody {
            broker_member_group: Some(BrokerMemberGroup {
                broker_addrs: [(1, "10.0.0.1:30911".into()), (2, "10.0.0.2:30911".into())].into(),
                broker_name: "broker-a".into(),
                cluster: "DefaultCluster".into(),
            }),
            sync_state_set: [2].into(),
        };
        let json = r#"{"brokerMemberGroup":{"brokerAddrs":{1:"10.0.0.1:30911",2:"10.0.0.2:30911"},"brokerName":"broker-a","cluster":"DefaultCluster"},"syncStateSet":[2]}"#;
        assert_eq!(text(&elected), json);
        assert_eq!(
            ElectMasterResponseBody::from_json(json.as_bytes()).unwrap(),
            elected
        );
        let still = ElectMasterResponseBody {
            broker_member_group: None,
            sync_state_set: [1, 2].into(),
        };
        assert_eq!(text(&still), r#"{"syncStateSet":[1,2]}"#);
    }

    #[test]
    fn broker_replicas_info_as_java_writes_it() {
        let replica = |alive, addr: &str, id| ReplicaIdentity {
            alive,
            broker_address: addr.into(),
            broker_id: id,
            broker_name: "broker-a".into(),
        };
        let body = BrokerReplicasInfo {
            replicas_info_table: [(
                "broker-a".to_string(),
                ReplicasInfo {
                    in_sync_replicas: vec![replica(true, "10.0.0.2:30911", 2)],
                    master_address: Some("10.0.0.2:30911".into()),
                    master_broker_id: Some(2),
                    master_epoch: 2,
                    not_in_sync_replicas: vec![replica(false, "10.0.0.1:30911", 1)],
                    sync_state_set_epoch: 3,
                },
            )]
            .into(),
        };
        let json = r#"{"replicasInfoTable":{"broker-a":{"inSyncReplicas":[{"alive":true,"brokerAddress":"10.0.0.2:30911","brokerId":2,"brokerName":"broker-a"}],"masterAddress":"10.0.0.2:30911","masterBrokerId":2,"masterEpoch":2,"notInSyncReplicas":[{"alive":false,"brokerAddress":"10.0.0.1:30911","brokerId":1,"brokerName":"broker-a"}],"syncStateSetEpoch":3}}}"#;
        assert_eq!(text(&body), json);
        assert_eq!(
            BrokerReplicasInfo::from_json(json.as_bytes()).unwrap(),
            body
        );
    }

    #[test]
    fn broker_names_are_a_json_array() {
        let names = BrokerNames(vec!["broker-a".into(), "broker-b".into()]);
        assert_eq!(text(&names), r#"["broker-a","broker-b"]"#);
        assert_eq!(
            BrokerNames::from_json(br#"["broker-a","broker-b"]"#).unwrap(),
            names
        );
        assert_eq!(BrokerNames::from_json(b"[]").unwrap(), BrokerNames(vec![]));
    }
}
