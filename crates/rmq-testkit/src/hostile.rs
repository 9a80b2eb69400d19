//! Hostile peers, over raw TCP: connections that send what a server must
//! refuse or survive (frames it must not buffer whole, answers it must stop
//! writing, more connections than it should hold), each until a deadline,
//! recording how the server reacted on every one of them ([`Fate`]).
//!
//! crates/rmq-namesrv's hostile-peer tests (tests/server/hostile_peers.rs)
//! set them on Waymark; the benchmark's `hostile` scenario sets them on every
//! NameServer side by side and measures the server around them. What a
//! registration carries is the caller's: the attacks send the frames given.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures::stream::{self, StreamExt};
use rmq_wire::frame::{self, FrameStatus};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::task::JoinSet;
use tokio::time::{timeout_at, Instant};

/// How the server reacted on one attacker connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reaction {
    /// It answered (the first frame). An undecodable answer is code -1
    /// with the decode error.
    Answer {
        /// The response code.
        code: i32,
        /// Its remark, if any.
        remark: String,
    },
    /// It closed the connection (end of stream, or reset).
    Closed,
    /// Neither by the deadline.
    Nothing,
}

/// How the attacker's connections (or requests) ended, counted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Fate {
    /// Connections (or requests) the attack made.
    pub attempts: u64,
    /// Answered with SUCCESS.
    pub accepted: u64,
    /// Answered with another code.
    pub error_responses: u64,
    /// The first such answer: code and remark.
    pub first_error_response: Option<String>,
    /// Closed by the server (end of stream or reset).
    pub closed: u64,
    /// Neither answered nor closed by the end: kept open.
    pub kept: u64,
    /// The attacker could not connect at all.
    pub connect_failed: u64,
    /// The first connect failure.
    pub first_connect_error: Option<String>,
}

impl Fate {
    /// Counts one reaction.
    pub fn count(&mut self, reaction: &Reaction) {
        match reaction {
            Reaction::Answer { code, .. } if ResponseCode::from(*code) == ResponseCode::Success => {
                self.accepted += 1;
            }
            Reaction::Answer { code, remark } => {
                self.error_responses += 1;
                self.first_error_response.get_or_insert_with(|| {
                    let remark: String = remark.chars().take(200).collect();
                    format!("code {code}: {remark}")
                });
            }
            Reaction::Closed => self.closed += 1,
            Reaction::Nothing => self.kept += 1,
        }
    }

    /// A failed connect.
    pub fn connect_failed(&mut self, error: &std::io::Error) {
        self.connect_failed += 1;
        self.first_connect_error
            .get_or_insert_with(|| error.to_string());
    }

    /// One line: "closed 4/4", "error answer 1/4 (code 13: …)", ….
    pub fn summary(&self) -> String {
        let first = |error: &Option<String>| format!(" ({})", error.as_deref().unwrap_or(""));
        let first_error_response = first(&self.first_error_response).replace('|', "/");
        let parts: Vec<String> = [
            ("closed", self.closed, String::new()),
            ("error answer", self.error_responses, first_error_response),
            ("accepted", self.accepted, String::new()),
            ("kept open", self.kept, String::new()),
            (
                "connect failed",
                self.connect_failed,
                first(&self.first_connect_error),
            ),
        ]
        .into_iter()
        .filter(|&(_, count, _)| count > 0)
        .map(|(what, count, first)| format!("{what} {count}/{}{first}", self.attempts))
        .collect();
        if parts.is_empty() {
            "n/a".into()
        } else {
            parts.join(", ")
        }
    }
}

/// What an attack did.
#[derive(Debug, Default)]
pub struct Struck {
    /// How its connections ended.
    pub fate: Fate,
    /// Bytes written (as far as the server read).
    pub sent_bytes: u64,
    /// Bytes meant to be written.
    pub planned_bytes: u64,
    /// How long opening every connection took.
    pub opened_in: Duration,
    /// When the server first answered or closed, from the attack's start.
    pub first_reaction_after: Option<Duration>,
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
        let timed_out = |_| std::io::Error::new(std::io::ErrorKind::TimedOut, "connect timed out");
        let stream = tokio::time::timeout(Duration::from_secs(3), socket.connect(addr))
            .await
            .map_err(timed_out)??;
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
            Ok(Err(_)) => match self
                .reaction(Instant::now() + Duration::from_millis(200))
                .await
            {
                Reaction::Nothing => Err(Reaction::Closed),
                seen => Err(seen),
            },
        }
    }

    /// The first answer, a close, or nothing by `until`.
    async fn reaction(&mut self, until: Instant) -> Reaction {
        let undecodable = |error: frame::FrameError| Reaction::Answer {
            code: -1,
            remark: format!("undecodable answer: {error}"),
        };
        loop {
            match frame::check(&self.buf) {
                Ok(FrameStatus::Complete { len }) => {
                    return match frame::decode(self.buf.split_to(len).freeze()) {
                        Ok(answer) => Reaction::Answer {
                            code: answer.code,
                            remark: answer.remark.unwrap_or_default(),
                        },
                        Err(error) => undecodable(error),
                    };
                }
                Ok(FrameStatus::Incomplete { .. }) => {}
                Err(error) => return undecodable(error),
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

/// Each of `frames` on a connection of its own, `concurrency` at a time
/// (from [`flood_source`] addresses with `per_address`, else from the
/// default one); each connection is given `answer_within` to be answered or
/// closed, and every connection is held until `deadline`, then closed.
/// Connections not yet opened at `deadline` are not opened.
pub async fn send_frames(
    addr: SocketAddr,
    frames: Vec<Bytes>,
    concurrency: usize,
    per_address: Option<usize>,
    answer_within: Duration,
    deadline: Instant,
) -> Struck {
    let started = Instant::now();
    let planned_bytes = frames.iter().map(|f| f.len() as u64).sum();
    let opened: Vec<_> = stream::iter(frames.into_iter().enumerate())
        .map(|(i, frame)| async move {
            if Instant::now() >= deadline {
                return None;
            }
            let from = per_address.map(|per| flood_source(i, per));
            let mut raw = match Raw::connect(addr, from).await {
                Ok(raw) => raw,
                Err(error) => return Some(Err(error)),
            };
            let until = (Instant::now() + answer_within).min(deadline.max(Instant::now()));
            let (sent, reaction) = match raw.send(&frame, until).await {
                Ok(true) => (frame.len() as u64, raw.reaction(until).await),
                Ok(false) => (0, Reaction::Nothing),
                Err(seen) => (0, seen),
            };
            let reacted = (reaction != Reaction::Nothing).then(|| started.elapsed());
            Some(Ok((raw, sent, reaction, reacted)))
        })
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    let mut struck = Struck {
        planned_bytes,
        opened_in: started.elapsed(),
        ..Struck::default()
    };
    let mut held = Vec::with_capacity(opened.len());
    for result in opened.into_iter().flatten() {
        struck.fate.attempts += 1;
        match result {
            Ok((raw, sent, reaction, reacted)) => {
                struck.fate.count(&reaction);
                struck.sent_bytes += sent;
                let first = struck.first_reaction_after.into_iter().chain(reacted).min();
                struck.first_reaction_after = first;
                held.push(raw);
            }
            Err(error) => struck.fate.connect_failed(&error),
        }
    }
    tokio::time::sleep_until(deadline).await;
    drop(held);
    struck
}

/// All of a `total`-byte frame but its last byte: a GET_BROKER_CLUSTER_INFO
/// (106) with a body of `x`s, announced whole by its length prefix.
pub fn slow_frame(total: usize) -> Vec<u8> {
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

/// `requests` GET_ALL_TOPIC_LIST_FROM_NAMESERVER frames back to back, as a peer that pipelines
/// them and never reads their (large) answers sends them.
pub fn topic_list_requests(requests: usize) -> Vec<u8> {
    let request = RemotingCommand::request(RequestCode::GetAllTopicListFromNameserver, 1);
    frame::encode_to_bytes(&request).repeat(requests)
}

/// `connections` connections each send `bytes` as fast as the server takes
/// it (in 256 KiB pieces). With `read_at_end`, each then reads nothing
/// until `deadline` and reads (throwing away) for a second to see whether
/// the server had closed it; else each waits until `deadline` for the
/// server's reaction. `sent_bytes` is what the server took.
pub async fn send_and_hold(
    addr: SocketAddr,
    connections: usize,
    bytes: Arc<Vec<u8>>,
    read_at_end: bool,
    deadline: Instant,
) -> Struck {
    let sent = Arc::new(AtomicU64::new(0));
    let mut tasks = JoinSet::new();
    for _ in 0..connections {
        let (bytes, sent) = (bytes.clone(), sent.clone());
        tasks.spawn(async move {
            let mut raw = Raw::connect(addr, None).await?;
            let mut stalled = false;
            for chunk in bytes.chunks(256 * 1024) {
                match raw.send(chunk, deadline).await {
                    Ok(true) => sent.fetch_add(chunk.len() as u64, Ordering::Relaxed),
                    // The server stopped reading: held open, unfinished.
                    Ok(false) => {
                        stalled = true;
                        break;
                    }
                    Err(seen) => return Ok(seen),
                };
            }
            match (read_at_end, stalled) {
                (false, true) => return Ok::<_, std::io::Error>(Reaction::Nothing),
                (false, false) => return Ok(raw.reaction(deadline).await),
                (true, _) => {}
            }
            tokio::time::sleep_until(deadline).await;
            Ok(raw.drain(Instant::now() + Duration::from_secs(1)).await)
        });
    }
    let mut struck = Struck {
        planned_bytes: (bytes.len() * connections) as u64,
        ..Struck::default()
    };
    while let Some(done) = tasks.join_next().await {
        struck.fate.attempts += 1;
        match done.map_err(std::io::Error::other).and_then(|done| done) {
            Ok(reaction) => struck.fate.count(&reaction),
            Err(error) => struck.fate.connect_failed(&error),
        }
    }
    struck.sent_bytes = sent.load(Ordering::Relaxed);
    struck
}

/// `connections` connections that each announce a `frame_bytes` frame ([`slow_frame`]), send all
/// of it but its last byte as fast as the server takes it, and hold on until `deadline`.
pub async fn slow_frames(
    addr: SocketAddr,
    connections: usize,
    frame_bytes: usize,
    deadline: Instant,
) -> Struck {
    let frame = Arc::new(slow_frame(frame_bytes));
    send_and_hold(addr, connections, frame, false, deadline).await
}

/// `connections` connections that each pipeline `requests` [`topic_list_requests`] and read
/// none of the answers until `deadline`.
pub async fn unread_answers(
    addr: SocketAddr,
    connections: usize,
    requests: usize,
    deadline: Instant,
) -> Struck {
    let pipelined = Arc::new(topic_list_requests(requests));
    send_and_hold(addr, connections, pipelined, true, deadline).await
}

/// The source address of flood connection `i`: 127.0.0.2 for the first
/// `per_address`, then 127.0.0.3, … (wrapping before 127.0.0.255).
pub fn flood_source(i: usize, per_address: usize) -> Ipv4Addr {
    let n = (i / per_address.max(1)) % 250;
    Ipv4Addr::new(127, 0, 0, 2 + n as u8)
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
    fn topic_list_requests_are_whole_frames_back_to_back() {
        let bytes = topic_list_requests(3);
        let one = bytes.len() / 3;
        assert_eq!(frame::check(&bytes), Ok(FrameStatus::Complete { len: one }));
        let second = frame::decode(Bytes::copy_from_slice(&bytes[one..2 * one])).unwrap();
        assert_eq!(
            second.request_code(),
            RequestCode::GetAllTopicListFromNameserver
        );
    }

    #[test]
    fn flood_sources_stay_under_the_per_address_limit() {
        assert_eq!(flood_source(0, 1_000), Ipv4Addr::new(127, 0, 0, 2));
        assert_eq!(flood_source(999, 1_000), Ipv4Addr::new(127, 0, 0, 2));
        assert_eq!(flood_source(4_999, 1_000), Ipv4Addr::new(127, 0, 0, 6));
    }

    #[test]
    fn fates_summarise_what_happened() {
        let mut fate = Fate {
            attempts: 4,
            ..Fate::default()
        };
        fate.count(&Reaction::Closed);
        let remark = "brokerName exceeds maxHeaderFieldBytes".to_owned();
        fate.count(&Reaction::Answer { code: 13, remark });
        fate.count(&Reaction::Answer {
            code: 0,
            remark: String::new(),
        });
        fate.count(&Reaction::Nothing);
        assert_eq!(
            fate.summary(),
            "closed 1/4, error answer 1/4 (code 13: brokerName exceeds maxHeaderFieldBytes), \
             accepted 1/4, kept open 1/4"
        );
        assert_eq!(Fate::default().summary(), "n/a");
    }

    /// A listener that closes every connection at once, and one that never
    /// reads: closed and kept open are told apart.
    #[tokio::test]
    async fn a_closing_server_and_a_silent_one_are_told_apart() {
        let closing = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = closing.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((stream, _)) = closing.accept().await {
                drop(stream);
            }
        });
        let frames = vec![Bytes::from_static(b"\0\0\0\x05\0\0\0\x01{"); 3];
        let deadline = Instant::now() + Duration::from_millis(500);
        let struck = send_frames(addr, frames, 2, None, Duration::from_millis(300), deadline).await;
        assert_eq!(
            (struck.fate.attempts, struck.fate.closed),
            (3, 3),
            "{struck:?}"
        );
        assert!(struck.first_reaction_after.is_some());

        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = silent.local_addr().unwrap();
        let deadline = Instant::now() + Duration::from_millis(300);
        let struck = send_and_hold(addr, 2, Arc::new(vec![b'x'; 10]), false, deadline).await;
        assert_eq!(
            (struck.fate.attempts, struck.fate.kept, struck.sent_bytes),
            (2, 2, 20)
        );
        drop(silent);
    }
}
