//! Headers of the topic administration requests: DELETE_TOPIC_IN_NAMESRV
//! (216), REGISTER_TOPIC_IN_NAMESRV (217), WIPE_WRITE_PERM_OF_BROKER (205) and
//! ADD_WRITE_PERM_OF_BROKER (327).

use super::ext_header;

ext_header! {
    /// DELETE_TOPIC_IN_NAMESRV request (`DeleteTopicFromNamesrvRequestHeader`).
    pub struct DeleteTopicFromNamesrvRequestHeader {
        /// The topic.
        topic: String = "topic" (required),
        /// Restrict the deletion to this cluster's brokers; `None` or empty =
        /// delete everywhere.
        cluster_name: Option<String> = "clusterName" (optional),
    }
}

ext_header! {
    /// REGISTER_TOPIC_IN_NAMESRV request (`RegisterTopicRequestHeader`); the
    /// body is a `TopicRouteData` of which only `queueDatas` counts.
    pub struct RegisterTopicRequestHeader {
        /// The topic.
        topic: String = "topic" (required),
    }
}

ext_header! {
    /// WIPE_WRITE_PERM_OF_BROKER request (`WipeWritePermOfBrokerRequestHeader`).
    pub struct WipeWritePermOfBrokerRequestHeader {
        /// The broker group whose queues lose write permission.
        broker_name: String = "brokerName" (required),
    }
}

ext_header! {
    /// WIPE_WRITE_PERM_OF_BROKER response; the count is always written (the
    /// Java admin client unboxes it).
    pub struct WipeWritePermOfBrokerResponseHeader {
        /// Topics whose queue data was touched.
        wipe_topic_count: i32 = "wipeTopicCount" (required),
    }
}

ext_header! {
    /// ADD_WRITE_PERM_OF_BROKER request (`AddWritePermOfBrokerRequestHeader`).
    pub struct AddWritePermOfBrokerRequestHeader {
        /// The broker group whose queues regain read+write permission.
        broker_name: String = "brokerName" (required),
    }
}

ext_header! {
    /// ADD_WRITE_PERM_OF_BROKER response; the count is always written.
    pub struct AddWritePermOfBrokerResponseHeader {
        /// Topics whose queue data was touched.
        add_topic_count: i32 = "addTopicCount" (required),
    }
}

#[cfg(test)]
mod tests {
    use rmq_wire::{ExtFields, FromExtFields, HeaderError};

    use super::*;
    use crate::headers::test_support::{ext, ext_of, round_trip};

    #[test]
    fn delete_topic_request_as_java_sends_it() {
        let map = ext_of(
            r#"{"code":216,"extFields":{"clusterName":"DefaultCluster","topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":45,"serializeTypeCurrentRPC":"JSON","version":479}"#,
        );
        let header = DeleteTopicFromNamesrvRequestHeader::from_ext_fields(&map).unwrap();
        assert_eq!(header.cluster_name.as_deref(), Some("DefaultCluster"));
        assert_eq!(round_trip(&header), map);
        let header =
            DeleteTopicFromNamesrvRequestHeader::from_ext_fields(&ext(&[("topic", "t")])).unwrap();
        assert_eq!(header.cluster_name, None);
        round_trip(&RegisterTopicRequestHeader { topic: "t".into() });
        assert_eq!(
            RegisterTopicRequestHeader::from_ext_fields(&ExtFields::new()),
            Err(HeaderError::Missing("topic"))
        );
    }

    #[test]
    fn perm_headers_and_the_wipe_response_java_sends() {
        let map = ext_of(
            r#"{"code":0,"extFields":{"wipeTopicCount":"3"},"flag":1,"language":"JAVA","opaque":10,"serializeTypeCurrentRPC":"JSON","version":479}"#,
        );
        let wipe = WipeWritePermOfBrokerResponseHeader::from_ext_fields(&map).unwrap();
        assert_eq!(wipe.wipe_topic_count, 3);
        assert_eq!(round_trip(&wipe), map);
        assert_eq!(
            round_trip(&WipeWritePermOfBrokerResponseHeader::default()),
            ext(&[("wipeTopicCount", "0")])
        );
        assert_eq!(
            round_trip(&AddWritePermOfBrokerResponseHeader { add_topic_count: 2 }),
            ext(&[("addTopicCount", "2")])
        );
        round_trip(&WipeWritePermOfBrokerRequestHeader {
            broker_name: "broker-a".into(),
        });
        round_trip(&AddWritePermOfBrokerRequestHeader {
            broker_name: "broker-a".into(),
        });
        assert_eq!(
            AddWritePermOfBrokerRequestHeader::from_ext_fields(&ExtFields::new()),
            Err(HeaderError::Missing("brokerName"))
        );
    }
}
