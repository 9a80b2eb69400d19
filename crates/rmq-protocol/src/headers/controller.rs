//! Headers of the AutoSwitch-HA controller's requests:
//! codes 1001–1013, and NOTIFY_BROKER_ROLE_CHANGED (1008) that the controller
//! sends to brokers. BROKER_HEARTBEAT (904) to a controller uses
//! [`super::BrokerHeartbeatRequestHeader`].
//!
//! Fields the Java controller dereferences without a null check are
//! `required` here: Java answers their absence with a NullPointerException
//! remark, Waymark with an error naming the field. Fields with a Java
//! initializer are `optional` and the controller applies the initializer.

use super::ext_header;

ext_header! {
    /// CONTROLLER_ALTER_SYNC_STATE_SET request (`AlterSyncStateSetRequestHeader`);
    /// the body is the proposed `SyncStateSet` with the current SSS epoch.
    pub struct AlterSyncStateSetRequestHeader {
        /// The broker set.
        broker_name: String = "brokerName" (required),
        /// The master proposing the change.
        master_broker_id: i64 = "masterBrokerId" (required),
        /// The master epoch the proposer holds.
        master_epoch: i32 = "masterEpoch" (required),
        /// Sender's wall clock, ms.
        invoke_time: i64 = "invokeTime" (zero),
    }
}

ext_header! {
    /// CONTROLLER_ALTER_SYNC_STATE_SET response (`AlterSyncStateSetResponseHeader`);
    /// `0` on every refusal, as Java writes its `int` field.
    pub struct AlterSyncStateSetResponseHeader {
        /// The SSS epoch after the change.
        new_sync_state_set_epoch: i32 = "newSyncStateSetEpoch" (zero),
    }
}

ext_header! {
    /// CONTROLLER_ELECT_MASTER request (`ElectMasterRequestHeader`). Java's
    /// initializers: cluster and broker name `""`, broker id `-1` (also for a
    /// value that does not parse), `designateElect` false.
    pub struct ElectMasterRequestHeader {
        /// The cluster.
        cluster_name: Option<String> = "clusterName" (optional),
        /// The broker set.
        broker_name: Option<String> = "brokerName" (optional),
        /// The requesting (or designated) broker's controller id; `-1` or
        /// absent for a controller-triggered election.
        broker_id: Option<i64> = "brokerId" (optional),
        /// Elect exactly `broker_id` (an admin's `electMaster`).
        designate_elect: Option<bool> = "designateElect" (flag),
        /// Sender's wall clock, ms.
        invoke_time: Option<i64> = "invokeTime" (optional),
    }
}

ext_header! {
    /// CONTROLLER_ELECT_MASTER response (`ElectMasterResponseHeader`); also
    /// the master fields of MASTER_STILL_EXIST.
    pub struct ElectMasterResponseHeader {
        /// The master's controller id.
        master_broker_id: Option<i64> = "masterBrokerId" (optional),
        /// The master's address.
        master_address: Option<String> = "masterAddress" (optional),
        /// The master epoch.
        master_epoch: Option<i32> = "masterEpoch" (optional),
        /// The SSS epoch.
        sync_state_set_epoch: Option<i32> = "syncStateSetEpoch" (optional),
    }
}

ext_header! {
    /// CONTROLLER_REGISTER_BROKER request (`RegisterBrokerToControllerRequestHeader`).
    pub struct RegisterBrokerToControllerRequestHeader {
        /// The cluster.
        cluster_name: String = "clusterName" (required),
        /// The broker set.
        broker_name: String = "brokerName" (required),
        /// The broker's controller id.
        broker_id: i64 = "brokerId" (required),
        /// The broker's address (`ip:port`).
        broker_address: String = "brokerAddress" (required),
        /// Sender's wall clock, ms.
        invoke_time: i64 = "invokeTime" (zero),
    }
}

ext_header! {
    /// CONTROLLER_REGISTER_BROKER response
    /// (`RegisterBrokerToControllerResponseHeader`): the names always, the
    /// master fields only when the set has an alive master.
    pub struct RegisterBrokerToControllerResponseHeader {
        /// The cluster.
        cluster_name: Option<String> = "clusterName" (optional),
        /// The broker set.
        broker_name: Option<String> = "brokerName" (optional),
        /// The master's controller id.
        master_broker_id: Option<i64> = "masterBrokerId" (optional),
        /// The master's address.
        master_address: Option<String> = "masterAddress" (optional),
        /// The master epoch.
        master_epoch: Option<i32> = "masterEpoch" (optional),
        /// The SSS epoch.
        sync_state_set_epoch: Option<i32> = "syncStateSetEpoch" (optional),
    }
}

ext_header! {
    /// CONTROLLER_GET_REPLICA_INFO request (`GetReplicaInfoRequestHeader`).
    pub struct GetReplicaInfoRequestHeader {
        /// The broker set.
        broker_name: String = "brokerName" (required),
    }
}

ext_header! {
    /// CONTROLLER_GET_REPLICA_INFO response (`GetReplicaInfoResponseHeader`);
    /// the master fields are absent while the set has no master.
    pub struct GetReplicaInfoResponseHeader {
        /// The master's controller id.
        master_broker_id: Option<i64> = "masterBrokerId" (optional),
        /// The master's address.
        master_address: Option<String> = "masterAddress" (optional),
        /// The master epoch.
        master_epoch: Option<i32> = "masterEpoch" (optional),
    }
}

ext_header! {
    /// CONTROLLER_GET_METADATA_INFO response (`GetMetaDataResponseHeader`).
    pub struct GetMetaDataResponseHeader {
        /// `controllerDLegerGroup`.
        group: Option<String> = "group" (optional),
        /// The Raft leader's peer id (`n0`).
        controller_leader_id: Option<String> = "controllerLeaderId" (optional),
        /// The Raft leader's address; absent while no leader is known.
        controller_leader_address: Option<String> = "controllerLeaderAddress" (optional),
        /// Whether the answering node is the leader.
        is_leader: bool = "isLeader" (boolean),
        /// Every peer, `n0:127.0.0.1:9878;n1:…;` (trailing `;`).
        peers: Option<String> = "peers" (optional),
    }
}

ext_header! {
    /// CLEAN_BROKER_DATA request (`CleanControllerBrokerDataRequestHeader`).
    pub struct CleanControllerBrokerDataRequestHeader {
        /// The cluster.
        cluster_name: Option<String> = "clusterName" (optional),
        /// The broker set.
        broker_name: String = "brokerName" (required),
        /// Controller ids to remove, `1;2`; blank: the whole set.
        broker_controller_ids_to_clean: Option<String> = "brokerControllerIdsToClean" (optional),
        /// Remove the whole set even with live members (ids are then ignored).
        is_clean_living_broker: bool = "isCleanLivingBroker" (boolean),
        /// Sender's wall clock, ms.
        invoke_time: i64 = "invokeTime" (zero),
    }
}

ext_header! {
    /// CONTROLLER_GET_NEXT_BROKER_ID request (`GetNextBrokerIdRequestHeader`).
    pub struct GetNextBrokerIdRequestHeader {
        /// The cluster.
        cluster_name: String = "clusterName" (required),
        /// The broker set.
        broker_name: String = "brokerName" (required),
    }
}

ext_header! {
    /// CONTROLLER_GET_NEXT_BROKER_ID response (`GetNextBrokerIdResponseHeader`).
    pub struct GetNextBrokerIdResponseHeader {
        /// Echoed.
        cluster_name: Option<String> = "clusterName" (optional),
        /// Echoed.
        broker_name: Option<String> = "brokerName" (optional),
        /// The id a new broker of the set should apply for.
        next_broker_id: Option<i64> = "nextBrokerId" (optional),
    }
}

ext_header! {
    /// CONTROLLER_APPLY_BROKER_ID request (`ApplyBrokerIdRequestHeader`).
    pub struct ApplyBrokerIdRequestHeader {
        /// The cluster.
        cluster_name: String = "clusterName" (required),
        /// The broker set.
        broker_name: String = "brokerName" (required),
        /// The id applied for.
        applied_broker_id: i64 = "appliedBrokerId" (required),
        /// `<brokerAddr>;<wall ms>`: makes a repeated apply by the same broker
        /// recognisable.
        register_check_code: String = "registerCheckCode" (required),
    }
}

ext_header! {
    /// CONTROLLER_APPLY_BROKER_ID response (`ApplyBrokerIdResponseHeader`).
    pub struct ApplyBrokerIdResponseHeader {
        /// Echoed.
        cluster_name: Option<String> = "clusterName" (optional),
        /// Echoed.
        broker_name: Option<String> = "brokerName" (optional),
    }
}

ext_header! {
    /// NOTIFY_BROKER_ROLE_CHANGED request (`NotifyBrokerRoleChangedRequestHeader`),
    /// one-way from the controller to each alive member of a set after an
    /// election; the body is the new `SyncStateSet`.
    pub struct NotifyBrokerRoleChangedRequestHeader {
        /// The new master's address.
        master_address: Option<String> = "masterAddress" (optional),
        /// The new master epoch.
        master_epoch: Option<i32> = "masterEpoch" (optional),
        /// The new SSS epoch.
        sync_state_set_epoch: Option<i32> = "syncStateSetEpoch" (optional),
        /// The new master's controller id.
        master_broker_id: Option<i64> = "masterBrokerId" (optional),
    }
}

#[cfg(test)]
mod tests {
    use rmq_wire::{FromExtFields, HeaderError, ToExtFields};

    use super::*;
    use crate::headers::test_support::{ext, ext_of, round_trip};

    #[test]
    fn elect_master_request_header() {
        let header = ElectMasterRequestHeader::from_ext_fields(&ext_of(
            r#"{"code":1002,"extFields":{"brokerId":"1","brokerName":"broker-a","clusterName":"DefaultCluster","designateElect":"false","invokeTime":"1700000000000"},"flag":0}"#,
        ))
        .unwrap();
        assert_eq!(
            header,
            ElectMasterRequestHeader {
                cluster_name: Some("DefaultCluster".into()),
                broker_name: Some("broker-a".into()),
                broker_id: Some(1),
                designate_elect: Some(false),
                invoke_time: Some(1_700_000_000_000),
            }
        );
        round_trip(&header);
        // Java reads an unparsable id as its initializer, -1.
        let odd = ElectMasterRequestHeader::from_ext_fields(&ext(&[("brokerId", "abc")])).unwrap();
        assert_eq!(odd.broker_id, None);
    }

    #[test]
    fn metadata_response_header() {
        let header = GetMetaDataResponseHeader {
            group: Some("group1".into()),
            controller_leader_id: Some("n0".into()),
            controller_leader_address: Some("127.0.0.1:9878".into()),
            is_leader: true,
            peers: Some("n0:127.0.0.1:9878;n1:127.0.0.1:9868;n2:127.0.0.1:9858;".into()),
        };
        let mut written = rmq_wire::ExtFields::new();
        header.to_ext_fields(&mut written);
        assert_eq!(
            written,
            ext_of(
                r#"{"code":0,"extFields":{"controllerLeaderAddress":"127.0.0.1:9878","controllerLeaderId":"n0","group":"group1","isLeader":"true","peers":"n0:127.0.0.1:9878;n1:127.0.0.1:9868;n2:127.0.0.1:9858;"},"flag":1}"#
            )
        );
    }

    #[test]
    fn alter_sync_state_set_refusal_still_writes_the_epoch() {
        let mut written = rmq_wire::ExtFields::new();
        AlterSyncStateSetResponseHeader::default().to_ext_fields(&mut written);
        assert_eq!(written, ext(&[("newSyncStateSetEpoch", "0")]));
    }

    #[test]
    fn required_fields_are_named_when_missing() {
        let missing = ApplyBrokerIdRequestHeader::from_ext_fields(&ext(&[
            ("clusterName", "c"),
            ("brokerName", "b"),
            ("appliedBrokerId", "1"),
        ]))
        .unwrap_err();
        assert_eq!(missing, HeaderError::Missing("registerCheckCode"));
        let clean = CleanControllerBrokerDataRequestHeader::from_ext_fields(&ext(&[
            ("brokerName", "broker-a"),
            ("brokerControllerIdsToClean", "1;2"),
            ("isCleanLivingBroker", "true"),
        ]))
        .unwrap();
        assert!(clean.is_clean_living_broker);
        assert_eq!(clean.broker_controller_ids_to_clean.as_deref(), Some("1;2"));
        assert_eq!(clean.invoke_time, 0);
    }

    #[test]
    fn every_header_round_trips() {
        round_trip(&AlterSyncStateSetRequestHeader {
            broker_name: "broker-a".into(),
            master_broker_id: 1,
            master_epoch: 2,
            invoke_time: 1_700_000_000_000,
        });
        round_trip(&RegisterBrokerToControllerRequestHeader {
            cluster_name: "DefaultCluster".into(),
            broker_name: "broker-a".into(),
            broker_id: 2,
            broker_address: "10.0.0.2:30911".into(),
            invoke_time: 7,
        });
        round_trip(&RegisterBrokerToControllerResponseHeader {
            cluster_name: Some("DefaultCluster".into()),
            broker_name: Some("broker-a".into()),
            master_broker_id: Some(1),
            master_address: Some("10.0.0.1:30911".into()),
            master_epoch: Some(1),
            sync_state_set_epoch: Some(1),
        });
        round_trip(&GetNextBrokerIdResponseHeader {
            cluster_name: Some("c".into()),
            broker_name: Some("b".into()),
            next_broker_id: Some(3),
        });
        round_trip(&NotifyBrokerRoleChangedRequestHeader {
            master_address: Some("10.0.0.2:30911".into()),
            master_epoch: Some(2),
            sync_state_set_epoch: Some(3),
            master_broker_id: Some(2),
        });
        assert_eq!(
            round_trip(&GetReplicaInfoResponseHeader::default()).len(),
            0
        );
    }
}
