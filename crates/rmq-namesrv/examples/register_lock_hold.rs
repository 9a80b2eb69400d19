//! How long a large registration holds the route table's write lock, while
//! route queries (answered inline on the runtime's workers) wait for its read
//! lock. A measurement, not a test:
//!
//! `cargo run --release -p rmq-namesrv --example register_lock_hold`

use std::collections::BTreeMap;
use std::time::Instant;

use rmq_namesrv::route::{BrokerRegistration, SharedRoutes};
use rmq_protocol::{DataVersion, TopicConfig};

const TOPICS: usize = 100_000;

fn registration(counter: i64) -> BrokerRegistration {
    BrokerRegistration {
        cluster: "DefaultCluster".into(),
        broker_addr: "127.0.0.1:10911".into(),
        broker_name: "broker-a".into(),
        broker_id: 0,
        ha_server_addr: "127.0.0.1:10912".into(),
        zone_name: None,
        heartbeat_timeout_ms: None,
        enable_acting_master: Some(false),
        data_version: DataVersion::new(counter, 0, 100),
        topic_configs: (0..TOPICS)
            .map(|i| TopicConfig {
                read_queue_nums: 8,
                write_queue_nums: 8,
                ..TopicConfig::new(format!("Topic-{i:06}-with-a-realistic-name"))
            })
            .collect(),
        mappings: BTreeMap::new(),
        filter_servers: Some(Vec::new()),
        conn: 1,
    }
}

/// The write lock's hold time for one registration, in milliseconds.
fn hold_ms(routes: &SharedRoutes, reg: BrokerRegistration, delete_missing: bool) -> f64 {
    let start = Instant::now();
    let mut table = routes.write();
    table
        .register_broker(reg, 1_000, false, delete_missing)
        .expect("registered");
    drop(table);
    start.elapsed().as_secs_f64() * 1e3
}

#[allow(clippy::print_stdout, reason = "the measurement is the output")]
fn main() {
    let routes = SharedRoutes::new();
    let first = hold_ms(&routes, registration(1), false);
    let same = hold_ms(&routes, registration(1), false);
    let changed = hold_ms(&routes, registration(2), false);
    let changed_delete = hold_ms(&routes, registration(3), true);
    assert_eq!(routes.read().all_topics().len(), TOPICS);
    println!(
        "write lock held for {TOPICS} topics: first {first:.1} ms, unchanged {same:.1} ms, \
         changed version {changed:.1} ms, changed + deleteTopicWithBrokerRegistration {changed_delete:.1} ms"
    );
}
