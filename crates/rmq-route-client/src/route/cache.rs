//! The route cache of one client instance, as plain data (Java
//! `MQClientInstance.topicRouteTable`, `brokerAddrTable`, and the publish
//! and subscribe tables of its producers and consumers).
//!
//! Owns what a fetched route does to the cache (Java
//! `MQClientInstance.updateTopicRouteInfoFromNameServer`): replace the view
//! only if the route changed or a producer/consumer still lacks it, replace
//! (never merge) the broker address maps it names, and the `TBW102` capping
//! of the producer's fallback; plus the refresh set, offline-broker cleaning
//! (`cleanOfflineBroker`) and broker address lookups
//! (`findBrokerAddressInPublish`, `findBrokerAddressInSubscribe`). No I/O,
//! no locks, no channels:
//! the client wraps it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use rmq_protocol::TopicRouteData;

use super::change::route_changed;
use crate::view::{TopicView, ViewError};

/// What [`RouteCache::apply`] did.
#[derive(Debug, Clone)]
pub enum Applied {
    /// Same route, nobody waiting for it: nothing touched.
    Unchanged,
    /// Same route, but a producer or consumer lacked its view: views
    /// rebuilt, watchers need not hear of it.
    Refreshed(Arc<TopicView>),
    /// A different route replaced the cached one.
    Changed(Arc<TopicView>),
}

impl Applied {
    /// Java's return value of `updateTopicRouteInfoFromNameServer`.
    pub fn updated(&self) -> bool {
        !matches!(self, Applied::Unchanged)
    }
}

/// A broker address found for a subscription (Java `FindBrokerResult`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundBroker {
    /// `ip:port`.
    pub addr: String,
    /// The address is not the master's.
    pub slave: bool,
}

/// Routes, broker addresses and the topics being refreshed.
#[derive(Debug, Default)]
pub struct RouteCache {
    views: HashMap<String, Arc<TopicView>>,
    broker_addrs: HashMap<String, BTreeMap<i64, String>>,
    published: BTreeSet<String>,
    subscribed: BTreeSet<String>,
}

/// The `TBW102` route a producer borrows for a topic the NameServer does not
/// know (Java `tryToFindTopicPublishInfo`), each queue data's counts set to
/// `min(default_queue_nums, readQueueNums)`.
pub fn cap_default_route(mut route: TopicRouteData, default_queue_nums: i32) -> TopicRouteData {
    for qd in &mut route.queue_datas {
        let n = default_queue_nums.min(qd.read_queue_nums);
        qd.read_queue_nums = n;
        qd.write_queue_nums = n;
    }
    route
}

impl RouteCache {
    /// The cached view of `topic`.
    pub fn view(&self, topic: &str) -> Option<Arc<TopicView>> {
        self.views.get(topic).cloned()
    }

    /// Java `isNeedUpdateTopicRouteInfo`, for the publish and subscribe
    /// tables kept here: a published topic without queues, or a subscribed
    /// topic without a view.
    pub fn needs_update(&self, topic: &str) -> bool {
        let view = self.views.get(topic);
        (self.published.contains(topic) && view.is_none_or(|v| !v.publish.ok()))
            || (self.subscribed.contains(topic) && view.is_none())
    }

    /// Stores `route` under `topic` if it changed or is needed (a producer or
    /// consumer of the topic still has no view of it).
    ///
    /// # Errors
    /// [`ViewError`] for a malformed order conf; nothing is changed then.
    pub fn apply(&mut self, topic: &str, route: TopicRouteData) -> Result<Applied, ViewError> {
        let changed = route_changed(&route, self.views.get(topic).map(|v| &v.route));
        if !changed && !self.needs_update(topic) {
            return Ok(Applied::Unchanged);
        }
        let view = Arc::new(TopicView::new(topic, route)?);
        for bd in &view.route.broker_datas {
            self.broker_addrs
                .insert(bd.broker_name.clone(), bd.broker_addrs.clone());
        }
        self.views.insert(topic.to_owned(), view.clone());
        Ok(if changed {
            Applied::Changed(view)
        } else {
            Applied::Refreshed(view)
        })
    }

    /// A producer wants `topic` (Java's `publishTable.putIfAbsent(topic,
    /// empty)`): it joins the refresh set.
    pub fn add_published(&mut self, topic: &str) {
        self.published.insert(topic.to_owned());
    }

    /// A consumer subscribes to `topic`: it joins the refresh set.
    pub fn add_subscribed(&mut self, topic: &str) {
        self.subscribed.insert(topic.to_owned());
    }

    /// Drops a subscription (the cached route stays, as in Java).
    pub fn remove_subscribed(&mut self, topic: &str) {
        self.subscribed.remove(topic);
    }

    /// The periodic refresh set: subscribed ∪ published topics.
    pub fn refresh_topics(&self) -> Vec<String> {
        self.subscribed.union(&self.published).cloned().collect()
    }

    /// Java `cleanOfflineBroker`: drops every address that no cached route
    /// lists, then every broker name left without addresses. Returns the
    /// removed `(broker name, address)` pairs.
    pub fn clean_offline_brokers(&mut self) -> Vec<(String, String)> {
        let listed: BTreeSet<&str> = self
            .views
            .values()
            .flat_map(|v| v.route.broker_datas.iter())
            .flat_map(|bd| bd.broker_addrs.values().map(String::as_str))
            .collect();
        let mut removed = Vec::new();
        for (name, addrs) in &mut self.broker_addrs {
            addrs.retain(|_, addr| {
                let keep = listed.contains(addr.as_str());
                if !keep {
                    removed.push((name.clone(), addr.clone()));
                }
                keep
            });
        }
        self.broker_addrs.retain(|_, addrs| !addrs.is_empty());
        removed
    }

    /// Java `findBrokerAddressInPublish`: the master's address.
    pub fn broker_addr_in_publish(&self, broker_name: &str) -> Option<String> {
        self.broker_addrs.get(broker_name)?.get(&0).cloned()
    }

    /// Java `findBrokerAddressInSubscribe`: `broker_id`, else for a
    /// slave id the next id, else (unless `only_this`) the lowest id.
    pub fn broker_addr_in_subscribe(
        &self,
        broker_name: &str,
        broker_id: i64,
        only_this: bool,
    ) -> Option<FoundBroker> {
        let map = self
            .broker_addrs
            .get(broker_name)
            .filter(|m| !m.is_empty())?;
        let slave = broker_id != 0;
        if let Some(addr) = map.get(&broker_id) {
            return Some(FoundBroker {
                addr: addr.clone(),
                slave,
            });
        }
        if slave {
            if let Some(addr) = map.get(&broker_id.wrapping_add(1)) {
                return Some(FoundBroker {
                    addr: addr.clone(),
                    slave,
                });
            }
        }
        if only_this {
            return None;
        }
        // Java takes the first entry of a HashMap<Long, _>; for small ids
        // that is the lowest.
        map.iter().next().map(|(id, addr)| FoundBroker {
            addr: addr.clone(),
            slave: *id != 0,
        })
    }

    /// The broker address table (broker name → id → address).
    pub fn broker_addrs(&self) -> &HashMap<String, BTreeMap<i64, String>> {
        &self.broker_addrs
    }
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
