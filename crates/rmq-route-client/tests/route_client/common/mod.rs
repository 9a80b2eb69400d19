//! Test support: the NameServer under test (`rmq-testkit`: Waymark's
//! `rmq-namesrv` by default, the Java NameServer when
//! `WAYMARK_JAVA_NAMESRV_CLASSPATH` is set), and a minimal "broker" that
//! registers topics over its own connection (closing the connection
//! unregisters it), plus the admin requests the tests need.
//!
//! Kept small on purpose; `rmq-broker-client` is the real registrar.
#![allow(dead_code)]

use std::time::Duration;

use anyhow::bail;
use rmq_protocol::headers::RegisterBrokerRequestHeader;
use rmq_protocol::{body_crc32, DataVersion, Dialect, JavaJson, RegisterBrokerBody, TopicConfig};
#[allow(unused_imports)] // each test file uses some of these
pub use rmq_testkit::admin::{add_write_perm, wipe_write_perm};
pub use rmq_testkit::Namesrv;
use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};

/// One topic a fake broker serves: `(name, read, write, perm)`.
pub type Topic<'a> = (&'a str, i32, i32, i32);

/// A registered broker: the connection its registration came over. Dropping
/// or closing it makes the NameServer unregister the broker.
pub struct Broker {
    pub conn: RpcClient,
    pub name: String,
}

/// Registers `name` (id 0, cluster `DefaultCluster`) at `addr` with `topics`
/// on NameServer `ns`, over a new connection.
pub async fn register(
    ns: &str,
    name: &str,
    addr: &str,
    topics: &[Topic<'_>],
) -> anyhow::Result<Broker> {
    register_over(ns, ClientConfig::default(), name, addr, topics).await
}

/// [`register`] over a connection made with `config` (TLS, a signing hook).
pub async fn register_over(
    ns: &str,
    config: ClientConfig,
    name: &str,
    addr: &str,
    topics: &[Topic<'_>],
) -> anyhow::Result<Broker> {
    let conn = RpcClient::connect(ns, config).await?;
    register_on(&conn, name, addr, 1, topics).await?;
    Ok(Broker {
        conn,
        name: name.to_owned(),
    })
}

/// Registers over an existing connection with data version `counter`.
pub async fn register_on(
    conn: &RpcClient,
    name: &str,
    addr: &str,
    counter: i64,
    topics: &[Topic<'_>],
) -> anyhow::Result<()> {
    register_as(conn, name, addr, 0, counter, topics).await
}

/// [`register_on`] with broker id `id` (0: master).
pub async fn register_as(
    conn: &RpcClient,
    name: &str,
    addr: &str,
    id: i64,
    counter: i64,
    topics: &[Topic<'_>],
) -> anyhow::Result<()> {
    let mut body = RegisterBrokerBody::default();
    let wrapper = &mut body.topic_config_serialize_wrapper;
    wrapper.data_version = DataVersion::new(counter, 0, 1_700_000_000_000 + counter);
    // As real brokers do, also register the topic named after the broker:
    // a first registration with exactly one topic is refused (Java's guard
    // against an incremental registration racing ahead).
    let own: Topic<'_> = (name, 1, 1, 7);
    for (topic, read, write, perm) in topics.iter().chain([&own]) {
        let mut config = TopicConfig::new(*topic);
        (config.read_queue_nums, config.write_queue_nums, config.perm) = (*read, *write, *perm);
        wrapper
            .topic_config_table
            .insert((*topic).to_owned(), config);
    }
    let body = body.to_json(Dialect::Default);
    let header = RegisterBrokerRequestHeader {
        broker_name: name.to_owned(),
        broker_addr: addr.to_owned(),
        cluster_name: "DefaultCluster".into(),
        ha_server_addr: addr.to_owned(),
        broker_id: id,
        enable_acting_master: Some(false),
        body_crc32: body_crc32(&body),
        ..RegisterBrokerRequestHeader::default()
    };
    let request = RemotingCommand::request(RequestCode::RegisterBroker, 0)
        .with_header(&header)
        .with_body(body);
    expect_success(conn.invoke(request, Duration::from_secs(5)).await?)
}

/// PUT_KV_CONFIG of an order configuration (`ORDER_TOPIC_CONFIG` namespace).
pub async fn put_order_conf(ns: &str, topic: &str, conf: &str) -> anyhow::Result<()> {
    rmq_testkit::admin::put_kv(ns, "ORDER_TOPIC_CONFIG", topic, conf).await
}

fn expect_success(response: RemotingCommand) -> anyhow::Result<()> {
    if response.response_code() != ResponseCode::Success {
        bail!("code {} remark {:?}", response.code, response.remark);
    }
    Ok(())
}

/// A client config for `addrs` with short timeouts and `poll` refresh.
pub fn config(addrs: &[&str], poll: Duration) -> rmq_route_client::RouteClientConfig {
    let mut config = rmq_route_client::RouteClientConfig {
        namesrv_addrs: addrs.iter().map(|a| a.to_string()).collect(),
        poll_name_server_interval: poll,
        mq_client_api_timeout: Duration::from_secs(2),
        ..Default::default()
    };
    config.channel.connect_timeout = Duration::from_secs(1);
    config
}

/// `broker:queueId` names of a queue list.
pub fn names<'a>(
    queues: impl IntoIterator<Item = &'a rmq_route_client::MessageQueue>,
) -> Vec<String> {
    queues
        .into_iter()
        .map(|q| format!("{}:{}", q.broker_name, q.queue_id))
        .collect()
}
