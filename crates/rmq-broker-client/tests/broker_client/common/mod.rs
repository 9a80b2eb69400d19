//! Test harness: the NameServer under test (`rmq-testkit`: Waymark's
//! `rmq-namesrv` by default, the Java NameServer when
//! `WAYMARK_JAVA_NAMESRV_CLASSPATH` is set) and a few NameServer queries
//! (route, cluster info, KV) spoken over real bytes.
#![allow(dead_code)]

use rmq_broker_client::{numbered_topics, BrokerConfig, NameServerList, Registrar, TopicTable};
use rmq_protocol::{ClusterInfo, TopicRouteData};
#[allow(unused_imports)] // each test file uses some of these
pub use rmq_testkit::{eventually, Namesrv};

/// GET_ROUTEINFO_BY_TOPIC; `None` for TOPIC_NOT_EXIST.
pub async fn route(addr: &str, topic: &str) -> Option<TopicRouteData> {
    rmq_testkit::admin::route(addr, topic)
        .await
        .unwrap_or_else(|e| panic!("route query to {addr} failed: {e:#}"))
}

/// GET_BROKER_CLUSTER_INFO.
pub async fn cluster_info(addr: &str) -> ClusterInfo {
    rmq_testkit::admin::cluster_info(addr)
        .await
        .unwrap_or_else(|e| panic!("cluster info from {addr} failed: {e:#}"))
}

/// PUT_KV_CONFIG.
pub async fn put_kv(addr: &str, namespace: &str, key: &str, value: &str) {
    rmq_testkit::admin::put_kv(addr, namespace, key, value)
        .await
        .unwrap_or_else(|e| panic!("PUT_KV_CONFIG to {addr} failed: {e:#}"));
}

/// A master `name` at a made-up address with `topics` topics `<name>-t<i>`.
pub fn master(name: &str, port: u16) -> BrokerConfig {
    BrokerConfig::new("TestCluster", name, format!("127.0.0.1:{port}"))
}

/// A registrar for `config` with `topics` numbered topics (prefix `topic`).
pub fn registrar(config: BrokerConfig, prefix: &str, topics: usize, addrs: &[&str]) -> Registrar {
    let table = TopicTable::with_topics(
        numbered_topics(prefix, topics, 4),
        rmq_broker_client::wall_ms(),
    );
    let namesrv = NameServerList::from_static(&addrs.join(";")).unwrap();
    Registrar::new(config, table, namesrv).unwrap()
}
