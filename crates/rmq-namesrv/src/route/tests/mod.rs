//! Unit tests of the route tables, by what each operation returns and what
//! the tables then answer. Registrations go through the server's path,
//! `SharedRoutes::register_broker`; the one-piece registration of
//! `oracle.rs` is only what that path is compared with. One file per
//! concern; files named `java_*` mirror one Java unit test class each (of
//! `org.apache.rocketmq.namesrv`), the others pin registration, liveness and
//! topic administration scenarios.

mod batch_unregistration;
mod deleted_topics;
mod fencing;
mod java_route_info_manager;
mod java_route_info_manager_new;
mod java_route_info_manager_new_acting;
mod java_zone_route_hook;
mod liveness_expiry;
mod notifications;
mod oracle;
mod register_scenarios;
mod regression_stale_unregistration;
mod relayed_topics;
mod sliced_registration;
mod snapshot;
mod topic_admin;
mod topic_changes;

use std::collections::BTreeMap;

use rmq_protocol::{DataVersion, QueueData, TopicConfig, TopicRouteData};

use super::{
    BrokerKey, BrokerRegistration, ConnId, Millis, RegisterError, RegisterOutcome, RouteTable,
    SharedRoutes, UnregisterOutcome, Unregistration,
};

/// A registration with the defaults most tests want: a 5.x broker
/// (`enableActingMaster=false`), DataVersion {1, 0, 100}, no topics, an empty
/// filter-server list, HA address derived from the address, connection 1.
pub(super) fn broker(cluster: &str, name: &str, addr: &str, id: i64) -> BrokerRegistration {
    BrokerRegistration {
        cluster: cluster.to_owned(),
        broker_addr: addr.to_owned(),
        broker_name: name.to_owned(),
        broker_id: id,
        ha_server_addr: format!("ha-{addr}"),
        zone_name: None,
        heartbeat_timeout_ms: None,
        enable_acting_master: Some(false),
        data_version: DataVersion::new(1, 0, 100),
        topic_configs: Vec::new(),
        mappings: BTreeMap::new(),
        filter_servers: Some(Vec::new()),
        conn: 1,
        client_version: 0,
    }
}

/// Builder-style edits of a registration.
pub(super) trait Edit: Sized {
    fn topics(self, topics: &[TopicConfig]) -> Self;
    fn version(self, counter: i64, timestamp: i64) -> Self;
    fn state_version(self, state_version: i64) -> Self;
    fn acting(self, enable_acting_master: Option<bool>) -> Self;
    fn conn(self, conn: ConnId) -> Self;
    fn ha(self, ha: &str) -> Self;
    fn timeout(self, ms: u64) -> Self;
    fn zone(self, zone: &str) -> Self;
}

impl Edit for BrokerRegistration {
    fn topics(mut self, topics: &[TopicConfig]) -> Self {
        self.topic_configs = topics.to_vec();
        self
    }
    fn version(mut self, counter: i64, timestamp: i64) -> Self {
        self.data_version.counter = counter;
        self.data_version.timestamp = timestamp;
        self
    }
    fn state_version(mut self, state_version: i64) -> Self {
        self.data_version.state_version = state_version;
        self
    }
    fn acting(mut self, enable_acting_master: Option<bool>) -> Self {
        self.enable_acting_master = enable_acting_master;
        self
    }
    fn conn(mut self, conn: ConnId) -> Self {
        self.conn = conn;
        self
    }
    fn ha(mut self, ha: &str) -> Self {
        ha.clone_into(&mut self.ha_server_addr);
        self
    }
    fn timeout(mut self, ms: u64) -> Self {
        self.heartbeat_timeout_ms = Some(ms);
        self
    }
    fn zone(mut self, zone: &str) -> Self {
        self.zone_name = Some(zone.to_owned());
        self
    }
}

/// A topic config with r = w = 8, perm 6 (RouteInfoManagerNewTest's topics).
pub(super) fn topic(name: &str) -> TopicConfig {
    TopicConfig {
        read_queue_nums: 8,
        write_queue_nums: 8,
        perm: 6,
        ..TopicConfig::new(name)
    }
}

/// A topic config with explicit queue counts and perm.
pub(super) fn topic_with(name: &str, read: i32, write: i32, perm: i32) -> TopicConfig {
    TopicConfig {
        read_queue_nums: read,
        write_queue_nums: write,
        perm,
        ..TopicConfig::new(name)
    }
}

/// The time every registration happens at unless a test says otherwise.
pub(super) const T0: Millis = 1_000;

/// Registers at [`T0`] through the server's path, no notifications, topics kept.
pub(super) fn register(routes: &SharedRoutes, reg: BrokerRegistration) -> RegisterOutcome {
    try_register(routes, reg).expect("registration accepted")
}

/// Registers at [`T0`] through the server's path and returns the table's verdict.
pub(super) fn try_register(
    routes: &SharedRoutes,
    reg: BrokerRegistration,
) -> Result<RegisterOutcome, RegisterError> {
    routes.register_broker(reg, T0, false, false)
}

/// An unregistration as UNREGISTER_BROKER queues it, decided now.
pub(super) fn unregistration(
    table: &RouteTable,
    cluster: &str,
    addr: &str,
    name: &str,
    id: i64,
) -> Unregistration {
    Unregistration {
        key: BrokerKey::new(cluster, addr),
        broker_name: name.to_owned(),
        broker_id: id,
        fence: table.generation(),
    }
}

/// Decides and runs one unregistration at once (Java's synchronous
/// `unregisterBroker`).
pub(super) fn unregister(
    routes: &SharedRoutes,
    cluster: &str,
    addr: &str,
    name: &str,
    id: i64,
) -> UnregisterOutcome {
    let request = unregistration(&routes.read(), cluster, addr, name, id);
    routes.write().unregister_batch(&[request], false)
}

/// Every topic's queue data, sorted, for comparing two tables.
pub(super) fn contents(table: &RouteTable) -> Vec<(String, String)> {
    table
        .all_topics()
        .into_iter()
        .map(|topic| {
            let queues = format!("{:?}", table.queue_datas(&topic));
            (topic, queues)
        })
        .collect()
}

/// The route with `supportActingMaster` as given.
pub(super) fn route(table: &RouteTable, topic: &str, acting: bool) -> Option<TopicRouteData> {
    table.topic_route(topic, acting)
}

/// The address map of the one broker data named `name` in `route`.
pub(super) fn addrs_of(route: &TopicRouteData, name: &str) -> BTreeMap<i64, String> {
    route
        .broker_datas
        .iter()
        .find(|b| b.broker_name == name)
        .unwrap_or_else(|| panic!("no broker data {name} in {route:?}"))
        .broker_addrs
        .clone()
}

/// The queue data of `name` in `route`.
pub(super) fn queue_of<'a>(route: &'a TopicRouteData, name: &str) -> &'a QueueData {
    route
        .queue_datas
        .iter()
        .find(|q| q.broker_name == name)
        .unwrap_or_else(|| panic!("no queue data {name} in {route:?}"))
}

/// `{id: addr, ...}` from pairs.
pub(super) fn ids(pairs: &[(i64, &str)]) -> BTreeMap<i64, String> {
    pairs.iter().map(|(id, a)| (*id, (*a).to_owned())).collect()
}

/// PermName.isWriteable.
pub(super) fn writable(perm: i32) -> bool {
    perm & super::perm::WRITE != 0
}
