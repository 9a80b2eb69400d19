//! A directly held broker's registration as the table keeps it, for
//! another NameServer of the cluster to pull (WAYMARK_PULL_REGISTRATION).
//!
//! The table does not keep the bytes a broker sent; it keeps what they
//! made of it: the broker's group and live entry, and, for a broker whose
//! topics make routes (a master, or the prime slave of a group without
//! one), its group's queue data and static-topic mappings. That is what is
//! handed on, rebuilt as a registration: applied elsewhere, it makes the
//! same routes. Permission changes an operator made here (wipe or add write
//! permission) go with it, since they are in the queue data.

use rmq_protocol::TopicConfig;

use super::register::BrokerRegistration;
use super::table::{BrokerKey, RouteTable};
use super::{ConnId, MASTER_ID};

impl RouteTable {
    /// The registration of the broker at `key` as this table holds it,
    /// if the broker registered with this NameServer itself (not restored
    /// and unconfirmed), or, with `relayed_ok`, holds it as relayed. `conn`
    /// is set to `conn`.
    pub fn held_registration(
        &self,
        key: &BrokerKey,
        conn: ConnId,
        relayed_ok: bool,
    ) -> Option<BrokerRegistration> {
        self.held_registration_with(key, conn, relayed_ok, |_, collect| collect())
    }

    /// [`RouteTable::held_registration`], its topics given by `topics`
    /// (the broker name, and what collects them from the map) where a list
    /// collected earlier may stand in.
    pub fn held_registration_with(
        &self,
        key: &BrokerKey,
        conn: ConnId,
        relayed_ok: bool,
        topics: impl FnOnce(&str, &dyn Fn() -> Vec<TopicConfig>) -> Vec<TopicConfig>,
    ) -> Option<BrokerRegistration> {
        let live = self
            .live
            .get(key)
            .filter(|live| live.is_direct() || (relayed_ok && live.relayed_from.is_some()))?;
        let group = self.groups.values().find(|group| {
            group.cluster == key.cluster && group.addrs.values().any(|addr| *addr == key.addr)
        })?;
        let (&broker_id, _) = group.addrs.iter().find(|(_, addr)| **addr == key.addr)?;
        let makes_routes = broker_id == MASTER_ID
            || (live.enable_acting_master.is_some() && group.min_id() == Some(broker_id));
        let (topic_configs, mappings) = if makes_routes {
            (
                topics(&group.name, &|| self.group_topics(&group.name)),
                self.group_mappings(&group.name),
            )
        } else {
            (Vec::new(), Default::default())
        };
        Some(BrokerRegistration {
            cluster: key.cluster.clone(),
            broker_addr: key.addr.clone(),
            broker_name: group.name.clone(),
            broker_id,
            ha_server_addr: live.ha_server_addr.clone(),
            zone_name: group.zone_name.clone(),
            heartbeat_timeout_ms: Some(live.timeout_ms),
            enable_acting_master: live.enable_acting_master,
            data_version: live.data_version,
            topic_configs,
            mappings,
            filter_servers: Some(self.filter_servers.get(key).cloned().unwrap_or_default()),
            conn,
            client_version: live.client_version,
        })
    }

    /// Every topic with queue data of `broker_name`, as a topic config
    /// carrying its numbers (the fields the table does not keep at their
    /// defaults, which no route shows).
    fn group_topics(&self, broker_name: &str) -> Vec<TopicConfig> {
        self.topics
            .iter()
            .filter_map(|(topic, queues)| {
                let queue = queues.get(broker_name)?;
                let mut config = TopicConfig::new(topic);
                config.read_queue_nums = queue.read_queue_nums;
                config.write_queue_nums = queue.write_queue_nums;
                config.perm = queue.perm;
                config.topic_sys_flag = queue.topic_sys_flag;
                Some(config)
            })
            .collect()
    }

    fn group_mappings(
        &self,
        broker_name: &str,
    ) -> std::collections::BTreeMap<String, rmq_protocol::TopicQueueMappingInfo> {
        self.mappings
            .iter()
            .filter_map(|(topic, by_broker)| {
                by_broker
                    .get(broker_name)
                    .map(|info| (topic.clone(), info.clone()))
            })
            .collect()
    }
}
