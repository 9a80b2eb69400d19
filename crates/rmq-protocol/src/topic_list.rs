//! `TopicList`: the body of the topic-list requests (GET_ALL_TOPIC_LIST_FROM_NAMESERVER,
//! GET_TOPICS_BY_CLUSTER, GET_SYSTEM_TOPIC_LIST_FROM_NS and the three unit-topic
//! lists).

use rmq_wire::lenient;
use serde::{Deserialize, Serialize};

use crate::java_json::JavaJson;

/// A list of topic names, plus a broker address for the system-topic list.
///
/// Java holds `topicList` in a `Set` (hash order); here it is a `Vec`, written
/// in the order given, so the caller decides (and de-duplicates).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopicList {
    /// GET_SYSTEM_TOPIC_LIST_FROM_NS only: one broker to ask for its own
    /// system topics; omitted when absent.
    #[serde(
        deserialize_with = "lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub broker_addr: Option<String>,
    /// The topic names.
    #[serde(deserialize_with = "lenient::value")]
    pub topic_list: Vec<String>,
}

impl TopicList {
    /// A list without broker address.
    pub fn new(topics: impl IntoIterator<Item = impl Into<String>>) -> Self {
        TopicList {
            broker_addr: None,
            topic_list: topics.into_iter().map(Into::into).collect(),
        }
    }
}

impl JavaJson for TopicList {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dialect;

    #[test]
    fn bodies_of_the_all_topics_and_system_topics_lists() {
        let all = TopicList::new(["TopicTest", "TBW102"]);
        assert_eq!(
            all.to_json(Dialect::Default),
            br#"{"topicList":["TopicTest","TBW102"]}"#
        );
        assert_eq!(
            TopicList::new(Vec::<String>::new()).to_json(Dialect::Default),
            br#"{"topicList":[]}"#
        );
        let system = TopicList {
            broker_addr: Some("127.0.0.1:10911".into()),
            ..TopicList::new(["broker-a", "DefaultCluster"])
        };
        let text = br#"{"brokerAddr":"127.0.0.1:10911","topicList":["broker-a","DefaultCluster"]}"#;
        assert_eq!(system.to_json(Dialect::Default), text);
        assert_eq!(TopicList::from_json(text).unwrap(), system);
    }
}
