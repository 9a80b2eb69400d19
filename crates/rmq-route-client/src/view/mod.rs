//! What a cached route means to a producer and a consumer.
//!
//! Owns [`TopicView`]: one route as fetched plus the two queue sets derived
//! from it, the publish view ([`publish`]) and the subscribe view
//! ([`subscribe_view`]), and the static-topic endpoint map
//! ([`static_topic`]). Everything here is a pure function of a
//! `TopicRouteData`; fetching and caching are `route`'s and `client`'s.

pub mod publish;
pub mod static_topic;

use std::collections::{BTreeMap, BTreeSet};

use rmq_protocol::TopicRouteData;

use crate::MessageQueue;
pub use publish::{publish_view, PublishInfo, ViewError};
pub use static_topic::static_topic_endpoints;

/// Java `PermName.PERM_PRIORITY`.
pub const PERM_PRIORITY: i32 = 8;
/// Java `PermName.PERM_READ`.
pub const PERM_READ: i32 = 4;
/// Java `PermName.PERM_WRITE`.
pub const PERM_WRITE: i32 = 2;
/// Java `PermName.PERM_INHERIT`.
pub const PERM_INHERIT: i32 = 1;

/// One topic's cached route with the views derived from it. Immutable: a
/// changed route produces a new `TopicView` (and so a new send counter, as
/// Java's new `TopicPublishInfo` does).
#[derive(Debug)]
pub struct TopicView {
    /// The topic the route is stored under (for the `TBW102` path, the real
    /// topic, not `TBW102`).
    pub topic: String,
    /// The route as the NameServer sent it (queue counts capped on the
    /// `TBW102` path).
    pub route: TopicRouteData,
    /// Queues a producer may send to.
    pub publish: PublishInfo,
    /// Queues a consumer may read, sorted in [`MessageQueue`] order.
    pub subscribe: BTreeSet<MessageQueue>,
    /// Static topics only: logical queue → real broker name (Java
    /// `topicEndPointsTable[topic]`); empty otherwise.
    pub endpoints: BTreeMap<MessageQueue, String>,
}

impl TopicView {
    /// Builds both views of `route` for `topic`.
    ///
    /// # Errors
    /// [`ViewError::OrderConf`] for a malformed `orderTopicConf`; Java fails the
    /// whole route update then, and so does the caller.
    pub fn new(topic: &str, route: TopicRouteData) -> Result<TopicView, ViewError> {
        let publish = publish_view(topic, &route)?;
        Ok(TopicView {
            topic: topic.to_owned(),
            subscribe: subscribe_view(topic, &route),
            endpoints: static_topic_endpoints(topic, &route),
            publish,
            route,
        })
    }

    /// The broker group that really serves `mq` (Java
    /// `getBrokerNameFromMessageQueue`): the endpoint of a logical queue of a
    /// static topic, else the queue's own broker name.
    pub fn broker_of<'a>(&'a self, mq: &'a MessageQueue) -> &'a str {
        self.endpoints
            .get(mq)
            .map_or(&mq.broker_name, |broker| broker)
    }

    /// Write queue count of `broker_name` in the route (Java
    /// `TopicPublishInfo.getWriteQueueNumsByBroker`), -1 if it has none.
    pub fn write_queue_nums_of(&self, broker_name: &str) -> i32 {
        self.route
            .queue_datas
            .iter()
            .find(|qd| qd.broker_name == broker_name)
            .map_or(-1, |qd| qd.write_queue_nums)
    }
}

/// Java `topicRouteData2TopicSubscribeInfo`: the read queues of every
/// readable queue data. No master check (slaves
/// serve reads), no check that the broker is in `brokerDatas`, order conf
/// ignored; a static topic gives its logical queues instead.
pub fn subscribe_view(topic: &str, route: &TopicRouteData) -> BTreeSet<MessageQueue> {
    if route
        .topic_queue_mapping_by_broker
        .as_ref()
        .is_some_and(|m| !m.is_empty())
    {
        return static_topic_endpoints(topic, route).into_keys().collect();
    }
    route
        .queue_datas
        .iter()
        .filter(|qd| qd.perm & PERM_READ != 0)
        .flat_map(|qd| {
            (0..qd.read_queue_nums).map(|i| MessageQueue::new(topic, &*qd.broker_name, i))
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use rmq_protocol::{BrokerData, QueueData};

    use super::*;

    pub fn queue(name: &str, read: i32, write: i32, perm: i32) -> QueueData {
        QueueData {
            broker_name: name.into(),
            perm,
            read_queue_nums: read,
            topic_sys_flag: 0,
            write_queue_nums: write,
        }
    }

    pub fn broker(name: &str, ids: &[i64]) -> BrokerData {
        BrokerData {
            broker_addrs: ids
                .iter()
                .map(|id| (*id, format!("10.0.0.{}:10911", id + 1)))
                .collect(),
            broker_name: name.into(),
            cluster: "DefaultCluster".into(),
            ..BrokerData::default()
        }
    }

    pub fn names(queues: impl IntoIterator<Item = MessageQueue>) -> Vec<String> {
        queues
            .into_iter()
            .map(|q| format!("{}:{}", q.broker_name, q.queue_id))
            .collect()
    }

    #[test]
    fn subscribe_view_takes_read_queues_of_readable_brokers_without_master_check() {
        let route = TopicRouteData {
            queue_datas: vec![
                queue("b", 2, 8, 6),
                queue("a", 3, 1, 4),
                queue("c", 2, 2, 2),     // write-only: not readable
                queue("ghost", 1, 1, 6), // no broker data: still listed
            ],
            // `a` has only a slave.
            broker_datas: vec![broker("a", &[1]), broker("b", &[0]), broker("c", &[0])],
            order_topic_conf: Some("c:4".into()),
            ..TopicRouteData::default()
        };
        assert_eq!(
            names(subscribe_view("T", &route)),
            ["a:0", "a:1", "a:2", "b:0", "b:1", "ghost:0"]
        );
    }

    #[test]
    fn a_view_keeps_the_route_and_answers_write_counts() {
        let route = TopicRouteData {
            queue_datas: vec![queue("a", 4, 3, 6)],
            broker_datas: vec![broker("a", &[0])],
            ..TopicRouteData::default()
        };
        let view = TopicView::new("T", route).unwrap();
        assert_eq!(view.write_queue_nums_of("a"), 3);
        assert_eq!(view.write_queue_nums_of("b"), -1);
        let mq = MessageQueue::new("T", "a", 0);
        assert_eq!(view.broker_of(&mq), "a");
        assert_eq!(names(view.publish.queues.clone()), ["a:0", "a:1", "a:2"]);
        assert_eq!(view.subscribe.len(), 4);
    }
}
