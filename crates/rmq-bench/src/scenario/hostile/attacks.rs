//! What each attack of the `hostile` scenario sends, through rmq-testkit's hostile peers
//! ([`rmq_testkit::hostile`]): the registrations are built as the benchmark's brokers build
//! theirs (`rmq-broker-client`), the rest are a request of a kind or raw bytes.

use super::{Attack, Params};
use crate::workload::{self, Layout, Registration, CLUSTER};
use anyhow::ensure;
use bytes::Bytes;
use rmq_broker_client::body::{self, EncodedBody};
use rmq_broker_client::{wall_ms, BrokerConfig, Flavor};
use rmq_protocol::{body_crc32, BodyFlavor, DataVersion, RegisterBrokerBody, TopicConfig};
use rmq_testkit::hostile::{self, Struck};
use rmq_wire::frame;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::time::Instant;

/// Runs `attack` against `addr` until `deadline`, then closes its connections; with a note for
/// the report. `flood` is the topic flood's frame ([`topic_flood_request`]).
pub async fn run(
    attack: Attack,
    addr: SocketAddr,
    p: &Params,
    deadline: Instant,
    flood: Option<Bytes>,
) -> (Struck, Option<String>) {
    let wait = Duration::from_millis(p.query_timeout_ms);
    let mib = |bytes: u64| bytes as f64 / f64::from(1 << 20);
    match attack {
        Attack::BigHeader => match big_headers(p) {
            Ok(frames) => {
                let struck = hostile::send_frames(addr, frames, 1, None, wait, deadline);
                (struck.await, None)
            }
            Err(error) => {
                let note = format!("cannot build the request: {error:#}");
                (Struck::default(), Some(note))
            }
        },
        Attack::SlowFrames => {
            let (connections, bytes) = (p.slow_connections, p.slow_frame_bytes);
            let struck = hostile::slow_frames(addr, connections, bytes, deadline).await;
            let (sent, planned) = (mib(struck.sent_bytes), mib(struck.planned_bytes));
            let note = format!("the server took {sent:.1} of {planned:.1} MiB");
            (struck, Some(note))
        }
        Attack::UnreadAnswers => {
            let (connections, requests) = (p.unread_connections, p.unread_requests);
            let struck = hostile::unread_answers(addr, connections, requests, deadline);
            (struck.await, None)
        }
        Attack::ConnectionFlood => {
            let (count, per) = (p.flood_connections, p.flood_per_address);
            let query = workload::route_request(&workload::topic_name(0, 0));
            let frames = vec![frame::encode_to_bytes(&query); count];
            let struck =
                hostile::send_frames(addr, frames, p.flood_concurrency, Some(per), wait, deadline);
            let struck = struck.await;
            let last = hostile::flood_source(count.saturating_sub(1), per);
            let sources = match last == hostile::flood_source(0, per) {
                true => format!("{last}"),
                false => format!("127.0.0.2–{last}, at most {per} each"),
            };
            let (opened, took) = (struck.fate.attempts, struck.opened_in.as_secs_f64());
            let note = format!(
                "{opened} of {count} connections opened, each with its query, in {took:.1} s, \
                 from {sources}"
            );
            (struck, Some(note))
        }
        Attack::TopicFlood => {
            let Some(frame) = flood else {
                let note = "no topic-flood request was built".to_owned();
                return (Struck::default(), Some(note));
            };
            let whole = deadline.saturating_duration_since(Instant::now());
            let struck = hostile::send_frames(addr, vec![frame], 1, None, whole, deadline).await;
            let after = struck.first_reaction_after;
            let note = after.map(|at| format!("reaction after {:.2} s", at.as_secs_f64()));
            (struck, note)
        }
    }
}

/// REGISTER_BROKER requests of 5.x brokers whose brokerName is `big_header_bytes` long, one
/// letter repeated (a different one for each).
fn big_headers(p: &Params) -> anyhow::Result<Vec<Bytes>> {
    let request = |i: usize| {
        let broker = 1_000 + i;
        let letter = char::from(b'a' + (i % 26) as u8);
        let name = letter.to_string().repeat(p.big_header_bytes);
        let config = BrokerConfig::new(CLUSTER, name, workload::broker_addr(broker));
        let topics = Layout::new(broker + 1, 2, 1).topic_configs(broker);
        let mut registration = Registration::new(config, topics, wall_ms())?;
        let next = registration.next_request(wall_ms());
        Ok(frame::encode_to_bytes(&next))
    };
    (0..p.big_header_sends).map(request).collect()
}

/// A 4.9.7 broker's REGISTER_BROKER (version 407, `compressed=true`) of `topics` topics in a
/// 4.x zlib body ([`RegisterBrokerBody::to_compressed`]): the whole frame, and the size of its
/// compressed body.
pub fn topic_flood_request(topics: usize) -> anyhow::Result<(Bytes, usize)> {
    let now = wall_ms();
    let topic = |i| {
        let name = format!("FloodTopic-{i:08}");
        let config = TopicConfig {
            read_queue_nums: 8,
            write_queue_nums: 8,
            perm: 6,
            ..TopicConfig::new(name.clone())
        };
        (name, config)
    };
    let (data_version, mut body) = (DataVersion::new(1, 0, now), RegisterBrokerBody::default());
    let wrapper = &mut body.topic_config_serialize_wrapper;
    (wrapper.data_version, wrapper.mapping_data_version) =
        (data_version, DataVersion::new(0, 0, now));
    wrapper.topic_config_table = (0..topics).map(topic).collect();
    let bytes = body.to_compressed(BodyFlavor::V4);
    let mut config = BrokerConfig::new(CLUSTER, "hostile-flood-broker", "10.250.0.1:10911");
    (config.flavor, config.compressed_register) = (Flavor::V4, true);
    let body_bytes = bytes.len();
    let encoded = EncodedBody {
        topics,
        data_version,
        crc32: body_crc32(&bytes),
        bytes: Bytes::from(bytes),
        compressed: true,
    };
    let request = body::register_request(&workload::identity(&config), &config, &encoded);
    let frame = frame::encode_to_bytes(&request);
    ensure!(
        frame.len() - 4 <= frame::MAX_LENGTH_FIELD,
        "{topics} topics compress to a {body_bytes}-byte body: the frame is over 16 MiB (use \
         fewer --flood-topics)"
    );
    Ok((frame, body_bytes))
}
