//! The `kv` and `config` commands: PUT/GET/DELETE_KV_CONFIG (100–102),
//! GET_KVLIST_BY_NAMESPACE (219), UPDATE_NAMESRV_CONFIG (318) and
//! GET_NAMESRV_CONFIG (319); and `controller config`, the same for
//! controllers: UPDATE_CONTROLLER_CONFIG (1009), GET_CONTROLLER_CONFIG (1010).

use std::collections::BTreeMap;

use rmq_protocol::headers::{
    DeleteKvConfigRequestHeader, GetKvConfigRequestHeader, GetKvConfigResponseHeader,
    GetKvListByNamespaceRequestHeader, PutKvConfigRequestHeader,
};
use rmq_protocol::{properties, KvTable};
use rmq_wire::{RemotingCommand, RequestCode};
use serde::Serialize;

use super::{ok_row, Done, Target};
use crate::error::CallError;
use crate::namesrv::{fan_out, request};
use crate::output::{tabulate, tabulate_on, Report, Server};

/// Sends `command` to every server; success is all that matters.
async fn send_all(
    target: Target<'_>,
    server: Server,
    name: &str,
    command: RemotingCommand,
) -> Report {
    let answers = fan_out(target.addrs, target.connect, |session| {
        let command = command.clone();
        async move { session.call(command).await.map(|_| Done {}) }
    })
    .await;
    tabulate_on(server, name, &answers, &["#Result"], ok_row)
}

/// `kv put`.
pub async fn put(target: Target<'_>, namespace: &str, key: &str, value: &str) -> Report {
    let header = PutKvConfigRequestHeader {
        namespace: namespace.to_owned(),
        key: key.to_owned(),
        value: Some(value.to_owned()),
    };
    let command = request(RequestCode::PutKvConfig, Some(&header));
    send_all(target, Server::NameServer, "kv put", command).await
}

/// `kv delete`.
pub async fn delete(target: Target<'_>, namespace: &str, key: &str) -> Report {
    let header = DeleteKvConfigRequestHeader {
        namespace: namespace.to_owned(),
        key: key.to_owned(),
    };
    let command = request(RequestCode::DeleteKvConfig, Some(&header));
    send_all(target, Server::NameServer, "kv delete", command).await
}

/// A value read by `kv get`; `None` if a NameServer answered SUCCESS without one.
#[derive(Debug, Clone, Serialize)]
struct KvValue {
    value: Option<String>,
}

/// `kv get`.
pub async fn get(target: Target<'_>, namespace: &str, key: &str) -> Report {
    let command = request(
        RequestCode::GetKvConfig,
        Some(&GetKvConfigRequestHeader {
            namespace: Some(namespace.to_owned()),
            key: Some(key.to_owned()),
        }),
    );
    let answers = fan_out(target.addrs, target.connect, |session| {
        let command = command.clone();
        async move {
            let response = session.call(command).await?;
            let header: GetKvConfigResponseHeader = response
                .header()
                .map_err(|e| CallError::Decode(e.to_string()))?;
            Ok(KvValue {
                value: header.value,
            })
        }
    })
    .await;
    tabulate("kv get", &answers, &["#Value"], |found| {
        vec![vec![found
            .value
            .clone()
            .unwrap_or_else(|| "(null)".to_owned())]]
    })
}

/// `kv list`.
pub async fn list(target: Target<'_>, namespace: &str) -> Report {
    let header = GetKvListByNamespaceRequestHeader {
        namespace: Some(namespace.to_owned()),
    };
    let header = &header;
    let answers = fan_out(target.addrs, target.connect, |session| async move {
        session
            .call_json::<KvTable>(RequestCode::GetKvlistByNamespace, Some(header))
            .await
    })
    .await;
    tabulate("kv list", &answers, &["#Key", "#Value"], |kv| {
        kv.table
            .iter()
            .map(|(k, v)| vec![k.clone(), v.clone()])
            .collect()
    })
}

/// `config get [KEY...]` and `controller config get [KEY...]`: all keys, or
/// the keys asked for (`null` in JSON and `(unset)` in the table for keys the
/// server does not have), of every server.
pub async fn config_get(target: Target<'_>, server: Server, keys: &[String]) -> Report {
    let (code, name) = match server {
        Server::NameServer => (RequestCode::GetNamesrvConfig, "config get"),
        Server::Controller => (RequestCode::GetControllerConfig, "controller config get"),
    };
    let answers = fan_out(target.addrs, target.connect, |session| async move {
        let response = session.call(request(code, None)).await?;
        let body = response
            .body
            .as_deref()
            .ok_or_else(|| CallError::Decode("the response has no body".to_owned()))?;
        let all = properties::parse(&String::from_utf8_lossy(body))
            .map_err(|e| CallError::Decode(e.to_string()))?;
        Ok(select(all, keys))
    })
    .await;
    tabulate_on(server, name, &answers, &["#Key", "#Value"], |config| {
        config
            .iter()
            .map(|(k, v)| {
                let value = v.clone().unwrap_or_else(|| "(unset)".to_owned());
                vec![k.clone(), value]
            })
            .collect()
    })
}

fn select(all: BTreeMap<String, String>, keys: &[String]) -> BTreeMap<String, Option<String>> {
    if keys.is_empty() {
        return all.into_iter().map(|(k, v)| (k, Some(v))).collect();
    }
    keys.iter()
        .map(|key| (key.clone(), all.get(key).cloned()))
        .collect()
}

/// `config set KEY=VALUE...` and `controller config update -k -v`: one
/// UPDATE_NAMESRV_CONFIG (UPDATE_CONTROLLER_CONFIG) with all pairs to every
/// server, as mqadmin updateNamesrvConfig (updateControllerConfig) sends
/// them (`key=value` lines), escaped as a properties file: the server reads
/// the body with `Properties.load`, so a backslash arrives as typed and a
/// line break in a value is refused by name instead of starting a line.
pub async fn config_set(target: Target<'_>, server: Server, pairs: &[(String, String)]) -> Report {
    let (code, name) = match server {
        Server::NameServer => (RequestCode::UpdateNamesrvConfig, "config set"),
        Server::Controller => (
            RequestCode::UpdateControllerConfig,
            "controller config update",
        ),
    };
    let body = properties::render_for_file(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let command = request(code, None).with_body(body.into_bytes());
    send_all(target, server, name, command).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_selection_marks_missing_keys() {
        let all: BTreeMap<String, String> =
            [("a".to_string(), "1".to_string()), ("b".into(), "2".into())].into();
        assert_eq!(select(all.clone(), &[]).len(), 2);
        let picked = select(all, &["b".to_string(), "zz".to_string()]);
        assert_eq!(picked["b"].as_deref(), Some("2"));
        assert_eq!(picked["zz"], None);
    }
}
