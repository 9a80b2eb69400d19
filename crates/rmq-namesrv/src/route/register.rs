//! Broker registration, Java's `RouteInfoManager.registerBroker` step by
//! step: the broker's part (group, address, live entry, mappings, filter
//! servers) in [`RouteTable::begin_registration`], then its topics' queue
//! data, which `SharedRoutes::register_broker` writes a slice at a time.
//!
//! A registration returns the response fields and the min-broker-id
//! notifications to send; sending is the caller's job, after the table lock
//! is released (Java sends while holding its lock).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use rmq_protocol::{DataVersion, TopicConfig, TopicQueueMappingInfo};

use super::table::{
    BrokerGroup, BrokerKey, BrokerName, HeldBody, HeldTopics, LiveBroker, RouteTable, TopicQueue,
};
use super::{ConnId, Millis, DEFAULT_BROKER_TIMEOUT_MS, MASTER_ID};

/// Everything a REGISTER_BROKER request carries, decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct BrokerRegistration {
    /// Cluster name.
    pub cluster: String,
    /// Broker address, `ip:port`.
    pub broker_addr: String,
    /// Broker (group) name.
    pub broker_name: String,
    /// 0 for a master, > 0 for a slave.
    pub broker_id: i64,
    /// HA service address.
    pub ha_server_addr: String,
    /// `__ZONE_NAME` of the request.
    pub zone_name: Option<String>,
    /// Per-broker expiry; `None` means the default.
    pub heartbeat_timeout_ms: Option<u64>,
    /// `None` marks a 4.x broker, which never sends it.
    pub enable_acting_master: Option<bool>,
    /// The broker's topic-config DataVersion.
    pub data_version: DataVersion,
    /// The broker's topics; keyed by the map key on the wire, applied by `topic_name`.
    pub topic_configs: Vec<TopicConfig>,
    /// Static-topic mapping infos, topic → info.
    pub mappings: BTreeMap<String, TopicQueueMappingInfo>,
    /// `None` = not provided (old body format): keep what was stored.
    pub filter_servers: Option<Vec<String>>,
    /// Connection the registration came on.
    pub conn: ConnId,
    /// The registering broker's release ordinal (the request's `version`);
    /// shown to operators, 0 when unknown.
    pub client_version: i32,
}

/// Where a registration came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum RegistrationSource {
    /// The broker itself, over one of this NameServer's connections.
    #[default]
    Direct,
    /// Another NameServer of the cluster, which holds the broker directly
    /// (a pulled registration): applied only where the broker is not held
    /// directly, and not a reason to notify anyone.
    Relayed {
        /// That NameServer's name.
        from: Arc<str>,
    },
}

/// What a registration tells the broker and what should happen next.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegisterOutcome {
    /// Master address for a slave whose master is alive.
    pub master_addr: Option<String>,
    /// HA address of that master.
    pub ha_server_addr: Option<String>,
    /// Notifications to send (only filled when asked for).
    pub notifications: Vec<MinIdNotification>,
    /// True when this broker address was not registered before (for logging).
    pub new_broker: bool,
    /// True when this registration confirmed an entry restored from the
    /// route snapshot (for logging).
    pub confirmed_restored: bool,
    /// True when the broker's id is held by a live broker at another
    /// address with a higher stateVersion (as controller-mode brokers set
    /// it), so this registration was ignored, as Java ignores it; the group
    /// and its cluster are recorded all the same.
    pub ignored_stale_state_version: bool,
    /// True when a relayed registration was not applied: the broker is
    /// registered with this NameServer directly, which always wins.
    pub kept_direct: bool,
}

/// A NOTIFY_MIN_BROKER_ID_CHANGE to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MinIdNotification {
    /// Smallest broker id of the group now.
    pub min_broker_id: i64,
    /// Its address.
    pub min_broker_addr: String,
    /// Address that went away (unregistration case).
    pub offline_broker_addr: Option<String>,
    /// HA address of the registering broker (registration case).
    pub ha_broker_addr: Option<String>,
    /// Broker addresses to notify.
    pub targets: Vec<String>,
}

/// A registration the table refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// A one-topic registration arrived for a member not yet registered
    /// (Java's guard against an incremental registration racing ahead).
    #[error("register broker failed")]
    SingleTopicBeforeFullRegistration,
}

/// What is left of a registration once [`RouteTable::begin_registration`]
/// has done the broker's part: its topics' queue data, applied in slices
/// with the table unlocked in between
/// ([`SharedRoutes::register_broker`](super::SharedRoutes::register_broker)).
#[derive(Debug, Clone)]
pub struct TopicWork {
    key: BrokerKey,
    /// Shared by the topic entries this registration writes.
    broker_name: BrokerName,
    /// The live entry's generation the broker's part wrote: a later
    /// registration or an unregistration of the broker changes it, and the
    /// rest of this one's topics are then not applied.
    generation: u64,
    /// Whether this member's topics make routes at all (master or prime slave).
    applies: bool,
    /// Write permission is dropped: the member is the prime slave of an
    /// acting-master group, or the group's write permission was wiped.
    clear_write: bool,
    /// `deleteTopicWithBrokerRegistration` for a body without mappings.
    delete_missing: bool,
    /// The registration's DataVersion.
    data_version: DataVersion,
    /// The group has topics deleted at this DataVersion, which the
    /// registration leaves unwritten ([`super::tombstone`]).
    tombstoned: bool,
    /// The broker's DataVersion is the one it registered last: a topic it
    /// routes already keeps its sys flag. A compressed registration body
    /// (`compressedRegister`) carries no sys flag at all and reads as 0, and
    /// Java, leaving such a registration's topics alone, keeps the flags the
    /// broker last sent uncompressed or with a new DataVersion.
    keeps_sys_flags: bool,
}

impl TopicWork {
    /// The topic names of a registration's whole list, for
    /// [`RouteTable::topics_to_drop`].
    pub fn keep<'a>(&self, all_topics: &'a [TopicConfig]) -> HashSet<&'a str> {
        all_topics.iter().map(|tc| tc.topic_name.as_str()).collect()
    }

    /// Whether the topics the registration does not list are to be dropped
    /// ([`RouteTable::finish_topics`]); when not, nothing needs their names.
    pub fn drops_missing(&self) -> bool {
        self.applies && self.delete_missing
    }

    /// Whether `changes`, found before this work's broker part was written,
    /// still say which topics differ from the table: nothing wrote the
    /// topic map since (`topic_edits`, read with the write lock held, is
    /// the count the comparison saw), and the registration writes each
    /// permission as sent.
    pub fn may_use(&self, changes: &TopicChanges, topic_edits: u64) -> bool {
        !self.clear_write && changes.edits == topic_edits
    }

    /// Whether this member's topics make routes at all (master or prime
    /// slave); when not, nothing of its list is written.
    pub fn applies(&self) -> bool {
        self.applies
    }

    /// Whether every topic of the registration is written as sent: it
    /// makes routes and its permissions are kept. Its DataVersion does not
    /// matter: a broker registering in chunks (`enableSplitRegistration`)
    /// may send them all with one DataVersion, and Java then leaves a
    /// change to a topic it routes already unapplied in every chunk but
    /// the first.
    ///
    /// Nor is a registration written as sent while its group has topics
    /// deleted at its DataVersion: it may list them, and leaves them out.
    pub fn writes_as_sent(&self) -> bool {
        self.applies && !self.clear_write && !self.tombstoned && !self.keeps_sys_flags
    }

    /// Whether the table still holds the registration this work belongs to.
    pub fn is_current(&self, table: &RouteTable) -> bool {
        table
            .live
            .get(&self.key)
            .is_some_and(|live| live.generation == self.generation)
    }
}

/// The topics of a registration that differ from the table
/// ([`RouteTable::topic_changes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicChanges {
    /// The topic map's write count when compared.
    edits: u64,
    /// Positions in the registration's topic list to write, ascending.
    positions: Vec<usize>,
    /// Topics of the registration the table did not have at all.
    new_topics: usize,
}

impl TopicChanges {
    /// No topic differs, as of the topic map's write count `edits`.
    pub fn none(edits: u64) -> TopicChanges {
        TopicChanges {
            edits,
            positions: Vec::new(),
            new_topics: 0,
        }
    }

    /// Positions in the registration's topic list to write, ascending.
    pub fn positions(&self) -> &[usize] {
        &self.positions
    }

    /// How many topics the table lacked: what to reserve for.
    pub fn new_topics(&self) -> usize {
        self.new_topics
    }
}

/// `positions` and every other position naming one of their topics. A
/// list naming a topic twice is written in order, the last one winning; a
/// later repeat that matches the table must still be written after an
/// earlier one that does not, or the earlier one would win.
fn with_repeats(topics: &[TopicConfig], positions: &[usize]) -> Vec<usize> {
    let names: HashSet<&str> = positions
        .iter()
        .map(|&position| topics[position].topic_name.as_str())
        .collect();
    topics
        .iter()
        .enumerate()
        .filter(|(_, tc)| names.contains(tc.topic_name.as_str()))
        .map(|(position, _)| position)
        .collect()
}

/// What of the table a registration may change that routes, cluster info
/// or the route snapshot are made of, taken before and after its first hold
/// of the write lock: equal means the registration changed nothing anyone
/// reads from the table but its liveness and DataVersion.
#[derive(Debug, PartialEq)]
pub(super) struct RouteInputs {
    group: Option<BrokerGroup>,
    in_cluster: bool,
    filter_servers: Option<Vec<String>>,
    topic_edits: u64,
    /// Whether the broker's entry exists, is provisional or relayed, and
    /// what the snapshot keeps of it besides its DataVersion.
    live: Option<(bool, Option<Arc<str>>, String, u64)>,
}

impl RouteTable {
    /// The [`RouteInputs`] a registration of the broker at `key`, of group
    /// `broker_name`, may change. Static-topic mappings are not among them:
    /// a registration that carries some counts as a change without them
    /// being compared (rare, and they are large).
    pub(super) fn route_inputs(&self, key: &BrokerKey, broker_name: &str) -> RouteInputs {
        RouteInputs {
            group: self.groups.get(broker_name).cloned(),
            in_cluster: self
                .clusters
                .get(&key.cluster)
                .is_some_and(|names| names.contains(broker_name)),
            filter_servers: self.filter_servers.get(key).cloned(),
            topic_edits: self.topics.edits(),
            live: self.live.get(key).map(|live| {
                (
                    live.provisional,
                    live.relayed_from.clone(),
                    live.ha_server_addr.clone(),
                    live.timeout_ms,
                )
            }),
        }
    }

    /// Grows the topic map for `new_topics` more, once, rather than
    /// rehashing it while they are written (which a sliced registration
    /// does in between route queries).
    pub fn reserve_topics(&mut self, new_topics: usize) {
        if new_topics > 0 {
            self.topics.edit().reserve(new_topics);
        }
    }

    /// Whether the topic map holds the topics of the broker at `key` as its
    /// last registration, of list `fingerprint`, sent them, and has not been
    /// written since ([`RouteTable::record_held_topics`]): then a
    /// registration with that list differs in no topic.
    pub fn holds_topics(&self, key: &BrokerKey, fingerprint: u64) -> bool {
        let edits = self.topics.edits();
        self.live
            .get(key)
            .and_then(|live| live.held_topics)
            .is_some_and(|held| held.fingerprint == fingerprint && held.edits == edits)
    }

    /// What the topic map holds of the master at `key` of group
    /// `broker_name`, when its last registration came in a body of
    /// fingerprint `body` ([`HeldBody`]) whose topics the map holds as sent,
    /// unwritten since: then a registration repeating that body but for its
    /// DataVersion differs in no topic, and, the broker being its group's
    /// master at that address already, writes no topic. Only for a broker
    /// registered here directly.
    pub fn held_body(&self, key: &BrokerKey, broker_name: &str, body: u128) -> Option<HeldTopics> {
        let held = self
            .live
            .get(key)
            .filter(|live| live.is_direct())?
            .held_topics
            .filter(|held| held.edits == self.topics.edits())
            .filter(|held| held.body.is_some_and(|held| held.fingerprint == body))?;
        let master = self.groups.get(broker_name)?.addrs.get(&MASTER_ID)?;
        (*master == key.addr).then_some(held)
    }

    /// Notes that the topic map now holds every topic of `work`'s
    /// registration, of list `fingerprint` and sent in `body`, as sent;
    /// nothing if the registration is no longer current.
    pub fn record_held_topics(
        &mut self,
        work: &TopicWork,
        fingerprint: u64,
        body: Option<HeldBody>,
    ) {
        let edits = self.topics.edits();
        let generation = work.generation;
        if let Some(live) = self
            .live
            .get_mut(&work.key)
            .filter(|live| live.generation == generation)
        {
            live.held_topics = Some(HeldTopics {
                fingerprint,
                edits,
                body,
            });
        }
    }

    /// How many writes the topic map has had: equal counts at two moments
    /// mean no entry changed in between.
    pub fn topic_edits(&self) -> u64 {
        self.topics.edits()
    }

    /// Compares a registration's topics with the table: the positions in
    /// `topics` of those whose entry of `broker_name` is missing or holds
    /// other numbers. Writing any other one would leave the table as it is,
    /// so a registration whose topics all match needs no write lock for
    /// them (a broker re-registering its unchanged topics with a new
    /// DataVersion, which is most registrations). Reads only: registrations
    /// of different brokers compare under the read lock side by side.
    ///
    /// The comparison assumes the registration keeps each topic's
    /// permission as sent; a registration whose write permission is
    /// dropped (a prime slave of an acting-master group, a group whose
    /// write permission was wiped) does not use it ([`TopicWork::may_use`]).
    pub fn topic_changes(&self, broker_name: &str, topics: &[TopicConfig]) -> TopicChanges {
        let mut positions = Vec::new();
        let mut new_topics = 0;
        for (position, tc) in topics.iter().enumerate() {
            let held = match self.topics.get(tc.topic_name.as_str()) {
                Some(queues) => queues.get(broker_name),
                None => {
                    new_topics += 1;
                    None
                }
            };
            if held != Some(&TopicQueue::sent(tc, false)) {
                positions.push(position);
            }
        }
        if !positions.is_empty() && positions.len() < topics.len() {
            positions = with_repeats(topics, &positions);
        }
        TopicChanges {
            edits: self.topics.edits(),
            positions,
            new_topics,
        }
    }

    /// The broker's part of REGISTER_BROKER: group, address, live entry,
    /// mappings, filter servers, notifications. Its topics are left to
    /// [`RouteTable::apply_topics`] and [`RouteTable::finish_topics`]
    /// with the returned work (`None` when there is nothing to apply: a
    /// stale registration that was ignored).
    pub fn begin_registration(
        &mut self,
        reg: &BrokerRegistration,
        now: Millis,
        notify_min_id: bool,
        delete_missing_topics: bool,
    ) -> Result<(RegisterOutcome, Option<TopicWork>), RegisterError> {
        self.begin_registration_from(
            reg,
            now,
            notify_min_id,
            delete_missing_topics,
            &RegistrationSource::Direct,
        )
    }

    /// [`begin_registration`](Self::begin_registration) of a registration
    /// from `source`. A relayed one is not applied over a broker held
    /// directly ([`RegisterOutcome::kept_direct`]), and notifies nobody.
    pub fn begin_registration_from(
        &mut self,
        reg: &BrokerRegistration,
        now: Millis,
        notify_min_id: bool,
        delete_missing_topics: bool,
        source: &RegistrationSource,
    ) -> Result<(RegisterOutcome, Option<TopicWork>), RegisterError> {
        let key = BrokerKey::new(&reg.cluster, &reg.broker_addr);
        let relayed_from = match source {
            RegistrationSource::Direct => None,
            RegistrationSource::Relayed { from } => Some(from.clone()),
        };
        if relayed_from.is_some() && self.live.get(&key).is_some_and(LiveBroker::is_direct) {
            return Ok((
                RegisterOutcome {
                    kept_direct: true,
                    ..Default::default()
                },
                None,
            ));
        }
        let notify_min_id = notify_min_id && relayed_from.is_none();
        let mut outcome = RegisterOutcome {
            new_broker: !self.live.contains_key(&key),
            confirmed_restored: relayed_from.is_none()
                && self.live.get(&key).is_some_and(|live| live.provisional),
            ..Default::default()
        };

        // Evaluated before the live entry below is replaced, as Java's
        // isBrokerTopicConfigChanged: the comparison is with the broker's
        // previous registration.
        let version_changed = self.broker_topic_config_changed(&key, &reg.data_version);
        self.clusters
            .entry(reg.cluster.clone())
            .or_default()
            .insert(reg.broker_name.clone());
        let mut register_first = false;
        let group = self
            .groups
            .entry(reg.broker_name.clone())
            .or_insert_with(|| {
                register_first = true;
                BrokerGroup {
                    cluster: reg.cluster.clone(),
                    name: reg.broker_name.clone(),
                    addrs: BTreeMap::new(),
                    zone_name: None,
                    enable_acting_master: false,
                    write_perm_wiped: false,
                }
            });
        let old_version_broker = reg.enable_acting_master.is_none();
        group.enable_acting_master = reg.enable_acting_master.unwrap_or(false);
        group.zone_name = reg.zone_name.clone();

        let prev_min = group.min_id().unwrap_or(0);
        let min_id_changed = reg.broker_id < prev_min;

        // An address has one id: a slave promoted in place drops its old id here.
        group
            .addrs
            .retain(|id, addr| *id == reg.broker_id || *addr != reg.broker_addr);

        if let Some(old_addr) = group.addrs.get(&reg.broker_id) {
            if *old_addr != reg.broker_addr {
                let holder = BrokerKey::new(&reg.cluster, old_addr.clone());
                let holder_wins = self.live.get(&holder).is_some_and(|live| {
                    live.data_version.state_version > reg.data_version.state_version
                });
                if holder_wins {
                    self.live.remove(&key);
                    outcome.ignored_stale_state_version = true;
                    return Ok((outcome, None));
                }
            }
        }

        // The guard is 5.x's, against a 5.x broker's incremental one-topic registration; the
        // 4.x NameServer has none and registers a 4.x broker (no enableActingMaster) with a
        // single topic like any other.
        if !old_version_broker
            && !group.addrs.contains_key(&reg.broker_id)
            && reg.topic_configs.len() == 1
        {
            return Err(RegisterError::SingleTopicBeforeFullRegistration);
        }

        let old_addr = group.addrs.insert(reg.broker_id, reg.broker_addr.clone());
        register_first |= old_addr.is_none_or(|addr| addr.is_empty());

        let is_master = reg.broker_id == MASTER_ID;
        let is_prime_slave =
            !old_version_broker && !is_master && group.min_id() == Some(reg.broker_id);
        let acting = group.enable_acting_master;
        let applies = is_master || is_prime_slave;
        // A wipe lasts while the member it was meant for stays: a master
        // registering anew (back after it unregistered or expired) has its
        // topics written as it sends them, as Java's first registration
        // rewrites them whatever was wiped.
        if applies && register_first {
            group.write_perm_wiped = false;
        }
        let write_perm_wiped = group.write_perm_wiped;
        // Deletion marks hold against the DataVersion the deletion saw; a
        // registration with any other one comes from a broker that changed
        // since, and says what it holds now.
        let tombstoned = applies && {
            self.tombstones
                .keep_only(&reg.broker_name, &reg.data_version);
            self.tombstones.has_group(&reg.broker_name)
        };

        // Every registration's mappings, whatever its DataVersion: a split
        // registration sends them with its last chunk, under the DataVersion
        // of its first.
        if applies {
            for (topic, info) in &reg.mappings {
                self.mappings
                    .entry(topic.clone())
                    .or_default()
                    .insert(info.bname.clone(), info.clone());
            }
        }

        self.generation += 1;
        self.live.insert(
            key.clone(),
            LiveBroker {
                last_update: now,
                timeout_ms: reg
                    .heartbeat_timeout_ms
                    .unwrap_or(DEFAULT_BROKER_TIMEOUT_MS),
                data_version: reg.data_version,
                conn: reg.conn,
                ha_server_addr: reg.ha_server_addr.clone(),
                generation: self.generation,
                provisional: false,
                client_version: reg.client_version,
                held_topics: None,
                enable_acting_master: reg.enable_acting_master,
                relayed_from,
            },
        );
        let work = TopicWork {
            key: key.clone(),
            broker_name: reg.broker_name.as_str().into(),
            generation: self.generation,
            applies,
            clear_write: (is_prime_slave && acting) || write_perm_wiped,
            delete_missing: delete_missing_topics && reg.mappings.is_empty(),
            data_version: reg.data_version,
            tombstoned,
            keeps_sys_flags: !register_first && !version_changed,
        };

        match &reg.filter_servers {
            None => {}
            Some(list) if list.is_empty() => {
                self.filter_servers.remove(&key);
            }
            Some(list) => {
                self.filter_servers.insert(key, list.clone());
            }
        }

        let group = &self.groups[&reg.broker_name];
        if reg.broker_id != MASTER_ID {
            if let Some(master) = group.addrs.get(&MASTER_ID) {
                if let Some(live) = self.live.get(&BrokerKey::new(&reg.cluster, master.clone())) {
                    outcome.master_addr = Some(master.clone());
                    outcome.ha_server_addr = Some(live.ha_server_addr.clone());
                }
            }
        }

        if min_id_changed && notify_min_id {
            if let Some((&min_id, min_addr)) = group.addrs.iter().next() {
                let targets = if group.addrs.len() == 1 {
                    vec![min_addr.clone()]
                } else {
                    group
                        .addrs
                        .iter()
                        .filter(|(id, _)| **id != min_id)
                        .map(|(_, a)| a.clone())
                        .collect()
                };
                outcome.notifications.push(MinIdNotification {
                    min_broker_id: min_id,
                    min_broker_addr: min_addr.clone(),
                    offline_broker_addr: None,
                    ha_broker_addr: Some(reg.ha_server_addr.clone()),
                    targets,
                });
            }
        }
        Ok((outcome, Some(work)))
    }

    /// Writes the queue data of `topics`, some of a registration's topics
    /// ([`RouteTable::begin_registration`]); nothing if the registration is
    /// no longer current.
    pub fn apply_topics(&mut self, work: &TopicWork, topics: &[TopicConfig]) {
        if !work.applies || !work.is_current(self) {
            return;
        }
        for tc in topics {
            self.apply_topic(work, tc);
        }
    }

    /// Writes the queue data of the topics at `positions` of a
    /// registration's list (found by [`RouteTable::topic_changes`], and
    /// valid only while [`TopicWork::may_use`] says so); nothing if the
    /// registration is no longer current.
    pub fn apply_topic_changes(
        &mut self,
        work: &TopicWork,
        topics: &[TopicConfig],
        positions: &[usize],
    ) {
        if !work.applies || !work.is_current(self) {
            return;
        }
        for &position in positions {
            self.apply_topic(work, &topics[position]);
        }
    }

    /// Writes one topic's queue data as the registration sends it (less
    /// the write permission where it is dropped), whether or not its
    /// DataVersion is the broker's last one: the broker's registration is
    /// what the route of its topics is.
    ///
    /// A topic deleted from the group at the registration's DataVersion is
    /// left out: the registration was sent before the broker forgot it.
    fn apply_topic(&mut self, work: &TopicWork, tc: &TopicConfig) {
        if work.tombstoned
            && self
                .tombstones
                .holds(&work.broker_name, &tc.topic_name, &work.data_version)
        {
            return;
        }
        let mut queue = TopicQueue::sent(tc, work.clear_write);
        // Read before writing: most registrations that get here (a relayed
        // copy, written whole; a broker re-registering its topics unchanged)
        // find the entry as they would write it. Opening the map for writing counts
        // as a change, and that count is what proves to registrations
        // compared under the read lock, and to the pull answers' kept topic
        // lists, that nothing changed since: counting writes that change
        // nothing sent them all down their slow paths, and each of those
        // wrote again.
        let existing = self
            .topics
            .get(tc.topic_name.as_str())
            .and_then(|queues| queues.get(&*work.broker_name))
            .copied();
        if let Some(existing) = existing.filter(|_| work.keeps_sys_flags) {
            queue.topic_sys_flag = existing.topic_sys_flag;
        }
        if existing == Some(queue) {
            return;
        }
        let topics = self.topics.edit();
        // Update in place where the topic is there, allocating nothing (a
        // broker may carry tens of thousands of topics).
        let queues = match topics.get_mut(tc.topic_name.as_str()) {
            Some(queues) => queues,
            None => topics.entry(tc.topic_name.clone()).or_default(),
        };
        match queues.get_mut(&*work.broker_name) {
            Some(held) => *held = queue,
            None => {
                queues.insert(work.broker_name.clone(), queue);
            }
        }
    }

    /// The end of a registration's topics: with
    /// `deleteTopicWithBrokerRegistration`, the broker's queue data of every
    /// topic not among `all_topics` (the registration's whole list) goes.
    /// Running it after the upserts leaves what running it before would: it
    /// touches only topics the registration does not list.
    pub fn finish_topics(&mut self, work: &TopicWork, all_topics: &[TopicConfig]) {
        if !work.drops_missing() {
            return;
        }
        let keep = work.keep(all_topics);
        let gone = self.topics_to_drop(work, &keep);
        self.drop_topics(work, &gone);
    }

    /// Whether no topic outside `reg`'s list can hold its broker's queue
    /// data, so that [`RouteTable::finish_topics`] would find nothing to
    /// drop: asked before the registration is written. That holds when the
    /// broker's group does not exist yet (a group's queue data leaves every
    /// topic with its last member, and nothing else adds queue data of an
    /// unknown broker), and for a relayed copy whose list (`fingerprint`) is
    /// the one the previous relayed copy of the same broker applied in full,
    /// dropping the rest then. Without it every pulled registration would
    /// read the whole topic map under the write lock: half a node's CPU
    /// with 1,000 relayed brokers of 100 topics re-registering.
    pub fn none_to_drop(
        &self,
        reg: &BrokerRegistration,
        fingerprint: Option<u64>,
        source: &RegistrationSource,
    ) -> bool {
        if !self.groups.contains_key(&reg.broker_name) {
            return true;
        }
        // Asked under the write lock of every registration: a direct one
        // leaves before the key is built.
        let (RegistrationSource::Relayed { .. }, Some(fingerprint)) = (source, fingerprint) else {
            return false;
        };
        let key = BrokerKey::new(&reg.cluster, &reg.broker_addr);
        self.live
            .get(&key)
            .filter(|live| live.relayed_from.is_some())
            .and_then(|live| live.held_topics)
            .is_some_and(|held| held.fingerprint == fingerprint)
    }

    /// The topics [`RouteTable::finish_topics`] removes the broker from:
    /// those with its queue data that are not in `keep`. Reads only, so a
    /// sliced registration finds them under the read lock.
    pub fn topics_to_drop(&self, work: &TopicWork, keep: &HashSet<&str>) -> Vec<String> {
        if !work.drops_missing() || !work.is_current(self) {
            return Vec::new();
        }
        self.topics
            .iter()
            .filter(|(topic, queues)| {
                !keep.contains(topic.as_str()) && queues.contains_key(&*work.broker_name)
            })
            .map(|(topic, _)| topic.clone())
            .collect()
    }

    /// Removes the broker's queue data from `topics` (found by
    /// [`RouteTable::topics_to_drop`]), and topics left with none; nothing
    /// if the registration is no longer current.
    pub fn drop_topics(&mut self, work: &TopicWork, topics: &[String]) {
        if topics.is_empty() || !work.is_current(self) {
            return;
        }
        let table = self.topics.edit();
        for topic in topics {
            if let Some(queues) = table.get_mut(topic) {
                queues.remove(&*work.broker_name);
                if queues.is_empty() {
                    table.remove(topic);
                }
            }
        }
    }

    /// Java `isBrokerTopicConfigChanged`: the broker is not live, or its
    /// stored DataVersion differs from `version` (all three fields compared).
    /// A restored (provisional) or relayed entry counts as changed: it only
    /// stands in for the broker until the broker itself says what it holds
    /// (and a newer relayed copy is written whole).
    pub fn broker_topic_config_changed(&self, key: &BrokerKey, version: &DataVersion) -> bool {
        self.live
            .get(key)
            .is_none_or(|live| !live.is_direct() || live.data_version != *version)
    }

    /// Java `isTopicConfigChanged`: the broker's version changed, or the topic
    /// has no queue data of `broker_name` (deleted from the NameServer, or new).
    pub fn topic_config_changed(
        &self,
        key: &BrokerKey,
        version: &DataVersion,
        broker_name: &str,
        topic: &str,
    ) -> bool {
        self.broker_topic_config_changed(key, version)
            || self
                .topics
                .get(topic)
                .is_none_or(|queues| !queues.contains_key(broker_name))
    }

    /// BROKER_HEARTBEAT and the heartbeat side of QUERY_DATA_VERSION: refresh
    /// a live broker's last-update time. Returns whether it was live.
    pub fn touch(&mut self, key: &BrokerKey, now: Millis) -> bool {
        match self.live.get_mut(key) {
            Some(live) => {
                live.last_update = now;
                true
            }
            None => false,
        }
    }

    /// QUERY_DATA_VERSION: whether the broker's data changed (or it is not
    /// live), then the heartbeat; returns `(changed, stored version)`.
    pub fn query_data_version(
        &mut self,
        key: &BrokerKey,
        version: Option<&DataVersion>,
        now: Millis,
    ) -> (bool, Option<DataVersion>) {
        let stored = self.live.get(key).map(|live| live.data_version);
        let changed = match (&stored, version) {
            (Some(stored), Some(version)) => {
                stored != version || self.live.get(key).is_some_and(|live| !live.is_direct())
            }
            _ => true,
        };
        self.touch(key, now);
        (changed, stored)
    }
}
