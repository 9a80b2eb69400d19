//! `GetBrokerMemberGroupResponseBody`: the GET_BROKER_MEMBER_GROUP response
//! body: the id → address map of one broker name, which 5.x brokers with
//! `enableSlaveActingMaster` and `compatibleWithOldNameSrv=false` ask for.

use std::collections::BTreeMap;

use rmq_wire::{lenient, lenient_bean};
use serde::{Deserialize, Serialize};

use crate::java_json::JavaJson;

/// The members of one broker group.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BrokerMemberGroup {
    /// Broker id → address; `{}` when the group is unknown.
    #[serde(deserialize_with = "lenient::value")]
    pub broker_addrs: BTreeMap<i64, String>,
    /// Echoed from the request.
    #[serde(deserialize_with = "lenient::value")]
    pub broker_name: String,
    /// Echoed from the request.
    #[serde(deserialize_with = "lenient::value")]
    pub cluster: String,
}

/// `{"brokerMemberGroup":{…}}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GetBrokerMemberGroupResponseBody {
    /// The group.
    #[serde(deserialize_with = "lenient::value")]
    pub broker_member_group: BrokerMemberGroup,
}

impl JavaJson for GetBrokerMemberGroupResponseBody {}
lenient_bean!(BrokerMemberGroup);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dialect;

    #[test]
    fn member_group_as_java_writes_it() {
        let text = r#"{"brokerMemberGroup":{"brokerAddrs":{0:"127.0.0.1:10911",1:"127.0.0.1:10921"},"brokerName":"broker-a","cluster":"DefaultCluster"}}"#;
        let body = GetBrokerMemberGroupResponseBody {
            broker_member_group: BrokerMemberGroup {
                broker_addrs: [
                    (0, "127.0.0.1:10911".to_string()),
                    (1, "127.0.0.1:10921".to_string()),
                ]
                .into(),
                broker_name: "broker-a".into(),
                cluster: "DefaultCluster".into(),
            },
        };
        assert_eq!(
            String::from_utf8(body.to_json(Dialect::Default)).unwrap(),
            text
        );
        assert_eq!(
            GetBrokerMemberGroupResponseBody::from_json(text.as_bytes()).unwrap(),
            body
        );
    }
}
