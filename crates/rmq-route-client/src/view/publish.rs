//! The producer's view of a route: `PublishInfo` and how a route becomes one
//! (Java `topicRouteData2TopicPublishInfo`), plus the primitive queue
//! choices on it (`TopicPublishInfo.selectOneMessageQueue`).
//!
//! Owns the queue list and its order, the order-topic configuration parser
//! and the round-robin counter of one view. Fault-aware selection across
//! brokers is `select::strategy`'s.

use rmq_protocol::TopicRouteData;

use super::{static_topic_endpoints, PERM_WRITE};
use crate::message_queue::java_string_cmp;
use crate::select::SendIndex;
use crate::MessageQueue;

/// Why a route could not be turned into a publish view.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ViewError {
    /// `orderTopicConf` has an entry without `:` or with a count that is not
    /// an `int` (Java fails with an unchecked exception; the update aborts).
    #[error("malformed orderTopicConf {conf:?}")]
    OrderConf {
        /// The configuration as received.
        conf: String,
    },
}

/// The queues a producer may send to (Java `TopicPublishInfo`).
#[derive(Debug, Default)]
pub struct PublishInfo {
    /// Candidate queues, in Java's order (order conf order, else sorted by
    /// broker name then id; logical queues by id for static topics).
    pub queues: Vec<MessageQueue>,
    /// True when the queues come from `orderTopicConf`.
    pub order_topic: bool,
    /// The round-robin counter (Java `sendWhichQueue`).
    pub index: SendIndex,
}

impl PublishInfo {
    /// Java `ok()`: there is at least one queue.
    pub fn ok(&self) -> bool {
        !self.queues.is_empty()
    }

    /// Next queue in counter order, or `None` if there are none (Java
    /// divides by zero there; its callers check `ok()` first).
    pub fn select_plain(&self) -> Option<&MessageQueue> {
        if self.queues.is_empty() {
            return None;
        }
        Some(&self.queues[self.pos()])
    }

    /// Up to `len` candidates in counter order; the first that passes
    /// `accept` wins (Java `selectOneMessageQueue(QueueFilter...)`).
    pub fn select_filtered(
        &self,
        mut accept: impl FnMut(&MessageQueue) -> bool,
    ) -> Option<&MessageQueue> {
        for _ in 0..self.queues.len() {
            let mq = &self.queues[self.pos()];
            if accept(mq) {
                return Some(mq);
            }
        }
        None
    }

    /// Java's older `selectOneMessageQueue(lastBrokerName)`: avoid
    /// `last_broker` for `len` tries, then take the next queue regardless.
    pub fn select_avoiding(&self, last_broker: Option<&str>) -> Option<&MessageQueue> {
        match last_broker {
            Some(last) => self
                .select_filtered(|mq| mq.broker_name != last)
                .or_else(|| self.select_plain()),
            None => self.select_plain(),
        }
    }

    fn pos(&self) -> usize {
        // `next` is masked non-negative, so the cast is lossless.
        self.index.next() as usize % self.queues.len()
    }
}

/// `s.split(sep)` as Java's `String.split` of a literal: trailing empty
/// pieces are dropped (but `""` stays `[""]`).
pub(crate) fn java_split(s: &str, sep: char) -> Vec<&str> {
    let mut parts: Vec<&str> = s.split(sep).collect();
    while parts.len() > 1 && parts.last() == Some(&"") {
        parts.pop();
    }
    if parts.len() == 1 && parts[0].is_empty() && !s.is_empty() {
        // Only separators, e.g. ";;": Java yields an empty array.
        parts.clear();
    }
    parts
}

/// Java `topicRouteData2TopicPublishInfo`. The first
/// matching case wins:
///
/// 1. non-empty `orderTopicConf` (`brokerA:4;brokerB:8`): those queues in
///    that order, no permission or master check, `order_topic = true`;
/// 2. no `orderTopicConf` at all and static-topic mappings: the logical
///    queues sorted by id;
/// 3. otherwise the write queues of every writable queue data whose broker
///    group has a master (id 0), sorted by broker name.
///
/// # Errors
/// [`ViewError::OrderConf`] for a malformed order configuration.
pub fn publish_view(topic: &str, route: &TopicRouteData) -> Result<PublishInfo, ViewError> {
    let mut info = PublishInfo::default();
    if let Some(conf) = route.order_topic_conf.as_deref().filter(|c| !c.is_empty()) {
        let bad = || ViewError::OrderConf {
            conf: conf.to_owned(),
        };
        for entry in java_split(conf, ';') {
            let parts = java_split(entry, ':');
            let (Some(name), Some(count)) = (parts.first(), parts.get(1)) else {
                return Err(bad());
            };
            let count: i32 = count.parse().map_err(|_| bad())?;
            info.queues
                .extend((0..count).map(|i| MessageQueue::new(topic, *name, i)));
        }
        info.order_topic = true;
        return Ok(info);
    }
    let mapped = route
        .topic_queue_mapping_by_broker
        .as_ref()
        .is_some_and(|m| !m.is_empty());
    if route.order_topic_conf.is_none() && mapped {
        info.queues = static_topic_endpoints(topic, route).into_keys().collect();
        // Java sorts a hash-ordered list by id only; ties (several scopes)
        // are broken by the full queue order here to stay deterministic.
        info.queues
            .sort_by(|a, b| a.queue_id.cmp(&b.queue_id).then_with(|| a.cmp(b)));
        return Ok(info);
    }
    let mut queue_datas: Vec<_> = route.queue_datas.iter().collect();
    // Stable, as Java's Collections.sort.
    queue_datas.sort_by(|a, b| java_string_cmp(&a.broker_name, &b.broker_name));
    for qd in queue_datas {
        if qd.perm & PERM_WRITE == 0 {
            continue;
        }
        let Some(bd) = route
            .broker_datas
            .iter()
            .find(|bd| bd.broker_name == qd.broker_name)
        else {
            continue;
        };
        if !bd.broker_addrs.contains_key(&0) {
            continue;
        }
        info.queues.extend(
            (0..qd.write_queue_nums).map(|i| MessageQueue::new(topic, &*qd.broker_name, i)),
        );
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::tests::{broker, names, queue};

    fn route(
        queues: Vec<rmq_protocol::QueueData>,
        brokers: Vec<rmq_protocol::BrokerData>,
    ) -> TopicRouteData {
        TopicRouteData {
            queue_datas: queues,
            broker_datas: brokers,
            ..TopicRouteData::default()
        }
    }

    #[test]
    fn sorted_by_broker_writable_and_with_a_master() {
        // b and a writable with a master, c read-only: a's queues, then b's.
        let r = route(
            vec![
                queue("b", 2, 2, 6),
                queue("a", 3, 3, 6),
                queue("c", 4, 4, 4),
            ],
            vec![broker("a", &[0]), broker("b", &[0, 1]), broker("c", &[0])],
        );
        let info = publish_view("T", &r).unwrap();
        assert_eq!(names(info.queues), ["a:0", "a:1", "a:2", "b:0", "b:1"]);
        assert!(!info.order_topic);
    }

    #[test]
    fn table_of_publish_cases() {
        // (queue datas, broker datas, order conf, expected queues)
        type Case = (
            Vec<rmq_protocol::QueueData>,
            Vec<rmq_protocol::BrokerData>,
            Option<&'static str>,
            Vec<&'static str>,
        );
        let cases: Vec<Case> = vec![
            // Slave-only group contributes nothing even if writable.
            (
                vec![queue("a", 2, 2, 6), queue("b", 2, 2, 6)],
                vec![broker("a", &[1, 2]), broker("b", &[0])],
                None,
                vec!["b:0", "b:1"],
            ),
            // Queue data without broker data: skipped.
            (vec![queue("a", 2, 2, 6)], vec![], None, vec![]),
            // Write-only perm is writable; read-only and wiped are not.
            (
                vec![
                    queue("a", 1, 1, 2),
                    queue("b", 1, 1, 4),
                    queue("c", 1, 1, 0),
                ],
                vec![broker("a", &[0]), broker("b", &[0]), broker("c", &[0])],
                None,
                vec!["a:0"],
            ),
            // Write count, not read count.
            (
                vec![queue("a", 8, 1, 6)],
                vec![broker("a", &[0])],
                None,
                vec!["a:0"],
            ),
            // Order conf wins: its order, no perm/master check.
            (
                vec![queue("a", 4, 4, 4)],
                vec![broker("a", &[1])],
                Some("z:2;a:1"),
                vec!["z:0", "z:1", "a:0"],
            ),
            // Trailing separator and a negative count are tolerated.
            (vec![], vec![], Some("a:1;b:-3;"), vec!["a:0"]),
            // Empty conf = no conf.
            (
                vec![queue("a", 1, 1, 6)],
                vec![broker("a", &[0])],
                Some(""),
                vec!["a:0"],
            ),
        ];
        for (i, (queues, brokers, conf, want)) in cases.into_iter().enumerate() {
            let mut r = route(queues, brokers);
            r.order_topic_conf = conf.map(Into::into);
            let info = publish_view("T", &r).unwrap();
            assert_eq!(names(info.queues), want, "case {i}");
            assert_eq!(
                info.order_topic,
                conf.is_some_and(|c| !c.is_empty()),
                "case {i}"
            );
        }
    }

    #[test]
    fn malformed_order_conf_fails_the_view() {
        for conf in ["a", "a:x", ";a:1", "a:", "a:99999999999"] {
            let mut r = route(vec![], vec![]);
            r.order_topic_conf = Some(conf.into());
            assert_eq!(
                publish_view("T", &r).unwrap_err(),
                ViewError::OrderConf { conf: conf.into() },
                "{conf}"
            );
        }
    }

    #[test]
    fn java_split_drops_trailing_empties() {
        assert_eq!(java_split("a:4;;", ';'), ["a:4"]);
        assert_eq!(java_split(";a", ';'), ["", "a"]);
        assert_eq!(java_split("", ';'), [""]);
        assert!(java_split(";;", ';').is_empty());
        assert_eq!(java_split("r@b@", '@'), ["r", "b"]);
    }

    #[test]
    fn selection_primitives_follow_the_counter() {
        let r = route(
            vec![queue("a", 2, 2, 6), queue("b", 2, 2, 6)],
            vec![broker("a", &[0]), broker("b", &[0])],
        );
        let info = publish_view("T", &r).unwrap();
        info.index.set(7);
        let plain: Vec<_> = (0..5)
            .map(|_| info.select_plain().unwrap().clone())
            .collect();
        assert_eq!(names(plain), ["a:0", "a:1", "b:0", "b:1", "a:0"]);
        // Counter now 12 → next candidate 13 % 4 = a:1, rejected; 14 → b:0.
        let got = info.select_filtered(|mq| mq.broker_name != "a").unwrap();
        assert_eq!((got.broker_name.as_str(), got.queue_id), ("b", 0));
        // Nothing acceptable: len tries, then None.
        assert!(info.select_filtered(|_| false).is_none());
        // Four failed tries left the counter at 18; avoiding `a`: 19 → b:1.
        let got = info.select_avoiding(Some("a")).unwrap();
        assert_eq!((got.broker_name.as_str(), got.queue_id), ("b", 1));
        let empty = PublishInfo::default();
        assert!(!empty.ok() && empty.select_plain().is_none());
    }
}
