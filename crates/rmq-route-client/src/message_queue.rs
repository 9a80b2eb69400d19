//! `MessageQueue`, the unit everything else in this crate hands out, and the
//! Java string order it sorts by.
//!
//! Owns the identity of a queue (topic, broker name, queue id), its ordering
//! (Java `MessageQueue.compareTo`: topic, then broker name, then queue id,
//! strings compared as `String.compareTo` does, by UTF-16 code units) and its
//! Java `toString`, which the consistent-hash strategy hashes. It does not own
//! where a queue lives (the route cache) or who consumes it (the strategies).

use std::cmp::Ordering;
use std::fmt;

/// One queue of a topic on one broker group (Java `MessageQueue`).
///
/// For static topics the broker name is a logical one (`__syslo__global__`);
/// [`TopicView::broker_of`](crate::TopicView::broker_of) maps it to the real group.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MessageQueue {
    /// The topic.
    pub topic: String,
    /// The broker group serving the queue.
    pub broker_name: String,
    /// The queue's index within the group, `0..queueNums`.
    pub queue_id: i32,
}

impl MessageQueue {
    /// A queue of `topic` on `broker_name`.
    pub fn new(topic: impl Into<String>, broker_name: impl Into<String>, queue_id: i32) -> Self {
        MessageQueue {
            topic: topic.into(),
            broker_name: broker_name.into(),
            queue_id,
        }
    }
}

/// Java `String.compareTo`: lexicographic over UTF-16 code units.
///
/// Differs from `str`'s UTF-8 byte order only when a character in
/// U+E000–U+FFFF meets a supplementary one at the first difference
/// (Java's `String.compareTo` compares UTF-16 code units); names in RocketMQ
/// are ASCII in practice, but the
/// allocation strategies must agree with Java peers on every input.
pub fn java_string_cmp(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.cmp(b);
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

impl Ord for MessageQueue {
    fn cmp(&self, other: &Self) -> Ordering {
        java_string_cmp(&self.topic, &other.topic)
            .then_with(|| java_string_cmp(&self.broker_name, &other.broker_name))
            .then_with(|| self.queue_id.cmp(&other.queue_id))
    }
}

impl PartialOrd for MessageQueue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for MessageQueue {
    /// Java's `toString`, byte for byte: the consistent-hash ring hashes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "MessageQueue [topic={}, brokerName={}, queueId={}]",
            self.topic, self.broker_name, self.queue_id
        )
    }
}

/// A string ordered by [`java_string_cmp`], for maps that are `TreeMap`s in Java.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JavaString(pub String);

impl Ord for JavaString {
    fn cmp(&self, other: &Self) -> Ordering {
        java_string_cmp(&self.0, &other.0)
    }
}

impl PartialOrd for JavaString {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Sorts queues and consumer ids the way Java's `RebalanceImpl` does before
/// calling a strategy: queues by [`MessageQueue`]'s
/// order, ids by [`java_string_cmp`].
pub fn sort_for_allocation(queues: &mut [MessageQueue], consumer_ids: &mut [String]) {
    queues.sort();
    consumer_ids.sort_by(|a, b| java_string_cmp(a, b));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_is_topic_then_broker_then_queue_id() {
        let mut queues = vec![
            MessageQueue::new("T", "broker-b", 0),
            MessageQueue::new("T", "broker-a", 10),
            MessageQueue::new("S", "broker-z", 3),
            MessageQueue::new("T", "broker-a", 2),
        ];
        let mut ids = vec!["c3".to_string(), "c1".into(), "c2".into()];
        sort_for_allocation(&mut queues, &mut ids);
        let got: Vec<String> = queues
            .iter()
            .map(|q| format!("{}/{}/{}", q.topic, q.broker_name, q.queue_id))
            .collect();
        assert_eq!(
            got,
            [
                "S/broker-z/3",
                "T/broker-a/2",
                "T/broker-a/10",
                "T/broker-b/0"
            ]
        );
        assert_eq!(ids, ["c1", "c2", "c3"]);
    }

    #[test]
    fn strings_compare_by_utf16_code_units_as_java() {
        // U+FF21 (one unit 0xFF21) vs U+1F600 (surrogates 0xD83D 0xDE00):
        // UTF-8 puts the emoji last, Java puts it first.
        let (bmp, astral) = ("\u{FF21}", "\u{1F600}");
        assert_eq!(bmp.cmp(astral), Ordering::Less);
        assert_eq!(java_string_cmp(bmp, astral), Ordering::Greater);
        let cases = [
            ("a", "b", Ordering::Less),
            ("ab", "a", Ordering::Greater),
            ("", "", Ordering::Equal),
            ("B", "a", Ordering::Less),
            ("é", "z", Ordering::Greater),
        ];
        for (a, b, want) in cases {
            assert_eq!(java_string_cmp(a, b), want, "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn display_is_java_to_string() {
        assert_eq!(
            MessageQueue::new("TopicTest", "broker-a", 0).to_string(),
            "MessageQueue [topic=TopicTest, brokerName=broker-a, queueId=0]"
        );
    }
}
