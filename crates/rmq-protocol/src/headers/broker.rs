//! Headers of the broker-lifecycle requests: REGISTER_BROKER (103),
//! UNREGISTER_BROKER (104), BROKER_HEARTBEAT (904), QUERY_DATA_VERSION (322)
//! and the NameServer-initiated NOTIFY_MIN_BROKER_ID_CHANGE (905).

use super::ext_header;

ext_header! {
    /// REGISTER_BROKER request (`RegisterBrokerRequestHeader`).
    pub struct RegisterBrokerRequestHeader {
        /// The broker group.
        broker_name: String = "brokerName" (required),
        /// `ip:port` of the broker's main listener.
        broker_addr: String = "brokerAddr" (required),
        /// The cluster.
        cluster_name: String = "clusterName" (required),
        /// `ip:port` of the broker's HA service.
        ha_server_addr: String = "haServerAddr" (required),
        /// 0 = master, > 0 = slave.
        broker_id: i64 = "brokerId" (required),
        /// Per-broker expiry; `None` = the NameServer default (120 s).
        heartbeat_timeout_millis: Option<i64> = "heartbeatTimeoutMillis" (optional),
        /// `None` marks a 4.x ("old version") broker.
        enable_acting_master: Option<bool> = "enableActingMaster" (flag),
        /// Whether the body is the zlib form.
        compressed: bool = "compressed" (boolean),
        /// Masked CRC-32 of the body; 0 = not checked.
        body_crc32: i32 = "bodyCrc32" (zero),
        /// The broker's zone (extra key `__ZONE_NAME`).
        zone_name: Option<String> = "__ZONE_NAME" (optional),
    }
}

ext_header! {
    /// REGISTER_BROKER response (`RegisterBrokerResponseHeader`): set only for
    /// a slave whose master is registered and alive.
    pub struct RegisterBrokerResponseHeader {
        /// The master's HA address.
        ha_server_addr: Option<String> = "haServerAddr" (optional),
        /// The master's address.
        master_addr: Option<String> = "masterAddr" (optional),
    }
}

ext_header! {
    /// UNREGISTER_BROKER request (`UnRegisterBrokerRequestHeader`).
    pub struct UnregisterBrokerRequestHeader {
        /// The broker group.
        broker_name: String = "brokerName" (required),
        /// The leaving broker's address.
        broker_addr: String = "brokerAddr" (required),
        /// The cluster.
        cluster_name: String = "clusterName" (required),
        /// The leaving broker's id.
        broker_id: i64 = "brokerId" (required),
    }
}

ext_header! {
    /// BROKER_HEARTBEAT request (`BrokerHeartbeatRequestHeader`), to a
    /// NameServer (which uses `cluster_name` and `broker_addr`) or to a
    /// controller (which uses them all).
    pub struct BrokerHeartbeatRequestHeader {
        /// The cluster.
        cluster_name: String = "clusterName" (required),
        /// The broker's address.
        broker_addr: String = "brokerAddr" (required),
        /// The broker group.
        broker_name: String = "brokerName" (required),
        /// The broker's controller id (controller mode).
        broker_id: Option<i64> = "brokerId" (optional),
        /// The last epoch in the broker's epoch file (controller mode).
        epoch: Option<i32> = "epoch" (optional),
        /// The broker's commit-log max offset (controller mode).
        max_offset: Option<i64> = "maxOffset" (optional),
        /// The broker's confirm offset (controller mode).
        confirm_offset: Option<i64> = "confirmOffset" (optional),
        /// How long the controller waits for the next heartbeat, ms (note
        /// Java's spelling `Mills`).
        heartbeat_timeout_mills: Option<i64> = "heartbeatTimeoutMills" (optional),
        /// Lower wins among equally caught-up replicas (controller mode).
        election_priority: Option<i32> = "electionPriority" (optional),
    }
}

ext_header! {
    /// QUERY_DATA_VERSION request (`QueryDataVersionRequestHeader`); the body
    /// is the broker's `DataVersion`. Only `cluster_name` and `broker_addr`
    /// are used.
    pub struct QueryDataVersionRequestHeader {
        /// The broker group.
        broker_name: String = "brokerName" (required),
        /// The broker's address.
        broker_addr: String = "brokerAddr" (required),
        /// The cluster.
        cluster_name: String = "clusterName" (required),
        /// The broker's id.
        broker_id: i64 = "brokerId" (required),
    }
}

ext_header! {
    /// QUERY_DATA_VERSION response (`QueryDataVersionResponseHeader`).
    pub struct QueryDataVersionResponseHeader {
        /// Whether the broker's registration is unknown or its version differs;
        /// always written.
        changed: bool = "changed" (boolean),
    }
}

ext_header! {
    /// NOTIFY_MIN_BROKER_ID_CHANGE, sent one-way by the NameServer to brokers
    /// (`NotifyMinBrokerIdChangeRequestHeader`). All fields nullable.
    pub struct NotifyMinBrokerIdChangeRequestHeader {
        /// Smallest broker id now in the group.
        min_broker_id: Option<i64> = "minBrokerId" (optional),
        /// Address of that id.
        min_broker_addr: Option<String> = "minBrokerAddr" (optional),
        /// The address that went away (unregistration case).
        offline_broker_addr: Option<String> = "offlineBrokerAddr" (optional),
        /// HA address of the registering broker (registration case).
        ha_broker_addr: Option<String> = "haBrokerAddr" (optional),
        /// Never set by the NameServer.
        broker_name: Option<String> = "brokerName" (optional),
    }
}

#[cfg(test)]
mod tests {
    use rmq_wire::{ExtFields, FromExtFields, HeaderError};

    use super::*;
    use crate::headers::test_support::{ext, ext_of, round_trip};

    #[test]
    fn register_broker_request_as_a_5x_broker_sends_it() {
        let ext = ext_of(
            r#"{"code":103,"extFields":{"brokerId":"0","bodyCrc32":"1779474218","clusterName":"DefaultCluster","brokerAddr":"127.0.0.1:10911","enableActingMaster":"false","haServerAddr":"127.0.0.1:10912","compressed":"false","brokerName":"broker-a"},"flag":0,"language":"JAVA","opaque":2,"serializeTypeCurrentRPC":"JSON","version":479}"#,
        );
        let header = RegisterBrokerRequestHeader::from_ext_fields(&ext).unwrap();
        assert_eq!(
            header,
            RegisterBrokerRequestHeader {
                broker_name: "broker-a".into(),
                broker_addr: "127.0.0.1:10911".into(),
                cluster_name: "DefaultCluster".into(),
                ha_server_addr: "127.0.0.1:10912".into(),
                broker_id: 0,
                heartbeat_timeout_millis: None,
                enable_acting_master: Some(false),
                compressed: false,
                body_crc32: 1_779_474_218,
                zone_name: None,
            }
        );
        assert_eq!(round_trip(&header), ext);
    }

    #[test]
    fn register_broker_request_leniency_and_errors() {
        let mut map = ext(&[
            ("brokerName", "b"),
            ("brokerAddr", "a"),
            ("clusterName", "c"),
            ("haServerAddr", "h"),
            ("brokerId", "1"),
            ("heartbeatTimeoutMillis", "ten"),
            ("compressed", "TRUE"),
            ("bodyCrc32", "x"),
            ("__ZONE_NAME", "zone-1"),
        ]);
        let header = RegisterBrokerRequestHeader::from_ext_fields(&map).unwrap();
        assert_eq!(header.heartbeat_timeout_millis, None);
        assert_eq!(header.enable_acting_master, None);
        assert!(header.compressed);
        assert_eq!(header.body_crc32, 0);
        assert_eq!(header.zone_name.as_deref(), Some("zone-1"));
        let full = RegisterBrokerRequestHeader {
            heartbeat_timeout_millis: Some(10_000),
            ..header
        };
        round_trip(&full);

        map.insert("brokerId".into(), "one".into());
        assert!(matches!(
            RegisterBrokerRequestHeader::from_ext_fields(&map),
            Err(HeaderError::Invalid {
                field: "brokerId",
                ..
            })
        ));
        map.remove("brokerId");
        assert_eq!(
            RegisterBrokerRequestHeader::from_ext_fields(&map),
            Err(HeaderError::Missing("brokerId"))
        );
        assert_eq!(
            RegisterBrokerRequestHeader::from_ext_fields(&ExtFields::new()),
            Err(HeaderError::Missing("brokerName"))
        );
    }

    #[test]
    fn register_broker_response_empty_and_slave() {
        assert!(round_trip(&RegisterBrokerResponseHeader::default()).is_empty());
        let slave = RegisterBrokerResponseHeader {
            ha_server_addr: Some("127.0.0.1:10912".into()),
            master_addr: Some("127.0.0.1:10911".into()),
        };
        let ext = ext_of(
            r#"{"code":0,"extFields":{"haServerAddr":"127.0.0.1:10912","masterAddr":"127.0.0.1:10911"},"flag":1}"#,
        );
        assert_eq!(round_trip(&slave), ext);
    }

    #[test]
    fn unregister_and_heartbeat_as_a_5x_broker_sends_them() {
        let ext = ext_of(
            r#"{"code":104,"extFields":{"brokerId":"0","clusterName":"DefaultCluster","brokerAddr":"127.0.0.1:10911","brokerName":"broker-a"},"flag":0,"language":"JAVA","opaque":44,"serializeTypeCurrentRPC":"JSON","version":479}"#,
        );
        let header = UnregisterBrokerRequestHeader::from_ext_fields(&ext).unwrap();
        assert_eq!(
            (header.broker_id, header.broker_name.as_str()),
            (0, "broker-a")
        );
        assert_eq!(round_trip(&header), ext);

        let ext = ext_of(
            r#"{"code":904,"extFields":{"clusterName":"DefaultCluster","brokerAddr":"127.0.0.1:10911","brokerName":"broker-a"},"flag":2,"language":"JAVA","opaque":43,"serializeTypeCurrentRPC":"JSON","version":479}"#,
        );
        let header = BrokerHeartbeatRequestHeader::from_ext_fields(&ext).unwrap();
        assert_eq!(header.cluster_name, "DefaultCluster");
        assert_eq!(header.epoch, None);
        assert_eq!(round_trip(&header), ext);
        round_trip(&BrokerHeartbeatRequestHeader {
            epoch: Some(3),
            max_offset: Some(-1),
            ..header
        });
    }

    #[test]
    fn query_data_version_both_ways() {
        let header = QueryDataVersionRequestHeader {
            broker_name: "broker-a".into(),
            broker_addr: "127.0.0.1:10911".into(),
            cluster_name: "DefaultCluster".into(),
            broker_id: 0,
        };
        assert_eq!(round_trip(&header).len(), 4);
        let ext = ext_of(r#"{"code":0,"extFields":{"changed":"false"},"flag":1}"#);
        let response = QueryDataVersionResponseHeader::from_ext_fields(&ext).unwrap();
        assert!(!response.changed);
        assert_eq!(round_trip(&response), ext);
        round_trip(&QueryDataVersionResponseHeader { changed: true });
    }

    #[test]
    fn notify_min_broker_id_change_as_java_sends_it() {
        let ext = ext_of(
            r#"{"code":905,"extFields":{"offlineBrokerAddr":"127.0.0.1:10911","minBrokerAddr":"127.0.0.1:10921","minBrokerId":"1"},"flag":2,"language":"JAVA","opaque":42,"serializeTypeCurrentRPC":"JSON","version":479}"#,
        );
        let header = NotifyMinBrokerIdChangeRequestHeader::from_ext_fields(&ext).unwrap();
        assert_eq!(header.min_broker_id, Some(1));
        assert_eq!(header.ha_broker_addr, None);
        assert_eq!(round_trip(&header), ext);
        assert_eq!(
            NotifyMinBrokerIdChangeRequestHeader::from_ext_fields(&ExtFields::new()).unwrap(),
            NotifyMinBrokerIdChangeRequestHeader::default()
        );
    }
}
