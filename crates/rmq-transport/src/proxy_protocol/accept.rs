//! Reading a PROXY protocol header off a newly accepted connection, before
//! TLS detection, within the connection's handshake deadline.
//!
//! The header is peeked, parsed, and then exactly its bytes are consumed,
//! so what follows it (a TLS handshake or the first frame) stays in the
//! socket for the next step. Only a trusted peer's header is read whole;
//! from any other peer a first byte that starts a header closes the
//! connection at once. What is buffered never exceeds the header's own
//! length ([`V2_MAX_LEN`](super::V2_MAX_LEN) at most).

use std::io;
use std::net::SocketAddr;
use std::sync::LazyLock;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{detect, parse, starts_header, Parsed, ProxyError, ProxyHeader, ProxyProtocol};
use crate::auth::LogLimit;

/// Bytes looked at per peek: more than a v1 header, and a v2 header with
/// its addresses and the usual TLVs.
const PEEK: usize = 256;

/// Warnings about refused or broken headers: at most 20 lines per 10 s, as
/// the guard's refusals. A peer that floods headers costs a line per
/// window, not one per connection.
static WARNINGS: LazyLock<LogLimit> = LazyLock::new(|| LogLimit::new(20, Duration::from_secs(10)));

/// What a new connection starts with.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// No header: the connection's own address stands. Nothing was consumed.
    Absent,
    /// A trusted peer's header, consumed; the connection's data follows.
    Header(ProxyHeader),
    /// Closed: refused, malformed, late or gone; already logged.
    Closed,
}

/// How reading stopped short of a header.
enum Failure {
    Io(io::Error),
    Eof,
    Untrusted { starts_signature: bool },
    Malformed(ProxyError),
}

/// Looks at the first bytes of `stream` from `peer`: a header from a peer
/// `trust` trusts is read and consumed; from any other peer it closes the
/// connection (with a rate-limited warning naming the peer and
/// [`ProxyProtocol::KEY`]). Waits until `deadline` at most, and not past
/// `stop`.
pub(crate) async fn read_header(
    stream: &mut TcpStream,
    peer: SocketAddr,
    trust: &ProxyProtocol,
    deadline: Instant,
    stop: &CancellationToken,
) -> Outcome {
    let trusted = trust.trusts(peer.ip());
    let mut buf = Vec::new();
    let read = tokio::select! {
        () = stop.cancelled() => return Outcome::Closed,
        read = tokio::time::timeout_at(deadline, read(stream, trusted, &mut buf)) => read,
    };
    match read {
        Ok(Ok(outcome)) => outcome,
        Err(_) if buf.is_empty() => {
            tracing::debug!(%peer, "nothing received in time, closing connection");
            Outcome::Closed
        }
        Err(_) => {
            warn(|left_out| {
                tracing::warn!(%peer, received = buf.len(), left_out,
                    "PROXY protocol header not complete in time, closing connection")
            });
            Outcome::Closed
        }
        Ok(Err(Failure::Eof)) => Outcome::Closed,
        Ok(Err(Failure::Io(error))) => {
            tracing::debug!(%peer, %error, "connection failed before its first request");
            Outcome::Closed
        }
        Ok(Err(Failure::Untrusted {
            starts_signature: true,
        })) => {
            refuse_untrusted(peer);
            Outcome::Closed
        }
        Ok(Err(Failure::Untrusted {
            starts_signature: false,
        })) => {
            warn(|left_out| {
                tracing::warn!(%peer, left_out,
                    "closing connection: its first bytes are neither a frame, a TLS handshake nor a PROXY protocol header")
            });
            Outcome::Closed
        }
        Ok(Err(Failure::Malformed(error))) => {
            warn(|left_out| {
                tracing::warn!(%peer, %error, left_out,
                    "bad PROXY protocol header from a trusted proxy, closing connection")
            });
            Outcome::Closed
        }
    }
}

/// Peeks, then consumes what [`parse`] says is header: all of it while the
/// header is incomplete (every byte so far belongs to it), exactly its
/// length once it is whole.
async fn read(
    stream: &mut TcpStream,
    trusted: bool,
    buf: &mut Vec<u8>,
) -> Result<Outcome, Failure> {
    let mut window = [0u8; PEEK];
    loop {
        // An incomplete header is shorter than V2_MAX_LEN, so there is room.
        let room = (super::V2_MAX_LEN - buf.len()).min(PEEK);
        let n = stream
            .peek(&mut window[..room])
            .await
            .map_err(Failure::Io)?;
        if n == 0 {
            return Err(Failure::Eof);
        }
        let seen = &window[..n];
        if buf.is_empty() {
            if !starts_header(seen[0]) {
                return Ok(Outcome::Absent);
            }
            if !trusted {
                let starts_signature = detect(seen).is_ok();
                return Err(Failure::Untrusted { starts_signature });
            }
        }
        let before = buf.len();
        buf.extend_from_slice(seen);
        let (take, header) = match parse(buf).map_err(Failure::Malformed)? {
            Parsed::Incomplete => (n, None),
            Parsed::Complete { header, len } => (len - before, Some(header)),
        };
        // The bytes were peeked, so they are there: this does not wait.
        stream
            .read_exact(&mut window[..take])
            .await
            .map_err(Failure::Io)?;
        buf.truncate(before + take);
        if let Some(header) = header {
            return Ok(Outcome::Header(header));
        }
    }
}

/// Logs, through the rate limit, that `peer` sent a header without being
/// trusted; the connection is being closed.
pub(crate) fn refuse_untrusted(peer: SocketAddr) {
    warn(|left_out| {
        tracing::warn!(%peer, left_out,
            "PROXY protocol header from {}, which is not a trusted proxy: connection closed; \
             if it is your load balancer, add it to {} (docs/security.md)",
            peer.ip(), ProxyProtocol::KEY)
    });
}

/// Runs `log` with the number of lines left out, if the rate limit admits one.
fn warn(log: impl FnOnce(u64)) {
    if let Some(left_out) = WARNINGS.admit(std::time::Instant::now()) {
        log(left_out);
    }
}
