//! The HAProxy PROXY protocol (versions 1 and 2): a load balancer that
//! relays a TCP connection first sends a header naming the client's
//! address. Java's `NettyRemotingServer` (5.x) looks for one on every
//! connection, before its TLS detection, and believes it from anyone.
//!
//! This module owns the header's bytes: [`parse`] is sans-IO (a buffer in,
//! "need more", a header or an error out). `trust` holds
//! [`ProxyProtocol`], the peers whose headers the server believes
//! ([`ServerConfig::proxy_protocol`](crate::ServerConfig::proxy_protocol));
//! `accept` reads a header off a new connection within its handshake
//! deadline. What the server does with the client's address is
//! `session`'s and the services'.
//!
//! Stricter than the specification asks, where a lenient reader would
//! misread: a v1 header has single spaces, ports without sign or leading
//! zeros, addresses of its protocol's family; a v2 header has a known
//! version, command, family and transport, and an address block as long as
//! its family needs. v2 AF_UNIX and datagram addresses, which a TCP
//! connection cannot have come from, fall back to the connection's own
//! address, as the specification allows a receiver to.

pub(crate) mod accept;
mod trust;

#[cfg(test)]
mod tests;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

pub use trust::{Cidr, ProxyConfigError, ProxyProtocol};

/// The v2 signature: twelve bytes no v1 header, TLS record or RocketMQ frame
/// starts with.
pub const V2_SIGNATURE: [u8; 12] = *b"\r\n\r\n\0\r\nQUIT\n";

/// Longest v1 header, CRLF included (the specification's bound, reached by
/// two full IPv6 addresses and ports).
pub const V1_MAX_LEN: usize = 107;

/// Length of a v2 header's fixed part: signature, version and command,
/// family and transport, and the length of what follows.
pub const V2_FIXED_LEN: usize = 16;

/// Longest v2 header: the fixed part and a 16-bit length. Nothing longer is
/// ever buffered.
pub const V2_MAX_LEN: usize = V2_FIXED_LEN + u16::MAX as usize;

/// How a v1 header starts.
const V1_SIGNATURE: &[u8] = b"PROXY ";

/// Which version of the protocol a header is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// The text form: `PROXY TCP4 192.0.2.1 198.51.100.1 56324 9876\r\n`.
    V1,
    /// The binary form, starting with [`V2_SIGNATURE`].
    V2,
}

/// The addresses of a relayed connection, as the proxy saw them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Addresses {
    /// The client: who connected to the proxy.
    pub source: SocketAddr,
    /// Where the client connected to (the proxy's front end).
    pub destination: SocketAddr,
}

/// A whole header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxyHeader {
    /// The version it was sent in.
    pub version: Version,
    /// The relayed client; `None` when the connection's own addresses stand:
    /// v1 `UNKNOWN`, v2 `LOCAL` (the proxy's own connection, such as a health
    /// check), and v2 `PROXY` with AF_UNSPEC, AF_UNIX or a datagram transport.
    pub addresses: Option<Addresses>,
}

/// What [`parse`] found at the start of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed {
    /// The buffer holds the start of a header and no error so far. The
    /// header is longer than the buffer, so every byte of it belongs to the
    /// header: a reader may consume them all.
    Incomplete,
    /// A whole header of `len` bytes starts the buffer; what follows it is
    /// the connection's own data.
    Complete {
        /// The header.
        header: ProxyHeader,
        /// Its length in bytes.
        len: usize,
    },
}

/// A header that cannot be read. The connection it came on must be closed:
/// where the header ends, and so where the connection's data starts, is
/// unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ProxyError {
    /// The bytes start with neither version's signature.
    #[error("not a PROXY protocol header: no v1 or v2 signature")]
    NoSignature,
    /// A malformed v1 header; the text says what is wrong.
    #[error("malformed PROXY protocol v1 header: {0}")]
    V1(&'static str),
    /// A malformed v2 header; the text says what is wrong.
    #[error("malformed PROXY protocol v2 header: {0}")]
    V2(&'static str),
}

/// Whether a connection whose first byte is `first` is meant to start with
/// a PROXY protocol header: `P` (v1) or `0x0D` (v2). Neither can start a
/// RocketMQ frame, which opens with its big-endian length: a length word
/// starting `0x50` or `0x0D` is at least 218 MB, far over the 16 MiB frame
/// limit (`rmq_wire::frame::MAX_LENGTH_FIELD`), so the test takes nothing
/// from plain clients. Nor can it start TLS, whose first byte is 0x16.
pub fn starts_header(first: u8) -> bool {
    first == V1_SIGNATURE[0] || first == V2_SIGNATURE[0]
}

/// Which version's signature `buf` starts with, as far as it goes: `Some`
/// once a whole signature is there, `None` while `buf` is a proper prefix
/// of one of them.
///
/// # Errors
/// [`ProxyError::NoSignature`] once `buf` cannot be the start of either.
pub fn detect(buf: &[u8]) -> Result<Option<Version>, ProxyError> {
    for (signature, version) in [
        (V1_SIGNATURE, Version::V1),
        (&V2_SIGNATURE[..], Version::V2),
    ] {
        let n = buf.len().min(signature.len());
        if buf[..n] == signature[..n] {
            return Ok((n == signature.len()).then_some(version));
        }
    }
    Err(ProxyError::NoSignature)
}

/// Reads the header at the start of `buf`, if it is whole.
///
/// # Errors
/// [`ProxyError::NoSignature`] for a buffer that starts with neither
/// signature, and a version's error as soon as the bytes so far cannot be
/// a valid header: a v1 line longer than [`V1_MAX_LEN`] or with a bare CR
/// or LF, a field out of place, an unknown v2 version, command, family or
/// transport, an address block too short for its family.
pub fn parse(buf: &[u8]) -> Result<Parsed, ProxyError> {
    match detect(buf)? {
        None => Ok(Parsed::Incomplete),
        Some(Version::V1) => parse_v1(buf),
        Some(Version::V2) => parse_v2(buf),
    }
}

fn parse_v1(buf: &[u8]) -> Result<Parsed, ProxyError> {
    let window = &buf[..buf.len().min(V1_MAX_LEN)];
    let Some(end) = window.iter().position(|b| *b == b'\r' || *b == b'\n') else {
        return if buf.len() >= V1_MAX_LEN {
            Err(ProxyError::V1("no CRLF within 107 bytes"))
        } else {
            Ok(Parsed::Incomplete)
        };
    };
    if window[end] == b'\n' {
        return Err(ProxyError::V1("LF without CR"));
    }
    let len = end + 2;
    if len > V1_MAX_LEN {
        return Err(ProxyError::V1("no CRLF within 107 bytes"));
    }
    match buf.get(end + 1) {
        None => return Ok(Parsed::Incomplete),
        Some(b'\n') => {}
        Some(_) => return Err(ProxyError::V1("CR not followed by LF")),
    }
    let line = &buf[V1_SIGNATURE.len()..end];
    // "UNKNOWN": the receiver ignores whatever precedes the CRLF.
    if let Some(rest) = line.strip_prefix(b"UNKNOWN") {
        if rest.is_empty() || rest[0] == b' ' {
            let header = ProxyHeader {
                version: Version::V1,
                addresses: None,
            };
            return Ok(Parsed::Complete { header, len });
        }
    }
    let line = std::str::from_utf8(line)
        .ok()
        .filter(|line| line.is_ascii())
        .ok_or(ProxyError::V1("not ASCII"))?;
    let fields: Vec<&str> = line.split(' ').collect();
    let [protocol, source, destination, source_port, destination_port] = fields[..] else {
        return Err(ProxyError::V1(
            "expected PROXY, a protocol, two addresses and two ports, single spaces apart",
        ));
    };
    let (source, destination) = match protocol {
        "TCP4" => (
            IpAddr::V4(v1_address(source)?),
            IpAddr::V4(v1_address(destination)?),
        ),
        "TCP6" => (
            IpAddr::V6(v1_address(source)?),
            IpAddr::V6(v1_address(destination)?),
        ),
        _ => return Err(ProxyError::V1("protocol is not TCP4, TCP6 or UNKNOWN")),
    };
    let addresses = Addresses {
        source: SocketAddr::new(source, v1_port(source_port)?),
        destination: SocketAddr::new(destination, v1_port(destination_port)?),
    };
    let header = ProxyHeader {
        version: Version::V1,
        addresses: Some(addresses),
    };
    Ok(Parsed::Complete { header, len })
}

/// An address of the family the v1 protocol field named.
fn v1_address<A: std::str::FromStr>(text: &str) -> Result<A, ProxyError> {
    text.parse()
        .map_err(|_| ProxyError::V1("an address is not one of its protocol's family"))
}

/// A decimal port: 0 to 65535, digits only, no leading zero.
fn v1_port(text: &str) -> Result<u16, ProxyError> {
    let digits = !text.is_empty() && text.len() <= 5 && text.bytes().all(|b| b.is_ascii_digit());
    if !digits || (text.len() > 1 && text.starts_with('0')) {
        return Err(ProxyError::V1(
            "a port is not a decimal number from 0 to 65535",
        ));
    }
    text.parse()
        .map_err(|_| ProxyError::V1("a port is not a decimal number from 0 to 65535"))
}

/// v2 version-and-command byte: the version in the high nibble.
const V2_VERSION: u8 = 0x2;
const V2_LOCAL: u8 = 0x0;
const V2_PROXY: u8 = 0x1;

fn parse_v2(buf: &[u8]) -> Result<Parsed, ProxyError> {
    // Each byte is checked as soon as it is there, so that a bad header is
    // refused without waiting for the length it claims.
    if let Some(&version_command) = buf.get(12) {
        if version_command >> 4 != V2_VERSION {
            return Err(ProxyError::V2("version is not 2"));
        }
        if !matches!(version_command & 0x0F, V2_LOCAL | V2_PROXY) {
            return Err(ProxyError::V2("command is neither LOCAL nor PROXY"));
        }
    }
    // LOCAL ignores the family byte (and the addresses); PROXY takes the
    // specification's combinations only.
    if let (Some(&version_command), Some(&family)) = (buf.get(12), buf.get(13)) {
        let known = matches!(family, 0x00 | 0x11 | 0x12 | 0x21 | 0x22 | 0x31 | 0x32);
        if version_command & 0x0F == V2_PROXY && !known {
            return Err(ProxyError::V2("unknown address family or transport"));
        }
    }
    let Some(fixed) = buf.get(..V2_FIXED_LEN) else {
        return Ok(Parsed::Incomplete);
    };
    let (command, family) = (fixed[12] & 0x0F, fixed[13]);
    let block_len = usize::from(u16::from_be_bytes([fixed[14], fixed[15]]));
    let needed = match family >> 4 {
        0x1 => 12,
        0x2 => 36,
        0x3 => 216,
        _ => 0,
    };
    if command == V2_PROXY && block_len < needed {
        return Err(ProxyError::V2(
            "address block shorter than its family's addresses",
        ));
    }
    let len = V2_FIXED_LEN + block_len;
    let Some(block) = buf.get(V2_FIXED_LEN..len) else {
        return Ok(Parsed::Incomplete);
    };
    // Whatever follows the addresses (TLVs) is skipped.
    let addresses = match (command, family) {
        (V2_PROXY, 0x11) => {
            let ip = |at: usize| IpAddr::V4(Ipv4Addr::from(bytes::<4>(&block[at..])));
            Some(Addresses {
                source: SocketAddr::new(ip(0), u16::from_be_bytes(bytes(&block[8..]))),
                destination: SocketAddr::new(ip(4), u16::from_be_bytes(bytes(&block[10..]))),
            })
        }
        (V2_PROXY, 0x21) => {
            let ip = |at: usize| IpAddr::V6(Ipv6Addr::from(bytes::<16>(&block[at..])));
            Some(Addresses {
                source: SocketAddr::new(ip(0), u16::from_be_bytes(bytes(&block[32..]))),
                destination: SocketAddr::new(ip(16), u16::from_be_bytes(bytes(&block[34..]))),
            })
        }
        // LOCAL, AF_UNSPEC, AF_UNIX, datagrams: the connection's own.
        _ => None,
    };
    let header = ProxyHeader {
        version: Version::V2,
        addresses,
    };
    Ok(Parsed::Complete { header, len })
}

/// The first `N` bytes of `from`, which the caller has checked holds them.
fn bytes<const N: usize>(from: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&from[..N]);
    out
}
