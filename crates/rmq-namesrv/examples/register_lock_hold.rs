//! How long a route query (answered inline on the runtime's workers, taking
//! the route table's read lock) waits while a 100,000-topic registration is
//! applied: in one piece under the write lock, and in slices as the server
//! does (`SharedRoutes::register_broker`). A measurement, not a test:
//!
//! `cargo run --release -p rmq-namesrv --example register_lock_hold`

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rmq_namesrv::route::{BrokerRegistration, RouteTable, SharedRoutes};
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
        client_version: 0,
    }
}

/// A registration written in one piece, as Java's
/// `RouteInfoManager.registerBroker` writes it under its write lock: the
/// broker's part and every topic in one hold of the table.
fn register_in_one_piece(
    table: &mut RouteTable,
    mut reg: BrokerRegistration,
    delete_missing: bool,
) {
    let (_, work) = table
        .begin_registration(&reg, 1_000, false, delete_missing)
        .expect("registered");
    let work = work.expect("a master's registration has topics to write");
    let topics = std::mem::take(&mut reg.topic_configs);
    table.reserve_topics(topics.len().saturating_sub(table.topic_count()));
    table.apply_topics(&work, &topics);
    table.finish_topics(&work, &topics);
}

/// The longest a reader waited for the read lock while `register` ran.
fn longest_wait(routes: &SharedRoutes, register: impl FnOnce()) -> Duration {
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            let mut longest = Duration::ZERO;
            while !done.load(Ordering::Relaxed) {
                let asked = Instant::now();
                drop(routes.read());
                longest = longest.max(asked.elapsed());
                std::thread::sleep(Duration::from_micros(100));
            }
            longest
        });
        // Let the reader start before the registration takes the lock.
        std::thread::sleep(Duration::from_millis(5));
        register();
        done.store(true, Ordering::Relaxed);
        reader.join().expect("the reader")
    })
}

fn ms(wait: Duration) -> f64 {
    wait.as_secs_f64() * 1e3
}

#[allow(clippy::print_stdout, reason = "the measurement is the output")]
fn main() {
    let cases = [
        ("first", 1, false),
        ("changed", 2, false),
        ("changed + delete", 3, true),
    ];
    let whole = SharedRoutes::new();
    let sliced = SharedRoutes::new();
    println!("longest route-query wait during a {TOPICS}-topic registration:");
    for (what, counter, delete_missing) in cases {
        let one_piece = longest_wait(&whole, || {
            register_in_one_piece(&mut whole.write(), registration(counter), delete_missing);
        });
        let in_slices = longest_wait(&sliced, || {
            sliced
                .register_broker(registration(counter), 1_000, false, delete_missing)
                .expect("registered");
        });
        println!(
            "  {what:<17} one piece {:6.1} ms, in slices {:6.1} ms",
            ms(one_piece),
            ms(in_slices)
        );
    }
    assert_eq!(whole.read().all_topics().len(), TOPICS);
    assert_eq!(sliced.read().all_topics().len(), TOPICS);
}
