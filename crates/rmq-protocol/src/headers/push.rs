//! Headers of Waymark's route push (docs/protocol-extensions.md): codes
//! 61001–61003, which no Java peer sends.

use super::ext_header;

ext_header! {
    /// WAYMARK_SUBSCRIBE_ROUTES request: topics join the connection's
    /// subscription.
    pub struct SubscribeRoutesRequestHeader {
        /// The topics, comma-separated (a topic name has no comma); may be
        /// empty when only `cluster` is asked for.
        topics: String = "topics" (required),
        /// Also follow cluster membership (GET_BROKER_CLUSTER_INFO's body).
        cluster: bool = "cluster" (boolean),
        /// A cursor from an earlier subscription: routes of these topics that
        /// have not changed since it are not sent again.
        cursor: Option<String> = "cursor" (optional),
        /// `Some(true)` asks for the standard JSON dialect regardless of version.
        accept_standard_json_only: Option<bool> = "acceptStandardJsonOnly" (flag),
    }
}

ext_header! {
    /// WAYMARK_SUBSCRIBE_ROUTES response.
    pub struct SubscribeRoutesResponseHeader {
        /// Present when every route the subscription owed was queued before
        /// this response: the client's new cursor.
        cursor: Option<String> = "cursor" (optional),
        /// The `seq` of the last push queued before this response: the
        /// cursor holds once the client has read up to that push.
        seq: i64 = "seq" (zero),
    }
}

ext_header! {
    /// WAYMARK_UNSUBSCRIBE_ROUTES request.
    pub struct UnsubscribeRoutesRequestHeader {
        /// The topics to leave, comma-separated.
        topics: String = "topics" (required),
        /// Stop following cluster membership.
        cluster: bool = "cluster" (boolean),
    }
}

ext_header! {
    /// WAYMARK_ROUTE_CHANGED, the one-way request a subscriber receives.
    pub struct RouteChangedHeader {
        /// 1 for the first push on the connection, then one more per push:
        /// a gap means a push was lost and the client must subscribe again.
        seq: i64 = "seq" (required),
        /// `route` (body: the topic's route), `gone` (the topic has no
        /// route), `cluster` (body: the cluster info) or `synced` (no body:
        /// every change owed has been sent, `cursor` says up to where).
        kind: String = "kind" (required),
        /// The topic of a `route` or `gone` push.
        topic: Option<String> = "topic" (optional),
        /// Present when every change of the subscription up to this one has
        /// been sent: the client's new cursor.
        cursor: Option<String> = "cursor" (optional),
    }
}

#[cfg(test)]
mod tests {
    use rmq_wire::{FromExtFields, HeaderError};

    use super::*;
    use crate::headers::test_support::{ext, round_trip};

    #[test]
    fn subscribe_reads_its_fields_and_needs_topics() {
        let map = ext(&[
            ("topics", "A,B"),
            ("cluster", "true"),
            ("cursor", "5f3a-12"),
        ]);
        let header = SubscribeRoutesRequestHeader::from_ext_fields(&map).unwrap();
        assert_eq!(header.topics, "A,B");
        assert!(header.cluster);
        assert_eq!(header.cursor.as_deref(), Some("5f3a-12"));
        round_trip(&header);
        assert_eq!(
            SubscribeRoutesRequestHeader::from_ext_fields(&ext(&[("cluster", "true")])),
            Err(HeaderError::Missing("topics"))
        );
    }

    #[test]
    fn a_push_needs_its_sequence_and_kind() {
        let map = ext(&[("seq", "3"), ("kind", "route"), ("topic", "A")]);
        let header = RouteChangedHeader::from_ext_fields(&map).unwrap();
        assert_eq!((header.seq, header.kind.as_str()), (3, "route"));
        assert_eq!(header.cursor, None);
        round_trip(&header);
        assert!(
            RouteChangedHeader::from_ext_fields(&ext(&[("seq", "x"), ("kind", "route")])).is_err()
        );
        assert_eq!(
            RouteChangedHeader::from_ext_fields(&ext(&[("seq", "1")])),
            Err(HeaderError::Missing("kind"))
        );
    }
}
