//! The body of WAYMARK_GET_CLUSTER_STATUS (61011, docs/protocol-extensions.md),
//! also served as `GET /api/v1/cluster`: one Waymark NameServer's view of
//! its NameServer cluster, its members as it sees them and the source of
//! every broker it holds.
//!
//! Standard JSON (serde), not fastjson: no Java peer sends or reads it.
//! Readers ignore fields they do not know, and take a liveness or source
//! they do not know for `unknown`, so that a later Waymark can say more.

use serde::{Deserialize, Serialize};

/// One NameServer's view of its cluster. With the cluster off the HTTP API
/// answers `{"enabled":false}` (and WAYMARK_GET_CLUSTER_STATUS
/// REQUEST_CODE_NOT_SUPPORTED), which reads as the default.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterStatusBody {
    /// Whether this NameServer is a cluster node (`clusterGossipAddr` set).
    pub enabled: bool,
    /// This node; `None` with the cluster off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<NodeStatus>,
    /// The other members it knows (older incarnations of a restarted node
    /// included, until gossip forgets them).
    #[serde(default)]
    pub members: Vec<MemberStatus>,
    /// Every broker in its route table, with where it came from.
    #[serde(default)]
    pub brokers: Vec<BrokerStatus>,
}

/// The answering node.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeStatus {
    /// Its name in the cluster: the remoting address peers pull from
    /// (`clusterAdvertiseAddr`, by default `bindAddress:listenPort`).
    pub name: String,
    /// Its incarnation: a restarted node is a new member.
    pub generation: u64,
    /// Whether it serves routes (bootstrap over).
    pub ready: bool,
    /// The address it gossips on.
    pub gossip_addr: String,
    /// `clusterId`: nodes of different ids never merge.
    pub cluster_id: String,
    /// Brokers registered with it directly.
    pub direct_brokers: usize,
    /// Brokers it holds as relayed from another node.
    pub relayed_brokers: usize,
    /// Pulls of registrations under way.
    pub pulls_in_flight: usize,
    /// Time since it last held every live member's brokers as they publish
    /// them; `None`: not yet since it started.
    pub since_agreement_millis: Option<u64>,
}

/// Another member, as the answering node sees it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberStatus {
    /// Its name (remoting address).
    pub name: String,
    /// Its incarnation.
    pub generation: u64,
    /// Its gossip address.
    pub gossip_addr: String,
    /// Its remoting address, once it published it.
    pub remoting_addr: Option<String>,
    /// Whether the failure detector counts it up.
    pub liveness: Liveness,
    /// Whether it reports itself ready.
    pub ready: bool,
    /// Brokers it publishes as registered with it directly.
    pub direct_brokers: usize,
    /// Of those, how many the answering node does not hold as it should
    /// yet (a pull to make or under way).
    pub behind: usize,
}

/// A member's liveness as the answering node's failure detector judges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Liveness {
    /// Heard from recently.
    Live,
    /// Not heard from for longer than the detector allows.
    Dead,
    /// Known from others' gossip, not judged yet (also what a reader makes
    /// of a value it does not know).
    #[default]
    #[serde(other)]
    Unknown,
}

impl Liveness {
    /// The state's name, as on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Liveness::Live => "live",
            Liveness::Unknown => "unknown",
            Liveness::Dead => "dead",
        }
    }
}

/// One broker the answering node holds.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrokerStatus {
    /// Its cluster.
    pub cluster: String,
    /// Its broker (group) name; `None` if no group lists its address.
    pub broker_name: Option<String>,
    /// Its id (0 for a master); `None` as for the name.
    pub broker_id: Option<i64>,
    /// Its address.
    pub address: String,
    /// Where the node has it from.
    pub source: BrokerSource,
    /// For a relayed broker, the member it was relayed from (its name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relayed_from: Option<String>,
    /// The DataVersion the node holds.
    pub data_version: DataVersionStatus,
}

/// Where a node has a broker from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BrokerSource {
    /// Registered with the node by the broker itself.
    Direct,
    /// Pulled from another node that holds it directly.
    Relayed,
    /// Restored from the node's route snapshot at start, not registered
    /// since.
    Restored,
    /// A source this reader does not know.
    #[default]
    #[serde(other)]
    Unknown,
}

impl BrokerSource {
    /// The source's name, as on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            BrokerSource::Direct => "direct",
            BrokerSource::Relayed => "relayed",
            BrokerSource::Restored => "restored",
            BrokerSource::Unknown => "unknown",
        }
    }
}

/// A broker's DataVersion, as the route table holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DataVersionStatus {
    /// stateVersion (the master epoch in controller mode).
    pub state_version: i64,
    /// counter.
    pub counter: i64,
    /// timestamp (the broker's clock, ms since the epoch).
    pub timestamp: i64,
}

impl ClusterStatusBody {
    /// The body as sent.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a cluster status always serializes")
    }

    /// Reads a body.
    ///
    /// # Errors
    /// Not JSON, or a required field missing or of the wrong type.
    pub fn from_json(body: &[u8]) -> Result<ClusterStatusBody, serde_json::Error> {
        serde_json::from_slice(body)
    }

    /// The member named `name` this node counts on most: its newest
    /// incarnation (a restarted node's older ones are dead).
    pub fn member(&self, name: &str) -> Option<&MemberStatus> {
        self.members
            .iter()
            .filter(|member| member.name == name)
            .max_by_key(|member| member.generation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body() -> ClusterStatusBody {
        ClusterStatusBody {
            enabled: true,
            node: Some(NodeStatus {
                name: "10.0.0.1:9876".into(),
                generation: 1_700_000_000_000,
                ready: true,
                gossip_addr: "10.0.0.1:7946".into(),
                cluster_id: "prod".into(),
                direct_brokers: 1,
                relayed_brokers: 1,
                pulls_in_flight: 0,
                since_agreement_millis: Some(12),
            }),
            members: vec![MemberStatus {
                name: "10.0.0.2:9876".into(),
                generation: 1_700_000_000_500,
                gossip_addr: "10.0.0.2:7946".into(),
                remoting_addr: Some("10.0.0.2:9876".into()),
                liveness: Liveness::Live,
                ready: true,
                direct_brokers: 1,
                behind: 0,
            }],
            brokers: vec![BrokerStatus {
                cluster: "DefaultCluster".into(),
                broker_name: Some("broker-b".into()),
                broker_id: Some(0),
                address: "10.0.0.9:10911".into(),
                source: BrokerSource::Relayed,
                relayed_from: Some("10.0.0.2:9876".into()),
                data_version: DataVersionStatus {
                    state_version: 0,
                    counter: 3,
                    timestamp: 1_700_000_000_000,
                },
            }],
        }
    }

    #[test]
    fn the_body_round_trips_with_camel_case_names() {
        let json = body().to_json();
        let text = String::from_utf8(json.clone()).unwrap();
        for name in [
            "\"clusterId\":\"prod\"",
            "\"gossipAddr\"",
            "\"sinceAgreementMillis\":12",
            "\"remotingAddr\"",
            "\"liveness\":\"live\"",
            "\"source\":\"relayed\"",
            "\"relayedFrom\":\"10.0.0.2:9876\"",
            "\"dataVersion\":{\"stateVersion\":0,\"counter\":3",
        ] {
            assert!(text.contains(name), "{name} in {text}");
        }
        assert_eq!(ClusterStatusBody::from_json(&json).unwrap(), body());
    }

    /// The example body of docs/protocol-extensions.md, as a node sent it.
    const DOCUMENTED: &str = r#"{"enabled":true,"node":{"name":"10.0.0.2:9876","generation":1796531968408,"ready":true,"gossipAddr":"10.0.0.2:7946","clusterId":"prod","directBrokers":0,"relayedBrokers":1,"pullsInFlight":0,"sinceAgreementMillis":416},"members":[{"name":"10.0.0.1:9876","generation":1796531966896,"gossipAddr":"10.0.0.1:7946","remotingAddr":"10.0.0.1:9876","liveness":"live","ready":true,"directBrokers":1,"behind":0}],"brokers":[{"cluster":"DefaultCluster","brokerName":"broker-a","brokerId":0,"address":"10.0.0.11:10911","source":"relayed","relayedFrom":"10.0.0.1:9876","dataVersion":{"stateVersion":0,"counter":0,"timestamp":1796531969909}}]}"#;

    #[test]
    fn the_documented_body_is_written_back_byte_for_byte() {
        let read = ClusterStatusBody::from_json(DOCUMENTED.as_bytes()).unwrap();
        assert_eq!(read.brokers[0].source, BrokerSource::Relayed);
        assert_eq!(String::from_utf8(read.to_json()).unwrap(), DOCUMENTED);
    }

    #[test]
    fn the_off_answer_reads_as_no_cluster() {
        let off = ClusterStatusBody::from_json(br#"{"enabled":false}"#).unwrap();
        assert_eq!(off, ClusterStatusBody::default());
        assert!(off.node.is_none());
    }

    #[test]
    fn unknown_fields_and_values_from_a_later_version_are_read() {
        let text = String::from_utf8(body().to_json())
            .unwrap()
            .replace("\"live\"", "\"suspect\"")
            .replace("\"relayed\"", "\"mirrored\"")
            .replacen('{', "{\"later\":[1,2],", 1);
        let read = ClusterStatusBody::from_json(text.as_bytes()).unwrap();
        assert_eq!(read.members[0].liveness, Liveness::Unknown);
        assert_eq!(read.brokers[0].source, BrokerSource::Unknown);
    }

    #[test]
    fn a_member_is_its_newest_incarnation() {
        let mut status = body();
        let mut old = status.members[0].clone();
        old.generation -= 100;
        old.liveness = Liveness::Dead;
        status.members.insert(0, old);
        assert_eq!(
            status.member("10.0.0.2:9876").unwrap().liveness,
            Liveness::Live
        );
        assert!(status.member("10.0.0.3:9876").is_none());
    }
}
