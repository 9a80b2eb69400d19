//! The UDP socket gossip runs on: chitchat's message encoding over a tokio
//! socket, counting bytes and messages each way, and refusing what does not
//! belong (datagrams that are not gossip, gossip of another cluster) with a
//! log line naming the sender and a counter.
//!
//! Hand-written rather than chitchat's own `UdpSocket` because that one
//! drops a malformed datagram with a log line only: an operator needs the
//! count, and the idle-gossip figure needs the bytes.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::Context;
use async_trait::async_trait;
use chitchat::transport::{Socket, Transport};
use chitchat::{ChitchatMessage, Deserializable, Serializable};

/// The largest UDP payload (IPv4).
const MAX_DATAGRAM: usize = 65_507;

/// Log lines about refused datagrams: the first and then one in this many,
/// so a flood cannot flood the log.
const LOG_EVERY: u64 = 1_000;

/// What went over the gossip socket.
#[derive(Debug, Default)]
pub struct GossipStats {
    /// Bytes sent.
    pub bytes_sent: AtomicU64,
    /// Bytes received (refused datagrams included).
    pub bytes_received: AtomicU64,
    /// Messages sent.
    pub messages_sent: AtomicU64,
    /// Messages received and handed to the protocol.
    pub messages_received: AtomicU64,
    /// Datagrams that were not gossip messages.
    pub garbage: AtomicU64,
    /// Gossip of another cluster id: a peer's SYN naming another cluster,
    /// or a peer answering ours that we are not of its cluster.
    pub foreign_cluster: AtomicU64,
}

impl GossipStats {
    fn add(counter: &AtomicU64, n: u64) -> u64 {
        counter.fetch_add(n, Ordering::Relaxed) + n
    }

    /// A counter's value.
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

/// Hands the gossip library a socket bound beforehand (so that a node
/// bound to port 0 knows its port before it tells peers where it is).
pub struct CountingTransport {
    /// The bound socket, taken by the first `open`.
    pub socket: parking_lot::Mutex<Option<std::net::UdpSocket>>,
    /// Where the counts go.
    pub stats: Arc<GossipStats>,
    /// This node's cluster id, to name in refusals.
    pub cluster_id: String,
}

#[async_trait]
impl Transport for CountingTransport {
    async fn open(&self, _listen_addr: SocketAddr) -> anyhow::Result<Box<dyn Socket>> {
        let socket = self
            .socket
            .lock()
            .take()
            .context("the gossip socket was opened already")?;
        socket
            .set_nonblocking(true)
            .context("cannot make the gossip socket non-blocking")?;
        let socket = tokio::net::UdpSocket::from_std(socket)
            .context("cannot register the gossip socket with the runtime")?;
        Ok(Box::new(CountingSocket {
            socket,
            stats: self.stats.clone(),
            cluster_id: self.cluster_id.clone(),
            send_buf: Vec::with_capacity(MAX_DATAGRAM),
            recv_buf: vec![0; MAX_DATAGRAM].into_boxed_slice(),
        }))
    }
}

/// A UDP socket speaking chitchat's messages.
pub struct CountingSocket {
    socket: tokio::net::UdpSocket,
    stats: Arc<GossipStats>,
    cluster_id: String,
    send_buf: Vec<u8>,
    recv_buf: Box<[u8]>,
}

#[async_trait]
impl Socket for CountingSocket {
    async fn send(&mut self, to: SocketAddr, message: ChitchatMessage) -> anyhow::Result<()> {
        self.send_buf.clear();
        message.serialize(&mut self.send_buf);
        match self.socket.send_to(&self.send_buf, to).await {
            Ok(sent) => {
                GossipStats::add(&self.stats.bytes_sent, sent as u64);
                GossipStats::add(&self.stats.messages_sent, 1);
                Ok(())
            }
            // A peer that is gone answers with an ICMP error some systems
            // report on the next call: that peer's problem, not the socket's.
            Err(error) if transient(&error) => Ok(()),
            Err(error) => Err(error).with_context(|| format!("cannot send gossip to {to}")),
        }
    }

    async fn recv(&mut self) -> anyhow::Result<(SocketAddr, ChitchatMessage)> {
        loop {
            let (len, from) = match self.socket.recv_from(&mut self.recv_buf).await {
                Ok(received) => received,
                Err(error) if transient(&error) => continue,
                Err(error) => return Err(error).context("the gossip socket failed"),
            };
            GossipStats::add(&self.stats.bytes_received, len as u64);
            let mut bytes = &self.recv_buf[..len];
            let message = match ChitchatMessage::deserialize(&mut bytes) {
                Ok(message) => message,
                Err(error) => {
                    let n = GossipStats::add(&self.stats.garbage, 1);
                    if n % LOG_EVERY == 1 {
                        tracing::warn!(peer = %from, bytes = len, %error, refused = n, "gossip datagram refused: not a gossip message");
                    }
                    continue;
                }
            };
            match &message {
                ChitchatMessage::Syn { cluster_id, .. } if *cluster_id != self.cluster_id => {
                    let n = GossipStats::add(&self.stats.foreign_cluster, 1);
                    if n % LOG_EVERY == 1 {
                        tracing::warn!(peer = %from, their_cluster_id = %cluster_id, our_cluster_id = %self.cluster_id, refused = n, "gossip refused: the peer belongs to another cluster (clusterId)");
                    }
                }
                ChitchatMessage::BadCluster => {
                    let n = GossipStats::add(&self.stats.foreign_cluster, 1);
                    if n % LOG_EVERY == 1 {
                        tracing::warn!(peer = %from, our_cluster_id = %self.cluster_id, refused = n, "gossip refused by the peer: it belongs to another cluster (check clusterSeeds and clusterId)");
                    }
                }
                _ => {}
            }
            GossipStats::add(&self.stats.messages_received, 1);
            return Ok((from, message));
        }
    }
}

fn transient(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::OutOfMemory
    )
}
