//! Headers of Waymark's NameServer cluster (docs/protocol-extensions.md):
//! WAYMARK_PULL_REGISTRATION (61010), which one Waymark NameServer sends
//! another and no Java peer sends.

use super::ext_header;

ext_header! {
    /// WAYMARK_PULL_REGISTRATION request: the broker, by the key of the
    /// NameServer's liveness table.
    pub struct PullRegistrationRequestHeader {
        /// The broker's cluster.
        cluster_name: String = "clusterName" (required),
        /// The broker's address.
        broker_addr: String = "brokerAddr" (required),
        /// `true`: a copy the node holds as relayed will do (asked of an up
        /// node when the only node that held the broker directly is down);
        /// absent: only a broker registered with the node directly.
        relayed: Option<bool> = "relayed" (flag),
        /// The incarnation asked (its gossip generation): a node that has
        /// restarted since answers that it is another one.
        generation: Option<i64> = "generation" (optional),
    }
}

ext_header! {
    /// WAYMARK_PULL_REGISTRATION response (SUCCESS): the registration's
    /// header fields as the holder keeps them; the body is the
    /// registration's topics as a REGISTER_BROKER body.
    pub struct PullRegistrationResponseHeader {
        /// Broker (group) name.
        broker_name: String = "brokerName" (required),
        /// Broker id: 0 for a master.
        broker_id: i64 = "brokerId" (required),
        /// The broker's HA address.
        ha_server_addr: String = "haServerAddr" (required),
        /// The zone it registered with, if any.
        zone_name: Option<String> = "zoneName" (optional),
        /// Its heartbeat timeout, if it sent one.
        heartbeat_timeout_millis: Option<i64> = "heartbeatTimeoutMillis" (optional),
        /// `enableActingMaster` as it sent it (absent: a 4.x broker).
        enable_acting_master: Option<bool> = "enableActingMaster" (flag),
        /// The registering broker's release ordinal (its request's version).
        client_version: i32 = "clientVersion" (zero),
        /// The holder's digest of this registration, as it publishes it in
        /// gossip: the puller checks it against the digest it pulled for.
        digest: String = "digest" (required),
    }
}

#[cfg(test)]
mod tests {
    use rmq_wire::{ExtFields, FromExtFields, ToExtFields};

    use super::*;

    #[test]
    fn the_request_names_its_broker_and_refuses_a_missing_field() {
        let header = PullRegistrationRequestHeader {
            cluster_name: "DefaultCluster".into(),
            broker_addr: "10.0.0.1:10911".into(),
            relayed: Some(true),
            generation: Some(1_796_529_487_174),
        };
        let mut fields = ExtFields::new();
        header.to_ext_fields(&mut fields);
        assert_eq!(
            PullRegistrationRequestHeader::from_ext_fields(&fields).unwrap(),
            header
        );
        let mut missing = ExtFields::new();
        missing.insert("clusterName".into(), "DefaultCluster".into());
        let error = PullRegistrationRequestHeader::from_ext_fields(&missing).unwrap_err();
        assert!(error.to_string().contains("brokerAddr"), "{error}");
    }

    #[test]
    fn the_response_round_trips_with_and_without_its_optional_fields() {
        let full = PullRegistrationResponseHeader {
            broker_name: "broker-a".into(),
            broker_id: 1,
            ha_server_addr: "10.0.0.1:10912".into(),
            zone_name: Some("zone-1".into()),
            heartbeat_timeout_millis: Some(30_000),
            enable_acting_master: Some(true),
            client_version: 479,
            digest: r#"{"q":1}"#.into(),
        };
        let bare = PullRegistrationResponseHeader {
            zone_name: None,
            heartbeat_timeout_millis: None,
            enable_acting_master: None,
            client_version: 0,
            ..full.clone()
        };
        for header in [full, bare] {
            let mut fields = ExtFields::new();
            header.to_ext_fields(&mut fields);
            assert_eq!(
                PullRegistrationResponseHeader::from_ext_fields(&fields).unwrap(),
                header
            );
        }
    }
}
