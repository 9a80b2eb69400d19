//! `TopicConfig`: one topic as a broker configures it, in its JSON form and
//! in the space-separated text form of the compressed REGISTER_BROKER body
//! (Java `TopicConfig.encode`/`decode`).

use std::collections::BTreeMap;
use std::fmt;

use rmq_wire::lenient::{self, Lenient};
use rmq_wire::lenient_bean;
use serde::{Deserialize, Deserializer, Serialize};

use crate::java_json::{self, Dialect, JavaJson};
use crate::BodyError;

/// Java `PermName.PERM_READ | PERM_WRITE`, the default permission.
pub const DEFAULT_PERM: i32 = 6;
/// Java `TopicConfig.defaultReadQueueNums` / `defaultWriteQueueNums`.
pub const DEFAULT_QUEUE_NUMS: i32 = 16;

/// How a topic's messages are tagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub enum TopicFilterType {
    /// One tag per message (the default).
    #[default]
    #[serde(rename = "SINGLE_TAG")]
    SingleTag,
    /// Several tags per message.
    #[serde(rename = "MULTI_TAG")]
    MultiTag,
}

impl TopicFilterType {
    /// The Java enum name.
    pub fn as_str(self) -> &'static str {
        match self {
            TopicFilterType::SingleTag => "SINGLE_TAG",
            TopicFilterType::MultiTag => "MULTI_TAG",
        }
    }

    /// Java `TopicFilterType.valueOf`: exact name or `None`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "SINGLE_TAG" => Some(TopicFilterType::SingleTag),
            "MULTI_TAG" => Some(TopicFilterType::MultiTag),
            _ => None,
        }
    }
}

impl fmt::Display for TopicFilterType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Lenient for TopicFilterType {
    /// fastjson reads an enum by name or by ordinal; an unknown name is null
    /// (→ the default `SINGLE_TAG`).
    fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        Ok(match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) => TopicFilterType::from_name(&s),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(0) => Some(TopicFilterType::SingleTag),
                Some(1) => Some(TopicFilterType::MultiTag),
                _ => None,
            },
            _ => None,
        })
    }
}

/// One topic's configuration on a broker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopicConfig {
    /// Topic attributes (5.x; 4.x brokers send none).
    #[serde(deserialize_with = "lenient::value")]
    pub attributes: BTreeMap<String, String>,
    /// Whether the topic is ordered.
    #[serde(deserialize_with = "lenient::value")]
    pub order: bool,
    /// Permission bits, default [`DEFAULT_PERM`].
    #[serde(deserialize_with = "lenient::int_or::<DEFAULT_PERM, _>")]
    pub perm: i32,
    /// Readable queues, default [`DEFAULT_QUEUE_NUMS`].
    #[serde(deserialize_with = "lenient::int_or::<DEFAULT_QUEUE_NUMS, _>")]
    pub read_queue_nums: i32,
    /// Tagging, default single tag.
    #[serde(deserialize_with = "lenient::value")]
    pub topic_filter_type: TopicFilterType,
    /// The topic.
    #[serde(deserialize_with = "lenient::value")]
    pub topic_name: String,
    /// Topic sys flags: 1 unit, 2 unit-sub.
    #[serde(deserialize_with = "lenient::value")]
    pub topic_sys_flag: i32,
    /// Writable queues, default [`DEFAULT_QUEUE_NUMS`].
    #[serde(deserialize_with = "lenient::int_or::<DEFAULT_QUEUE_NUMS, _>")]
    pub write_queue_nums: i32,
}

impl Default for TopicConfig {
    fn default() -> Self {
        TopicConfig {
            attributes: BTreeMap::new(),
            order: false,
            perm: DEFAULT_PERM,
            read_queue_nums: DEFAULT_QUEUE_NUMS,
            topic_filter_type: TopicFilterType::SingleTag,
            topic_name: String::new(),
            topic_sys_flag: 0,
            write_queue_nums: DEFAULT_QUEUE_NUMS,
        }
    }
}

impl TopicConfig {
    /// A config with Java's defaults for `topic_name`.
    pub fn new(topic_name: impl Into<String>) -> Self {
        TopicConfig {
            topic_name: topic_name.into(),
            ..TopicConfig::default()
        }
    }

    /// The text form of the compressed body: `name r w perm FILTER {attrs}`
    /// (5.x, attributes as default-dialect JSON) or `name r w perm FILTER`
    /// (`with_attributes = false`, what 4.x brokers write). `topic_sys_flag`
    /// and `order` are not part of it.
    pub fn encode_text(&self, with_attributes: bool) -> String {
        let mut text = format!(
            "{} {} {} {} {}",
            self.topic_name,
            self.read_queue_nums,
            self.write_queue_nums,
            self.perm,
            self.topic_filter_type
        );
        if with_attributes {
            text.push(' ');
            let attrs = java_json::to_vec(&self.attributes, Dialect::Default).unwrap_or_default();
            text.push_str(&String::from_utf8_lossy(&attrs));
        }
        text
    }

    /// Parses the text form, as Java's `TopicConfig.decode`: split on every
    /// single space (trailing empty parts dropped, as `String.split`); at
    /// least five parts; a sixth is the attributes JSON, and if it does not
    /// parse (e.g. an attribute contained a space) the attributes stay empty.
    ///
    /// # Errors
    /// [`BodyError::TopicConfigText`] for fewer than five parts, a bad number
    /// or an unknown filter type (Java throws for all three).
    pub fn decode_text(text: &str) -> Result<TopicConfig, BodyError> {
        let mut parts: Vec<&str> = text.split(' ').collect();
        while parts.last() == Some(&"") {
            parts.pop();
        }
        let bad = |reason| BodyError::TopicConfigText {
            text: text.to_owned(),
            reason,
        };
        if parts.len() < 5 {
            return Err(bad("fewer than 5 space-separated parts"));
        }
        // Java Integer.parseInt: an optional sign, decimal digits, no spaces.
        let int = |s: &str| {
            s.parse::<i32>()
                .map_err(|_| bad("a queue count or perm is not an int"))
        };
        let mut config = TopicConfig {
            topic_name: parts[0].to_owned(),
            read_queue_nums: int(parts[1])?,
            write_queue_nums: int(parts[2])?,
            perm: int(parts[3])?,
            topic_filter_type: TopicFilterType::from_name(parts[4])
                .ok_or_else(|| bad("unknown topic filter type"))?,
            ..TopicConfig::default()
        };
        if let Some(attrs) = parts.get(5) {
            if let Ok(Attributes(map)) = java_json::from_slice(attrs.as_bytes()) {
                config.attributes = map;
            }
        }
        Ok(config)
    }
}

/// The attributes part of the text form, read with fastjson's coercions.
#[derive(Deserialize)]
struct Attributes(#[serde(deserialize_with = "lenient::value")] BTreeMap<String, String>);

impl JavaJson for TopicConfig {}
lenient_bean!(TopicConfig);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_as_a_5x_broker_writes_it() {
        let text = br#"{"attributes":{},"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":4}"#;
        let config = TopicConfig {
            read_queue_nums: 4,
            write_queue_nums: 4,
            ..TopicConfig::new("TopicTest")
        };
        assert_eq!(config.to_json(Dialect::Default), text);
        assert_eq!(TopicConfig::from_json(text).unwrap(), config);
    }

    #[test]
    fn missing_properties_take_java_defaults() {
        let config = TopicConfig::from_json(
            br#"{"topicName":"t","readQueueNums":"4","perm":null,"topicFilterType":"WHAT"}"#,
        )
        .unwrap();
        assert_eq!(
            config,
            TopicConfig {
                read_queue_nums: 4,
                ..TopicConfig::new("t")
            }
        );
        let config = TopicConfig::from_json(
            br#"{"topicFilterType":1,"order":"1","attributes":{"$ref":"$.a"}}"#,
        )
        .unwrap();
        assert_eq!(config.topic_filter_type, TopicFilterType::MultiTag);
        assert!(config.order);
        assert!(config.attributes.is_empty());
    }

    #[test]
    fn text_form_round_trips_and_follows_java_split() {
        let mut config = TopicConfig {
            read_queue_nums: 4,
            write_queue_nums: 4,
            ..TopicConfig::new("TopicTest")
        };
        assert_eq!(config.encode_text(true), "TopicTest 4 4 6 SINGLE_TAG {}");
        assert_eq!(config.encode_text(false), "TopicTest 4 4 6 SINGLE_TAG");
        assert_eq!(
            TopicConfig::decode_text("TopicTest 4 4 6 SINGLE_TAG {}").unwrap(),
            config
        );
        assert_eq!(
            TopicConfig::decode_text("TopicTest 4 4 6 SINGLE_TAG ").unwrap(),
            config
        );
        config
            .attributes
            .insert("+message.type".into(), "NORMAL".into());
        let text = config.encode_text(true);
        assert_eq!(
            text,
            r#"TopicTest 4 4 6 SINGLE_TAG {"+message.type":"NORMAL"}"#
        );
        assert_eq!(TopicConfig::decode_text(&text).unwrap(), config);
        // An attribute with a space is lost, not an error.
        let lost = TopicConfig::decode_text(r#"t 1 1 6 MULTI_TAG {"a":"b c"}"#).unwrap();
        assert!(lost.attributes.is_empty());
        assert_eq!(lost.topic_filter_type, TopicFilterType::MultiTag);
    }

    #[test]
    fn text_form_errors_like_java() {
        for bad in [
            "t 4 4 6",
            "t 4 x 6 SINGLE_TAG",
            "t 4 4 6 single_tag",
            "t  4 4 6 SINGLE_TAG",
            "",
            "t 4 4 6 SINGLE_TAG  ",
        ] {
            let result = TopicConfig::decode_text(bad);
            if bad.ends_with("  ") {
                assert!(result.is_ok(), "{bad:?}");
            } else {
                assert!(result.is_err(), "{bad:?}");
            }
        }
    }
}
