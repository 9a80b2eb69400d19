//! PUT/GET/DELETE_KV_CONFIG and GET_KVLIST_BY_NAMESPACE (nameserver.md §2.15–2.18).
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
use rmq_wire::{HeaderError, RemotingCommand, ResponseCode};

use super::broker::ORDER_TOPIC_CONFIG;
use super::{header_if_complete, success};
use crate::error::{Error, HandlerResult};
use crate::state::Namesrv;

fn persist_failed(error: std::io::Error, path: &std::path::Path) -> Error {
    tracing::error!(path = %path.display(), %error, "persisting the KV store failed");
    Error::system(format!("failed to persist {}: {error}", path.display()))
}

/// PUT_KV_CONFIG: acknowledged once the file is durably written.
pub fn put(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    let header: PutKvConfigRequestHeader = request.header().map_err(|error| match error {
        HeaderError::Missing(_) => Error::system("namespace or key is null"),
        other => other.into(),
    })?;
    let (namespace, key) = (header.namespace, header.key);
    let _writer = state.kv_write.lock();
    if let Err(quota) =
        state
            .kv
            .read()
            .check_quota(&namespace, &key, header.value.as_deref(), &state.limits)
    {
        state
            .metrics
            .refusals
            .refused(crate::metrics::refusal::KV_QUOTA);
        tracing::warn!(%namespace, %key, %quota, "kv config put refused");
        return Err(Error::system(format!(
            "kv config put refused, Namespace: {namespace} Key: {key}: {quota}"
        )));
    }
    let mut staged = state.kv.read().clone();
    staged
        .put(&namespace, &key, header.value.as_deref())
        .map_err(|e| persist_failed(e, staged.path()))?;
    *state.kv.write() = staged;
    tracing::info!(%namespace, %key, value = ?header.value, "kv config put");
    if namespace == ORDER_TOPIC_CONFIG {
        // Routes carry the order-topic configuration: subscribers are owed it.
        state.push.recheck();
    }
    Ok(success(request))
}

/// GET_KV_CONFIG. A missing namespace or key is looked up as null, as Java does: it never
/// matches and shows as `null` in the remark.
pub fn get(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    let header: GetKvConfigRequestHeader = request.header()?;
    let (namespace, key) = (header.namespace.as_deref(), header.key.as_deref());
    let value = match (namespace, key) {
        (Some(namespace), Some(key)) => state.kv.read().get(namespace, key).map(str::to_owned),
        _ => None,
    };
    match value {
        Some(value) => Ok(RemotingCommand::response_to(request, ResponseCode::Success)
            .with_header(&GetKvConfigResponseHeader { value: Some(value) })),
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

/// DELETE_KV_CONFIG: persists even when nothing was removed, as Java.
pub fn delete(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    // Java does not require the fields: a null key or namespace removes nothing, and the
    // request still succeeds.
    let Some(header) = header_if_complete::<DeleteKvConfigRequestHeader>(request)? else {
        return Ok(success(request));
    };
    let _writer = state.kv_write.lock();
    let mut staged = state.kv.read().clone();
    staged
        .delete(&header.namespace, &header.key)
        .map_err(|e| persist_failed(e, staged.path()))?;
    *state.kv.write() = staged;
    tracing::info!(namespace = %header.namespace, key = %header.key, "kv config deleted");
    if header.namespace == ORDER_TOPIC_CONFIG {
        state.push.recheck();
    }
    Ok(success(request))
}

/// GET_KVLIST_BY_NAMESPACE.
pub fn list(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    // A missing namespace is looked up as null, as Java does.
    let header: GetKvListByNamespaceRequestHeader = request.header()?;
    let namespace = header.namespace.as_deref();
    let table = namespace.and_then(|namespace| state.kv.read().namespace(namespace).cloned());
    match table {
        Some(table) => {
            let body = KvTable { table }.to_json(Dialect::Default);
            let limit = state.limits.max_kv_list_bytes;
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
            Ok(success(request).with_body(body))
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
        let mut fixture = Fixture::new();
        fixture.state.limits = small_limits();
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
