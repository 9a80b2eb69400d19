//! The route tables and the operations that are plain lookups or small edits:
//! topic lists, cluster info, write-permission changes, topic deletion and
//! registration. Broker registration lives in `register`, unregistration and
//! expiry in `liveness`, route assembly in `view`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use rmq_protocol::{
    BrokerData, ClusterInfo, DataVersion, QueueData, TopicConfig, TopicQueueMappingInfo,
};

use super::tombstone::Tombstones;
use super::{perm, sys_flag, ConnId, Millis};

/// A broker group: every member sharing one broker name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerGroup {
    /// Cluster the group was first registered in; never updated (as Java).
    pub cluster: String,
    /// Broker name.
    pub name: String,
    /// Member id → address; id 0 is the master.
    pub addrs: BTreeMap<i64, String>,
    /// Zone of the last member that registered.
    pub zone_name: Option<String>,
    /// Whether the last registering member supports acting master.
    pub enable_acting_master: bool,
    /// WIPE_WRITE_PERM_OF_BROKER was asked for the group: every queue data
    /// its registrations write lacks the write permission, until
    /// ADD_WRITE_PERM_OF_BROKER, a first registration of the member whose
    /// topics make routes (a master coming back), or the group's leaving
    /// the table. Registrations are applied whatever their DataVersion, so
    /// the wipe cannot rest on an unchanged DataVersion leaving the queue
    /// data alone, as it does in Java.
    pub write_perm_wiped: bool,
}

impl BrokerGroup {
    /// The wire form.
    pub fn to_broker_data(&self) -> BrokerData {
        BrokerData {
            cluster: self.cluster.clone(),
            broker_name: self.name.clone(),
            broker_addrs: self.addrs.clone(),
            zone_name: self.zone_name.clone(),
            enable_acting_master: self.enable_acting_master,
        }
    }

    /// Smallest member id, if any.
    pub fn min_id(&self) -> Option<i64> {
        self.addrs.keys().next().copied()
    }

    /// True when the group has members but none with id 0.
    pub fn lacks_master(&self) -> bool {
        self.min_id().is_none_or(|id| id > super::MASTER_ID)
    }
}

/// Key of the liveness tables: the same address under two clusters is two brokers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BrokerKey {
    /// Cluster name.
    pub cluster: String,
    /// Broker address, `ip:port`.
    pub addr: String,
}

impl BrokerKey {
    /// Builds a key.
    pub fn new(cluster: impl Into<String>, addr: impl Into<String>) -> Self {
        BrokerKey {
            cluster: cluster.into(),
            addr: addr.into(),
        }
    }
}

/// Liveness of one registered broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveBroker {
    /// Last registration or heartbeat.
    pub last_update: Millis,
    /// How long the broker may stay silent.
    pub timeout_ms: u64,
    /// DataVersion of the last registration.
    pub data_version: DataVersion,
    /// Connection of the last registration.
    pub conn: ConnId,
    /// HA address announced by the broker.
    pub ha_server_addr: String,
    /// Registration sequence number: increases with every registration, so a
    /// removal decided earlier can tell it is stale (fencing).
    pub generation: u64,
    /// Restored from the route snapshot at start and not registered since:
    /// its routes are served, but the broker has not confirmed them. It has
    /// no connection ([`RESTORED_CONN`](super::RESTORED_CONN)), counts as
    /// changed for QUERY_DATA_VERSION (so a broker that asks first registers
    /// in full at once), and expires as any entry does, its timeout counted
    /// from the restart. A registration replaces it by an ordinary entry.
    pub provisional: bool,
    /// The broker's release ordinal from its last registration (0: unknown,
    /// as for a broker restored from the route snapshot).
    pub client_version: i32,
    /// Set once a registration's whole topic list was found in the topic
    /// map, or written to it, as sent.
    pub held_topics: Option<HeldTopics>,
    /// `enableActingMaster` as the broker sent it (`None`: a 4.x broker,
    /// which never does), for the registration another NameServer pulls.
    pub enable_acting_master: Option<bool>,
    /// `Some(node)` for a broker learnt from another NameServer of the
    /// cluster that holds it directly (docs/architecture.md, "The NameServer
    /// cluster"): its liveness is that node's, so it is neither expired
    /// here nor tied to a connection; a registration from the broker itself
    /// replaces it.
    pub relayed_from: Option<Arc<str>>,
}

/// A broker's topic list as the topic map held it: while the map has not
/// been written since, a registration with the same list finds every entry
/// as it would write it, without looking them up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldTopics {
    /// The list's fingerprint, with its broker name
    /// ([`SharedRoutes`](super::SharedRoutes) computes it).
    pub fingerprint: u64,
    /// The topic map's write count when it held them.
    pub edits: u64,
    /// The body the list came in, when a registration can be recognised
    /// as repeating it without being decoded.
    pub body: Option<HeldBody>,
}

/// A master's REGISTER_BROKER body, as far as a registration repeating it
/// but for its DataVersion needs it
/// ([`SharedRoutes::register_repeated`](super::SharedRoutes::register_repeated)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldBody {
    /// The fingerprint of the body but its DataVersion, with the broker
    /// name and request version (`crate::request::RepeatedBody`).
    pub fingerprint: u128,
    /// How many topics it lists.
    pub topics: usize,
}

impl LiveBroker {
    /// True once `now` is strictly past the timeout (Java's `<` comparison).
    /// A relayed broker never expires here: it leaves when the cluster says.
    pub fn is_expired(&self, now: Millis) -> bool {
        self.relayed_from.is_none() && self.last_update.saturating_add(self.timeout_ms) < now
    }

    /// Registered with this NameServer by the broker itself (not restored
    /// from the route snapshot and unconfirmed, not relayed).
    pub fn is_direct(&self) -> bool {
        !self.provisional && self.relayed_from.is_none()
    }
}

/// How large the route tables are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TableSizes {
    /// Clusters.
    pub clusters: usize,
    /// Broker groups (broker names).
    pub broker_groups: usize,
    /// Registered brokers (cluster and address).
    pub brokers: usize,
    /// Topics.
    pub topics: usize,
    /// Topic-queue entries: one per topic and broker name.
    pub queue_entries: usize,
}

/// A broker name as the topic table keys it. The entries one registration
/// writes share one allocation of the name: a NameServer holds a million
/// entries, and a `String` key and a `QueueData` (which repeats the name)
/// per entry cost twice the memory of the rest of the table.
pub type BrokerName = Arc<str>;

/// One topic's queues on one broker group: Java's `QueueData` without the
/// broker name, which is its key in [`TopicQueues`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopicQueue {
    /// readQueueNums.
    pub read_queue_nums: i32,
    /// writeQueueNums.
    pub write_queue_nums: i32,
    /// perm.
    pub perm: i32,
    /// topicSysFlag.
    pub topic_sys_flag: i32,
}

impl TopicQueue {
    /// The entry as Java's `QueueData` of `broker_name`.
    pub fn to_queue_data(&self, broker_name: &str) -> QueueData {
        QueueData {
            broker_name: broker_name.to_owned(),
            read_queue_nums: self.read_queue_nums,
            write_queue_nums: self.write_queue_nums,
            perm: self.perm,
            topic_sys_flag: self.topic_sys_flag,
        }
    }

    /// The entry a registration writes for `tc`: its numbers, without the
    /// write permission when `clear_write` (a prime slave of an
    /// acting-master group).
    pub fn sent(tc: &TopicConfig, clear_write: bool) -> TopicQueue {
        let mut perm = tc.perm;
        if clear_write {
            perm &= !perm::WRITE;
        }
        TopicQueue {
            read_queue_nums: tc.read_queue_nums,
            write_queue_nums: tc.write_queue_nums,
            perm,
            topic_sys_flag: tc.topic_sys_flag,
        }
    }

    /// The entry of a `QueueData` (its broker name is the key).
    pub fn of(queue: &QueueData) -> TopicQueue {
        TopicQueue {
            read_queue_nums: queue.read_queue_nums,
            write_queue_nums: queue.write_queue_nums,
            perm: queue.perm,
            topic_sys_flag: queue.topic_sys_flag,
        }
    }
}

/// One topic's queues: broker name → entry, in name order (Java's route
/// answers list queue data by broker name).
pub type TopicQueues = BTreeMap<BrokerName, TopicQueue>;

/// topic → its queues. Hashed with foldhash, seeded per process: a
/// registration looks up every one of its topics, and SipHash (the standard
/// map's) was a tenth of a registration's CPU; a random seed keeps colliding
/// topic names from being precomputed.
pub(super) type TopicMap = HashMap<String, TopicQueues, foldhash::fast::RandomState>;

/// The topic map and a count of the times it was opened for writing.
///
/// A registration compares its topics with the map under the read lock,
/// where registrations of different brokers run side by side, and takes the
/// write lock only for the entries that differ. Between the two another
/// writer may have changed an entry the comparison found equal; an unchanged
/// count proves nobody did. Every write goes through [`Topics::edit`], which
/// counts it, so no write path can forget to.
#[derive(Debug, Default, Clone)]
pub(super) struct Topics {
    map: TopicMap,
    edits: u64,
}

impl Topics {
    /// Write access; counted.
    pub(super) fn edit(&mut self) -> &mut TopicMap {
        self.edits = self.edits.wrapping_add(1);
        &mut self.map
    }

    /// How many times the map was opened for writing.
    pub(super) fn edits(&self) -> u64 {
        self.edits
    }
}

impl std::ops::Deref for Topics {
    type Target = TopicMap;

    fn deref(&self) -> &TopicMap {
        &self.map
    }
}

impl From<TopicMap> for Topics {
    fn from(map: TopicMap) -> Topics {
        Topics { map, edits: 0 }
    }
}

/// All route state of a NameServer.
#[derive(Debug, Default, Clone)]
pub struct RouteTable {
    /// topic → broker name → queue data.
    pub(super) topics: Topics,
    /// broker name → group.
    pub(super) groups: BTreeMap<String, BrokerGroup>,
    /// cluster → broker names.
    pub(super) clusters: BTreeMap<String, BTreeSet<String>>,
    /// (cluster, addr) → liveness.
    pub(super) live: HashMap<BrokerKey, LiveBroker>,
    /// (cluster, addr) → filter servers.
    pub(super) filter_servers: HashMap<BrokerKey, Vec<String>>,
    /// topic → broker name → static-topic mapping; only ever added or replaced.
    pub(super) mappings: HashMap<String, BTreeMap<String, TopicQueueMappingInfo>>,
    /// Last registration sequence number handed out.
    pub(super) generation: u64,
    /// Topics deleted per broker group, and the DataVersion they were
    /// deleted at ([`RouteTable::delete_topic`]).
    pub(super) tombstones: Tombstones,
}

impl RouteTable {
    /// An empty table.
    pub fn new() -> Self {
        RouteTable::default()
    }

    /// The current registration sequence number; a removal decided now is
    /// fenced against registrations with a larger number.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// One broker group.
    pub fn group(&self, broker_name: &str) -> Option<&BrokerGroup> {
        self.groups.get(broker_name)
    }

    /// The liveness entry of one broker.
    pub fn live_broker(&self, key: &BrokerKey) -> Option<&LiveBroker> {
        self.live.get(key)
    }

    /// Number of topics.
    pub fn topic_count(&self) -> usize {
        self.topics.len()
    }

    /// How large the tables are (one pass over the topics).
    pub fn sizes(&self) -> TableSizes {
        TableSizes {
            clusters: self.clusters.len(),
            broker_groups: self.groups.len(),
            brokers: self.live.len(),
            topics: self.topics.len(),
            queue_entries: self.topics.values().map(BTreeMap::len).sum(),
        }
    }

    /// Every registered broker and its liveness, in no particular order.
    pub fn live_brokers(&self) -> impl Iterator<Item = (&BrokerKey, &LiveBroker)> {
        self.live.iter()
    }

    /// Every broker group, by name.
    pub fn groups(&self) -> impl Iterator<Item = &BrokerGroup> {
        self.groups.values()
    }

    /// Every cluster with the names of its broker groups, by cluster name.
    pub fn clusters(&self) -> impl Iterator<Item = (&String, &BTreeSet<String>)> {
        self.clusters.iter()
    }

    /// Every topic with its queue data by broker name, in no particular order.
    pub fn topics(&self) -> impl Iterator<Item = (&String, &TopicQueues)> {
        self.topics.iter()
    }

    /// Queue data of one topic.
    pub fn queue_datas(&self, topic: &str) -> Option<&TopicQueues> {
        self.topics.get(topic)
    }

    /// GET_BROKER_CLUSTER_INFO.
    pub fn cluster_info(&self) -> ClusterInfo {
        ClusterInfo {
            broker_addr_table: self
                .groups
                .iter()
                .map(|(name, group)| (name.clone(), group.to_broker_data()))
                .collect(),
            cluster_addr_table: self
                .clusters
                .iter()
                .map(|(cluster, names)| (cluster.clone(), names.iter().cloned().collect()))
                .collect(),
        }
    }

    /// Every topic name, sorted.
    pub fn all_topics(&self) -> Vec<String> {
        let mut topics: Vec<String> = self.topics.keys().cloned().collect();
        topics.sort_unstable();
        topics
    }

    /// Topics with queue data on any broker of `cluster`.
    pub fn topics_of_cluster(&self, cluster: &str) -> Vec<String> {
        let Some(names) = self.clusters.get(cluster) else {
            return Vec::new();
        };
        let mut topics: Vec<String> = self
            .topics
            .iter()
            .filter(|(_, queues)| queues.keys().any(|name| names.contains(&**name)))
            .map(|(topic, _)| topic.clone())
            .collect();
        topics.sort_unstable();
        topics
    }

    /// GET_SYSTEM_TOPIC_LIST_FROM_NS: every cluster and broker name, and one
    /// broker address for the client to ask for the rest.
    pub fn system_topics(&self) -> (Vec<String>, Option<String>) {
        let mut names = BTreeSet::new();
        for (cluster, brokers) in &self.clusters {
            names.insert(cluster.clone());
            names.extend(brokers.iter().cloned());
        }
        let addr = self
            .groups
            .values()
            .find_map(|group| group.addrs.values().next().cloned());
        (names.into_iter().collect(), addr)
    }

    /// Unit topic lists: selected by the sys flag of each topic's first queue data.
    pub fn unit_topics(&self, select: UnitSelect) -> Vec<String> {
        let mut topics: Vec<String> = self
            .topics
            .iter()
            .filter(|(_, queues)| {
                queues.values().next().is_some_and(|q| {
                    let unit = q.topic_sys_flag & sys_flag::UNIT != 0;
                    let unit_sub = q.topic_sys_flag & sys_flag::UNIT_SUB != 0;
                    match select {
                        UnitSelect::Unit => unit,
                        UnitSelect::HasUnitSub => unit_sub,
                        UnitSelect::HasUnitSubNotUnit => unit_sub && !unit,
                    }
                })
            })
            .map(|(topic, _)| topic.clone())
            .collect();
        topics.sort_unstable();
        topics
    }

    /// WIPE_WRITE_PERM_OF_BROKER: clears the write bit of every queue data of
    /// the broker name; returns how many were touched (even if already clear).
    /// The group's later registrations are written without it too
    /// ([`BrokerGroup::write_perm_wiped`]).
    pub fn wipe_write_perm(&mut self, broker_name: &str) -> i32 {
        if let Some(group) = self.groups.get_mut(broker_name) {
            group.write_perm_wiped = true;
        }
        self.edit_perm(broker_name, |perm| perm & !perm::WRITE)
    }

    /// ADD_WRITE_PERM_OF_BROKER: sets perm to READ|WRITE (overwriting other
    /// bits, as Java does); returns how many queue datas were touched. The
    /// group's registrations are written as sent again, so its next one
    /// brings back the permissions the broker gives its topics.
    pub fn add_write_perm(&mut self, broker_name: &str) -> i32 {
        if let Some(group) = self.groups.get_mut(broker_name) {
            group.write_perm_wiped = false;
        }
        self.edit_perm(broker_name, |_| perm::READ | perm::WRITE)
    }

    fn edit_perm(&mut self, broker_name: &str, edit: impl Fn(i32) -> i32) -> i32 {
        let mut count = 0;
        for queues in self.topics.edit().values_mut() {
            if let Some(queue) = queues.get_mut(broker_name) {
                queue.perm = edit(queue.perm);
                count += 1;
            }
        }
        count
    }

    /// DELETE_TOPIC_IN_NAMESRV. With no cluster the topic goes entirely; with
    /// a cluster only that cluster's queue data goes. Mapping info stays.
    ///
    /// Each group whose queue data goes keeps a deletion mark with the
    /// DataVersion its registering member last sent (none for a group with
    /// no such member registered): a registration still carrying that
    /// DataVersion, sent before the broker forgot the topic, does not write
    /// it again ([`super::tombstone`]). Returns how many older marks were
    /// dropped to stay within their bounds.
    pub fn delete_topic(&mut self, topic: &str, cluster: Option<&str>) -> usize {
        let cluster_names = match cluster.filter(|c| !c.is_empty()) {
            None => None,
            Some(cluster) => match self.clusters.get(cluster).filter(|n| !n.is_empty()) {
                Some(names) => Some(names),
                None => return 0,
            },
        };
        let Some(queues) = self.topics.get(topic) else {
            // Counted all the same, as a write of the map, so that no
            // registration compared before it is taken as current.
            self.topics.edit();
            return 0;
        };
        let deleted: Vec<String> = queues
            .keys()
            .filter(|name| cluster_names.is_none_or(|names| names.contains(&***name)))
            .map(|name| name.to_string())
            .collect();
        let marks: Vec<(String, DataVersion)> = deleted
            .iter()
            .filter_map(|name| Some((name.clone(), self.registering_version(name)?)))
            .collect();
        let topics = self.topics.edit();
        if let Some(queues) = topics.get_mut(topic) {
            queues.retain(|name, _| !deleted.iter().any(|gone| **gone == **name));
            if queues.is_empty() {
                topics.remove(topic);
            }
        }
        marks
            .into_iter()
            .map(|(name, version)| self.tombstones.insert(&name, topic, version))
            .sum()
    }

    /// The DataVersion last sent by the member of `broker_name` whose
    /// registrations write its topics: the master, or without one the
    /// smallest id (the prime slave of an acting-master group). `None` when
    /// that member is not registered.
    fn registering_version(&self, broker_name: &str) -> Option<DataVersion> {
        let group = self.groups.get(broker_name)?;
        let addr = group.addrs.values().next()?;
        self.live
            .get(&BrokerKey::new(&group.cluster, addr.clone()))
            .map(|live| live.data_version)
    }

    /// How many deletion marks the table keeps ([`RouteTable::delete_topic`]).
    pub fn tombstone_count(&self) -> usize {
        self.tombstones.len()
    }

    /// REGISTER_TOPIC_IN_NAMESRV. For an existing topic entries are applied in
    /// order until one names an unknown broker; a new topic is created only if
    /// every entry names a known broker. Returns whether anything changed.
    pub fn register_topic(&mut self, topic: &str, queue_datas: Vec<QueueData>) -> bool {
        if queue_datas.is_empty() {
            return false;
        }
        if let Some(queues) = self.topics.edit().get_mut(topic) {
            let mut changed = false;
            for queue in queue_datas {
                if !self.groups.contains_key(&queue.broker_name) {
                    break;
                }
                self.tombstones.forget(&queue.broker_name, topic);
                queues.insert(queue.broker_name.as_str().into(), TopicQueue::of(&queue));
                changed = true;
            }
            changed
        } else if queue_datas
            .iter()
            .all(|q| self.groups.contains_key(&q.broker_name))
        {
            for queue in &queue_datas {
                self.tombstones.forget(&queue.broker_name, topic);
            }
            let queues = queue_datas
                .iter()
                .map(|q| (q.broker_name.as_str().into(), TopicQueue::of(q)))
                .collect();
            self.topics.edit().insert(topic.to_owned(), queues);
            true
        } else {
            false
        }
    }
}

/// Which unit topic list to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitSelect {
    /// GET_UNIT_TOPIC_LIST: FLAG_UNIT set.
    Unit,
    /// GET_HAS_UNIT_SUB_TOPIC_LIST: FLAG_UNIT_SUB set.
    HasUnitSub,
    /// GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST: FLAG_UNIT_SUB set, FLAG_UNIT clear.
    HasUnitSubNotUnit,
}
