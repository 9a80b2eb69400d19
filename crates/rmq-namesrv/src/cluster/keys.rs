//! The cluster's configuration keys (docs/configuration.md, "NameServer
//! cluster"): Waymark's own, read at start-up from the `-c` file and
//! `--set`; a Java NameServer given the same file ignores them.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs, UdpSocket};
use std::time::Duration;

use rmq_cluster::gossip::GossipSettings;

rmq_protocol::java_options! {
    /// The cluster keys, as read from the properties file and `--set`.
    pub struct ClusterKeys {
        gossip_addr: String = "clusterGossipAddr", |_, _| String::new();
        seeds: String = "clusterSeeds", |_, _| String::new();
        cluster_id: String = "clusterId", |_, _| String::new();
        advertise_addr: String = "clusterAdvertiseAddr", |_, _| String::new();
        gossip_interval_millis: i64 = "clusterGossipIntervalMillis", |_, _| ClusterKeys::DEFAULT_GOSSIP_INTERVAL_MILLIS;
        bootstrap_timeout_millis: i64 = "clusterBootstrapTimeoutMillis", |_, _| ClusterKeys::DEFAULT_BOOTSTRAP_TIMEOUT_MILLIS;
        pull_timeout_millis: i64 = "clusterPullTimeoutMillis", |_, _| ClusterKeys::DEFAULT_PULL_TIMEOUT_MILLIS;
        access_key: String = "clusterAccessKey", |_, _| String::new();
        secret_key: String = "clusterSecretKey", |_, _| String::new();
    }
}

/// How a node takes part in the cluster, from [`ClusterKeys::settings`].
#[derive(Debug, Clone)]
pub struct ClusterSettings {
    /// What gossip needs.
    pub gossip: GossipSettings,
    /// Where the gossip socket binds.
    pub gossip_bind: SocketAddr,
    /// Whether the node was given seeds (then it waits for its peers'
    /// routes before it serves).
    pub has_seeds: bool,
    /// How long it waits at most.
    pub bootstrap_timeout: Duration,
    /// How long a pull may take.
    pub pull_timeout: Duration,
    /// What pulls are signed with, when peers protect their reads.
    pub credentials: Option<rmq_auth::Credentials>,
}

impl ClusterKeys {
    /// Default of `clusterGossipIntervalMillis`.
    pub const DEFAULT_GOSSIP_INTERVAL_MILLIS: i64 = 1_000;
    /// Default of `clusterBootstrapTimeoutMillis`.
    pub const DEFAULT_BOOTSTRAP_TIMEOUT_MILLIS: i64 = 10_000;
    /// Default of `clusterPullTimeoutMillis`.
    pub const DEFAULT_PULL_TIMEOUT_MILLIS: i64 = 5_000;

    /// The defaults, then the keys of `properties` (other keys are left out).
    pub fn from_properties(properties: &std::collections::BTreeMap<String, String>) -> ClusterKeys {
        let mut keys = ClusterKeys::defaults(std::path::Path::new("."), None);
        for (key, value) in properties {
            keys.set(key, value);
        }
        keys
    }

    /// Why `key` may not be `value` at start-up (`Ok` for other keys).
    pub fn check(key: &str, value: &str) -> Result<(), String> {
        let value = value.trim();
        match key {
            "clusterGossipAddr" | "clusterAdvertiseAddr" if !value.is_empty() => {
                host_port(value).map(|_| ())
            }
            "clusterSeeds" => seeds(value).map(|_| ()),
            "clusterId" if value.chars().any(char::is_control) => {
                Err("a cluster id has no control characters".into())
            }
            "clusterGossipIntervalMillis" => millis(value, 10, 60_000),
            "clusterBootstrapTimeoutMillis" => millis(value, 0, 3_600_000),
            "clusterPullTimeoutMillis" => millis(value, 100, 600_000),
            _ => Ok(()),
        }
    }

    /// Whether the cluster is on (`clusterGossipAddr` set).
    pub fn enabled(&self) -> bool {
        !self.gossip_addr.trim().is_empty()
    }

    /// Cluster keys set while the cluster is off: each changes nothing,
    /// and the start-up log says so.
    pub fn ignored(&self) -> Vec<&'static str> {
        if self.enabled() {
            return Vec::new();
        }
        let defaults = ClusterKeys::from_properties(&Default::default());
        self.to_properties()
            .into_iter()
            .zip(defaults.to_properties())
            .filter(|((_, value), (_, default))| value != default)
            .filter_map(|((key, _), _)| ClusterKeys::KEYS.iter().find(|k| **k == key).copied())
            .collect()
    }

    /// The settings of a node whose remoting port is bound to `remoting`
    /// (`bindAddress` and the port actually bound), with its gossip socket
    /// bound; `None` when the cluster is off.
    ///
    /// # Errors
    /// `clusterId` missing, no address peers can reach the remoting port
    /// at (`bindAddress` a wildcard and no `clusterAdvertiseAddr`), the
    /// gossip address taken.
    pub fn bind(
        &self,
        remoting: SocketAddr,
        generation: u64,
    ) -> Result<Option<(ClusterSettings, UdpSocket)>, String> {
        if !self.enabled() {
            return Ok(None);
        }
        let cluster_id = self.cluster_id.trim();
        if cluster_id.is_empty() {
            return Err("clusterId is required when clusterGossipAddr is set: two deployments must not merge through a mistyped seed".into());
        }
        let node = match self.advertise_addr.trim() {
            "" if remoting.ip().is_unspecified() => {
                return Err(format!(
                    "clusterAdvertiseAddr is required when bindAddress is {}: peers need an address to pull registrations from",
                    remoting.ip()
                ))
            }
            "" => remoting.to_string(),
            advertised => advertised.to_owned(),
        };
        let gossip_addr = host_port(self.gossip_addr.trim())?;
        let socket = UdpSocket::bind(gossip_addr)
            .map_err(|e| format!("cannot bind clusterGossipAddr {gossip_addr}/udp: {e}"))?;
        let bound = socket
            .local_addr()
            .map_err(|e| format!("the gossip socket has no address: {e}"))?;
        let advertise = if bound.ip().is_unspecified() {
            let host = host_port(&node)?;
            SocketAddr::new(host.ip(), bound.port())
        } else {
            bound
        };
        let seeds = seeds(&self.seeds)?;
        let credentials = match (self.access_key.trim(), self.secret_key.trim()) {
            ("", "") => None,
            (access, secret) if !access.is_empty() && !secret.is_empty() => {
                Some(rmq_auth::Credentials::new(access, secret))
            }
            _ => {
                return Err(
                    "clusterAccessKey and clusterSecretKey go together: set both or neither".into(),
                )
            }
        };
        let interval =
            Duration::from_millis(u64::try_from(self.gossip_interval_millis).unwrap_or(1_000));
        let settings = ClusterSettings {
            gossip: GossipSettings {
                cluster_id: cluster_id.to_owned(),
                node,
                generation,
                advertise,
                seeds: seeds.clone(),
                interval,
                phi_threshold: 8.0,
                dead_grace: Duration::from_secs(3_600),
                deleted_key_grace: Duration::from_secs(600),
            },
            gossip_bind: bound,
            has_seeds: seeds.iter().any(|seed| !is_self(seed, advertise, bound)),
            bootstrap_timeout: Duration::from_millis(
                u64::try_from(self.bootstrap_timeout_millis).unwrap_or(0),
            ),
            pull_timeout: Duration::from_millis(
                u64::try_from(self.pull_timeout_millis).unwrap_or(5_000),
            ),
            credentials,
        };
        Ok(Some((settings, socket)))
    }
}

impl Default for ClusterKeys {
    fn default() -> ClusterKeys {
        ClusterKeys::from_properties(&Default::default())
    }
}

/// A seed naming this node itself (a StatefulSet gives every pod the same
/// list) is no peer to wait for.
fn is_self(seed: &str, advertise: SocketAddr, bound: SocketAddr) -> bool {
    seed.to_socket_addrs()
        .map(|mut addrs| addrs.any(|addr| addr == advertise || addr == bound))
        .unwrap_or(false)
}

/// `host:port`, resolved (the first address).
fn host_port(value: &str) -> Result<SocketAddr, String> {
    let (host, port) = value
        .rsplit_once(':')
        .ok_or_else(|| format!("{value:?} is not host:port"))?;
    port.parse::<u16>()
        .map_err(|_| format!("{value:?} has no port number"))?;
    if let Ok(ip) = host
        .trim_matches(|c| c == '[' || c == ']')
        .parse::<IpAddr>()
    {
        return Ok(SocketAddr::new(ip, port.parse().expect("checked above")));
    }
    value
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {value:?}: {e}"))?
        .next()
        .ok_or_else(|| format!("{value:?} resolves to no address"))
}

/// `clusterSeeds`: comma-separated `host:port`; host names are kept as
/// names (resolved again and again, as pods come and go).
fn seeds(value: &str) -> Result<Vec<String>, String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|seed| !seed.is_empty())
        .map(|seed| {
            let (_, port) = seed
                .rsplit_once(':')
                .ok_or_else(|| format!("seed {seed:?} is not host:port"))?;
            port.parse::<u16>()
                .map_err(|_| format!("seed {seed:?} has no port number"))?;
            Ok(seed.to_owned())
        })
        .collect()
}

fn millis(value: &str, min: i64, max: i64) -> Result<(), String> {
    match value.parse::<i64>() {
        Ok(ms) if (min..=max).contains(&ms) => Ok(()),
        _ => Err(format!("a number of milliseconds from {min} to {max}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(pairs: &[(&str, &str)]) -> ClusterKeys {
        let properties = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        ClusterKeys::from_properties(&properties)
    }

    #[test]
    fn the_cluster_is_off_by_default_and_keys_set_without_it_are_named() {
        assert!(!ClusterKeys::default().enabled());
        assert!(ClusterKeys::default().ignored().is_empty());
        let off = keys(&[("clusterSeeds", "10.0.0.2:7946"), ("clusterId", "prod")]);
        assert_eq!(off.ignored(), vec!["clusterId", "clusterSeeds"]);
        let remoting: SocketAddr = "127.0.0.1:9876".parse().unwrap();
        assert!(off.bind(remoting, 1).unwrap().is_none());
    }

    #[test]
    fn a_cluster_needs_an_id_and_an_address_peers_can_reach() {
        let remoting: SocketAddr = "127.0.0.1:9876".parse().unwrap();
        let no_id = keys(&[("clusterGossipAddr", "127.0.0.1:0")]);
        assert!(no_id.bind(remoting, 1).unwrap_err().contains("clusterId"));
        let wildcard: SocketAddr = "0.0.0.0:9876".parse().unwrap();
        let no_advertise = keys(&[("clusterGossipAddr", "127.0.0.1:0"), ("clusterId", "prod")]);
        assert!(no_advertise
            .bind(wildcard, 1)
            .unwrap_err()
            .contains("clusterAdvertiseAddr"));
        let half_credentials = keys(&[
            ("clusterGossipAddr", "127.0.0.1:0"),
            ("clusterId", "prod"),
            ("clusterAccessKey", "ns"),
        ]);
        assert!(half_credentials
            .bind(remoting, 1)
            .unwrap_err()
            .contains("clusterSecretKey"));
    }

    #[test]
    fn a_node_advertises_its_remoting_address_and_the_gossip_port_it_bound() {
        let remoting: SocketAddr = "127.0.0.1:19876".parse().unwrap();
        let on = keys(&[
            ("clusterGossipAddr", "127.0.0.1:0"),
            ("clusterId", "prod"),
            ("clusterSeeds", "127.0.0.1:1, 127.0.0.1:2"),
        ]);
        let (settings, socket) = on.bind(remoting, 7).unwrap().unwrap();
        assert_eq!(settings.gossip.node, "127.0.0.1:19876");
        assert_eq!(settings.gossip.generation, 7);
        assert_eq!(settings.gossip.advertise, socket.local_addr().unwrap());
        assert_ne!(settings.gossip.advertise.port(), 0);
        assert_eq!(settings.gossip.seeds, vec!["127.0.0.1:1", "127.0.0.1:2"]);
        assert!(settings.has_seeds);

        let wildcard: SocketAddr = "0.0.0.0:9876".parse().unwrap();
        let advertised = keys(&[
            ("clusterGossipAddr", "0.0.0.0:0"),
            ("clusterId", "prod"),
            ("clusterAdvertiseAddr", "127.0.0.1:9876"),
        ]);
        let (settings, socket) = advertised.bind(wildcard, 1).unwrap().unwrap();
        assert_eq!(settings.gossip.node, "127.0.0.1:9876");
        assert_eq!(
            settings.gossip.advertise,
            format!("127.0.0.1:{}", socket.local_addr().unwrap().port())
                .parse()
                .unwrap()
        );
        assert!(!settings.has_seeds);
    }

    #[test]
    fn bad_values_are_refused_naming_the_rule() {
        for (key, value) in [
            ("clusterGossipAddr", "nowhere"),
            ("clusterGossipAddr", "127.0.0.1:http"),
            ("clusterSeeds", "10.0.0.1:7946,10.0.0.2"),
            ("clusterId", "a\nb"),
            ("clusterGossipIntervalMillis", "0"),
            ("clusterGossipIntervalMillis", "soon"),
            ("clusterPullTimeoutMillis", "10"),
        ] {
            assert!(ClusterKeys::check(key, value).is_err(), "{key}={value}");
        }
        for (key, value) in [
            ("clusterGossipAddr", ""),
            ("clusterGossipAddr", "0.0.0.0:7946"),
            (
                "clusterSeeds",
                "ns-0.ns.default.svc:7946, ns-1.ns.default.svc:7946",
            ),
            ("clusterGossipIntervalMillis", "200"),
            ("listenPort", "0"),
        ] {
            assert_eq!(ClusterKeys::check(key, value), Ok(()), "{key}={value}");
        }
    }
}
