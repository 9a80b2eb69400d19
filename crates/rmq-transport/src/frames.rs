//! Reading request frames off one server connection within the server's
//! limits: a frame larger than [`FREE_FRAME_BYTES`] is received only with
//! budget from the server-wide [`FrameBudget`], must arrive whole within the
//! frame timeout, and a header larger than the limit is never decoded: the
//! frame is dropped and handed back as [`Incoming::HeaderTooLarge`], to be
//! answered, when its opaque can be read; otherwise it ends the connection.
//!
//! A hand-written loop rather than tokio-util's `FramedRead`: the budget has
//! to be awaited between reading a frame's length and reserving memory for
//! it, which a synchronous `Decoder` cannot do.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, BytesMut};
use rmq_wire::frame::{self, FrameStatus};
use rmq_wire::header::HeaderPeek;
use rmq_wire::{FrameError, RemotingCommand};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;

use crate::budget::FrameBudget;
use crate::stats::ServerStats;

/// Frames up to this size are received without asking for budget: most
/// requests (route queries, heartbeats) are a few hundred bytes, and what
/// all connections can hold this way is bounded by the connection limits.
pub(crate) const FREE_FRAME_BYTES: usize = 4 * 1024;

/// The read buffer a connection takes when bytes arrive.
const READ_BUFFER_START: usize = 1024;

/// Room left for a read, at least: a frame up to this size that arrived
/// whole is taken with one `recv`. A buffer with only its last few hundred
/// bytes left would cut every few frames in two, each half costing a
/// `recv` (one-way heartbeats of about 300 bytes would take 4 `recv` per 3
/// frames). Once the frames read before have been dropped, the room is made
/// by moving back to the start of the same allocation, not by allocating.
const MIN_READ_ROOM: usize = READ_BUFFER_START / 2;

/// Read buffers that grew past this for one large frame are not kept.
const SHRINK_ABOVE: usize = 64 * 1024;

/// The frame limits of a server's connections (one, shared by them all).
#[derive(Debug)]
pub(crate) struct FrameLimits {
    pub(crate) budget: FrameBudget,
    /// How long a frame that needed budget may take to arrive whole,
    /// waiting for the budget included.
    pub(crate) frame_timeout: Duration,
    /// Largest length word accepted ([`frame::max_length_field`]).
    pub(crate) max_length_field: usize,
    /// Largest header accepted, in bytes.
    pub(crate) max_header_bytes: usize,
    /// Where the bytes read are counted.
    pub(crate) stats: Arc<ServerStats>,
}

/// Why reading stopped.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The bytes are not a frame.
    Frame(FrameError),
    /// A header over the limit, in a frame whose opaque could not be read
    /// (so there is nothing to answer under).
    HeaderTooLarge { header: usize, limit: usize },
    /// A large frame did not arrive whole (budget wait included) in time.
    FrameTimeout { frame: usize, timeout: Duration },
    /// The socket failed.
    Io(std::io::Error),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Frame(error) => write!(f, "{error}"),
            ReadError::HeaderTooLarge { header, limit } => write!(
                f,
                "header of {header} bytes exceeds the limit of {limit} bytes (maxHeaderBytes), and the frame has no opaque to answer under"
            ),
            ReadError::FrameTimeout { frame, timeout } => write!(
                f,
                "a frame of {frame} bytes did not arrive whole within {} s, waiting for the server's partial-frame budget included (frameReadTimeoutSeconds)",
                timeout.as_secs()
            ),
            ReadError::Io(error) => write!(f, "{error}"),
        }
    }
}

/// One request frame and the budget its bytes were received under (held
/// until the request has been handled: its body shares the frame's memory).
pub(crate) struct Received {
    pub(crate) command: RemotingCommand,
    pub(crate) budget: Option<OwnedSemaphorePermit>,
}

/// What the reader took off the connection.
pub(crate) enum Incoming {
    /// A decoded frame, to dispatch.
    Command(Received),
    /// A whole frame, within the frame limit, whose header is over
    /// `maxHeaderBytes`: dropped undecoded (its memory and budget are
    /// already given back), with what an answer to it needs.
    HeaderTooLarge(OversizedHeader),
}

/// A frame dropped for its header's size.
#[derive(Debug)]
pub(crate) struct OversizedHeader {
    /// The header's length, in bytes.
    pub(crate) header: usize,
    /// `maxHeaderBytes`.
    pub(crate) limit: usize,
    /// Its code, opaque, flag and longest field, read without decoding it.
    pub(crate) peek: HeaderPeek,
}

/// Waiting for a connection to have bytes to read without offering a buffer
/// to read them into: an idle connection then holds no read buffer.
pub(crate) trait Readiness {
    /// Whether [`poll_readable`](Readiness::poll_readable) waits for bytes;
    /// if not, the buffer is kept between frames, as giving it back would
    /// only mean taking another at once.
    const WAITS: bool;

    /// Ready once a read would find bytes, the end of the stream or an
    /// error; at once where readiness cannot be told apart from a read.
    /// Polled rather than a future: a waiting future would take room in the
    /// connection's task for as long as the connection lives.
    fn poll_readable(&self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>>;
}

impl Readiness for tokio::net::tcp::OwnedReadHalf {
    const WAITS: bool = true;

    fn poll_readable(&self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        // Only the reader polls the read readiness of its socket, so the
        // one waker the socket keeps for it is the reader's.
        self.as_ref().poll_read_ready(cx)
    }
}

// A TLS stream cannot be asked whether a record has arrived without reading
// it (the socket being readable says nothing about whether a whole record is
// there, and rustls may hold decrypted bytes already): a TLS connection takes
// its read buffer at its first read, as soon as it is served, and keeps it.
impl<T> Readiness for tokio::io::ReadHalf<T> {
    const WAITS: bool = false;

    fn poll_readable(&self, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// The reading half of a server connection: a TCP stream's read half, or a
/// TLS stream's (generic rather than boxed, so that plain connections pay
/// no dynamic dispatch per read).
///
/// The buffer is taken only once the socket is readable, and given back
/// whenever it holds nothing and the socket has nothing more to read: most
/// connections (clients that ask for a route now and then, connections
/// opened and left) are quiet nearly all the time, and 1 KiB each for
/// 10,000 of them would be most of the memory they cost.
pub(crate) struct FrameReader<R> {
    io: R,
    buf: BytesMut,
    limits: Arc<FrameLimits>,
    /// Budget and deadline of the large frame being received.
    large: Option<(OwnedSemaphorePermit, Instant)>,
}

impl<R: AsyncRead + Readiness + Unpin> FrameReader<R> {
    pub(crate) fn new(io: R, limits: Arc<FrameLimits>) -> FrameReader<R> {
        FrameReader {
            io,
            buf: BytesMut::new(),
            limits,
            large: None,
        }
    }

    /// The next frame; `None` when the peer closed the connection between
    /// frames. Cancel-safe: what was read and the budget held stay with the
    /// reader.
    pub(crate) async fn next(&mut self) -> Result<Option<Incoming>, ReadError> {
        loop {
            match frame::check_within(&self.buf, self.limits.max_length_field)
                .map_err(ReadError::Frame)?
            {
                FrameStatus::Complete { len } => return self.split(len).map(Some),
                FrameStatus::Incomplete { needed } => {
                    if needed > FREE_FRAME_BYTES && self.large.is_none() {
                        // Boxed, as the timed read below: a large frame is
                        // rare, and its timers would otherwise take room in
                        // every connection's task, idle or not.
                        Box::pin(self.take_budget(needed)).await?;
                    }
                    if R::WAITS && self.buf.is_empty() {
                        match self.between_frames().await.map_err(ReadError::Io)? {
                            0 => return Ok(None),
                            read => {
                                self.limits.stats.read(read);
                                continue;
                            }
                        }
                    }
                    let rest = needed.saturating_sub(self.buf.len());
                    self.buf.reserve(rest.max(MIN_READ_ROOM));
                    let read = match &self.large {
                        Some((_, deadline)) => Box::pin(tokio::time::timeout_at(
                            *deadline,
                            self.io.read_buf(&mut self.buf),
                        ))
                        .await
                        .map_err(|_| ReadError::FrameTimeout {
                            frame: needed,
                            timeout: self.limits.frame_timeout,
                        })?,
                        None => self.io.read_buf(&mut self.buf).await,
                    };
                    let read = read.map_err(ReadError::Io)?;
                    self.limits.stats.read(read);
                    if read == 0 {
                        return if self.buf.is_empty() {
                            Ok(None)
                        } else {
                            Err(ReadError::Io(std::io::ErrorKind::UnexpectedEof.into()))
                        };
                    }
                }
            }
        }
    }

    /// Between frames (the buffer empty): reads what has arrived, keeping
    /// the buffer while bytes keep coming (the usual case under load:
    /// pipelined frames); when nothing has, gives the buffer back and waits
    /// for the socket to be readable, then takes one and tries again (a
    /// socket may be reported readable with nothing to read). The bytes
    /// read, 0 at the end of the stream. Cancel-safe: a read that would
    /// wait reads nothing (the task is then woken by the socket as it would
    /// be by the wait).
    async fn between_frames(&mut self) -> std::io::Result<usize> {
        loop {
            if self.buf.capacity() == 0 {
                std::future::poll_fn(|cx| self.io.poll_readable(cx)).await?;
                self.buf.reserve(READ_BUFFER_START);
            } else {
                self.buf.reserve(MIN_READ_ROOM);
            }
            let read = std::pin::pin!(self.io.read_buf(&mut self.buf));
            if let Some(read) = futures::FutureExt::now_or_never(read) {
                return read;
            }
            self.buf = BytesMut::new();
        }
    }

    async fn take_budget(&mut self, needed: usize) -> Result<(), ReadError> {
        let deadline = Instant::now() + self.limits.frame_timeout;
        let permit = match self.limits.budget.try_acquire(needed) {
            Some(permit) => permit,
            None => {
                tracing::debug!(frame = needed, "waiting for partial-frame budget");
                tokio::time::timeout_at(deadline, self.limits.budget.acquire(needed))
                    .await
                    .map_err(|_| ReadError::FrameTimeout {
                        frame: needed,
                        timeout: self.limits.frame_timeout,
                    })?
            }
        };
        self.large = Some((permit, deadline));
        Ok(())
    }

    fn split(&mut self, len: usize) -> Result<Incoming, ReadError> {
        // The header length is checked before the header is decoded, so an
        // oversized one costs no parsing.
        let header = header_len(&self.buf);
        if header > self.limits.max_header_bytes {
            let limit = self.limits.max_header_bytes;
            // The frame is whole and within the frame limit, so dropping it
            // keeps the connection in step with its peer, which can then be
            // told why under the request's opaque. Without an opaque (a
            // malformed frame) there is no answer to give: the connection
            // is closed, as for any frame that cannot be read.
            let peek =
                frame::peek(&self.buf[..len]).ok_or(ReadError::HeaderTooLarge { header, limit })?;
            self.buf.advance(len);
            drop(self.release());
            return Ok(Incoming::HeaderTooLarge(OversizedHeader {
                header,
                limit,
                peek,
            }));
        }
        let whole = self.buf.split_to(len).freeze();
        let budget = self.release();
        let command = frame::decode(whole).map_err(ReadError::Frame)?;
        Ok(Incoming::Command(Received { command, budget }))
    }

    /// The budget of the large frame just taken off the buffer, and the
    /// buffer back to its starting size if that frame made it grow.
    fn release(&mut self) -> Option<OwnedSemaphorePermit> {
        let budget = self.large.take().map(|(permit, _)| permit);
        if budget.is_some() && self.buf.capacity() > SHRINK_ABOVE {
            let rest = std::mem::replace(&mut self.buf, BytesMut::with_capacity(READ_BUFFER_START));
            self.buf.extend_from_slice(&rest);
        }
        budget
    }
}

/// The header-length field of the complete frame at the start of `buf`.
fn header_len(buf: &[u8]) -> usize {
    match buf.get(5..8) {
        Some(&[a, b, c]) => u32::from_be_bytes([0, a, b, c]) as usize,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::pin::Pin;

    use rmq_wire::RequestCode;
    use tokio::io::ReadBuf;

    use super::*;

    /// A socket whose peer writes `arrivals` one after another: a read gets
    /// what has arrived, up to the room it offers, as `recv` does.
    struct Arrivals {
        arrivals: VecDeque<Vec<u8>>,
        reads: usize,
    }

    impl AsyncRead for Arrivals {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            self.reads += 1;
            if let Some(front) = self.arrivals.front_mut() {
                let n = front.len().min(buf.remaining());
                buf.put_slice(&front[..n]);
                front.drain(..n);
                if front.is_empty() {
                    self.arrivals.pop_front();
                }
            }
            Poll::Ready(Ok(()))
        }
    }

    impl Readiness for Arrivals {
        const WAITS: bool = true;

        fn poll_readable(&self, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    fn heartbeat_frame(opaque: i32) -> Vec<u8> {
        let command = RemotingCommand::request(RequestCode::BrokerHeartbeat, opaque)
            .with_remark("r".repeat(200));
        let mut frame = BytesMut::new();
        frame::encode(&command, &mut frame);
        frame.to_vec()
    }

    fn limits() -> Arc<FrameLimits> {
        Arc::new(FrameLimits {
            budget: FrameBudget::new(1 << 20),
            frame_timeout: Duration::from_secs(1),
            max_length_field: frame::MAX_LENGTH_FIELD,
            max_header_bytes: 64 * 1024,
            stats: Arc::default(),
        })
    }

    /// A plain connection holds no read buffer until bytes arrive, and gives
    /// it back once it has read them all and the socket has nothing more.
    #[tokio::test]
    async fn a_quiet_connection_holds_no_read_buffer() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut peer = tokio::net::TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (accepted, _) = listener.accept().await.unwrap();
        let (read_half, _write_half) = accepted.into_split();
        let mut reader = FrameReader::new(read_half, limits());
        assert_eq!(reader.buf.capacity(), 0, "nothing taken at connect");
        // The peer has sent nothing, so however long the reader waits it
        // finds nothing: the wait is cut short only to look at it.
        let waited = tokio::time::timeout(Duration::from_millis(50), reader.next()).await;
        assert!(waited.is_err(), "no frame from a silent peer");
        assert_eq!(reader.buf.capacity(), 0, "nothing taken while waiting");

        tokio::io::AsyncWriteExt::write_all(&mut peer, &heartbeat_frame(1))
            .await
            .unwrap();
        let incoming = reader.next().await.expect("a frame").expect("not closed");
        assert!(matches!(incoming, Incoming::Command(_)));
        let quiet = futures::FutureExt::now_or_never(reader.next());
        assert!(quiet.is_none(), "no second frame");
        assert_eq!(reader.buf.capacity(), 0, "given back once quiet");

        drop(peer);
        assert!(reader.next().await.expect("closed cleanly").is_none());
    }

    /// Frames a few hundred bytes long that arrive one at a time are read
    /// with one read each: the buffer keeps room for a whole one.
    #[tokio::test]
    async fn small_frames_arriving_one_at_a_time_take_one_read_each() {
        let arrivals: VecDeque<Vec<u8>> = (0..12).map(heartbeat_frame).collect();
        let frame_len = arrivals[0].len();
        assert!((300..MIN_READ_ROOM).contains(&frame_len), "{frame_len}");
        let mut reader = FrameReader::new(Arrivals { arrivals, reads: 0 }, limits());
        for opaque in 0..12 {
            let incoming = reader.next().await.expect("a frame").expect("not closed");
            let Incoming::Command(received) = incoming else {
                panic!("a request frame");
            };
            assert_eq!(received.command.opaque, opaque);
        }
        assert!(reader.next().await.expect("closed cleanly").is_none());
        // One read per frame, and the read that finds the peer gone.
        assert_eq!(reader.io.reads, 13);
    }
}
