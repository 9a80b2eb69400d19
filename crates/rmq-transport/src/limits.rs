//! The keys that set a server's connection and memory limits
//! ([`ServerConfig`]'s budgets), the proxies it trusts
//! (`proxyProtocolTrustedAddresses`, [`ServerConfig::proxy_protocol`]) and
//! how it detects dead peers (`tcpKeepalive*`, `tcpUserTimeoutMillis`,
//! [`ServerConfig::keepalive`]),
//! read from the same properties file and `--set` options as the Java keys.
//! Java has no such keys, so these are Waymark's own; a Java server given
//! the same file ignores them.

use std::ops::RangeInclusive;
use std::time::Duration;

use crate::keepalive::Keepalive;
use crate::proxy_protocol::ProxyProtocol;
use crate::server::ServerConfig;

rmq_protocol::java_options! {
    /// Connection and memory limits of a server, by key.
    pub struct ServerLimits {
        max_connections: i32 = "maxConnections", |_, _| 65_536;
        max_connections_per_ip: i32 = "maxConnectionsPerIp", |_, _| 4_096;
        partial_frame_budget_bytes: i64 = "partialFrameBudgetBytes", |_, _| 128 << 20;
        frame_read_timeout_seconds: i32 = "frameReadTimeoutSeconds", |_, _| 60;
        frame_max_length: i64 = "com.rocketmq.remoting.frameMaxLength", |_, _| 16 << 20;
        max_header_bytes: i32 = "maxHeaderBytes", |_, _| 64 * 1024;
        max_header_field_bytes: i32 = "maxHeaderFieldBytes", |_, _| 32 * 1024;
        response_budget_bytes_per_connection: i64 = "responseBudgetBytesPerConnection", |_, _| 32 << 20;
        response_budget_bytes: i64 = "responseBudgetBytes", |_, _| 256 << 20;
        proxy_protocol_trusted_addresses: String = "proxyProtocolTrustedAddresses", |_, _| String::new();
        tcp_keepalive_idle_seconds: i32 = "tcpKeepaliveIdleSeconds", |_, _| 5;
        tcp_keepalive_interval_seconds: i32 = "tcpKeepaliveIntervalSeconds", |_, _| 2;
        tcp_keepalive_probes: i32 = "tcpKeepaliveProbes", |_, _| 5;
        tcp_user_timeout_millis: i32 = "tcpUserTimeoutMillis", |_, _| 15_000;
    }
}

impl ServerLimits {
    /// The defaults (no key depends on the home directory).
    pub fn new() -> ServerLimits {
        ServerLimits::defaults(std::path::Path::new("."), None)
    }

    /// Reads the limit keys of `properties` (others are not this struct's
    /// business and are left out).
    pub fn from_properties(
        properties: &std::collections::BTreeMap<String, String>,
    ) -> ServerLimits {
        let mut limits = ServerLimits::new();
        for (key, value) in properties {
            limits.set(key, value);
        }
        limits
    }

    /// Why `key` may not be `value` at start-up: the type check of
    /// [`ServerLimits::check_update`], every limit at least 1 (a limit of
    /// zero would refuse everything), the keepalive keys within what the
    /// kernel takes (0 turns the idle time and the user timeout off), and
    /// the trusted proxies a list [`ProxyProtocol::parse`] takes. `Ok` for
    /// keys that are not these.
    pub fn check(key: &str, value: &str) -> Result<(), String> {
        if key == FRAME_MAX_LENGTH_KEY {
            return check_frame_max_length(value);
        }
        if key == ProxyProtocol::KEY {
            ServerLimits::check_update(key, value)?;
            return ProxyProtocol::parse(value)
                .map(drop)
                .map_err(|error| format!("invalid value for {key}: {error}"));
        }
        if let Some((_, allowed, zero)) = KEEPALIVE_RANGES.iter().find(|(k, ..)| *k == key) {
            ServerLimits::check_update(key, value)?;
            return check_in_range(key, value, allowed, *zero);
        }
        if !ServerLimits::KEYS.contains(&key) {
            return Ok(());
        }
        rmq_protocol::options::check_limit(key, value, ServerLimits::check_update)
    }

    /// The proxies whose PROXY protocol headers are believed. A list that
    /// [`ServerLimits::check`] refuses trusts nobody (the servers refuse to
    /// start with one).
    pub fn proxy_protocol(&self) -> ProxyProtocol {
        ProxyProtocol::parse(&self.proxy_protocol_trusted_addresses).unwrap_or_default()
    }

    /// Logs at start-up what the limits together make of a single key: a
    /// frame limit above the partial-frame budget would let a frame be
    /// announced that can never get the budget to be read, so such a frame
    /// waits out `frameReadTimeoutSeconds` and its connection is closed.
    pub fn log_start(&self) {
        self.proxy_protocol().log_start();
        if self.frame_max_length > self.partial_frame_budget_bytes {
            tracing::warn!(
                "{FRAME_MAX_LENGTH_KEY}={} is above partialFrameBudgetBytes={}: frames longer \
                 than the budget are closed after frameReadTimeoutSeconds; raise the budget too",
                self.frame_max_length,
                self.partial_frame_budget_bytes
            );
        }
    }

    /// Sets these limits on `config`.
    pub fn apply_to(&self, config: &mut ServerConfig) {
        let size = rmq_protocol::options::limit_size;
        config.max_connections = size(self.max_connections.into());
        config.max_connections_per_ip = size(self.max_connections_per_ip.into());
        config.frame_budget = size(self.partial_frame_budget_bytes);
        config.frame_timeout =
            Duration::from_secs(u64::try_from(self.frame_read_timeout_seconds.max(1)).unwrap_or(1));
        config.max_frame_bytes =
            size(self.frame_max_length).clamp(MIN_FRAME_MAX_LENGTH, MAX_FRAME_MAX_LENGTH);
        config.max_header_bytes = size(self.max_header_bytes.into());
        config.max_header_field_bytes = size(self.max_header_field_bytes.into());
        config.response_budget_per_connection = size(self.response_budget_bytes_per_connection);
        config.response_budget = size(self.response_budget_bytes);
        config.proxy_protocol = self.proxy_protocol();
        config.keepalive = Keepalive::from_settings(
            self.tcp_keepalive_idle_seconds.into(),
            self.tcp_keepalive_interval_seconds.into(),
            self.tcp_keepalive_probes.into(),
            self.tcp_user_timeout_millis.into(),
        );
    }
}

/// The keepalive keys, what each takes and what 0 means if it takes 0.
/// The ceilings are Linux's (`MAX_TCP_KEEPIDLE`, `MAX_TCP_KEEPINTVL`,
/// `MAX_TCP_KEEPCNT`; TCP_USER_TIMEOUT takes any non-negative int): the
/// kernel refuses more, and the option would be silently missing.
const KEEPALIVE_RANGES: [(&str, RangeInclusive<i64>, Option<&str>); 4] = [
    (
        "tcpKeepaliveIdleSeconds",
        0..=32_767,
        Some("0 turns keepalive off"),
    ),
    ("tcpKeepaliveIntervalSeconds", 1..=32_767, None),
    ("tcpKeepaliveProbes", 1..=127, None),
    (
        "tcpUserTimeoutMillis",
        0..=i32::MAX as i64,
        Some("0 leaves the system's retransmission timeout"),
    ),
];

/// Why `value` is not within `allowed`.
fn check_in_range(
    key: &str,
    value: &str,
    allowed: &RangeInclusive<i64>,
    zero: Option<&str>,
) -> Result<(), String> {
    let number = value.trim().parse::<i64>().ok();
    if number.is_some_and(|number| allowed.contains(&number)) {
        return Ok(());
    }
    let zero = zero.map(|zero| format!(" ({zero})")).unwrap_or_default();
    Err(format!(
        "invalid value for {key}: must be from {} to {}{zero}",
        allowed.start(),
        allowed.end()
    ))
}

/// Java's name for the frame limit (a system property there, read by
/// `NettyDecoder`), taken unchanged as Waymark's key: the whole frame,
/// length prefix included, in bytes.
pub const FRAME_MAX_LENGTH_KEY: &str = "com.rocketmq.remoting.frameMaxLength";

/// The smallest frame limit: room for the largest header
/// (`maxHeaderBytes`' own ceiling is the operator's business; 64 KiB is
/// what every request Waymark serves fits in).
const MIN_FRAME_MAX_LENGTH: usize = 64 * 1024;

/// The largest frame limit, 200 MiB. A length word above it is what the
/// first bytes of a PROXY protocol v2 header (`\r\n\r\n`, 218 MB) or of a
/// TLS record (0x16…, 369 MB and up) read as, and the server tells those
/// from frames by their being over the limit.
const MAX_FRAME_MAX_LENGTH: usize = 200 << 20;

/// Why `value` is not a frame limit.
fn check_frame_max_length(value: &str) -> Result<(), String> {
    let bytes: i64 = value.trim().parse().map_err(|_| {
        format!(
            "invalid value for {FRAME_MAX_LENGTH_KEY}: {value:?} is not a whole number of bytes"
        )
    })?;
    let allowed = MIN_FRAME_MAX_LENGTH as i64..=MAX_FRAME_MAX_LENGTH as i64;
    if allowed.contains(&bytes) {
        Ok(())
    } else {
        Err(format!(
            "invalid value for {FRAME_MAX_LENGTH_KEY}: {bytes} bytes; it must be between \
             {} (64 KiB) and {} (200 MiB)",
            allowed.start(),
            allowed.end()
        ))
    }
}

impl Default for ServerLimits {
    fn default() -> ServerLimits {
        ServerLimits::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_server_configs() {
        let mut config = ServerConfig {
            max_connections: 1,
            max_connections_per_ip: 1,
            frame_budget: 1,
            frame_timeout: Duration::from_secs(1),
            max_header_bytes: 1,
            max_header_field_bytes: 1,
            response_budget_per_connection: 1,
            response_budget: 1,
            keepalive: Keepalive::DISABLED,
            ..ServerConfig::default()
        };
        ServerLimits::new().apply_to(&mut config);
        let defaults = ServerConfig::default();
        assert_eq!(config.max_connections, defaults.max_connections);
        assert_eq!(
            config.max_connections_per_ip,
            defaults.max_connections_per_ip
        );
        assert_eq!(config.frame_budget, defaults.frame_budget);
        assert_eq!(config.frame_timeout, defaults.frame_timeout);
        assert_eq!(config.max_header_bytes, defaults.max_header_bytes);
        assert_eq!(
            config.max_header_field_bytes,
            defaults.max_header_field_bytes
        );
        assert_eq!(
            config.response_budget_per_connection,
            defaults.response_budget_per_connection
        );
        assert_eq!(config.response_budget, defaults.response_budget);
        assert_eq!(config.proxy_protocol, defaults.proxy_protocol);
        assert!(!config.proxy_protocol.is_enabled());
        assert_eq!(config.keepalive, defaults.keepalive);
    }

    #[test]
    fn the_keepalive_keys_set_detection_and_zero_turns_it_off() {
        let mut config = ServerConfig {
            keepalive: Keepalive::DISABLED,
            ..ServerConfig::default()
        };
        ServerLimits::new().apply_to(&mut config);
        assert_eq!(
            config.keepalive,
            Keepalive {
                idle: Some(Duration::from_secs(5)),
                interval: Duration::from_secs(2),
                probes: 5,
                user_timeout: Some(Duration::from_millis(15_000)),
            }
        );
        let properties = [
            ("tcpKeepaliveIdleSeconds", "7"),
            ("tcpKeepaliveIntervalSeconds", "3"),
            ("tcpKeepaliveProbes", "4"),
            ("tcpUserTimeoutMillis", "20500"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        ServerLimits::from_properties(&properties).apply_to(&mut config);
        assert_eq!(
            config.keepalive,
            Keepalive {
                idle: Some(Duration::from_secs(7)),
                interval: Duration::from_secs(3),
                probes: 4,
                user_timeout: Some(Duration::from_millis(20_500)),
            }
        );
        let off = [
            ("tcpKeepaliveIdleSeconds", "0"),
            ("tcpUserTimeoutMillis", "0"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        ServerLimits::from_properties(&off).apply_to(&mut config);
        assert_eq!(config.keepalive.idle, None);
        assert_eq!(config.keepalive.user_timeout, None);
    }

    #[test]
    fn the_keepalive_keys_take_what_the_kernel_takes() {
        for (key, value) in [
            ("tcpKeepaliveIdleSeconds", "0"),
            ("tcpKeepaliveIdleSeconds", "32767"),
            ("tcpKeepaliveIntervalSeconds", "1"),
            ("tcpKeepaliveProbes", "127"),
            ("tcpUserTimeoutMillis", "0"),
            ("tcpUserTimeoutMillis", "2147483647"),
        ] {
            assert_eq!(ServerLimits::check(key, value), Ok(()), "{key}={value}");
        }
        for (key, value) in [
            ("tcpKeepaliveIdleSeconds", "-1"),
            ("tcpKeepaliveIdleSeconds", "32768"),
            ("tcpKeepaliveIntervalSeconds", "0"),
            ("tcpKeepaliveProbes", "0"),
            ("tcpKeepaliveProbes", "128"),
            ("tcpUserTimeoutMillis", "-1"),
            ("tcpUserTimeoutMillis", "2147483648"),
            ("tcpUserTimeoutMillis", "15s"),
        ] {
            let error = ServerLimits::check(key, value).unwrap_err();
            assert!(error.contains(key), "{key}={value}: {error}");
        }
        let error = ServerLimits::check("tcpKeepaliveIdleSeconds", "-1").unwrap_err();
        assert!(error.contains("0 turns keepalive off"), "{error}");
    }

    #[test]
    fn keys_set_the_limits() {
        let properties = [
            ("maxConnectionsPerIp", "16"),
            ("frameReadTimeoutSeconds", "5"),
            ("listenPort", "1"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let mut config = ServerConfig::default();
        ServerLimits::from_properties(&properties).apply_to(&mut config);
        assert_eq!(config.max_connections_per_ip, 16);
        assert_eq!(config.frame_timeout, Duration::from_secs(5));
    }

    #[test]
    fn the_trusted_proxies_key_sets_them_and_refuses_bad_entries() {
        let properties = [(ProxyProtocol::KEY, " 10.0.0.0/8, 192.0.2.7 ")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let limits = ServerLimits::from_properties(&properties);
        let mut config = ServerConfig::default();
        limits.apply_to(&mut config);
        assert!(config.proxy_protocol.trusts("10.1.1.1".parse().unwrap()));
        assert!(!config.proxy_protocol.trusts("127.0.0.1".parse().unwrap()));
        assert_eq!(
            limits.to_properties()[ProxyProtocol::KEY],
            "10.0.0.0/8, 192.0.2.7"
        );
        assert_eq!(ServerLimits::new().to_properties()[ProxyProtocol::KEY], "");
        assert_eq!(ServerLimits::check(ProxyProtocol::KEY, ""), Ok(()));
        let error = ServerLimits::check(ProxyProtocol::KEY, "10.0.0.0/8,lb.example").unwrap_err();
        assert!(
            error.contains(ProxyProtocol::KEY) && error.contains("\"lb.example\""),
            "{error}"
        );
        assert!(ServerLimits::check(ProxyProtocol::KEY, "10.0.0.1\n").is_err());
    }

    #[test]
    fn the_frame_limit_takes_javas_key_within_its_bounds() {
        let mut config = ServerConfig::default();
        ServerLimits::new().apply_to(&mut config);
        assert_eq!(config.max_frame_bytes, 16 << 20);
        let properties = [(FRAME_MAX_LENGTH_KEY, "67108864")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ServerLimits::from_properties(&properties).apply_to(&mut config);
        assert_eq!(config.max_frame_bytes, 64 << 20);
        assert_eq!(
            ServerLimits::check(FRAME_MAX_LENGTH_KEY, "67108864"),
            Ok(())
        );
        for refused in ["1024", "209715201", "-1", "16M"] {
            let error = ServerLimits::check(FRAME_MAX_LENGTH_KEY, refused).unwrap_err();
            assert!(error.contains(FRAME_MAX_LENGTH_KEY), "{error}");
        }
    }

    #[test]
    fn limits_must_be_whole_numbers_of_at_least_one() {
        assert_eq!(ServerLimits::check("maxHeaderBytes", "1024"), Ok(()));
        assert_eq!(
            ServerLimits::check("listenPort", "0"),
            Ok(()),
            "not a limit"
        );
        for bad in ["0", "-5", "lots", "1\n"] {
            let error = ServerLimits::check("maxHeaderBytes", bad).unwrap_err();
            assert!(error.contains("maxHeaderBytes"), "{error}");
        }
    }
}
