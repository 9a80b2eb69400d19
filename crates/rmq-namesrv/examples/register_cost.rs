//! What one full re-registration of a 2,000-topic broker costs the NameServer
//! outside the network: the body's JSON decode (as a 5.x broker sends it,
//! CRC checked), the topic name checks, and the table update with a new
//! DataVersion, in the proportions of the real handler. A measurement, not a
//! test; under callgrind it shows where the instructions go:
//!
//! ```sh
//! cargo build --release -p rmq-namesrv --example register_cost
//! target/release/examples/register_cost 200
//! valgrind --tool=callgrind target/release/examples/register_cost 20
//! ```

use std::time::Instant;

use rmq_namesrv::route::{BrokerRegistration, SharedRoutes};
use rmq_protocol::{
    body_crc32, DataVersion, Dialect, JavaJson, RegisterBrokerBody, TopicConfig,
    TopicConfigSerializeWrapper,
};

const TOPICS: usize = 2_000;

fn body(counter: i64) -> Vec<u8> {
    let wrapper = TopicConfigSerializeWrapper {
        data_version: DataVersion::new(counter, 0, 100),
        topic_config_table: (0..TOPICS)
            .map(|i| {
                let name = format!("Topic-{i:06}-with-a-realistic-name");
                let config = TopicConfig {
                    read_queue_nums: 8,
                    write_queue_nums: 8,
                    ..TopicConfig::new(name.clone())
                };
                (name, config)
            })
            .collect(),
        ..TopicConfigSerializeWrapper::default()
    };
    RegisterBrokerBody {
        filter_server_list: Some(Vec::new()),
        topic_config_serialize_wrapper: wrapper,
    }
    .to_json(Dialect::Default)
}

#[allow(clippy::print_stdout, reason = "the measurement is the output")]
fn main() {
    let rounds: i64 = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let routes = SharedRoutes::new();
    // A few bodies used in turn: each registration still carries a
    // DataVersion other than the last one's, and the bodies stay in cache
    // as a server's receive buffers would.
    let bodies: Vec<Vec<u8>> = (1..=8).map(body).collect();
    let started = Instant::now();
    let mut decoding = std::time::Duration::ZERO;
    for (round, bytes) in (0..rounds).zip(bodies.iter().cycle()) {
        let decode_started = Instant::now();
        let crc = body_crc32(bytes);
        assert_ne!(crc, 0);
        let decoded = RegisterBrokerBody::decode_registration(Some(bytes), false, 479, 200_000)
            .expect("a valid body");
        let registration = BrokerRegistration {
            cluster: "DefaultCluster".into(),
            broker_addr: "127.0.0.1:10911".into(),
            broker_name: "broker-a".into(),
            broker_id: 0,
            ha_server_addr: "127.0.0.1:10912".into(),
            zone_name: None,
            heartbeat_timeout_ms: None,
            enable_acting_master: Some(false),
            data_version: decoded.data_version,
            topic_configs: decoded.topic_configs,
            mappings: decoded.mappings,
            filter_servers: decoded.filter_server_list,
            conn: 1,
            client_version: 0,
        };
        decoding += decode_started.elapsed();
        routes
            .register_broker(registration, round as u64, false, false)
            .expect("registered");
    }
    let rounds = u32::try_from(rounds).unwrap_or(1);
    let per = started.elapsed() / rounds;
    println!(
        "{rounds} registrations of {TOPICS} topics ({} bytes each): {per:?} each, {:?} of it decoding",
        bodies[0].len(),
        decoding / rounds
    );
}
