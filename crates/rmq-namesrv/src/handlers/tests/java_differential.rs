//! What the differential test (interop/java `DifferentialTest`) found the Java NameServer
//! (4.9.8 and 5.5.1) answering where Waymark answered differently: Java's header decoding
//! does not reject these requests' missing fields, and GET_BROKER_MEMBER_GROUP keeps the
//! default response remark.

use rmq_wire::{ExtFields, RequestCode as C, ResponseCode as R};

use super::*;

#[test]
fn write_perm_without_broker_name_counts_nothing() {
    let f = Fixture::new();
    let wipe = f.call(&request(C::WipeWritePermOfBroker, &[]));
    assert_eq!((code(&wipe), wipe.remark.as_deref()), (R::Success, None));
    assert_eq!(wipe.ext("wipeTopicCount"), Some("0"));
    let add = f.call(&request(C::AddWritePermOfBroker, &[]));
    assert_eq!((code(&add), add.remark.as_deref()), (R::Success, None));
    assert_eq!(add.ext("addTopicCount"), Some("0"));
}

#[test]
fn kv_requests_without_namespace_or_key() {
    let f = Fixture::new();
    let get = f.call(&request(C::GetKvConfig, &[("key", "k")]));
    assert_eq!(code(&get), R::QueryNotFound);
    assert_eq!(
        get.remark.as_deref(),
        Some("No config item, Namespace: null Key: k")
    );
    assert_eq!(get.ext_fields, Some(ExtFields::new()));

    let list = f.call(&request(C::GetKvlistByNamespace, &[]));
    assert_eq!(code(&list), R::QueryNotFound);
    assert_eq!(
        list.remark.as_deref(),
        Some("No config item, Namespace: null")
    );

    let delete = f.call(&request(C::DeleteKvConfig, &[("namespace", "n")]));
    assert_eq!(
        (code(&delete), delete.remark.as_deref()),
        (R::Success, None)
    );
}

#[test]
fn unregister_without_broker_name_is_acknowledged() {
    let f = Fixture::new();
    let response = f.call(&request(
        C::UnregisterBroker,
        &[
            ("brokerAddr", "127.0.0.1:10911"),
            ("clusterName", "c"),
            ("brokerId", "0"),
        ],
    ));
    assert_eq!(
        (code(&response), response.remark.as_deref()),
        (R::Success, None)
    );
}

#[test]
fn member_group_keeps_the_default_remark() {
    let f = Fixture::new();
    let response = f.call(&request(
        C::GetBrokerMemberGroup,
        &[("clusterName", "c"), ("brokerName", "b")],
    ));
    assert_eq!(code(&response), R::Success);
    assert_eq!(
        response.remark.as_deref(),
        Some("not set any response code")
    );
    assert_eq!(
        body_text(&response),
        r#"{"brokerMemberGroup":{"brokerAddrs":{},"brokerName":"b","cluster":"c"}}"#
    );
}
