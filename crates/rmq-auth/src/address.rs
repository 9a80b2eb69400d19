//! Address allow-list patterns in the syntax of Java 4.x
//! `RemoteAddressStrategyFactory` (`globalWhiteRemoteAddresses`,
//! `whiteRemoteAddress`), and `host[:port]` patterns for broker bindings.
//!
//! Owns parsing and matching only; which list grants what is `policy`'s.
//!
//! Accepted forms (each also for IPv6 where Java takes it):
//!
//! | pattern | matches |
//! |---|---|
//! | empty or blank | nothing (Java's `BlankRemoteAddressStrategy`) |
//! | `*`, `*.*.*.*`, `*:*:*:*:*:*:*:*` | every address, IPv4 and IPv6 |
//! | `192.168.1.1`, `1050::5:600:300c:326b` | that address |
//! | `192.168.1.1,192.168.1.9` | each listed address (exact addresses only, as in Java) |
//! | `192.168.1.{1,2}`, `1050::5:600:300c:{1,2}` | the prefix followed by each listed item |
//! | `10.10.103.*`, `127.0.1-200.*`, `192.100-150.*.*`, `127.*.*.*` | one octet `*` or `a-b` (decimal), the octets before it exact, every octet after it `*` |
//! | `1050::5:600:300c:*`, `1050::5:600:300c:1-200`, `1050::5:600:300c:1-200:*` | a range (hexadecimal, like the groups) in the last group, or in the one before a final `:*` |
//!
//! An IPv6 range pattern without `::` that names fewer than eight groups
//! leaves the groups after the wildcard free, as Java's prefix match does
//! (`1050:5:600:300c:3261:*` matches `1050:5:600:300c:3261:*:*:*`).
//!
//! Stricter than Java, where Java accepts text it then silently misreads:
//! every fixed IPv4 octet must be 0–255 (Java checks only the first
//! `index - 1`, so `127.0.999.*` loads and never matches), and octets after
//! the wildcard must be `*` (Java ignores them: `127.1-150.5.5` means
//! `127.1-150.*.*` there). Peers are compared as addresses, not text, and an
//! IPv4-mapped IPv6 peer (`::ffff:a.b.c.d`) is matched as the IPv4 address,
//! as a Java server reports it.

use std::fmt;
use std::net::{IpAddr, SocketAddr};

/// A parsed allow-list pattern. [`fmt::Display`] gives the text it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressPattern {
    text: String,
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Nothing,
    Any,
    Exact(Vec<IpAddr>),
    V4([Span<u8>; 4]),
    V6([Span<u16>; 8]),
}

/// An inclusive range of one octet or group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span<T> {
    lo: T,
    hi: T,
}

impl<T: Copy + PartialOrd> Span<T> {
    fn exact(value: T) -> Span<T> {
        Span {
            lo: value,
            hi: value,
        }
    }

    fn contains(&self, value: T) -> bool {
        self.lo <= value && value <= self.hi
    }
}

const ANY_OCTET: Span<u8> = Span { lo: 0, hi: 255 };
const ANY_GROUP: Span<u16> = Span {
    lo: 0,
    hi: u16::MAX,
};

/// A pattern that cannot be parsed; names the text and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid address pattern {text:?}: {reason}")]
pub struct AddressPatternError {
    /// The pattern as given.
    pub text: String,
    /// What is wrong with it.
    pub reason: String,
}

impl AddressPattern {
    /// Parses one pattern (one `whiteRemoteAddress` value, or one entry of
    /// `globalWhiteRemoteAddresses`). Surrounding blanks are ignored.
    ///
    /// # Errors
    /// Text that is none of the forms in the module docs.
    pub fn parse(text: &str) -> Result<AddressPattern, AddressPatternError> {
        let kind = parse_kind(text.trim()).map_err(|reason| AddressPatternError {
            text: text.to_owned(),
            reason,
        })?;
        Ok(AddressPattern {
            text: text.trim().to_owned(),
            kind,
        })
    }

    /// Whether `peer` is allowed by this pattern.
    pub fn matches(&self, peer: &IpAddr) -> bool {
        let peer = canonical(*peer);
        match (&self.kind, peer) {
            (Kind::Nothing, _) => false,
            (Kind::Any, _) => true,
            (Kind::Exact(list), peer) => list.contains(&peer),
            (Kind::V4(spans), IpAddr::V4(v4)) => {
                spans.iter().zip(v4.octets()).all(|(s, o)| s.contains(o))
            }
            (Kind::V6(spans), IpAddr::V6(v6)) => {
                spans.iter().zip(v6.segments()).all(|(s, g)| s.contains(g))
            }
            _ => false,
        }
    }

    /// True for `*` and its spellings: every peer matches.
    pub fn matches_everything(&self) -> bool {
        self.kind == Kind::Any
    }

    /// The pattern's text, trimmed.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for AddressPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// IPv4-mapped IPv6 addresses as the IPv4 address; everything else unchanged.
pub fn canonical(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
        v4 => v4,
    }
}

fn parse_kind(text: &str) -> Result<Kind, String> {
    if text.is_empty() {
        return Ok(Kind::Nothing);
    }
    if matches!(text, "*" | "*.*.*.*" | "*:*:*:*:*:*:*:*") {
        return Ok(Kind::Any);
    }
    if text.ends_with('}') {
        return parse_braces(text).map(Kind::Exact);
    }
    if text.contains(',') {
        let list = text
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(|item| {
                exact(item).map_err(|_| {
                    format!(
                        "{item:?} is not an IP address (a comma list takes exact addresses only)"
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(Kind::Exact(list));
    }
    if text.contains('*') || text.contains('-') {
        return if text.contains(':') {
            parse_v6_range(text).map(Kind::V6)
        } else {
            parse_v4_range(text).map(Kind::V4)
        };
    }
    exact(text).map(|addr| Kind::Exact(vec![addr]))
}

fn exact(text: &str) -> Result<IpAddr, String> {
    text.parse::<IpAddr>()
        .map(canonical)
        .map_err(|_| "not an IP address".to_owned())
}

/// `prefix{a,b,c}`: the braces must hold the whole last octet (IPv4) or
/// group (IPv6), as Java's check on the last `.`/`:` token requires.
fn parse_braces(text: &str) -> Result<Vec<IpAddr>, String> {
    let separator = if text.contains(':') { ':' } else { '.' };
    let last = text.rsplit(separator).next().unwrap_or(text);
    if !last.starts_with('{') || last[1..].contains('{') || text.matches('{').count() != 1 {
        return Err(format!(
            "braces must hold the whole last {} and appear once",
            if separator == '.' { "octet" } else { "group" }
        ));
    }
    let prefix = &text[..text.len() - last.len()];
    let items: Vec<&str> = last[1..last.len() - 1]
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .collect();
    if items.is_empty() {
        return Err("the braces list nothing".into());
    }
    items
        .iter()
        .map(|item| {
            let address = format!("{prefix}{item}");
            exact(&address).map_err(|_| format!("{address:?} is not an IP address"))
        })
        .collect()
}

fn parse_v4_range(text: &str) -> Result<[Span<u8>; 4], String> {
    let parts: Vec<&str> = text.split('.').map(str::trim).collect();
    if parts.len() != 4 {
        return Err("an IPv4 pattern has four octets".into());
    }
    let mut spans = [ANY_OCTET; 4];
    let mut wildcard_at = None;
    for (i, part) in parts.iter().enumerate() {
        spans[i] = match wildcard_at {
            None if i > 0 && (*part == "*" || part.contains('-')) => {
                wildcard_at = Some(i);
                if *part == "*" {
                    ANY_OCTET
                } else {
                    range(part, octet)?
                }
            }
            None => Span::exact(octet(part)?),
            Some(_) if *part == "*" => ANY_OCTET,
            Some(at) => {
                return Err(format!(
                    "octet {part:?} follows the wildcard in octet {}: only '*' may",
                    at + 1
                ))
            }
        };
    }
    if wildcard_at.is_none() {
        return Err("no '*' or 'a-b' after the first octet".into());
    }
    Ok(spans)
}

fn parse_v6_range(text: &str) -> Result<[Span<u16>; 8], String> {
    let star = text.find('*');
    if star.is_some_and(|at| at != text.len() - 1) || (star.is_some() && !text.ends_with(":*")) {
        return Err("'*' may only be the whole last group".into());
    }
    // Peel the wildcard groups off the end, keeping a `::` they were part of.
    let mut rest = text;
    let mut tail = Vec::new();
    if star.is_some() {
        rest = peel(rest, 1);
        tail.push(ANY_GROUP);
    }
    let last = rest.rsplit(':').next().unwrap_or(rest);
    if last.contains('-') {
        tail.insert(0, range(last, hex_group)?);
        rest = peel(rest, last.len());
    }
    if rest.contains('-') {
        return Err(
            "a range may only be in the last group, or in the one before a final ':*'".into(),
        );
    }
    let fixed_len = 8 - tail.len();
    let fixed = v6_groups(rest, fixed_len)?;
    let mut spans = [ANY_GROUP; 8];
    for (i, group) in fixed.iter().enumerate() {
        spans[i] = Span::exact(*group);
    }
    for (i, span) in tail.into_iter().enumerate() {
        spans[fixed.len() + i] = span;
    }
    Ok(spans)
}

/// Drops the last `len` bytes and the `:` before them, unless that `:` is
/// the second of a `::`, which stays to stand for the zero groups.
fn peel(text: &str, len: usize) -> &str {
    let cut = &text[..text.len() - len];
    if cut.ends_with("::") {
        cut
    } else {
        cut.strip_suffix(':').unwrap_or(cut)
    }
}

/// The fixed groups before the wildcards. With `::` they expand to exactly
/// `len` groups; without, fewer than `len` groups is a prefix (Java's
/// behaviour) and the groups after the wildcards stay free.
fn v6_groups(text: &str, len: usize) -> Result<Vec<u16>, String> {
    let parse_all = |part: &str| -> Result<Vec<u16>, String> {
        if part.is_empty() {
            return Ok(Vec::new());
        }
        part.split(':').map(hex_group).collect()
    };
    match text.split_once("::") {
        Some((head, tail)) => {
            let (head, tail) = (parse_all(head)?, parse_all(tail)?);
            if text.matches("::").count() > 1 || head.len() + tail.len() >= len {
                return Err("'::' must stand for at least one group, once".into());
            }
            let zeros = len - head.len() - tail.len();
            Ok([head, vec![0; zeros], tail].concat())
        }
        None => {
            let groups = parse_all(text)?;
            if groups.is_empty() || groups.len() > len {
                return Err(format!("expected 1 to {len} groups before the wildcard"));
            }
            Ok(groups)
        }
    }
}

fn range<T: PartialOrd + fmt::Display>(
    text: &str,
    parse: fn(&str) -> Result<T, String>,
) -> Result<Span<T>, String> {
    let Some((lo, hi)) = text.split_once('-') else {
        return Err(format!("{text:?} is not a range"));
    };
    let (lo, hi) = (parse(lo.trim())?, parse(hi.trim())?);
    if lo > hi {
        return Err(format!("range {text:?} starts above its end"));
    }
    Ok(Span { lo, hi })
}

fn octet(text: &str) -> Result<u8, String> {
    if text.is_empty() || text.len() > 3 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{text:?} is not an octet (0-255)"));
    }
    text.parse()
        .map_err(|_| format!("{text:?} is not an octet (0-255)"))
}

fn hex_group(text: &str) -> Result<u16, String> {
    if text.is_empty() || text.len() > 4 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("{text:?} is not an IPv6 group (0-ffff)"));
    }
    u16::from_str_radix(text, 16).map_err(|_| format!("{text:?} is not an IPv6 group (0-ffff)"))
}

/// A broker address pattern: an [`AddressPattern`] for the host and an
/// optional port, matched against a claimed `brokerAddr` such as
/// `192.168.0.10:10911`.
///
/// Written `host`, `host:port`, or `[ipv6-host]:port`; a host with two or more
/// colons is an IPv6 pattern without a port. A claimed address that is not
/// `ip:port` (a host name, say) matches no pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddrPortPattern {
    host: AddressPattern,
    port: Option<u16>,
}

impl AddrPortPattern {
    /// Parses `host[:port]`.
    ///
    /// # Errors
    /// A malformed host pattern or port, naming the text.
    pub fn parse(text: &str) -> Result<AddrPortPattern, AddressPatternError> {
        let text = text.trim();
        let fail = |reason: String| AddressPatternError {
            text: text.to_owned(),
            reason,
        };
        let (host, port) = if let Some(bracketed) = text.strip_prefix('[') {
            let (host, after) = bracketed
                .split_once(']')
                .ok_or_else(|| fail("'[' without ']'".into()))?;
            match after {
                "" => (host, None),
                _ => match after.strip_prefix(':') {
                    Some(port) => (host, Some(port)),
                    None => return Err(fail("expected ':port' after ']'".into())),
                },
            }
        } else if text.matches(':').count() == 1 {
            let (host, port) = text.split_once(':').unwrap_or((text, ""));
            (host, Some(port))
        } else {
            (text, None)
        };
        if host.trim().is_empty() {
            return Err(fail("no host pattern".into()));
        }
        let port = port
            .map(|p| {
                p.parse::<u16>()
                    .map_err(|_| fail(format!("{p:?} is not a port")))
            })
            .transpose()?;
        Ok(AddrPortPattern {
            host: AddressPattern::parse(host).map_err(|e| fail(e.reason))?,
            port,
        })
    }

    /// Whether the claimed `ip:port` text is covered.
    pub fn matches(&self, claimed: &str) -> bool {
        let Ok(addr) = claimed.trim().parse::<SocketAddr>() else {
            return false;
        };
        self.host.matches(&addr.ip()) && self.port.is_none_or(|port| port == addr.port())
    }
}

impl fmt::Display for AddrPortPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.port, self.host.as_str().contains(':')) {
            (None, _) => write!(f, "{}", self.host),
            (Some(port), true) => write!(f, "[{}]:{port}", self.host),
            (Some(port), false) => write!(f, "{}:{port}", self.host),
        }
    }
}

#[cfg(test)]
mod tests;
