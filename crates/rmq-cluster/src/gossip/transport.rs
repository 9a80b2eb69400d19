//! The UDP socket gossip runs on: chitchat's message encoding over a tokio
//! socket, counting bytes and messages each way, and refusing what does not
//! belong (datagrams that are not gossip, gossip of another cluster) with a
//! log line naming the sender and a counter.
//!
//! Hand-written rather than chitchat's own `UdpSocket` because that one
//! drops a malformed datagram with a log line only: an operator needs the
//! count, and the idle-gossip figure needs the bytes.
//!
//! Datagrams to a peer known to read them are zstd-compressed: an idle
//! round is mostly digests (every member's id, address, generation,
//! heartbeat and versions, in fixed-width integers), which compress to
//! less than half. A peer is known to read them once it sent a compressed
//! datagram, or a plain one ending in [`READS_COMPRESSED`] (the message
//! parser, this version's and earlier ones', ignores bytes after a
//! message): a node of an earlier version, which reads only plain
//! datagrams, keeps getting plain ones, so a cluster can be upgraded one
//! node at a time.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::Context;
use async_trait::async_trait;
use chitchat::transport::{Socket, Transport};
use chitchat::{ChitchatMessage, Deserializable, Serializable};

/// The largest UDP payload (IPv4).
const MAX_DATAGRAM: usize = 65_507;

/// Ends a plain datagram of a node that reads compressed ones.
const READS_COMPRESSED: &[u8; 4] = b"WMz1";

/// How a zstd frame begins.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// zstd's level for gossip: datagrams are small, the fastest levels
/// compress them as well as the slow ones.
const ZSTD_LEVEL: i32 = 1;

/// Peers remembered as reading compressed datagrams at most (a forged
/// sender address costs one entry; past this the set starts over, and
/// peers are plain until they are heard from again).
const MAX_COMPRESSED_PEERS: usize = 1_024;

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
            packed: Vec::with_capacity(MAX_DATAGRAM),
            compressor: zstd::bulk::Compressor::new(ZSTD_LEVEL)
                .context("cannot make a zstd compressor")?,
            decompressor: zstd::bulk::Decompressor::new()
                .context("cannot make a zstd decompressor")?,
            reads_compressed: HashSet::new(),
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
    /// A datagram compressed to send, or one decompressed as received.
    packed: Vec<u8>,
    compressor: zstd::bulk::Compressor<'static>,
    decompressor: zstd::bulk::Decompressor<'static>,
    /// Peers that read compressed datagrams.
    reads_compressed: HashSet<SocketAddr>,
}

impl CountingSocket {
    /// Readies the datagram to `to` for the message in `send_buf`: whether
    /// it went compressed into `packed` (else it is `send_buf`, marked).
    fn pack(&mut self, to: SocketAddr) -> bool {
        if self.reads_compressed.contains(&to) {
            self.packed.clear();
            let smaller = self
                .compressor
                .compress_to_buffer(&self.send_buf[..], &mut self.packed)
                .is_ok_and(|len| len < self.send_buf.len());
            if smaller {
                return true;
            }
        }
        // Plain (unknown peer, or a message compression does not shrink):
        // marked, so the peer keeps sending compressed. Chitchat fills a
        // message up to the largest datagram: one that full goes unmarked.
        if self.send_buf.len() + READS_COMPRESSED.len() <= MAX_DATAGRAM {
            self.send_buf.extend_from_slice(READS_COMPRESSED);
        }
        false
    }

    /// The message bytes of a datagram from `from` (decompressed into
    /// `packed` when compressed), noting whether the peer reads compressed
    /// datagrams; `None` for a compressed datagram that does not
    /// decompress to a message's size.
    fn unpack(&mut self, len: usize, from: SocketAddr) -> Option<&[u8]> {
        let datagram = &self.recv_buf[..len];
        let compressed = datagram.starts_with(&ZSTD_MAGIC);
        let plain_reader = datagram.ends_with(READS_COMPRESSED);
        if compressed || plain_reader {
            if self.reads_compressed.len() >= MAX_COMPRESSED_PEERS {
                self.reads_compressed.clear();
            }
            self.reads_compressed.insert(from);
        } else {
            // A plain datagram without the mark: a node that reads only
            // plain ones (restarted at an earlier version, say).
            self.reads_compressed.remove(&from);
        }
        if !compressed {
            // The mark stays: a message's parser ignores what follows it.
            return Some(datagram);
        }
        self.packed.clear();
        self.decompressor
            .decompress_to_buffer(datagram, &mut self.packed)
            .ok()?;
        Some(&self.packed)
    }
}

#[async_trait]
impl Socket for CountingSocket {
    async fn send(&mut self, to: SocketAddr, message: ChitchatMessage) -> anyhow::Result<()> {
        self.send_buf.clear();
        message.serialize(&mut self.send_buf);
        let datagram = if self.pack(to) {
            &self.packed
        } else {
            &self.send_buf
        };
        match self.socket.send_to(datagram, to).await {
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
            let parsed = match self.unpack(len, from) {
                Some(mut bytes) => ChitchatMessage::deserialize(&mut bytes),
                None => Err(anyhow::anyhow!(
                    "a zstd frame that is not a compressed message"
                )),
            };
            let message = match parsed {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn socket_of(cluster_id: &str) -> (CountingTransport, SocketAddr) {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = socket.local_addr().unwrap();
        let transport = CountingTransport {
            socket: parking_lot::Mutex::new(Some(socket)),
            stats: Arc::new(GossipStats::default()),
            cluster_id: cluster_id.to_owned(),
        };
        (transport, addr)
    }

    /// A SYN with an empty digest, read from its bytes (chitchat keeps the
    /// digest type to itself): magic number, protocol version 0, type 0,
    /// no members, the cluster id.
    fn syn(cluster_id: &str) -> ChitchatMessage {
        let mut bytes = vec![0x53, 0xb0, 0, 0, 0, 0];
        bytes.extend_from_slice(&(cluster_id.len() as u16).to_le_bytes());
        bytes.extend_from_slice(cluster_id.as_bytes());
        ChitchatMessage::deserialize(&mut &bytes[..]).expect("a SYN")
    }

    #[test]
    fn a_plain_datagram_with_the_mark_still_parses_as_its_message() {
        for message in [syn("waymark"), ChitchatMessage::BadCluster] {
            let mut bytes = Vec::new();
            message.serialize(&mut bytes);
            bytes.extend_from_slice(READS_COMPRESSED);
            let mut read = &bytes[..];
            assert_eq!(ChitchatMessage::deserialize(&mut read).unwrap(), message);
        }
    }

    #[tokio::test]
    async fn datagrams_go_compressed_once_the_peer_is_known_to_read_them() {
        // A long, repetitive cluster id: a message that compresses.
        let cluster_id = "waymark-".repeat(40);
        let (a, a_addr) = socket_of(&cluster_id);
        let (b, b_addr) = socket_of(&cluster_id);
        let (mut a_socket, mut b_socket) =
            (a.open(a_addr).await.unwrap(), b.open(b_addr).await.unwrap());
        let plain_len = {
            let mut bytes = Vec::new();
            syn(&cluster_id).serialize(&mut bytes);
            bytes.len() as u64
        };

        // b has never heard from a: plain, with the mark.
        b_socket.send(a_addr, syn(&cluster_id)).await.unwrap();
        let (from, message) = a_socket.recv().await.unwrap();
        assert_eq!((from, message), (b_addr, syn(&cluster_id)));
        let sent = GossipStats::get(&b.stats.bytes_sent);
        assert_eq!(sent, plain_len + READS_COMPRESSED.len() as u64);

        // a has: compressed, and read back as the same message.
        a_socket.send(b_addr, syn(&cluster_id)).await.unwrap();
        let (from, message) = b_socket.recv().await.unwrap();
        assert_eq!((from, message), (a_addr, syn(&cluster_id)));
        let sent = GossipStats::get(&a.stats.bytes_sent);
        assert!(sent < plain_len / 2, "{sent} bytes sent for {plain_len}");
    }

    #[tokio::test]
    async fn a_message_compression_does_not_shrink_goes_plain_and_marked() {
        let (a, a_addr) = socket_of("waymark");
        let (b, b_addr) = socket_of("waymark");
        let (mut a_socket, mut b_socket) =
            (a.open(a_addr).await.unwrap(), b.open(b_addr).await.unwrap());
        b_socket.send(a_addr, syn("waymark")).await.unwrap();
        a_socket.recv().await.unwrap();
        // a knows b reads compressed; a 4-byte message does not shrink.
        let mut plain = Vec::new();
        ChitchatMessage::BadCluster.serialize(&mut plain);
        a_socket
            .send(b_addr, ChitchatMessage::BadCluster)
            .await
            .unwrap();
        let (_, message) = b_socket.recv().await.unwrap();
        assert_eq!(message, ChitchatMessage::BadCluster);
        let sent = GossipStats::get(&a.stats.bytes_sent);
        assert_eq!(sent, (plain.len() + READS_COMPRESSED.len()) as u64);
        // So b still sends compressed to a.
        let cluster_id = "waymark-".repeat(40);
        b_socket.send(a_addr, syn(&cluster_id)).await.unwrap();
        let before = GossipStats::get(&b.stats.bytes_sent);
        b_socket.send(a_addr, syn(&cluster_id)).await.unwrap();
        let second = GossipStats::get(&b.stats.bytes_sent) - before;
        assert!(second < cluster_id.len() as u64 / 2, "{second} bytes");
    }

    #[tokio::test]
    async fn a_peer_sending_plain_datagrams_without_the_mark_gets_plain_ones() {
        let (a, a_addr) = socket_of("waymark");
        let (mut a_socket, old) = (a.open(a_addr).await.unwrap(), {
            std::net::UdpSocket::bind("127.0.0.1:0").unwrap()
        });
        let old_addr = old.local_addr().unwrap();
        // A node of an earlier version: plain, no mark.
        let mut bytes = Vec::new();
        syn("waymark").serialize(&mut bytes);
        old.send_to(&bytes, a_addr).unwrap();
        let (from, _) = a_socket.recv().await.unwrap();
        assert_eq!(from, old_addr);
        a_socket.send(old_addr, syn("waymark")).await.unwrap();
        let mut buf = [0u8; 2048];
        let len = old.recv(&mut buf).unwrap();
        let mut read = &buf[..len];
        assert_eq!(
            ChitchatMessage::deserialize(&mut read).unwrap(),
            syn("waymark")
        );
    }

    #[tokio::test]
    async fn a_zstd_frame_that_is_no_message_is_refused_as_garbage() {
        let (a, a_addr) = socket_of("waymark");
        let mut a_socket = a.open(a_addr).await.unwrap();
        let peer = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let frame = zstd::bulk::compress(b"not a gossip message at all", 1).unwrap();
        peer.send_to(&frame, a_addr).unwrap();
        // A real message after it, so the receive returns.
        let mut bytes = Vec::new();
        syn("waymark").serialize(&mut bytes);
        peer.send_to(&bytes, a_addr).unwrap();
        let (_, message) = a_socket.recv().await.unwrap();
        assert_eq!(message, syn("waymark"));
        assert_eq!(GossipStats::get(&a.stats.garbage), 1);
    }
}
