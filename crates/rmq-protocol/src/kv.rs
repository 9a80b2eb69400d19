//! KV bodies: `KVTable` (GET_KVLIST_BY_NAMESPACE, the REGISTER_BROKER response)
//! and `KVConfigSerializeWrapper`, the content of `kvConfig.json`
//! (`KVConfigManager`: namespace → key → value, written whole after every
//! change).

use std::collections::BTreeMap;

use rmq_wire::lenient;
use serde::{Deserialize, Serialize};

use crate::java_json::JavaJson;

/// One namespace's key → value table: `{"table":{"k":"v"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct KvTable {
    /// Key → value.
    #[serde(deserialize_with = "lenient::value")]
    pub table: BTreeMap<String, String>,
}

/// The whole KV store: `{"configTable":{"<namespace>":{"k":"v"}}}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct KvConfigSerializeWrapper {
    /// Namespace → key → value.
    #[serde(deserialize_with = "lenient::value")]
    pub config_table: BTreeMap<String, BTreeMap<String, String>>,
}

impl JavaJson for KvTable {}
impl JavaJson for KvConfigSerializeWrapper {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dialect;

    #[test]
    fn kv_table_of_an_order_topic_namespace() {
        let text = br#"{"table":{"TopicOrder":"broker-a:4;broker-b:4"}}"#;
        let table = KvTable {
            table: [(
                "TopicOrder".to_string(),
                "broker-a:4;broker-b:4".to_string(),
            )]
            .into(),
        };
        assert_eq!(table.to_json(Dialect::Default), text);
        assert_eq!(text.len(), 48);
        assert_eq!(KvTable::from_json(text).unwrap(), table);
        assert_eq!(
            KvTable::default().to_json(Dialect::Default),
            br#"{"table":{}}"#
        );
    }

    #[test]
    fn kv_config_json_as_java_stores_it() {
        let text =
            br#"{"configTable":{"ORDER_TOPIC_CONFIG":{"TopicOrder":"broker-a:4;broker-b:4"}}}"#;
        let store = KvConfigSerializeWrapper::from_json(text).unwrap();
        assert_eq!(
            store.config_table["ORDER_TOPIC_CONFIG"]["TopicOrder"],
            "broker-a:4;broker-b:4"
        );
        assert_eq!(store.to_json(Dialect::Default), text);
        // Null values are absent keys; `{}` reads as an empty store.
        let store =
            KvConfigSerializeWrapper::from_json(br#"{"configTable":{"ns":{"a":null,"b":1}}}"#)
                .unwrap();
        assert_eq!(
            store.config_table["ns"],
            [("b".to_string(), "1".to_string())].into()
        );
        assert_eq!(
            KvConfigSerializeWrapper::from_json(b"{}").unwrap(),
            KvConfigSerializeWrapper::default()
        );
    }
}
