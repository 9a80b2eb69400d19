//! `ClusterInfo`: the GET_BROKER_CLUSTER_INFO response body (every broker group
//! by name, and each cluster's broker names), always in the default dialect.

use std::collections::{BTreeMap, BTreeSet};

use rmq_wire::lenient;
use serde::{Deserialize, Serialize};

use crate::java_json::JavaJson;
use crate::BrokerData;

/// Every broker group and which cluster holds which group names.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ClusterInfo {
    /// Broker name → group (including `zoneName` when set).
    #[serde(deserialize_with = "lenient::value")]
    pub broker_addr_table: BTreeMap<String, BrokerData>,
    /// Cluster name → broker names (a Java `Set`, written as an array).
    #[serde(deserialize_with = "lenient::value")]
    pub cluster_addr_table: BTreeMap<String, BTreeSet<String>>,
}

impl JavaJson for ClusterInfo {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dialect;

    #[test]
    fn cluster_info_as_java_writes_it() {
        let text = r#"{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"127.0.0.1:10911",1:"127.0.0.1:10921"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}}"#;
        let group = BrokerData {
            broker_addrs: [
                (0, "127.0.0.1:10911".to_string()),
                (1, "127.0.0.1:10921".to_string()),
            ]
            .into(),
            broker_name: "broker-a".into(),
            cluster: "DefaultCluster".into(),
            ..BrokerData::default()
        };
        let info = ClusterInfo {
            broker_addr_table: [("broker-a".to_string(), group)].into(),
            cluster_addr_table: [(
                "DefaultCluster".to_string(),
                ["broker-a".to_string()].into(),
            )]
            .into(),
        };
        assert_eq!(
            String::from_utf8(info.to_json(Dialect::Default)).unwrap(),
            text
        );
        assert_eq!(ClusterInfo::from_json(text.as_bytes()).unwrap(), info);
        assert_eq!(
            ClusterInfo::default().to_json(Dialect::Default),
            br#"{"brokerAddrTable":{},"clusterAddrTable":{}}"#
        );
    }
}
