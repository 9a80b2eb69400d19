//! The route snapshot's format: what of a [`RouteTable`] survives a restart,
//! encoded as versioned JSON, and the table restored from it with every
//! broker provisional. Bytes in, bytes out: reading and writing the file,
//! and when, is `crate::route_snapshot`'s business.
//!
//! JSON rather than a binary layout: serde_json is already a dependency, the
//! file is written at most once a second and read once per start, and an
//! operator can read it with `jq` when a restart serves surprising routes.
//! The layout stays compact where the table is large: queue data are grouped
//! by broker name as `[topic, readQueueNums, writeQueueNums, perm,
//! topicSysFlag]` arrays: 14 bytes a topic besides its name, where Java's
//! field names would take some 90. Every list is sorted, so the
//! same table always encodes to the same bytes (the writer skips a write
//! that would change nothing).
//!
//! Persisted: topics, groups (with their write-permission wipes), clusters,
//! filter servers, static-topic mappings, and per broker its timeout, data
//! version and HA address.
//! Not persisted: last-update times, connections and registration sequence
//! numbers, which mean nothing to another process.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rmq_protocol::{DataVersion, TopicQueueMappingInfo};
use serde::{Deserialize, Serialize};

use super::table::{
    BrokerGroup, BrokerKey, BrokerName, LiveBroker, RouteTable, TopicMap, TopicQueue, TopicQueues,
};
use super::{ConnId, Millis};

/// Marks the file as a Waymark route snapshot, so that another JSON file
/// given as `routeSnapshotPath` is refused rather than read as empty routes.
const FORMAT: &str = "waymark-route-snapshot";

/// The layout version this build writes and reads. A file of any other
/// version is refused (the server then starts empty): brokers re-register
/// within 30 s anyway, so converting old layouts is not worth its code.
pub const SNAPSHOT_VERSION: u32 = 1;

/// The connection of a restored broker: no connection of this process
/// (the transport numbers connections from 1).
pub const RESTORED_CONN: ConnId = 0;

/// A snapshot that cannot be restored.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// Not JSON of the snapshot's layout (truncated, damaged, another file).
    #[error("not a route snapshot: {0}")]
    Format(#[from] serde_json::Error),
    /// Another file's marker.
    #[error("not a route snapshot (format {0:?})")]
    Marker(String),
    /// Written by a build with another layout.
    #[error("route snapshot version {found}, this build reads version {SNAPSHOT_VERSION}")]
    Version {
        /// The file's version.
        found: u32,
    },
}

/// Read first, alone, so that a file of another version is reported as
/// such rather than as whatever field its layout lacks.
#[derive(Deserialize)]
struct Header {
    format: String,
    version: u32,
}

/// One queue data under its broker name: `[topic, read, write, perm, sysFlag]`.
type QueueRow<S> = (S, i32, i32, i32, i32);

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Group<S> {
    cluster: S,
    name: S,
    addrs: BTreeMap<i64, S>,
    zone_name: Option<S>,
    enable_acting_master: bool,
    /// [`BrokerGroup::write_perm_wiped`]; absent when false, so files
    /// without wiped groups read as before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    write_perm_wiped: bool,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Broker<S> {
    cluster: S,
    addr: S,
    timeout_ms: u64,
    data_version: DataVersion,
    ha_server_addr: S,
    /// Learnt from another NameServer of the cluster: dropped on restore,
    /// since it may have left the cluster while this one was down (a
    /// restarted node learns relayed brokers again from its peers).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    relayed: bool,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FilterServers<S> {
    cluster: S,
    addr: S,
    servers: Vec<S>,
}

/// The file. `S` is `&str` and `M` `&TopicQueueMappingInfo` when written
/// from a table, `String` and `TopicQueueMappingInfo` when read, so writing
/// copies nothing.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct File<S: Ord, M> {
    format: S,
    version: u32,
    groups: Vec<Group<S>>,
    clusters: BTreeMap<S, Vec<S>>,
    brokers: Vec<Broker<S>>,
    filter_servers: Vec<FilterServers<S>>,
    /// Broker name → its queue data, sorted by topic.
    queues: BTreeMap<S, Vec<QueueRow<S>>>,
    /// Topic → broker name → static-topic mapping, in its wire form (rare
    /// and small).
    mappings: BTreeMap<S, BTreeMap<S, M>>,
}

impl RouteTable {
    /// The snapshot of this table: the same table gives the same bytes.
    pub fn snapshot(&self) -> Vec<u8> {
        // Topics visited in order fill each broker's rows already sorted:
        // one sort of the topic names rather than one per broker, and rows
        // grouped through a hash map rather than an ordered one. With a
        // million entries, the ordered grouping and the per-broker sorts
        // had been 41 % of the server's CPU while brokers re-registered (a
        // string comparison per tree level and per sorting step, between
        // names sharing long prefixes).
        let mut topics: Vec<(&String, &TopicQueues)> = self.topics.iter().collect();
        topics.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut rows_of: HashMap<&str, Vec<QueueRow<&str>>, foldhash::fast::FixedState> =
            HashMap::default();
        for (topic, by_broker) in topics {
            for (name, q) in by_broker {
                rows_of.entry(&**name).or_default().push((
                    topic.as_str(),
                    q.read_queue_nums,
                    q.write_queue_nums,
                    q.perm,
                    q.topic_sys_flag,
                ));
            }
        }
        let queues: BTreeMap<&str, Vec<QueueRow<&str>>> = rows_of.into_iter().collect();
        let mut brokers: Vec<Broker<&str>> = self
            .live
            .iter()
            .map(|(key, live)| Broker {
                cluster: key.cluster.as_str(),
                addr: key.addr.as_str(),
                timeout_ms: live.timeout_ms,
                data_version: live.data_version,
                ha_server_addr: live.ha_server_addr.as_str(),
                relayed: live.relayed_from.is_some(),
            })
            .collect();
        brokers.sort_unstable_by(|a, b| (a.cluster, a.addr).cmp(&(b.cluster, b.addr)));
        let mut filter_servers: Vec<FilterServers<&str>> = self
            .filter_servers
            .iter()
            .map(|(key, servers)| FilterServers {
                cluster: key.cluster.as_str(),
                addr: key.addr.as_str(),
                servers: servers.iter().map(String::as_str).collect(),
            })
            .collect();
        filter_servers.sort_unstable_by(|a, b| (a.cluster, a.addr).cmp(&(b.cluster, b.addr)));
        let file = File {
            format: FORMAT,
            version: SNAPSHOT_VERSION,
            groups: self
                .groups
                .values()
                .map(|g| Group {
                    cluster: g.cluster.as_str(),
                    name: g.name.as_str(),
                    addrs: g.addrs.iter().map(|(id, a)| (*id, a.as_str())).collect(),
                    zone_name: g.zone_name.as_deref(),
                    enable_acting_master: g.enable_acting_master,
                    write_perm_wiped: g.write_perm_wiped,
                })
                .collect(),
            clusters: self
                .clusters
                .iter()
                .map(|(c, names)| (c.as_str(), names.iter().map(String::as_str).collect()))
                .collect(),
            brokers,
            filter_servers,
            queues,
            mappings: self
                .mappings
                .iter()
                .map(|(topic, by_broker)| {
                    let by_broker = by_broker
                        .iter()
                        .map(|(name, info)| (name.as_str(), info))
                        .collect();
                    (topic.as_str(), by_broker)
                })
                .collect(),
        };
        serde_json::to_vec(&file).expect("a snapshot of strings and numbers always serializes")
    }

    /// The table a snapshot describes, as a server restarted at `now` holds
    /// it: every broker provisional, counted as heard from at `now`, so it
    /// expires one heartbeat timeout after the restart unless it registers
    /// again ([`LiveBroker::provisional`]).
    ///
    /// # Errors
    /// [`SnapshotError`] for bytes that are not a snapshot of this version;
    /// nothing here panics on any input.
    pub fn restore(bytes: &[u8], now: Millis) -> Result<RouteTable, SnapshotError> {
        let header: Header = serde_json::from_slice(bytes)?;
        if header.format != FORMAT {
            return Err(SnapshotError::Marker(header.format));
        }
        if header.version != SNAPSHOT_VERSION {
            return Err(SnapshotError::Version {
                found: header.version,
            });
        }
        let file: File<String, TopicQueueMappingInfo> = serde_json::from_slice(bytes)?;
        let mut table = RouteTable::new();
        for g in file.groups {
            let group = BrokerGroup {
                cluster: g.cluster,
                name: g.name,
                addrs: g.addrs,
                zone_name: g.zone_name,
                enable_acting_master: g.enable_acting_master,
                write_perm_wiped: g.write_perm_wiped,
            };
            table.groups.insert(group.name.clone(), group);
        }
        table.clusters = file
            .clusters
            .into_iter()
            .map(|(c, names)| (c, names.into_iter().collect::<BTreeSet<_>>()))
            .collect();
        let mut relayed = Vec::new();
        for b in file.brokers {
            if b.relayed {
                relayed.push(BrokerKey::new(b.cluster.clone(), b.addr.clone()));
            }
            table.generation += 1;
            table.live.insert(
                BrokerKey::new(b.cluster, b.addr),
                LiveBroker {
                    last_update: now,
                    timeout_ms: b.timeout_ms,
                    data_version: b.data_version,
                    conn: RESTORED_CONN,
                    ha_server_addr: b.ha_server_addr,
                    generation: table.generation,
                    provisional: true,
                    enable_acting_master: None,
                    relayed_from: None,
                    client_version: 0,
                    held_topics: None,
                },
            );
        }
        for f in file.filter_servers {
            table
                .filter_servers
                .insert(BrokerKey::new(f.cluster, f.addr), f.servers);
        }
        let mut topics = TopicMap::default();
        for (name, rows) in file.queues {
            let name = BrokerName::from(name);
            for (topic, read, write, perm, sys_flag) in rows {
                topics.entry(topic).or_default().insert(
                    name.clone(),
                    TopicQueue {
                        perm,
                        read_queue_nums: read,
                        topic_sys_flag: sys_flag,
                        write_queue_nums: write,
                    },
                );
            }
        }
        table.topics = topics.into();
        table.mappings = file.mappings.into_iter().collect();
        let batch: Vec<_> = relayed
            .iter()
            .filter_map(|key| table.unregistration_for(key))
            .collect();
        table.unregister_batch(&batch, false);
        Ok(table)
    }
}
