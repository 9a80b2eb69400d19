//! The admin requests tests send a NameServer directly, each on a fresh
//! connection: the route of a topic, cluster info, a KV entry, and wiping
//! or restoring a broker's write permission (what `mqadmin wipeWritePerm` /
//! `addWritePerm` send).
//!
//! Owns only the request and response shapes; the crates under test have
//! their own clients, and tests use these to check what the NameServer
//! holds independently of them.

use std::time::Duration;

use anyhow::{bail, Context};
use rmq_protocol::headers::{
    AddWritePermOfBrokerRequestHeader, AddWritePermOfBrokerResponseHeader,
    GetRouteInfoRequestHeader, PutKvConfigRequestHeader, WipeWritePermOfBrokerRequestHeader,
    WipeWritePermOfBrokerResponseHeader,
};
use rmq_protocol::{ClusterInfo, JavaJson, TopicRouteData};
use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};

/// Timeout of every request here.
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// Sends `request` to `addr` on a new connection and returns the answer.
///
/// # Errors
/// Connection and timeout errors.
pub async fn call(addr: &str, request: RemotingCommand) -> anyhow::Result<RemotingCommand> {
    let conn = RpcClient::connect(addr, ClientConfig::default())
        .await
        .with_context(|| format!("connect to {addr}"))?;
    let response = conn.invoke(request, TIMEOUT).await;
    conn.close();
    Ok(response?)
}

fn expect_success(response: &RemotingCommand) -> anyhow::Result<()> {
    if response.response_code() != ResponseCode::Success {
        bail!("code {} remark {:?}", response.code, response.remark);
    }
    Ok(())
}

/// GET_ROUTEINFO_BY_TOPIC; `None` for TOPIC_NOT_EXIST.
///
/// # Errors
/// Transport errors, any other answer, an unparsable body.
pub async fn route(addr: &str, topic: &str) -> anyhow::Result<Option<TopicRouteData>> {
    let request = RemotingCommand::request(RequestCode::GetRouteInfoByTopic, 0).with_header(
        &GetRouteInfoRequestHeader {
            topic: topic.into(),
            ..Default::default()
        },
    );
    let response = call(addr, request).await?;
    if response.response_code() == ResponseCode::TopicNotExist {
        return Ok(None);
    }
    expect_success(&response)?;
    let body = response.body.context("route without body")?;
    Ok(Some(TopicRouteData::from_json(&body)?))
}

/// GET_BROKER_CLUSTER_INFO.
///
/// # Errors
/// Transport errors, a failure answer, an unparsable body.
pub async fn cluster_info(addr: &str) -> anyhow::Result<ClusterInfo> {
    let request = RemotingCommand::request(RequestCode::GetBrokerClusterInfo, 0);
    let response = call(addr, request).await?;
    expect_success(&response)?;
    let body = response.body.context("cluster info without body")?;
    Ok(ClusterInfo::from_json(&body)?)
}

/// PUT_KV_CONFIG.
///
/// # Errors
/// Transport errors, a failure answer.
pub async fn put_kv(addr: &str, namespace: &str, key: &str, value: &str) -> anyhow::Result<()> {
    let request = RemotingCommand::request(RequestCode::PutKvConfig, 0).with_header(
        &PutKvConfigRequestHeader {
            namespace: namespace.into(),
            key: key.into(),
            value: Some(value.into()),
        },
    );
    expect_success(&call(addr, request).await?)
}

/// WIPE_WRITE_PERM_OF_BROKER; the number of topics touched.
///
/// # Errors
/// Transport errors, a failure answer, a missing count.
pub async fn wipe_write_perm(addr: &str, broker_name: &str) -> anyhow::Result<i32> {
    let header = WipeWritePermOfBrokerRequestHeader {
        broker_name: broker_name.to_owned(),
    };
    let request =
        RemotingCommand::request(RequestCode::WipeWritePermOfBroker, 0).with_header(&header);
    let response = call(addr, request).await?;
    expect_success(&response)?;
    Ok(response
        .header::<WipeWritePermOfBrokerResponseHeader>()?
        .wipe_topic_count)
}

/// ADD_WRITE_PERM_OF_BROKER; the number of topics touched.
///
/// # Errors
/// Transport errors, a failure answer, a missing count.
pub async fn add_write_perm(addr: &str, broker_name: &str) -> anyhow::Result<i32> {
    let header = AddWritePermOfBrokerRequestHeader {
        broker_name: broker_name.to_owned(),
    };
    let request =
        RemotingCommand::request(RequestCode::AddWritePermOfBroker, 0).with_header(&header);
    let response = call(addr, request).await?;
    expect_success(&response)?;
    Ok(response
        .header::<AddWritePermOfBrokerResponseHeader>()?
        .add_topic_count)
}
