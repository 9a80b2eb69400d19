//! What each attack of the `hostile` scenario sends, and which of rmq-testkit's hostile peers
//! sends it ([`rmq_testkit::hostile`]): the registrations are built as the benchmark's brokers
//! build theirs (`rmq-broker-client`), the rest are a request of a kind or raw bytes.

use super::{Attack, Params};
use crate::workload::{self, Layout, Registration, CLUSTER};
use anyhow::bail;
use bytes::Bytes;
use rmq_broker_client::body::{self, EncodedBody};
use rmq_broker_client::{wall_ms, BrokerConfig, Flavor};
use rmq_protocol::{
    body_crc32, BodyFlavor, DataVersion, RegisterBrokerBody, TopicConfig,
    TopicConfigSerializeWrapper,
};
use rmq_testkit::hostile::{self, Struck};
use rmq_wire::frame;
use rmq_wire::{RemotingCommand, RequestCode};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// Runs `attack` against `addr` until `deadline`, then closes its connections; with a note for
/// the report.
pub async fn run(
    attack: Attack,
    addr: SocketAddr,
    p: &Params,
    deadline: Instant,
    flood: Option<Bytes>,
) -> (Struck, Option<String>) {
    let wait = Duration::from_millis(p.query_timeout_ms);
    match attack {
        Attack::BigHeader => match big_headers(p) {
            Ok(frames) => (
                hostile::send_frames(addr, frames, 1, None, wait, deadline).await,
                None,
            ),
            Err(error) => (
                Struck::default(),
                Some(format!("cannot build the request: {error:#}")),
            ),
        },
        Attack::SlowFrames => {
            let frame = Arc::new(hostile::slow_frame(p.slow_frame_bytes));
            let struck =
                hostile::send_and_hold(addr, p.slow_connections, frame, false, deadline).await;
            let mib = |bytes: u64| bytes as f64 / f64::from(1 << 20);
            let (sent, planned) = (mib(struck.sent_bytes), mib(struck.planned_bytes));
            (
                struck,
                Some(format!("the server took {sent:.1} of {planned:.1} MiB")),
            )
        }
        Attack::UnreadAnswers => {
            let request = RemotingCommand::request(RequestCode::GetAllTopicListFromNameserver, 1);
            let one = frame::encode_to_bytes(&request);
            let pipelined = one
                .iter()
                .copied()
                .cycle()
                .take(one.len() * p.unread_requests);
            let bytes = Arc::new(pipelined.collect());
            (
                hostile::send_and_hold(addr, p.unread_connections, bytes, true, deadline).await,
                None,
            )
        }
        Attack::ConnectionFlood => {
            let query =
                frame::encode_to_bytes(&workload::route_request(&workload::topic_name(0, 0)));
            let (frames, per) = (vec![query; p.flood_connections], p.flood_per_address);
            let struck =
                hostile::send_frames(addr, frames, p.flood_concurrency, Some(per), wait, deadline)
                    .await;
            let last = hostile::flood_source(p.flood_connections.saturating_sub(1), per);
            let sources = match last == hostile::flood_source(0, per) {
                true => format!("{last}"),
                false => format!("127.0.0.2–{last}, at most {per} each"),
            };
            let note = format!(
                "{} of {} connections opened, each with its query, in {:.1} s, from {sources}",
                struck.fate.attempts,
                p.flood_connections,
                struck.opened_in.as_secs_f64(),
            );
            (struck, Some(note))
        }
        Attack::TopicFlood => {
            let Some(frame) = flood else {
                return (
                    Struck::default(),
                    Some("no topic-flood request was built".into()),
                );
            };
            let whole = deadline.saturating_duration_since(Instant::now());
            let struck = hostile::send_frames(addr, vec![frame], 1, None, whole, deadline).await;
            let note = struck
                .first_reaction_after
                .map(|at| format!("reaction after {:.2} s", at.as_secs_f64()));
            (struck, note)
        }
    }
}

/// REGISTER_BROKER requests of 5.x brokers whose brokerName is `big_header_bytes` long, one
/// letter repeated (a different one for each).
fn big_headers(p: &Params) -> anyhow::Result<Vec<Bytes>> {
    let request = |i: usize| {
        let broker = 1_000 + i;
        let layout = Layout::new(broker + 1, 2, 1);
        let name = char::from(b'a' + (i % 26) as u8)
            .to_string()
            .repeat(p.big_header_bytes);
        let config = BrokerConfig::new(CLUSTER, name, workload::broker_addr(broker));
        let mut registration = Registration::new(config, layout.topic_configs(broker), wall_ms())?;
        Ok(frame::encode_to_bytes(
            &registration.next_request(wall_ms()),
        ))
    };
    (0..p.big_header_sends).map(request).collect()
}

/// The prepared topic-flood REGISTER_BROKER: the whole frame, the topics
/// in its body, the size of the compressed body.
#[derive(Debug, Clone)]
pub struct TopicFlood {
    pub frame: Bytes,
    pub topics: usize,
    pub body_bytes: usize,
}

/// A 4.9.7 broker's REGISTER_BROKER (version 407, `compressed=true`) of `topics` topics in a
/// 4.x zlib body ([`RegisterBrokerBody::to_compressed`]).
pub fn topic_flood_request(topics: usize) -> anyhow::Result<TopicFlood> {
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
    let data_version = DataVersion::new(1, 0, now);
    let bytes = RegisterBrokerBody {
        filter_server_list: Some(Vec::new()),
        topic_config_serialize_wrapper: TopicConfigSerializeWrapper {
            data_version,
            mapping_data_version: DataVersion::new(0, 0, now),
            topic_config_table: (0..topics).map(topic).collect(),
            ..TopicConfigSerializeWrapper::default()
        },
    }
    .to_compressed(BodyFlavor::V4);
    let mut config = BrokerConfig::new(CLUSTER, "hostile-flood-broker", "10.250.0.1:10911");
    config.flavor = Flavor::V4;
    config.compressed_register = true;
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
    if frame.len() - 4 > frame::MAX_LENGTH_FIELD {
        bail!(
            "{topics} topics compress to a {body_bytes}-byte body: the frame is over 16 MiB \
             (use fewer --flood-topics)"
        );
    }
    Ok(TopicFlood {
        frame,
        topics,
        body_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_topic_flood_is_a_compressed_4x_registration() {
        let flood = topic_flood_request(1_000).unwrap();
        let command = frame::decode(flood.frame.clone()).unwrap();
        assert_eq!(command.request_code(), RequestCode::RegisterBroker);
        let compressed = command.ext("compressed");
        assert_eq!((command.version, compressed), (407, Some("true")));
        let body = command.body.unwrap();
        assert_eq!(body.len(), flood.body_bytes);
        let decoded = RegisterBrokerBody::from_compressed(&body, command.version).unwrap();
        let table = decoded.topic_config_serialize_wrapper.topic_config_table;
        assert_eq!(table.len(), 1_000);
    }
    #[test]
    fn big_headers_carry_the_long_name_each_in_its_own_letter() {
        let p = Params {
            big_header_sends: 2,
            big_header_bytes: 40_000,
            ..crate::scenario::params::<super::super::Hostile>(None, false).unwrap()
        };
        let frames = big_headers(&p).unwrap();
        assert_eq!(frames.len(), 2);
        let second = frame::decode(frames[1].clone()).unwrap();
        assert_eq!(second.ext("brokerName"), Some("b".repeat(40_000).as_str()));
    }
}
