//! Options of a route client, with Java's defaults (`ClientConfig`,
//! `DefaultMQProducer`, `NettyClientConfig`).
//!
//! Owns the option set and its environment defaults (`NAMESRV_ADDR`,
//! `ROCKETMQ_ZONE`, `ROCKETMQ_ZONE_MODE`). The HTTP address server (Java's
//! fallback when `namesrvAddr` is unset) and namespaces are not supported:
//! give addresses directly.
//! Credentials and TLS are never read from the environment: as in Java,
//! an application passes them (`AclClientRPCHook`, `setUseTLS`).

use std::time::Duration;

use rmq_auth::Credentials;
use rmq_transport::tls::TlsClient;

use crate::nameserver::{parse_namesrv_addr, ChannelConfig};

/// Java `TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC`.
pub const AUTO_CREATE_TOPIC_KEY: &str = "TBW102";

/// Options of a [`RouteClient`](crate::RouteClient).
#[derive(Debug, Clone)]
pub struct RouteClientConfig {
    /// NameServer addresses (Java `namesrvAddr` split on `;`).
    pub namesrv_addrs: Vec<String>,
    /// Period of the route refresh (Java `pollNameServerInterval`, 30 s).
    pub poll_name_server_interval: Duration,
    /// Delay before the first refresh (Java 10 ms).
    pub poll_initial_delay: Duration,
    /// Period of offline-broker cleaning (Java runs it before each broker
    /// heartbeat, `heartbeatBrokerInterval`, 30 s; first after 1 s).
    pub heartbeat_broker_interval: Duration,
    /// Timeout of a route query (Java `mqClientApiTimeout`, 3 s).
    pub mq_client_api_timeout: Duration,
    /// How long a route update waits for the instance's update lock (3 s;
    /// a timeout means "not updated").
    pub lock_timeout: Duration,
    /// NameServer connection behaviour.
    pub channel: ChannelConfig,
    /// Java `sendLatencyFaultEnable` (default false).
    pub send_latency_fault_enable: bool,
    /// Java `createTopicKey` (`TBW102`): whose route a producer borrows for
    /// a topic the NameServer does not know.
    pub create_topic_key: String,
    /// Java `defaultTopicQueueNums` (4): the cap on borrowed queue counts.
    pub default_topic_queue_nums: i32,
    /// Send `acceptStandardJsonOnly=true` with route queries (Java does not;
    /// the `version` 479 header already asks for standard JSON).
    pub accept_standard_json_only: bool,
    /// `__ZONE_NAME` of route queries, if non-blank.
    pub zone_name: Option<String>,
    /// `__ZONE_MODE` of route queries, if set.
    pub zone_mode: Option<bool>,
    /// Signs every request to the NameServers, as a Java client built with
    /// `new AclClientRPCHook(new SessionCredentials(ak, sk))` does. Route
    /// reads are open on a NameServer with authentication on (most clients
    /// never sign), so this matters where the NameServer is asked to
    /// protect more, or a proxy in between checks signatures. The zone
    /// fields are signed too (Java's client adds them after signing, which
    /// a verifier then refuses). Default `None`: unsigned.
    pub credentials: Option<Credentials>,
    /// TLS for every NameServer connection (Java `tls.enable` /
    /// `setUseTLS(true)` with the `tls.client.*` keys; build it with
    /// `TlsClient::from_settings`). Default `None`: plain.
    pub tls: Option<TlsClient>,
    /// Follow routes by Waymark's route push when the NameServer offers it
    /// (docs/protocol-extensions.md): a started client subscribes to every
    /// topic it follows and applies each change as it is pushed; polling
    /// goes on as well, at `poll_name_server_interval`. A NameServer without
    /// route push (Java's) is polled only. Not used with zone mode, whose
    /// routes are filtered per query. Default true.
    pub route_push: bool,
    /// How long after a NameServer answered that it has no route push the
    /// client asks again (it may have been upgraded). Default 60 s.
    pub route_push_retry: Duration,
}

impl Default for RouteClientConfig {
    fn default() -> Self {
        RouteClientConfig {
            namesrv_addrs: Vec::new(),
            poll_name_server_interval: Duration::from_secs(30),
            poll_initial_delay: Duration::from_millis(10),
            heartbeat_broker_interval: Duration::from_secs(30),
            mq_client_api_timeout: Duration::from_secs(3),
            lock_timeout: Duration::from_secs(3),
            channel: ChannelConfig::default(),
            send_latency_fault_enable: false,
            create_topic_key: AUTO_CREATE_TOPIC_KEY.to_owned(),
            default_topic_queue_nums: 4,
            accept_standard_json_only: false,
            zone_name: None,
            zone_mode: None,
            credentials: None,
            tls: None,
            route_push: true,
            route_push_retry: Duration::from_secs(60),
        }
    }
}

impl RouteClientConfig {
    /// Defaults with NameServers from a `namesrvAddr` value
    /// (`host:port;host:port`, or the `http://…/host:port` endpoint form).
    pub fn with_namesrv_addr(value: &str) -> Self {
        RouteClientConfig {
            namesrv_addrs: parse_namesrv_addr(value),
            ..RouteClientConfig::default()
        }
    }

    /// Defaults with `NAMESRV_ADDR`, `ROCKETMQ_ZONE` and
    /// `ROCKETMQ_ZONE_MODE` from the environment (Java reads JVM
    /// properties first; there are none here).
    pub fn from_env() -> Self {
        let var = |name| {
            std::env::var(name)
                .ok()
                .filter(|v: &String| !v.trim().is_empty())
        };
        RouteClientConfig {
            namesrv_addrs: var("NAMESRV_ADDR")
                .map(|v| parse_namesrv_addr(&v))
                .unwrap_or_default(),
            zone_name: var("ROCKETMQ_ZONE"),
            zone_mode: var("ROCKETMQ_ZONE_MODE").map(|v| v.trim().eq_ignore_ascii_case("true")),
            ..RouteClientConfig::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_defaults() {
        let c = RouteClientConfig::default();
        assert_eq!(c.poll_name_server_interval, Duration::from_millis(30_000));
        assert_eq!(c.poll_initial_delay, Duration::from_millis(10));
        assert_eq!(c.mq_client_api_timeout, Duration::from_millis(3_000));
        assert_eq!(c.channel.connect_timeout, Duration::from_millis(3_000));
        assert!(c.channel.close_socket_if_timeout && c.channel.reconnect_for_go_away);
        assert!(!c.send_latency_fault_enable);
        assert_eq!(
            (c.create_topic_key.as_str(), c.default_topic_queue_nums),
            ("TBW102", 4)
        );
        let c = RouteClientConfig::with_namesrv_addr("a:1;b:2");
        assert_eq!(c.namesrv_addrs, ["a:1", "b:2"]);
        assert!(
            c.credentials.is_none() && c.tls.is_none(),
            "plain, unsigned"
        );
    }
}
