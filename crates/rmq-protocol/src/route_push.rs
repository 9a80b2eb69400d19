//! Waymark's route push (docs/protocol-extensions.md): the cursor a client
//! resumes from, the kinds of push, and the topic list of a subscription.
//! The headers are in [`crate::headers::push`].

use std::fmt;

/// Where a subscriber stands in the NameServer's sequence of route changes.
/// `instance` is drawn at the NameServer's start, so a cursor from another
/// NameServer, or from before a restart, is recognised and not trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cursor {
    /// The NameServer run the cursor belongs to.
    pub instance: u64,
    /// The change up to which the subscriber has been sent everything.
    pub version: u64,
}

impl Cursor {
    /// Reads `"<instance in hex>-<version>"`; `None` for anything else.
    pub fn parse(text: &str) -> Option<Cursor> {
        let (instance, version) = text.trim().split_once('-')?;
        Some(Cursor {
            instance: u64::from_str_radix(instance, 16).ok()?,
            version: version.parse().ok()?,
        })
    }
}

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:x}-{}", self.instance, self.version)
    }
}

/// What a WAYMARK_ROUTE_CHANGED push carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushKind {
    /// A topic's route; the body is what GET_ROUTEINFO_BY_TOPIC would answer.
    Route,
    /// The topic has no route (GET_ROUTEINFO_BY_TOPIC would answer
    /// TOPIC_NOT_EXIST); no body.
    Gone,
    /// Cluster membership; the body is GET_BROKER_CLUSTER_INFO's.
    Cluster,
    /// No body: every change owed to the subscriber has been sent.
    Synced,
}

impl PushKind {
    /// The `kind` field's text.
    pub fn as_str(self) -> &'static str {
        match self {
            PushKind::Route => "route",
            PushKind::Gone => "gone",
            PushKind::Cluster => "cluster",
            PushKind::Synced => "synced",
        }
    }

    /// The kind a `kind` field names; `None` for an unknown one, which a
    /// client skips (a later server may add kinds).
    pub fn parse(text: &str) -> Option<PushKind> {
        [
            PushKind::Route,
            PushKind::Gone,
            PushKind::Cluster,
            PushKind::Synced,
        ]
        .into_iter()
        .find(|kind| kind.as_str() == text)
    }
}

/// The topics of a `topics` field: comma-separated, empty entries skipped.
pub fn split_topics(field: &str) -> impl Iterator<Item = &str> {
    field
        .split(',')
        .map(str::trim)
        .filter(|topic| !topic.is_empty())
}

/// The `topics` field of `topics`.
pub fn join_topics<'a>(topics: impl IntoIterator<Item = &'a str>) -> String {
    topics.into_iter().collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_what_it_writes_and_nothing_else() {
        let cursor = Cursor {
            instance: 0x5f3a_9b01,
            version: 42,
        };
        assert_eq!(cursor.to_string(), "5f3a9b01-42");
        assert_eq!(Cursor::parse(&cursor.to_string()), Some(cursor));
        for bad in ["", "42", "x-1", "5f-", "-3", "5f-1-2", "5f--1"] {
            assert_eq!(Cursor::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn kinds_and_topic_lists_round_trip() {
        for kind in ["route", "gone", "cluster", "synced"] {
            assert_eq!(PushKind::parse(kind).map(PushKind::as_str), Some(kind));
        }
        assert_eq!(PushKind::parse("ROUTE"), None);
        let topics: Vec<&str> = split_topics("A, B,,%RETRY%g ,").collect();
        assert_eq!(topics, ["A", "B", "%RETRY%g"]);
        assert_eq!(join_topics(topics), "A,B,%RETRY%g");
        assert_eq!(split_topics("").count(), 0);
    }
}
