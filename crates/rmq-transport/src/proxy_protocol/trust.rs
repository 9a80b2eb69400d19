//! Which peers a server believes a PROXY protocol header from:
//! [`ProxyProtocol`], a list of addresses and CIDR blocks, empty (nobody)
//! by default, and its key `proxyProtocolTrustedAddresses`.
//!
//! A header replaces the address that the authentication guard's
//! allow-lists decide on, so believing one from any peer (as Java does)
//! lets anyone who can reach the port claim an allow-listed address.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An address block: an address and how many of its leading bits a peer
/// must share with it. A bare address is a block of one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cidr {
    network: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Parses `192.0.2.7`, `10.0.0.0/8`, `2001:db8::1` or `2001:db8::/32`.
    /// An IPv4-mapped IPv6 block (`::ffff:10.0.0.0/104`) is taken as the
    /// IPv4 block it maps.
    ///
    /// # Errors
    /// Not an IP address; a prefix that is not a decimal number up to 32
    /// (IPv4) or 128 (IPv6); bits set after the prefix (`10.0.0.1/8`, most
    /// likely a typo for `/32` or for `10.0.0.0/8`).
    pub fn parse(text: &str) -> Result<Cidr, String> {
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let network: IpAddr = address
            .parse()
            .map_err(|_| "not an IP address or CIDR block".to_owned())?;
        let bits = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => bits,
            Some(prefix) => prefix
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= bits && !prefix.starts_with('+'))
                .ok_or_else(|| format!("the prefix length must be from 0 to {bits}"))?,
        };
        let cidr = Cidr { network, prefix };
        if cidr.masked(network) != network {
            return Err(format!(
                "bits set after the /{prefix} prefix: did you mean {}/{prefix}, or the single address {network}?",
                cidr.masked(network)
            ));
        }
        Ok(cidr.canonical())
    }

    /// Whether `ip` is in this block. An IPv4-mapped IPv6 address
    /// (`::ffff:a.b.c.d`, as a dual-stack listener reports IPv4 peers) is
    /// taken as the IPv4 address.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        ip.is_ipv4() == self.network.is_ipv4() && self.masked(ip) == self.network
    }

    /// `ip` with the bits after the prefix cleared (`ip` of the block's
    /// family).
    fn masked(&self, ip: IpAddr) -> IpAddr {
        match ip {
            IpAddr::V4(v4) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                IpAddr::V4(Ipv4Addr::from(u32::from(v4) & mask))
            }
            IpAddr::V6(v6) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask))
            }
        }
    }

    /// An IPv4-mapped IPv6 block as the IPv4 block it maps.
    fn canonical(self) -> Cidr {
        match self.network {
            IpAddr::V6(v6) if self.prefix >= 96 => match v6.to_ipv4_mapped() {
                Some(v4) => Cidr {
                    network: IpAddr::V4(v4),
                    prefix: self.prefix - 96,
                },
                None => self,
            },
            _ => self,
        }
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

/// A value of `proxyProtocolTrustedAddresses` that cannot be used; names
/// the entry and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("entry {entry:?}: {reason}")]
pub struct ProxyConfigError {
    /// The entry as given.
    pub entry: String,
    /// What is wrong with it.
    pub reason: String,
}

/// The PROXY protocol on a server's port:
/// [`ServerConfig::proxy_protocol`](crate::ServerConfig::proxy_protocol).
///
/// A connection from a trusted peer may start with a header; the client it
/// names is the connection's [`peer`](crate::ConnectionInfo::peer) for the
/// services, and the proxy is kept as
/// [`proxied_by`](crate::ConnectionInfo::proxied_by). A connection from
/// any other peer that starts with a header is closed, with a rate-limited
/// warning naming the peer and [`ProxyProtocol::KEY`]. Connections without
/// a header are served as ever, from trusted peers too.
///
/// The default trusts nobody.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProxyProtocol {
    trusted: Vec<Cidr>,
}

impl ProxyProtocol {
    /// The key that lists the trusted proxies: `proxyProtocolTrustedAddresses`.
    pub const KEY: &'static str = "proxyProtocolTrustedAddresses";

    /// Trusts headers from the peers in `trusted`.
    pub fn trusting(trusted: impl IntoIterator<Item = Cidr>) -> ProxyProtocol {
        ProxyProtocol {
            trusted: trusted.into_iter().collect(),
        }
    }

    /// Parses a comma list of addresses and CIDR blocks, as
    /// [`Cidr::parse`] takes them (`10.0.0.0/8, 192.0.2.7, fd00::/8`).
    /// Blanks around entries and empty entries are ignored; a blank list
    /// trusts nobody.
    ///
    /// # Errors
    /// The first entry that cannot be parsed.
    pub fn parse(list: &str) -> Result<ProxyProtocol, ProxyConfigError> {
        let trusted = list
            .split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .map(|entry| {
                Cidr::parse(entry).map_err(|reason| ProxyConfigError {
                    entry: entry.to_owned(),
                    reason,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ProxyProtocol { trusted })
    }

    /// Whether a header from `peer` is believed.
    pub fn trusts(&self, peer: IpAddr) -> bool {
        self.trusted.iter().any(|cidr| cidr.contains(peer))
    }

    /// Whether any peer is trusted.
    pub fn is_enabled(&self) -> bool {
        !self.trusted.is_empty()
    }

    /// The trusted blocks.
    pub fn trusted(&self) -> &[Cidr] {
        &self.trusted
    }

    /// Logs, at start-up, whose headers are believed (nothing when nobody's
    /// are: the default changes nothing).
    pub fn log_start(&self) {
        if self.is_enabled() {
            tracing::info!(trusted = %self,
                "PROXY protocol headers believed from these proxies only ({})", ProxyProtocol::KEY);
        }
    }
}

impl fmt::Display for ProxyProtocol {
    /// The list as [`ProxyProtocol::parse`] reads it back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, cidr) in self.trusted.iter().enumerate() {
            if n > 0 {
                f.write_str(",")?;
            }
            write!(f, "{cidr}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn blocks_and_single_addresses_match_their_peers() {
        let trust =
            ProxyProtocol::parse(" 10.0.0.0/8, 192.0.2.7 ,,fd00::/8, 2001:db8::1 ").unwrap();
        for peer in [
            "10.1.2.3",
            "10.255.255.255",
            "192.0.2.7",
            "fd12::5",
            "2001:db8::1",
        ] {
            assert!(trust.trusts(ip(peer)), "{peer}");
        }
        for peer in [
            "11.0.0.1",
            "192.0.2.8",
            "fe80::1",
            "2001:db8::2",
            "127.0.0.1",
        ] {
            assert!(!trust.trusts(ip(peer)), "{peer}");
        }
        assert_eq!(
            trust.to_string(),
            "10.0.0.0/8,192.0.2.7/32,fd00::/8,2001:db8::1/128"
        );
        assert_eq!(ProxyProtocol::parse(&trust.to_string()).unwrap(), trust);
    }

    #[test]
    fn mapped_ipv4_peers_and_blocks_are_ipv4() {
        let trust = ProxyProtocol::parse("10.0.0.0/8,::ffff:192.0.2.0/120").unwrap();
        assert!(trust.trusts(ip("::ffff:10.9.8.7")));
        assert!(trust.trusts(ip("192.0.2.200")));
        assert_eq!(trust.to_string(), "10.0.0.0/8,192.0.2.0/24");
    }

    #[test]
    fn nobody_is_trusted_by_default_or_by_a_blank_list() {
        assert!(!ProxyProtocol::default().is_enabled());
        assert!(!ProxyProtocol::default().trusts(ip("127.0.0.1")));
        assert_eq!(
            ProxyProtocol::parse("  ").unwrap(),
            ProxyProtocol::default()
        );
    }

    #[test]
    fn zero_prefixes_trust_a_whole_family() {
        let trust = ProxyProtocol::parse("0.0.0.0/0").unwrap();
        assert!(trust.trusts(ip("203.0.113.9")));
        assert!(!trust.trusts(ip("2001:db8::1")));
    }

    #[test]
    fn bad_entries_are_named_with_the_reason() {
        let cases = [
            (
                "10.0.0.0/8,proxy.example.com",
                "proxy.example.com",
                "not an IP address",
            ),
            ("10.0.0.0/33", "10.0.0.0/33", "from 0 to 32"),
            ("fd00::/129", "fd00::/129", "from 0 to 128"),
            ("10.0.0.0/+8", "10.0.0.0/+8", "from 0 to 32"),
            ("10.0.0.0/", "10.0.0.0/", "from 0 to 32"),
            ("10.0.0.1/8", "10.0.0.1/8", "did you mean 10.0.0.0/8"),
            ("010.0.0.1", "010.0.0.1", "not an IP address"),
            (
                "10.0.0.0-10.0.0.9",
                "10.0.0.0-10.0.0.9",
                "not an IP address",
            ),
        ];
        for (list, entry, why) in cases {
            let error = ProxyProtocol::parse(list).unwrap_err();
            assert_eq!(error.entry, entry, "{list}");
            assert!(error.to_string().contains(why), "{list}: {error}");
        }
    }
}
