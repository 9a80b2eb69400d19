//! The causes a difference can have, their names in `--json` and the line
//! an operator reads.

use serde_json::{json, Value};

/// Why two NameServers differ on a fact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// None of the NameServers compared is a cluster node.
    NoClusterNodes,
    /// This one is not a cluster node.
    NotClusterNode {
        /// The NameServer.
        ns: String,
    },
    /// This one's cluster status could not be read.
    StatusUnknown {
        /// The NameServer.
        ns: String,
        /// Why.
        error: String,
    },
    /// `ns` is not in `other`'s cluster.
    OtherCluster {
        /// The NameServer.
        ns: String,
        /// The one it was compared with.
        other: String,
        /// Their cluster ids (`ns`'s, then `other`'s), when they differ.
        ids: Option<(String, String)>,
    },
    /// `ns` is still bootstrapping: it serves no routes yet.
    NotReady {
        /// The NameServer.
        ns: String,
    },
    /// `ns` sees the node holding `broker` directly dead.
    HolderDead {
        /// The NameServer.
        ns: String,
        /// The node holding it.
        holder: String,
        /// The broker name.
        broker: String,
    },
    /// `ns` does not know the node holding `broker` directly.
    HolderUnknown {
        /// The NameServer.
        ns: String,
        /// The node holding it.
        holder: String,
        /// The broker name.
        broker: String,
    },
    /// `ns` does not hold `behind` of the brokers `holder` publishes as it
    /// should yet.
    Pulling {
        /// The NameServer.
        ns: String,
        /// The node it pulls from.
        holder: String,
        /// How many brokers.
        behind: usize,
    },
    /// `ns` holds `broker` relayed from `from`, and its copy is not the
    /// registration the holders have (or `from` does not hold it).
    Relayed {
        /// The broker name.
        broker: String,
        /// The nodes holding it directly.
        holders: Vec<String>,
        /// The NameServer with the relayed copy.
        ns: String,
        /// Where its copy came from.
        from: String,
    },
    /// `ns` holds `broker` from its route snapshot, not registered since.
    Restored {
        /// The NameServer.
        ns: String,
        /// The broker name.
        broker: String,
    },
    /// Both hold the same registrations: an admin write (write permission,
    /// topic registration or deletion) made on one NameServer only.
    PerNameServerWrite {
        /// The broker, when the fact is about one.
        broker: Option<String>,
    },
    /// An order configuration: a KV entry, kept per NameServer.
    KvPerNameServer,
    /// None of the above.
    Unexplained,
}

impl Cause {
    /// The kind's name in `--json`.
    pub fn kind(&self) -> &'static str {
        match self {
            Cause::NoClusterNodes => "noClusterNodes",
            Cause::NotClusterNode { .. } => "notClusterNode",
            Cause::StatusUnknown { .. } => "statusUnknown",
            Cause::OtherCluster { .. } => "otherCluster",
            Cause::NotReady { .. } => "notReady",
            Cause::HolderDead { .. } => "holderDead",
            Cause::HolderUnknown { .. } => "holderUnknown",
            Cause::Pulling { .. } => "pulling",
            Cause::Relayed { .. } => "relayed",
            Cause::Restored { .. } => "restored",
            Cause::PerNameServerWrite { .. } => "perNameServerWrite",
            Cause::KvPerNameServer => "kvPerNameServer",
            Cause::Unexplained => "unexplained",
        }
    }

    /// The line an operator reads.
    pub fn text(&self) -> String {
        match self {
            Cause::NoClusterNodes => "no NameServer compared is a Waymark cluster node: each knows only the brokers registered with it".to_owned(),
            Cause::NotClusterNode { ns } => format!(
                "{ns} is not a Waymark cluster node (a Java NameServer, or its cluster is off): it knows only the brokers registered with it"
            ),
            Cause::StatusUnknown { ns, error } => {
                format!("{ns}'s cluster status is unknown ({error})")
            }
            Cause::OtherCluster { ns, other, ids } => match ids {
                Some((mine, theirs)) => format!(
                    "{ns} is not in {other}'s cluster (clusterId {mine}, not {theirs})"
                ),
                None => format!("{ns} is not in {other}'s cluster (no member in common)"),
            },
            Cause::NotReady { ns } => format!("{ns} is not ready yet (bootstrapping)"),
            Cause::HolderDead { ns, holder, broker } => {
                format!("{ns} sees {holder} dead ({holder} holds {broker} directly)")
            }
            Cause::HolderUnknown { ns, holder, broker } => {
                format!("{ns} does not know {holder}, which holds {broker} directly")
            }
            Cause::Pulling { ns, holder, behind } => {
                format!("{ns} is still pulling ({behind} behind {holder})")
            }
            Cause::Relayed {
                broker,
                holders,
                ns,
                from,
            } => {
                let held = if holders.is_empty() {
                    "held directly by no NameServer compared".to_owned()
                } else {
                    format!("held directly by {}", holders.join(" and "))
                };
                format!("{broker} {held}, relayed at {ns} from {from} (not the same registration)")
            }
            Cause::Restored { ns, broker } => format!(
                "{ns} holds {broker} from its route snapshot, not registered since"
            ),
            Cause::PerNameServerWrite { broker } => match broker {
                Some(broker) => format!(
                    "both hold the same registration of {broker}: an admin write (write permission, topic) applies to one NameServer only"
                ),
                None => "an admin write (topic registration or deletion) applies to one NameServer only".to_owned(),
            },
            Cause::KvPerNameServer => {
                "an order configuration is a KV entry, kept per NameServer".to_owned()
            }
            Cause::Unexplained => "no cause found in the NameServers' cluster status".to_owned(),
        }
    }

    /// The cause in `--json`: `{"kind", "text"}`.
    pub fn to_json(&self) -> Value {
        json!({ "kind": self.kind(), "text": self.text() })
    }
}
