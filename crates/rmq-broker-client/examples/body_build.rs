//! Times building REGISTER_BROKER bodies for a large topic table:
//! `cargo run --release -p rmq-broker-client --example body_build [topics]`.

use std::time::Instant;

use rmq_broker_client::body::{full_bodies, BodyOptions};
use rmq_broker_client::{numbered_topics, BrokerConfig, TopicTable};

fn main() {
    let topics: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    let table = TopicTable::with_topics(numbered_topics("SimTopic", topics, 8), 0);
    let mut config = BrokerConfig::new("DefaultCluster", "broker-0", "127.0.0.1:10911");
    for (label, compressed, split) in [
        ("json", false, false),
        ("split", false, true),
        ("zlib", true, false),
    ] {
        config.compressed_register = compressed;
        config.enable_split_registration = split;
        let options = BodyOptions::from_config(&config, 6);
        let mut best = f64::MAX;
        let mut bytes = 0;
        for _ in 0..10 {
            let started = Instant::now();
            let bodies = full_bodies(&table, &options, 0);
            best = best.min(started.elapsed().as_secs_f64() * 1000.0);
            bytes = bodies.iter().map(|b| b.bytes.len()).sum();
        }
        let mut out = std::io::stdout().lock();
        let _ = std::io::Write::write_all(
            &mut out,
            format!("{label}: {topics} topics, {bytes} bytes, best of 10: {best:.2} ms\n")
                .as_bytes(),
        );
    }
}
