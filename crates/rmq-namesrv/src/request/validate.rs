//! Sanity checks on topics that arrive over the network, so an absurd topic
//! name or queue count is refused with a remark naming it instead of being
//! served to every client.
//!
//! Java's NameServer checks nothing (its brokers and mqadmin do). Two levels,
//! because the two requests have different senders:
//!
//! * REGISTER_TOPIC_IN_NAMESRV ([`topic_name`] + [`queue_nums`]): only topics a
//!   broker created through mqadmin or auto-creation, both of which already
//!   passed Java's `TopicValidator` on the broker. So the same rules apply
//!   here: not blank, at most [`TOPIC_MAX_LENGTH`] characters, only
//!   `[%|a-zA-Z0-9_-]`.
//! * REGISTER_BROKER bodies ([`registered_topic`]): a broker also registers
//!   topics named after its cluster and broker names, which Java never
//!   validates — the default broker name is the host name, which may contain
//!   dots. Refusing those would make a working Java deployment fail to
//!   register, so only what no real broker sends is refused: an empty name,
//!   one longer than [`REGISTERED_TOPIC_MAX_LENGTH`], control characters.
//!
//! Queue counts must lie in `0..=`[`MAX_QUEUE_NUMS`] in both. Java has no upper
//! limit at all; real topics go into the low thousands (1024 is not rare, so
//! it would be too low a bound). 65 535 is far above any deployment and still
//! keeps a client from allocating billions of queue objects for one route.
//! Negative counts are meaningless. A refused REGISTER_BROKER refuses the
//! whole registration (SYSTEM_ERROR): the broker logs the remark on every
//! attempt, which is how an operator learns of the misconfigured topic.

use crate::error::Error;

/// Java `TopicValidator.TOPIC_MAX_LENGTH`.
pub const TOPIC_MAX_LENGTH: usize = 127;

/// Longest topic name accepted in a REGISTER_BROKER body (4.x clients' old
/// `CHARACTER_MAX_LENGTH`; covers topics named after a host-name broker).
pub const REGISTERED_TOPIC_MAX_LENGTH: usize = 255;

/// Largest read or write queue count accepted for one topic on one broker.
pub const MAX_QUEUE_NUMS: i32 = 65_535;

/// Java `TopicValidator.validateTopic`, with its remarks.
pub fn topic_name(topic: &str) -> Result<(), Error> {
    if topic.trim().is_empty() {
        return Err(refused(topic, "The specified topic is blank."));
    }
    if !topic
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '%' | '|' | '_' | '-'))
    {
        return Err(refused(
            topic,
            "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$",
        ));
    }
    if topic.chars().count() > TOPIC_MAX_LENGTH {
        return Err(refused(
            topic,
            "The specified topic is longer than topic max length.",
        ));
    }
    Ok(())
}

/// The looser check of topics in a REGISTER_BROKER body, then [`queue_nums`].
pub fn registered_topic(topic: &str, read: i32, write: i32) -> Result<(), Error> {
    if topic.is_empty() {
        return Err(refused(topic, "The specified topic is blank."));
    }
    // Brokers' topic names are ASCII: counted and checked by the byte, the
    // char walk is for the rest (a registration checks thousands of names).
    let too_long = if topic.is_ascii() {
        topic.len() > REGISTERED_TOPIC_MAX_LENGTH
    } else {
        topic.chars().count() > REGISTERED_TOPIC_MAX_LENGTH
    };
    if too_long {
        return Err(refused(
            topic,
            "The specified topic is longer than 255 characters.",
        ));
    }
    let control = if topic.is_ascii() {
        topic.bytes().any(|b| b.is_ascii_control())
    } else {
        topic.chars().any(char::is_control)
    };
    if control {
        return Err(refused(
            topic,
            "The specified topic contains control characters.",
        ));
    }
    queue_nums(topic, read, write)
}

/// Read and write queue counts within `0..=MAX_QUEUE_NUMS`.
pub fn queue_nums(topic: &str, read: i32, write: i32) -> Result<(), Error> {
    for (name, value) in [("readQueueNums", read), ("writeQueueNums", write)] {
        if !(0..=MAX_QUEUE_NUMS).contains(&value) {
            return Err(refused(
                topic,
                &format!("{name} {value} is outside 0..={MAX_QUEUE_NUMS}."),
            ));
        }
    }
    Ok(())
}

/// SYSTEM_ERROR naming the topic (shortened: the name may be the problem).
fn refused(topic: &str, why: &str) -> Error {
    let shown: String = topic.chars().take(64).collect();
    let ellipsis = if shown.len() < topic.len() { "..." } else { "" };
    Error::system(format!("invalid topic {shown:?}{ellipsis}: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remark(result: Result<(), Error>) -> String {
        result.unwrap_err().remark.unwrap()
    }

    #[test]
    fn topic_validator_rules() {
        for ok in [
            "TopicTest",
            "%RETRY%group",
            "%DLQ%g-1",
            "a|b",
            "rmq_sys_TRACE_DATA",
        ] {
            assert!(topic_name(ok).is_ok(), "{ok}");
        }
        assert!(topic_name(&"t".repeat(127)).is_ok());
        assert_eq!(
            remark(topic_name(" ")),
            r#"invalid topic " ": The specified topic is blank."#
        );
        assert!(remark(topic_name("a.b")).contains("illegal characters"));
        assert!(remark(topic_name("主题")).contains("illegal characters"));
        let long = remark(topic_name(&"t".repeat(128)));
        assert!(long.contains("longer than topic max length"), "{long}");
        assert!(long.contains("\"...:"), "the name is shortened: {long}");
    }

    #[test]
    fn registered_topics_allow_broker_named_topics() {
        assert!(registered_topic("ip-10-0-0-1.ec2.internal", 8, 8).is_ok());
        assert!(registered_topic(&"b".repeat(255), 1, 1).is_ok());
        assert!(registered_topic(&"b".repeat(256), 1, 1).is_err());
        assert!(registered_topic("", 1, 1).is_err());
        assert!(registered_topic("a\nb", 1, 1).is_err());
    }

    #[test]
    fn queue_counts_are_bounded() {
        assert!(queue_nums("t", 0, 0).is_ok());
        assert!(queue_nums("t", 65_535, 65_535).is_ok());
        assert_eq!(
            remark(queue_nums("t", -1, 8)),
            r#"invalid topic "t": readQueueNums -1 is outside 0..=65535."#
        );
        assert!(remark(queue_nums("t", 8, 65_536)).contains("writeQueueNums 65536"));
    }
}
