//! Headers of the cluster queries: GET_BROKER_MEMBER_GROUP (901) and
//! GET_TOPICS_BY_CLUSTER (224).

use super::ext_header;

ext_header! {
    /// GET_BROKER_MEMBER_GROUP request (`GetBrokerMemberGroupRequestHeader`).
    pub struct GetBrokerMemberGroupRequestHeader {
        /// Echoed in the response.
        cluster_name: String = "clusterName" (required),
        /// The group to list.
        broker_name: String = "brokerName" (required),
    }
}

ext_header! {
    /// GET_TOPICS_BY_CLUSTER request (`GetTopicsByClusterRequestHeader`).
    pub struct GetTopicsByClusterRequestHeader {
        /// The cluster.
        cluster: String = "cluster" (required),
    }
}

#[cfg(test)]
mod tests {
    use rmq_wire::{FromExtFields, HeaderError};

    use super::*;
    use crate::headers::test_support::{ext, round_trip};

    #[test]
    fn round_trips_and_missing_fields() {
        let header = GetBrokerMemberGroupRequestHeader {
            cluster_name: "DefaultCluster".into(),
            broker_name: "broker-a".into(),
        };
        assert_eq!(
            round_trip(&header),
            ext(&[
                ("brokerName", "broker-a"),
                ("clusterName", "DefaultCluster")
            ])
        );
        assert_eq!(
            GetBrokerMemberGroupRequestHeader::from_ext_fields(&ext(&[("clusterName", "c")])),
            Err(HeaderError::Missing("brokerName"))
        );
        let header = GetTopicsByClusterRequestHeader {
            cluster: "DefaultCluster".into(),
        };
        assert_eq!(round_trip(&header), ext(&[("cluster", "DefaultCluster")]));
        assert_eq!(
            GetTopicsByClusterRequestHeader::from_ext_fields(&ext(&[("clusterName", "c")])),
            Err(HeaderError::Missing("cluster"))
        );
    }
}
