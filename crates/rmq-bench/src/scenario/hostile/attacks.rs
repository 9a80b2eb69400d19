//! The attacks of the `hostile` scenario, over raw TCP: each opens its own
//! connections, does its damage until a deadline, sees how the server
//! reacted on each, closes them and reports back ([`Struck`]).
//!
//! The bytes are those of crates/rmq-namesrv's tests/server/hostile_peers.rs;
//! the topic-flood body comes from `rmq-protocol`'s compressed-body encoder
//! ([`topic_flood_request`]). Nothing here measures the server: the
//! measurement around an attack is the parent module's.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::bail;
use bytes::{Bytes, BytesMut};
use futures::stream::{self, StreamExt};
use rmq_broker_client::body::{self, EncodedBody, Identity};
use rmq_broker_client::{wall_ms, BrokerConfig, Flavor};
use rmq_protocol::{
    body_crc32, BodyFlavor, DataVersion, RegisterBrokerBody, TopicConfig,
    TopicConfigSerializeWrapper,
};
use rmq_wire::frame::{self, FrameStatus};
use rmq_wire::{RemotingCommand, RequestCode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::task::JoinSet;
use tokio::time::{timeout_at, Instant};

use super::{frame_of, Attack, Params, Struck};
use crate::workload::{self, Layout, Registration, CLUSTER};

/// How the server reacted on one attacker connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reaction {
    /// It answered (the first frame): code and remark. An undecodable
    /// answer is code -1 with the decode error.
    Answer {
        /// Response code.
        code: i32,
        /// Remark, if any.
        remark: String,
    },
    /// It closed the connection (end of stream, or reset).
    Closed,
    /// Neither by the deadline.
    Nothing,
}

/// A raw connection.
struct Raw {
    stream: TcpStream,
    buf: BytesMut,
}

impl Raw {
    /// Connects to `addr`, from `from` (port chosen by the kernel) if given.
    async fn connect(addr: SocketAddr, from: Option<Ipv4Addr>) -> std::io::Result<Raw> {
        let socket = TcpSocket::new_v4()?;
        if let Some(ip) = from {
            socket.bind(SocketAddr::from((ip, 0)))?;
        }
        let stream = tokio::time::timeout(Duration::from_secs(3), socket.connect(addr))
            .await
            .map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::TimedOut, "connect timed out")
            })??;
        Ok(Raw {
            stream,
            buf: BytesMut::new(),
        })
    }

    /// Writes `bytes`; a failed write means the server closed or reset.
    /// Gives up at `until` (the server stopped reading): `false` then.
    async fn send(&mut self, bytes: &[u8], until: Instant) -> Result<bool, Reaction> {
        match timeout_at(until, self.stream.write_all(bytes)).await {
            Err(_) => Ok(false),
            Ok(Ok(())) => Ok(true),
            // An answer may have come before the reset.
            Ok(Err(_)) => Err(match self.reaction(Instant::now() + ms(200)).await {
                Reaction::Nothing => Reaction::Closed,
                seen => seen,
            }),
        }
    }

    /// The first answer, a close, or nothing by `until`.
    async fn reaction(&mut self, until: Instant) -> Reaction {
        loop {
            match frame::check(&self.buf) {
                Ok(FrameStatus::Complete { len }) => {
                    let bytes = self.buf.split_to(len).freeze();
                    return match frame::decode(bytes) {
                        Ok(answer) => Reaction::Answer {
                            code: answer.code,
                            remark: answer.remark.unwrap_or_default(),
                        },
                        Err(error) => undecodable(&error),
                    };
                }
                Ok(FrameStatus::Incomplete { .. }) => {}
                Err(error) => return undecodable(&error),
            }
            match timeout_at(until, self.stream.read_buf(&mut self.buf)).await {
                Err(_) => return Reaction::Nothing,
                Ok(Ok(0) | Err(_)) => return Reaction::Closed,
                Ok(Ok(_)) => {}
            }
        }
    }

    /// Reads and throws away until `until`: [`Reaction::Closed`] if the
    /// stream ends or resets first, else [`Reaction::Nothing`].
    async fn drain(&mut self, until: Instant) -> Reaction {
        let mut scratch = vec![0u8; 256 * 1024];
        loop {
            match timeout_at(until, self.stream.read(&mut scratch)).await {
                Err(_) => return Reaction::Nothing,
                Ok(Ok(0) | Err(_)) => return Reaction::Closed,
                Ok(Ok(_)) => {}
            }
        }
    }
}

fn undecodable(error: &frame::FrameError) -> Reaction {
    Reaction::Answer {
        code: -1,
        remark: format!("undecodable answer: {error}"),
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Runs `attack` against `addr` until `deadline`, then closes its
/// connections. `flood` is the topic-flood frame ([`topic_flood_request`]).
pub async fn run(
    attack: Attack,
    addr: SocketAddr,
    params: &Params,
    deadline: Instant,
    flood: Option<Bytes>,
) -> Struck {
    match attack {
        Attack::BigHeader => big_header(addr, params, deadline).await,
        Attack::SlowFrames => slow_frames(addr, params, deadline).await,
        Attack::UnreadAnswers => unread_answers(addr, params, deadline).await,
        Attack::ConnectionFlood => connection_flood(addr, params, deadline).await,
        Attack::TopicFlood => match flood {
            Some(frame) => topic_flood(addr, frame, deadline).await,
            None => Struck {
                note: Some("no topic-flood request was built".into()),
                ..Struck::default()
            },
        },
    }
}

/// REGISTER_BROKER whose brokerName is `big_header_bytes` long, one after
/// another, each on a new connection, each given the query timeout to be
/// answered or closed; the connections stay open until `deadline`.
async fn big_header(addr: SocketAddr, params: &Params, deadline: Instant) -> Struck {
    let mut struck = Struck::default();
    let mut held = Vec::new();
    for i in 0..params.big_header_sends {
        let broker = 1_000 + i;
        let layout = Layout {
            brokers: broker + 1,
            topics_per_broker: 2,
            spread: 1,
            queues: 8,
        };
        let letter = char::from(b'a' + (i % 26) as u8);
        let name = letter.to_string().repeat(params.big_header_bytes);
        let config = BrokerConfig::new(CLUSTER, name, workload::broker_addr(broker));
        let request = match Registration::new(config, layout.topic_configs(broker), wall_ms()) {
            Ok(mut registration) => frame_of(&registration.next_request(wall_ms())),
            Err(error) => {
                struck.note = Some(format!("cannot build the request: {error:#}"));
                break;
            }
        };
        struck.fate.attempts += 1;
        struck.planned_bytes += request.len() as u64;
        let mut raw = match Raw::connect(addr, None).await {
            Ok(raw) => raw,
            Err(error) => {
                struck.fate.connect_failed(&error);
                continue;
            }
        };
        let until = (Instant::now() + params.query_timeout()).min(deadline.max(Instant::now()));
        let reaction = match raw.send(&request, until).await {
            Ok(true) => {
                struck.sent_bytes += request.len() as u64;
                raw.reaction(until).await
            }
            Ok(false) => Reaction::Nothing,
            Err(seen) => seen,
        };
        struck.fate.count(&reaction);
        held.push(raw);
    }
    tokio::time::sleep_until(deadline).await;
    drop(held);
    struck
}

/// The frame of the slow senders, all of it but the last byte: a 16 MiB
/// GET_BROKER_CLUSTER_INFO (106) with a body of `x`s, as the integration
/// test sends it.
fn slow_frame(total: usize) -> Vec<u8> {
    let header = br#"{"code":106,"flag":0,"opaque":1,"language":"JAVA","version":0}"#;
    let body_len = total.saturating_sub(8 + header.len());
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&((4 + header.len() + body_len) as u32).to_be_bytes());
    out.extend_from_slice(&(header.len() as u32).to_be_bytes());
    out.extend_from_slice(header);
    out.resize(8 + header.len() + body_len, b'x');
    out.pop();
    out
}

/// `slow_connections` connections each announce a `slow_frame_bytes` frame,
/// send all of it but the last byte as fast as the server takes it, and
/// hold on until `deadline`.
async fn slow_frames(addr: SocketAddr, params: &Params, deadline: Instant) -> Struck {
    let frame = Arc::new(slow_frame(params.slow_frame_bytes));
    let sent = Arc::new(AtomicU64::new(0));
    let mut tasks = JoinSet::new();
    for _ in 0..params.slow_connections {
        let (frame, sent) = (frame.clone(), sent.clone());
        tasks.spawn(async move {
            let mut raw = Raw::connect(addr, None).await?;
            for chunk in frame.chunks(256 * 1024) {
                match raw.send(chunk, deadline).await {
                    Ok(true) => sent.fetch_add(chunk.len() as u64, Ordering::Relaxed),
                    // The server stopped reading: held open, unfinished.
                    Ok(false) => return Ok(Reaction::Nothing),
                    Err(seen) => return Ok(seen),
                };
            }
            Ok::<_, std::io::Error>(raw.reaction(deadline).await)
        });
    }
    let mut struck = Struck {
        planned_bytes: (frame.len() * params.slow_connections) as u64,
        ..Struck::default()
    };
    while let Some(done) = tasks.join_next().await {
        struck.fate.attempts += 1;
        match done {
            Ok(Ok(reaction)) => struck.fate.count(&reaction),
            Ok(Err(error)) => struck.fate.connect_failed(&error),
            Err(error) => struck
                .fate
                .connect_failed(&std::io::Error::other(error.to_string())),
        }
    }
    struck.sent_bytes = sent.load(Ordering::Relaxed);
    struck.note = Some(format!(
        "the server took {:.1} of {:.1} MiB",
        struck.sent_bytes as f64 / f64::from(1 << 20),
        struck.planned_bytes as f64 / f64::from(1 << 20)
    ));
    struck
}

/// `unread_connections` connections each pipeline `unread_requests`
/// GET_ALL_TOPIC_LIST_FROM_NAMESERVER and read nothing until `deadline`;
/// then each reads (and throws away) for a second to see whether the server
/// closed it.
async fn unread_answers(addr: SocketAddr, params: &Params, deadline: Instant) -> Struck {
    let one = frame_of(&RemotingCommand::request(
        RequestCode::GetAllTopicListFromNameserver,
        1,
    ));
    let pipelined: Arc<Vec<u8>> = Arc::new(
        one.iter()
            .copied()
            .cycle()
            .take(one.len() * params.unread_requests)
            .collect(),
    );
    let sent = Arc::new(AtomicU64::new(0));
    let mut tasks = JoinSet::new();
    for _ in 0..params.unread_connections {
        let (bytes, sent) = (pipelined.clone(), sent.clone());
        tasks.spawn(async move {
            let mut raw = Raw::connect(addr, None).await?;
            match raw.send(&bytes, deadline).await {
                Ok(true) => {
                    sent.fetch_add(bytes.len() as u64, Ordering::Relaxed);
                }
                Ok(false) => {}
                Err(seen) => return Ok(seen),
            }
            tokio::time::sleep_until(deadline).await;
            Ok::<_, std::io::Error>(raw.drain(Instant::now() + Duration::from_secs(1)).await)
        });
    }
    let mut struck = Struck {
        planned_bytes: (pipelined.len() * params.unread_connections) as u64,
        ..Struck::default()
    };
    while let Some(done) = tasks.join_next().await {
        struck.fate.attempts += 1;
        match done {
            Ok(Ok(reaction)) => struck.fate.count(&reaction),
            Ok(Err(error)) => struck.fate.connect_failed(&error),
            Err(error) => struck
                .fate
                .connect_failed(&std::io::Error::other(error.to_string())),
        }
    }
    struck.sent_bytes = sent.load(Ordering::Relaxed);
    struck
}

/// The source address of flood connection `i`: 127.0.0.2 for the first
/// `per_address`, then 127.0.0.3, … (wrapping before 127.0.0.255).
pub fn flood_source(i: usize, per_address: usize) -> Ipv4Addr {
    let n = (i / per_address.max(1)) % 250;
    Ipv4Addr::new(127, 0, 0, 2 + n as u8)
}

/// `flood_connections` connections, `flood_concurrency` at a time, from
/// [`flood_source`] addresses, each sending one route query and reading
/// its answer; all held until `deadline`, then closed at once.
async fn connection_flood(addr: SocketAddr, params: &Params, deadline: Instant) -> Struck {
    let request = frame_of(&workload::route_request(&workload::topic_name(0, 0)));
    let started = Instant::now();
    let wait = params.query_timeout();
    let per_address = params.flood_per_address;
    let results: Vec<_> = stream::iter(0..params.flood_connections)
        .map(|i| {
            let request = request.clone();
            async move {
                if Instant::now() >= deadline {
                    return None;
                }
                let mut raw = match Raw::connect(addr, Some(flood_source(i, per_address))).await {
                    Ok(raw) => raw,
                    Err(error) => return Some(Err(error)),
                };
                let until = Instant::now() + wait;
                let reaction = match raw.send(&request, until).await {
                    Ok(true) => raw.reaction(until).await,
                    Ok(false) => Reaction::Nothing,
                    Err(seen) => seen,
                };
                Some(Ok((raw, reaction)))
            }
        })
        .buffer_unordered(params.flood_concurrency.max(1))
        .collect()
        .await;
    let opened_in = started.elapsed();
    let mut struck = Struck::default();
    let mut held = Vec::with_capacity(results.len());
    for result in results.into_iter().flatten() {
        struck.fate.attempts += 1;
        match result {
            Ok((raw, reaction)) => {
                struck.fate.count(&reaction);
                struck.sent_bytes += request.len() as u64;
                held.push(raw);
            }
            Err(error) => struck.fate.connect_failed(&error),
        }
    }
    struck.planned_bytes = (request.len() * params.flood_connections) as u64;
    let last = flood_source(params.flood_connections.saturating_sub(1), per_address);
    let sources = if last == flood_source(0, per_address) {
        format!("{last}")
    } else {
        format!("127.0.0.2–{last}, at most {per_address} each")
    };
    struck.note = Some(format!(
        "{} of {} connections opened, each with its query, in {:.1} s, from {sources}",
        struck.fate.attempts,
        params.flood_connections,
        opened_in.as_secs_f64(),
    ));
    tokio::time::sleep_until(deadline).await;
    drop(held);
    struck
}

/// The prepared topic-flood REGISTER_BROKER.
#[derive(Debug, Clone)]
pub struct TopicFlood {
    /// The whole frame.
    pub frame: Bytes,
    /// Topics in the body.
    pub topics: usize,
    /// Size of the compressed body, bytes.
    pub body_bytes: usize,
}

impl TopicFlood {
    /// Size of the compressed body, bytes.
    pub fn body_len(&self) -> usize {
        self.body_bytes
    }
}

/// A 4.9.7 broker's REGISTER_BROKER (request version 407, `compressed=true`)
/// of `topics` topics in the zlib body of `rmq-protocol`'s
/// [`RegisterBrokerBody::to_compressed`] (4.x layout: no attributes, no
/// mapping section).
///
/// # Errors
/// The frame would exceed the 16 MiB every server accepts at most.
pub fn topic_flood_request(topics: usize) -> anyhow::Result<TopicFlood> {
    let now = wall_ms();
    let table: BTreeMap<String, TopicConfig> = (0..topics)
        .map(|i| {
            let name = format!("FloodTopic-{i:08}");
            let config = TopicConfig {
                read_queue_nums: 8,
                write_queue_nums: 8,
                perm: 6,
                ..TopicConfig::new(name.clone())
            };
            (name, config)
        })
        .collect();
    let data_version = DataVersion::new(1, 0, now);
    let body = RegisterBrokerBody {
        filter_server_list: Some(Vec::new()),
        topic_config_serialize_wrapper: TopicConfigSerializeWrapper {
            data_version,
            mapping_data_version: DataVersion::new(0, 0, now),
            topic_config_table: table,
            ..TopicConfigSerializeWrapper::default()
        },
    };
    let bytes = body.to_compressed(BodyFlavor::V4);
    drop(body);
    let mut config = BrokerConfig::new(CLUSTER, "hostile-flood-broker", "10.250.0.1:10911");
    config.flavor = Flavor::V4;
    config.compressed_register = true;
    let identity = Identity {
        cluster_name: config.cluster_name.clone(),
        broker_name: config.broker_name.clone(),
        broker_addr: config.broker_addr.clone(),
        ha_server_addr: config.ha_server_addr.clone(),
        broker_id: config.effective_broker_id(),
    };
    let body_bytes = bytes.len();
    let encoded = EncodedBody {
        topics,
        data_version,
        crc32: body_crc32(&bytes),
        bytes: Bytes::from(bytes),
        compressed: true,
    };
    let frame = frame_of(&body::register_request(&identity, &config, &encoded));
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

/// One connection sends the topic-flood REGISTER_BROKER and waits for the
/// answer until `deadline`.
async fn topic_flood(addr: SocketAddr, frame: Bytes, deadline: Instant) -> Struck {
    let mut struck = Struck {
        planned_bytes: frame.len() as u64,
        ..Struck::default()
    };
    struck.fate.attempts = 1;
    let started = Instant::now();
    let mut raw = match Raw::connect(addr, None).await {
        Ok(raw) => raw,
        Err(error) => {
            struck.fate.connect_failed(&error);
            return struck;
        }
    };
    let reaction = match raw.send(&frame, deadline).await {
        Ok(true) => {
            struck.sent_bytes = frame.len() as u64;
            raw.reaction(deadline).await
        }
        Ok(false) => Reaction::Nothing,
        Err(seen) => seen,
    };
    if !matches!(reaction, Reaction::Nothing) {
        struck.note = Some(format!(
            "reaction after {:.2} s",
            started.elapsed().as_secs_f64()
        ));
    }
    struck.fate.count(&reaction);
    tokio::time::sleep_until(deadline).await;
    struck
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slow_frame_announces_its_full_length_and_lacks_one_byte() {
        let frame = slow_frame(16 << 20);
        assert_eq!(frame.len(), (16 << 20) - 1);
        let announced = u32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]) as usize;
        assert_eq!(announced, frame::MAX_LENGTH_FIELD);
        assert_eq!(
            frame::check(&frame),
            Ok(FrameStatus::Incomplete { needed: 16 << 20 })
        );
    }

    #[test]
    fn flood_sources_stay_under_the_per_address_limit() {
        assert_eq!(flood_source(0, 1_000), Ipv4Addr::new(127, 0, 0, 2));
        assert_eq!(flood_source(999, 1_000), Ipv4Addr::new(127, 0, 0, 2));
        assert_eq!(flood_source(4_999, 1_000), Ipv4Addr::new(127, 0, 0, 6));
    }

    #[test]
    fn a_topic_flood_is_a_compressed_4x_registration() {
        let flood = topic_flood_request(1_000).unwrap();
        let command = frame::decode(flood.frame.clone()).unwrap();
        assert_eq!(command.request_code(), RequestCode::RegisterBroker);
        assert_eq!(command.ext("compressed"), Some("true"));
        let body = command.body.unwrap();
        assert_eq!(body.len(), flood.body_bytes);
        let decoded = RegisterBrokerBody::from_compressed(&body, command.version).unwrap();
        assert_eq!(
            decoded
                .topic_config_serialize_wrapper
                .topic_config_table
                .len(),
            1_000
        );
    }
}
