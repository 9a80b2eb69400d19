//! Sending one request to every NameServer in parallel, each with its own
//! timeout, collecting results in completion order (Java `BrokerOuterAPI`:
//! `registerBrokerAll`, `needRegister`, the heartbeats, `unregisterBrokerAll`).
//!
//! One failure never delays or cancels the others. These functions build
//! and send; deciding what the results mean for the broker is the
//! [`Registrar`](crate::Registrar)'s job.

use std::future::Future;
use std::time::Duration;

use futures::stream::{FuturesUnordered, StreamExt};
use rmq_protocol::headers::{
    BrokerHeartbeatRequestHeader, QueryDataVersionRequestHeader, QueryDataVersionResponseHeader,
    RegisterBrokerResponseHeader, UnregisterBrokerRequestHeader,
};
use rmq_protocol::{DataVersion, JavaJson, KvTable};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};
use tokio::time::Instant;

use crate::body::{self, EncodedBody, Identity};
use crate::config::BrokerConfig;
use crate::error::NsError;
use crate::pool::Pool;
use crate::report::{BatchReport, NsReply, NsResult};

/// Runs `call` for every address concurrently, each bounded by `timeout`.
pub(crate) async fn fan_out<T, F, Fut>(
    addrs: &[String],
    timeout: Duration,
    call: F,
) -> Vec<NsResult<T>>
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<T, NsError>>,
{
    let mut running: FuturesUnordered<_> = addrs
        .iter()
        .map(|addr| {
            let started = Instant::now();
            let work = call(addr.clone());
            async move {
                let outcome = match tokio::time::timeout(timeout, work).await {
                    Ok(outcome) => outcome,
                    Err(_) => Err(NsError::Timeout(timeout)),
                };
                NsResult {
                    addr: addr.clone(),
                    elapsed: started.elapsed(),
                    outcome,
                }
            }
        })
        .collect();
    let mut results = Vec::with_capacity(addrs.len());
    while let Some(result) = running.next().await {
        results.push(result);
    }
    results
}

/// A two-way call that must answer SUCCESS.
async fn call(
    pool: &Pool,
    addr: &str,
    request: RemotingCommand,
    timeout: Duration,
) -> Result<RemotingCommand, NsError> {
    let client = pool.get(addr).await?;
    let response = client.invoke(request, timeout).await?;
    if response.response_code() != ResponseCode::Success {
        return Err(NsError::Rejected {
            code: response.code,
            remark: response.remark,
        });
    }
    Ok(response)
}

/// A one-way send.
async fn send_oneway(pool: &Pool, addr: &str, request: RemotingCommand) -> Result<(), NsError> {
    pool.get(addr).await?.invoke_oneway(request)?;
    Ok(())
}

/// Reads a REGISTER_BROKER answer.
fn reply_of(response: &RemotingCommand) -> Result<NsReply, NsError> {
    let header: RegisterBrokerResponseHeader = response
        .header()
        .map_err(|e| NsError::BadResponse(e.to_string()))?;
    let order_topic_config = match response.body.as_deref() {
        None | Some([]) => None,
        Some(bytes) => {
            Some(KvTable::from_json(bytes).map_err(|e| NsError::BadResponse(e.to_string()))?)
        }
    };
    Ok(NsReply {
        master_addr: header.master_addr,
        ha_server_addr: header.ha_server_addr,
        order_topic_config,
    })
}

/// Sends one REGISTER_BROKER body to every address.
pub(crate) async fn register(
    pool: &Pool,
    config: &BrokerConfig,
    identity: &Identity,
    addrs: &[String],
    body: &EncodedBody,
    oneway: bool,
) -> BatchReport {
    let request = body::register_request(identity, config, body);
    let timeout = config.register_broker_timeout;
    let results = fan_out(addrs, timeout, |addr| {
        let request = request.clone();
        async move {
            if oneway {
                send_oneway(pool, &addr, request).await.map(|()| None)
            } else {
                let response = call(pool, &addr, request, timeout).await?;
                reply_of(&response).map(Some)
            }
        }
    })
    .await;
    BatchReport {
        topics: body.topics,
        body_len: body.bytes.len(),
        results,
    }
}

fn query_data_version_request(
    config: &BrokerConfig,
    identity: &Identity,
    version: &DataVersion,
) -> RemotingCommand {
    body::request(RequestCode::QueryDataVersion, config)
        .with_header(&QueryDataVersionRequestHeader {
            broker_name: identity.broker_name.clone(),
            broker_addr: identity.broker_addr.clone(),
            cluster_name: identity.cluster_name.clone(),
            broker_id: identity.broker_id,
        })
        .with_body(version.to_json_flavor(config.flavor.body()))
}

/// Java `needRegister`: true if any NameServer says "changed", sends
/// a different version, or cannot be asked; a non-SUCCESS answer counts as
/// "unchanged". False for an empty list.
pub(crate) async fn need_register(
    pool: &Pool,
    config: &BrokerConfig,
    identity: &Identity,
    addrs: &[String],
    version: DataVersion,
) -> bool {
    let request = query_data_version_request(config, identity, &version);
    let timeout = config.register_broker_timeout;
    let results = fan_out(addrs, timeout, |addr| {
        let request = request.clone();
        async move {
            let response = call(pool, &addr, request, timeout).await?;
            let header: QueryDataVersionResponseHeader = response
                .header()
                .map_err(|e| NsError::BadResponse(e.to_string()))?;
            // Java's `changed` is a Boolean: absent (null) means changed.
            let mut changed = response.ext("changed").is_none() || header.changed;
            if let Some(bytes) = response.body.as_deref().filter(|b| !b.is_empty()) {
                let theirs = DataVersion::from_json(bytes)
                    .map_err(|e| NsError::BadResponse(e.to_string()))?;
                changed |= theirs != version;
            }
            Ok(changed)
        }
    })
    .await;
    results.iter().any(|r| match &r.outcome {
        Ok(changed) => *changed,
        Err(NsError::Rejected { .. }) => false,
        Err(_) => true,
    })
}

/// The lightweight heartbeat: one-way QUERY_DATA_VERSION with the
/// version as body (`compatibleWithOldNameSrv`) or one-way BROKER_HEARTBEAT.
pub(crate) async fn heartbeat(
    pool: &Pool,
    config: &BrokerConfig,
    identity: &Identity,
    addrs: &[String],
    version: DataVersion,
) -> Vec<NsResult<()>> {
    let request = if config.compatible_with_old_name_srv {
        query_data_version_request(config, identity, &version)
    } else {
        body::request(RequestCode::BrokerHeartbeat, config).with_header(
            &BrokerHeartbeatRequestHeader {
                cluster_name: identity.cluster_name.clone(),
                broker_addr: identity.broker_addr.clone(),
                broker_name: identity.broker_name.clone(),
                ..BrokerHeartbeatRequestHeader::default()
            },
        )
    };
    fan_out(addrs, config.send_heartbeat_timeout, |addr| {
        let request = request.clone();
        async move { send_oneway(pool, &addr, request).await }
    })
    .await
}

/// UNREGISTER_BROKER to every address, in parallel, bounded overall (Java
/// sends them one after another, 3 s each).
pub(crate) async fn unregister(
    pool: &Pool,
    config: &BrokerConfig,
    identity: &Identity,
    addrs: &[String],
) -> Vec<NsResult<()>> {
    let request = body::request(RequestCode::UnregisterBroker, config).with_header(
        &UnregisterBrokerRequestHeader {
            broker_name: identity.broker_name.clone(),
            broker_addr: identity.broker_addr.clone(),
            cluster_name: identity.cluster_name.clone(),
            broker_id: identity.broker_id,
        },
    );
    let timeout = config.unregister_timeout;
    fan_out(addrs, timeout, |addr| {
        let request = request.clone();
        async move { call(pool, &addr, request, timeout).await.map(|_| ()) }
    })
    .await
}
