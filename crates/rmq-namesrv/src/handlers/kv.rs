//! PUT/GET/DELETE_KV_CONFIG and GET_KVLIST_BY_NAMESPACE, as Java's
//! `DefaultRequestProcessor` answers them over its `KVConfigManager`.
//!
//! The KV quotas of [`crate::limits::Limits`] are Waymark's: a PUT beyond
//! them, and a listing larger than a client accepts, are answered with
//! SYSTEM_ERROR naming the limit (Java answers SYSTEM_ERROR for the PUT it
//! refuses, a null namespace or key).

use rmq_protocol::headers::{
    DeleteKvConfigRequestHeader, GetKvConfigRequestHeader, GetKvConfigResponseHeader,
    GetKvListByNamespaceRequestHeader, PutKvConfigRequestHeader,
};
use rmq_protocol::{Dialect, JavaJson, KvTable};
use rmq_wire::ResponseCode;

use crate::answer::Answer;
use crate::error::{Error, HandlerResult};
use crate::kv::{KvWriteError, SharedKv, ORDER_TOPIC_CONFIG};
use crate::limits::Limits;
use crate::metrics::refusal;
use crate::push::RoutePush;

fn persist_failed(error: &KvWriteError) -> Error {
    tracing::error!(%error, "persisting the KV store failed");
    Error::system(error.to_string())
}

/// PUT_KV_CONFIG: acknowledged once the change is durably journaled. Route
/// subscribers are owed routes again when the order-topic configuration
/// changed.
///
/// # Errors
/// A put beyond a KV quota of `limits`, or a failed write; nothing changed.
pub fn put(
    kv: &SharedKv,
    limits: &Limits,
    push: &RoutePush,
    header: PutKvConfigRequestHeader,
) -> HandlerResult {
    let PutKvConfigRequestHeader {
        namespace,
        key,
        value,
    } = header;
    match kv.put(&namespace, &key, value.as_deref(), limits) {
        Ok(()) => {}
        Err(KvWriteError::Quota(quota)) => {
            tracing::warn!(%namespace, %key, %quota, "kv config put refused");
            return Err(Error::system(format!(
                "kv config put refused, Namespace: {namespace} Key: {key}: {quota}"
            ))
            .counted_as(refusal::KV_QUOTA));
        }
        Err(error) => return Err(persist_failed(&error)),
    }
    tracing::info!(%namespace, %key, ?value, "kv config put");
    if namespace == ORDER_TOPIC_CONFIG {
        // Routes carry the order-topic configuration: subscribers are owed it.
        push.recheck();
    }
    Ok(Answer::success())
}

/// GET_KV_CONFIG. A missing namespace or key is looked up as null, as Java does: it never
/// matches and shows as `null` in the remark.
pub fn get(kv: &SharedKv, header: GetKvConfigRequestHeader) -> HandlerResult {
    let (namespace, key) = (header.namespace.as_deref(), header.key.as_deref());
    let value = match (namespace, key) {
        (Some(namespace), Some(key)) => kv.read().get(namespace, key).map(str::to_owned),
        _ => None,
    };
    match value {
        Some(value) => {
            Ok(Answer::success().with_header(&GetKvConfigResponseHeader { value: Some(value) }))
        }
        None => Err(Error::new(
            ResponseCode::QueryNotFound,
            format!(
                "No config item, Namespace: {} Key: {}",
                namespace.unwrap_or("null"),
                key.unwrap_or("null")
            ),
        )
        .with_empty_header()),
    }
}

/// DELETE_KV_CONFIG: persists even when nothing was removed, as Java. Java
/// does not require the fields: a null key or namespace (`header` is `None`)
/// removes nothing, and the request still succeeds.
///
/// # Errors
/// A failed write; nothing changed.
pub fn delete(
    kv: &SharedKv,
    limits: &Limits,
    push: &RoutePush,
    header: Option<DeleteKvConfigRequestHeader>,
) -> HandlerResult {
    let Some(header) = header else {
        return Ok(Answer::success());
    };
    kv.delete(&header.namespace, &header.key, limits)
        .map_err(|error| persist_failed(&error))?;
    tracing::info!(namespace = %header.namespace, key = %header.key, "kv config deleted");
    if header.namespace == ORDER_TOPIC_CONFIG {
        push.recheck();
    }
    Ok(Answer::success())
}

/// GET_KVLIST_BY_NAMESPACE. A missing namespace is looked up as null, as
/// Java does.
///
/// # Errors
/// QUERY_NOT_FOUND for a namespace the store lacks; SYSTEM_ERROR for a
/// listing over `maxKvListBytes` of `limits`.
pub fn list(
    kv: &SharedKv,
    limits: &Limits,
    header: GetKvListByNamespaceRequestHeader,
) -> HandlerResult {
    let namespace = header.namespace.as_deref();
    let table = namespace.and_then(|namespace| kv.read().namespace(namespace).cloned());
    match table {
        Some(table) => {
            let body = KvTable { table }.to_json(Dialect::Default);
            let limit = limits.max_kv_list_bytes;
            if body.len() > limit {
                // Only a store written before the quotas gets here; a frame
                // this large would make the client drop the connection.
                let namespace = namespace.unwrap_or("null");
                tracing::warn!(%namespace, bytes = body.len(), limit, "kv list too large to send");
                return Err(Error::system(format!(
                    "the kv list of Namespace: {namespace} is {} bytes, over maxKvListBytes ({limit})",
                    body.len()
                )));
            }
            Ok(Answer::success().with_body(body))
        }
        None => Err(Error::new(
            ResponseCode::QueryNotFound,
            format!("No config item, Namespace: {}", namespace.unwrap_or("null")),
        )),
    }
}

#[cfg(test)]
mod tests {
    use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};

    use crate::handlers::tests::{request, Fixture};
    use crate::limits::Limits;

    fn put(namespace: &str, key: &str, value: &str) -> RemotingCommand {
        request(
            RequestCode::PutKvConfig,
            &[("namespace", namespace), ("key", key), ("value", value)],
        )
    }

    fn small_limits() -> Limits {
        Limits {
            max_kv_value_bytes: 16,
            max_kv_keys_per_namespace: 2,
            max_kv_list_bytes: 64,
            ..Limits::default()
        }
    }

    #[test]
    fn puts_beyond_the_quotas_are_refused_and_change_nothing() {
        let fixture = Fixture::with_limits(small_limits());
        let large = fixture.call(&put("ns", "a", &"v".repeat(17)));
        assert_eq!(large.response_code(), ResponseCode::SystemError);
        let remark = large.remark.unwrap();
        assert!(
            remark.contains("maxKvValueBytes (16)") && remark.contains("Key: a"),
            "{remark}"
        );
        for key in ["a", "b"] {
            assert_eq!(
                fixture.call(&put("ns", key, "v")).response_code(),
                ResponseCode::Success
            );
        }
        let third = fixture.call(&put("ns", "c", "v"));
        assert_eq!(third.response_code(), ResponseCode::SystemError);
        assert!(third.remark.unwrap().contains("maxKvKeysPerNamespace is 2"));
        assert_eq!(fixture.state.kv.read().get("ns", "c"), None);
        // Replacing a key of a full namespace is fine.
        assert_eq!(
            fixture.call(&put("ns", "a", "w")).response_code(),
            ResponseCode::Success
        );
    }

    #[test]
    fn a_listing_over_the_limit_is_refused_naming_namespace_and_size() {
        let mut fixture = Fixture::new();
        for key in ["key-1", "key-2"] {
            assert_eq!(
                fixture.call(&put("ns", key, "0123456789")).response_code(),
                ResponseCode::Success
            );
        }
        let list = request(RequestCode::GetKvlistByNamespace, &[("namespace", "ns")]);
        assert_eq!(fixture.call(&list).response_code(), ResponseCode::Success);
        // The same store under a smaller listing bound (as a store written
        // before the quotas is under the real one).
        fixture.state.limits = Limits {
            max_kv_list_bytes: 40,
            ..small_limits()
        };
        let refused = fixture.call(&list);
        assert_eq!(refused.response_code(), ResponseCode::SystemError);
        let remark = refused.remark.unwrap();
        assert!(
            remark.contains("Namespace: ns")
                && remark.contains("bytes")
                && remark.contains("maxKvListBytes (40)"),
            "{remark}"
        );
        assert!(refused.body.is_none());
    }
}
