//! Headers of the KV requests: PUT_KV_CONFIG (100), GET_KV_CONFIG (101),
//! DELETE_KV_CONFIG (102) and GET_KVLIST_BY_NAMESPACE (219).

use super::ext_header;

ext_header! {
    /// PUT_KV_CONFIG request (`PutKVConfigRequestHeader`).
    ///
    /// `value` is optional here: Java stores a missing value as null (the key
    /// then reads as absent), while a missing namespace or key is an error
    /// (Java's remark: `namespace or key is null`).
    pub struct PutKvConfigRequestHeader {
        /// The namespace.
        namespace: String = "namespace" (required),
        /// The key.
        key: String = "key" (required),
        /// The value.
        value: Option<String> = "value" (optional),
    }
}

ext_header! {
    /// GET_KV_CONFIG request (`GetKVConfigRequestHeader`). Both fields are optional, as
    /// in Java's header class: a NameServer looks a missing one up as null.
    pub struct GetKvConfigRequestHeader {
        /// The namespace.
        namespace: Option<String> = "namespace" (optional),
        /// The key.
        key: Option<String> = "key" (optional),
    }
}

ext_header! {
    /// GET_KV_CONFIG response (`GetKVConfigResponseHeader`); `None` on a miss
    /// (`"extFields":{}`).
    pub struct GetKvConfigResponseHeader {
        /// The value found.
        value: Option<String> = "value" (optional),
    }
}

ext_header! {
    /// DELETE_KV_CONFIG request (`DeleteKVConfigRequestHeader`).
    pub struct DeleteKvConfigRequestHeader {
        /// The namespace.
        namespace: String = "namespace" (required),
        /// The key.
        key: String = "key" (required),
    }
}

ext_header! {
    /// GET_KVLIST_BY_NAMESPACE request (`GetKVListByNamespaceRequestHeader`). The namespace
    /// is optional, as in Java's header class.
    pub struct GetKvListByNamespaceRequestHeader {
        /// The namespace.
        namespace: Option<String> = "namespace" (optional),
    }
}

#[cfg(test)]
mod tests {
    use rmq_wire::{FromExtFields, HeaderError};

    use super::*;
    use crate::headers::test_support::{ext, ext_of, round_trip};

    #[test]
    fn put_get_delete_list() {
        let put = PutKvConfigRequestHeader {
            namespace: "ORDER_TOPIC_CONFIG".into(),
            key: "TopicOrder".into(),
            value: Some("broker-a:4".into()),
        };
        assert_eq!(round_trip(&put).len(), 3);
        let no_value =
            PutKvConfigRequestHeader::from_ext_fields(&ext(&[("namespace", "ns"), ("key", "k")]))
                .unwrap();
        assert_eq!(no_value.value, None);
        assert_eq!(
            PutKvConfigRequestHeader::from_ext_fields(&ext(&[("key", "k"), ("value", "v")])),
            Err(HeaderError::Missing("namespace"))
        );
        let get = GetKvConfigRequestHeader {
            namespace: Some("ns".into()),
            key: Some("k".into()),
        };
        assert_eq!(round_trip(&get), ext(&[("key", "k"), ("namespace", "ns")]));
        round_trip(&DeleteKvConfigRequestHeader {
            namespace: "ns".into(),
            key: "k".into(),
        });
        round_trip(&GetKvListByNamespaceRequestHeader {
            namespace: Some("ns".into()),
        });
        assert_eq!(
            GetKvListByNamespaceRequestHeader::from_ext_fields(&ext(&[])),
            Ok(GetKvListByNamespaceRequestHeader { namespace: None })
        );
        assert_eq!(
            GetKvConfigRequestHeader::from_ext_fields(&ext(&[("key", "k")])),
            Ok(GetKvConfigRequestHeader {
                namespace: None,
                key: Some("k".into())
            })
        );
    }

    #[test]
    fn get_kv_config_miss_as_java_answers_it() {
        let map = ext_of(
            r#"{"code":22,"extFields":{},"flag":1,"language":"JAVA","opaque":11,"remark":"No config item, Namespace: ns Key: k","serializeTypeCurrentRPC":"JSON","version":479}"#,
        );
        let miss = GetKvConfigResponseHeader::from_ext_fields(&map).unwrap();
        assert_eq!(miss, GetKvConfigResponseHeader::default());
        assert!(round_trip(&miss).is_empty());
        assert_eq!(
            round_trip(&GetKvConfigResponseHeader {
                value: Some("v".into())
            }),
            ext(&[("value", "v")])
        );
    }
}
