//! Broker registration: nameserver.md §5, step by step.
//!
//! One call is one atomic registration. It returns the response fields and
//! the min-broker-id notifications to send; sending is the caller's job,
//! after the table lock is released (Java sends while holding its lock).

use std::collections::BTreeMap;

use rmq_protocol::{DataVersion, QueueData, TopicConfig, TopicQueueMappingInfo};

use super::table::{BrokerGroup, BrokerKey, LiveBroker, RouteTable};
use super::{perm, ConnId, Millis, DEFAULT_BROKER_TIMEOUT_MS, MASTER_ID};

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
    /// True when a higher stateVersion at another address won and this
    /// registration was ignored (nameserver.md §5.1 step 6).
    pub ignored_stale_state_version: bool,
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

impl RouteTable {
    /// REGISTER_BROKER. `notify_min_id` enables the notification of §5.4;
    /// `delete_missing_topics` is `deleteTopicWithBrokerRegistration`.
    pub fn register_broker(
        &mut self,
        reg: BrokerRegistration,
        now: Millis,
        notify_min_id: bool,
        delete_missing_topics: bool,
    ) -> Result<RegisterOutcome, RegisterError> {
        let key = BrokerKey::new(&reg.cluster, &reg.broker_addr);
        let mut outcome = RegisterOutcome {
            new_broker: !self.live.contains_key(&key),
            ..Default::default()
        };

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
                    return Ok(outcome);
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

        // Evaluated before the live entry below is replaced (nameserver.md §5.3).
        let config_changed = self.broker_topic_config_changed(&key, &reg.data_version);

        if is_master || is_prime_slave {
            if delete_missing_topics && reg.mappings.is_empty() {
                let keep: std::collections::HashSet<&str> = reg
                    .topic_configs
                    .iter()
                    .map(|tc| tc.topic_name.as_str())
                    .collect();
                self.topics.retain(|topic, queues| {
                    if !keep.contains(topic.as_str()) {
                        queues.remove(&reg.broker_name);
                    }
                    !queues.is_empty()
                });
            }
            for tc in &reg.topic_configs {
                // Re-registrations mostly find the topic and this broker's
                // queue data already there: update in place, allocating
                // nothing (a broker may carry tens of thousands of topics).
                let queues = match self.topics.get_mut(tc.topic_name.as_str()) {
                    Some(queues) => queues,
                    None => self.topics.entry(tc.topic_name.clone()).or_default(),
                };
                let existing = queues.get_mut(reg.broker_name.as_str());
                let topic_changed = config_changed || existing.is_none();
                if !(register_first || topic_changed) {
                    continue;
                }
                let mut perm = tc.perm;
                if is_prime_slave && acting {
                    perm &= !perm::WRITE;
                }
                match existing {
                    Some(queue) => {
                        queue.read_queue_nums = tc.read_queue_nums;
                        queue.write_queue_nums = tc.write_queue_nums;
                        queue.perm = perm;
                        queue.topic_sys_flag = tc.topic_sys_flag;
                    }
                    None => {
                        queues.insert(
                            reg.broker_name.clone(),
                            QueueData {
                                broker_name: reg.broker_name.clone(),
                                read_queue_nums: tc.read_queue_nums,
                                write_queue_nums: tc.write_queue_nums,
                                perm,
                                topic_sys_flag: tc.topic_sys_flag,
                            },
                        );
                    }
                }
            }
            if config_changed || register_first {
                for (topic, info) in &reg.mappings {
                    self.mappings
                        .entry(topic.clone())
                        .or_default()
                        .insert(info.bname.clone(), info.clone());
                }
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
            },
        );

        match reg.filter_servers {
            None => {}
            Some(list) if list.is_empty() => {
                self.filter_servers.remove(&key);
            }
            Some(list) => {
                self.filter_servers.insert(key, list);
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
        Ok(outcome)
    }

    /// Java `isBrokerTopicConfigChanged`: the broker is not live, or its
    /// stored DataVersion differs from `version` (all three fields compared).
    pub fn broker_topic_config_changed(&self, key: &BrokerKey, version: &DataVersion) -> bool {
        self.live
            .get(key)
            .is_none_or(|live| live.data_version != *version)
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
            (Some(stored), Some(version)) => stored != version,
            _ => true,
        };
        self.touch(key, now);
        (changed, stored)
    }
}
