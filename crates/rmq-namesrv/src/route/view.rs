//! Route assembly for GET_ROUTEINFO_BY_TOPIC, as Java's
//! `RouteInfoManager.pickupTopicRouteData` and `ZoneRouteRPCHook` do it:
//! queue and broker data of a topic, the acting-master rewrite, and zone
//! filtering.

use std::collections::BTreeMap;

use rmq_protocol::TopicRouteData;

use super::table::{BrokerKey, RouteTable};
use super::{perm, MASTER_ID};

/// Topics of this prefix are how acting-master brokers find their group
/// members; their route is never rewritten.
const SYNC_BROKER_MEMBER_PREFIX: &str = "rmq_sys_SYNC_BROKER_MEMBER_";

/// A zone a client asked to be routed within (`__ZONE_MODE` + `__ZONE_NAME`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneFilter {
    /// The zone name, compared ignoring case.
    pub zone: String,
}

impl RouteTable {
    /// The route of `topic`, or `None` when it has no queue data or none of
    /// its broker groups exists. `acting_master` is `supportActingMaster`.
    pub fn topic_route(&self, topic: &str, acting_master: bool) -> Option<TopicRouteData> {
        let queues = self.topics.get(topic)?;
        let mut route = TopicRouteData {
            queue_datas: queues
                .iter()
                .map(|(name, queue)| queue.to_queue_data(name))
                .collect(),
            ..TopicRouteData::default()
        };
        for name in queues.keys() {
            let Some(group) = self.groups.get(&**name) else {
                continue;
            };
            if !self.filter_servers.is_empty() {
                for addr in group.addrs.values() {
                    let key = BrokerKey::new(&group.cluster, addr.clone());
                    if let Some(servers) = self.filter_servers.get(&key) {
                        route
                            .filter_server_table
                            .insert(addr.clone(), servers.clone());
                    }
                }
            }
            route.broker_datas.push(group.to_broker_data());
        }
        if route.broker_datas.is_empty() {
            return None;
        }
        route.topic_queue_mapping_by_broker = self.mappings.get(topic).cloned();
        if acting_master && !topic.starts_with(SYNC_BROKER_MEMBER_PREFIX) {
            rewrite_acting_master(&mut route);
        }
        Some(route)
    }
}

/// A group without master whose queue data is read-only shows its smallest
/// slave as id 0, so clients read from it as from a master. Tables untouched.
fn rewrite_acting_master(route: &mut TopicRouteData) {
    let queue_perm: BTreeMap<&str, i32> = route
        .queue_datas
        .iter()
        .rev() // the first entry per name wins, as Java's linear search
        .map(|q| (q.broker_name.as_str(), q.perm))
        .collect();
    for broker in &mut route.broker_datas {
        if broker.broker_addrs.is_empty()
            || broker.broker_addrs.contains_key(&MASTER_ID)
            || !broker.enable_acting_master
        {
            continue;
        }
        let writable = queue_perm
            .get(broker.broker_name.as_str())
            .is_some_and(|p| p & perm::WRITE != 0);
        if !writable {
            if let Some((_, addr)) = broker.broker_addrs.pop_first() {
                broker.broker_addrs.insert(MASTER_ID, addr);
            }
        }
    }
}

impl ZoneFilter {
    /// From a request's `__ZONE_MODE` (already read as Java
    /// `Boolean.parseBoolean`) and `__ZONE_NAME`: active only when the mode is
    /// true and the name is not blank. The name is compared as sent.
    pub fn from_request(mode: Option<bool>, name: Option<&str>) -> Option<ZoneFilter> {
        let name = name.filter(|z| !z.trim().is_empty())?;
        (mode == Some(true)).then(|| ZoneFilter {
            zone: name.to_owned(),
        })
    }

    /// Keeps broker groups of the zone and groups without master; drops the
    /// others with their queue and filter-server data.
    pub fn apply(&self, route: &mut TopicRouteData) {
        let mut removed = Vec::new();
        route.broker_datas.retain(|broker| {
            let keep = !broker.broker_addrs.contains_key(&MASTER_ID)
                || broker
                    .zone_name
                    .as_deref()
                    .is_some_and(|zone| zone.eq_ignore_ascii_case(&self.zone));
            if !keep {
                removed.push(broker.clone());
            }
            keep
        });
        route
            .queue_datas
            .retain(|q| !removed.iter().any(|b| b.broker_name == q.broker_name));
        for broker in &removed {
            for addr in broker.broker_addrs.values() {
                route.filter_server_table.remove(addr);
            }
        }
    }
}
