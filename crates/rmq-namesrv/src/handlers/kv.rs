//! PUT/GET/DELETE_KV_CONFIG and GET_KVLIST_BY_NAMESPACE (nameserver.md §2.15–2.18).

use rmq_protocol::headers::{
    DeleteKvConfigRequestHeader, GetKvConfigRequestHeader, GetKvConfigResponseHeader,
    GetKvListByNamespaceRequestHeader, PutKvConfigRequestHeader,
};
use rmq_protocol::{Dialect, JavaJson, KvTable};
use rmq_wire::{HeaderError, RemotingCommand, ResponseCode};

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
    let mut staged = state.kv.read().clone();
    staged
        .put(&namespace, &key, header.value.as_deref())
        .map_err(|e| persist_failed(e, staged.path()))?;
    *state.kv.write() = staged;
    tracing::info!(%namespace, %key, value = ?header.value, "kv config put");
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
    Ok(success(request))
}

/// GET_KVLIST_BY_NAMESPACE.
pub fn list(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    // A missing namespace is looked up as null, as Java does.
    let header: GetKvListByNamespaceRequestHeader = request.header()?;
    let namespace = header.namespace.as_deref();
    let table = namespace.and_then(|namespace| state.kv.read().namespace(namespace).cloned());
    match table {
        Some(table) => Ok(success(request).with_body(KvTable { table }.to_json(Dialect::Default))),
        None => Err(Error::new(
            ResponseCode::QueryNotFound,
            format!("No config item, Namespace: {}", namespace.unwrap_or("null")),
        )),
    }
}
