//! `ControllerModeConfig`: the broker options of AutoSwitch HA
//! (Java `BrokerConfig` and `MessageStoreConfig`), with Java's names and
//! defaults.
//!
//! Settings only. The broker's identity (cluster, name, address) stays in
//! [`BrokerConfig`](crate::BrokerConfig); what changes at runtime (role,
//! epochs, the controller leader) lives in the agent.

use std::path::PathBuf;
use std::time::Duration;

use rmq_auth::Credentials;
use rmq_transport::tls::TlsClient;

use crate::error::ConfigError;
use crate::nsaddr::parse_list;

/// The `version` a 5.5.1 broker puts on its requests (`MQVersion` ordinal
/// `213 + 200 + 20·5 + 2·1`). The controller refuses the id and
/// registration requests of brokers older than 5.1.1.
pub const CONTROLLER_REQUEST_VERSION: i32 = 515;

/// The options of a broker with `enableControllerMode=true`. Field names
/// are the Java option names in snake case; durations replace the
/// `...Millis` longs. Every field is public so that tests and simulations
/// can shorten any period.
///
/// Not `PartialEq`: a [`TlsClient`] holds a rustls configuration, which has
/// no meaningful equality.
#[derive(Debug, Clone)]
pub struct ControllerModeConfig {
    /// `controllerAddr`: every controller node, `host:port;host:port`
    /// (each node's entry of `controllerDLegerPeers`).
    pub controller_addrs: Vec<String>,
    /// `syncControllerMetadataPeriod` (10 s): how often the controller
    /// leader's address is looked up again.
    pub sync_controller_metadata_period: Duration,
    /// `syncBrokerMetadataPeriod` (5 s): CONTROLLER_GET_REPLICA_INFO period.
    pub sync_broker_metadata_period: Duration,
    /// `checkSyncStateSetPeriod` (5 s): how often a master re-checks its
    /// sync-state set.
    pub check_sync_state_set_period: Duration,
    /// `controllerHeartBeatTimeoutMills` (10 s): sent in every heartbeat;
    /// the controller takes the replica for dead this long after the last.
    pub controller_heart_beat_timeout: Duration,
    /// `brokerHeartbeatInterval` (1 s): heartbeat period.
    pub broker_heartbeat_interval: Duration,
    /// `sendHeartbeatTimeoutMillis` (1 s): bound of one heartbeat send,
    /// connect included.
    pub send_heartbeat_timeout: Duration,
    /// `brokerElectionPriority` (`i32::MAX`): lower wins among equally
    /// caught-up replicas.
    pub broker_election_priority: i32,
    /// `storePathBrokerIdentity` (`~/store/brokerIdentity`): the controller
    /// id file; the temporary file is this path with `-temp` appended.
    pub store_path_broker_identity: PathBuf,
    /// Timeout of one request to the controller (Java: `invokeSync` 3 s).
    pub request_timeout: Duration,
    /// Pause between attempts of the start-up sequence (Java's fixed 5 s
    /// `RETRY_INTERVAL_SECOND`).
    pub start_retry_interval: Duration,
    /// `innerClientAuthenticationCredentials`: every request to the
    /// controllers is signed with them. Java signs all of a broker's
    /// outgoing requests with one setting, so give the same value as
    /// [`BrokerConfig`](crate::BrokerConfig)'s. Default `None`: unsigned.
    pub inner_client_authentication_credentials: Option<Credentials>,
    /// TLS for every controller connection (Java `useTLS`/`tls.enable`,
    /// one switch for all of a broker's outgoing connections, so the same
    /// value as [`BrokerConfig`](crate::BrokerConfig)'s). Default `None`:
    /// plain.
    pub tls: Option<TlsClient>,
}

impl ControllerModeConfig {
    /// The options for `controller_addr` (`host:port;host:port`), every
    /// other option at Java's default.
    ///
    /// # Errors
    /// [`ConfigError::Blank`] for an empty list, [`ConfigError::Address`]
    /// for an element that is not `host:port`.
    pub fn new(controller_addr: &str) -> Result<ControllerModeConfig, ConfigError> {
        let controller_addrs = parse_list(controller_addr)?;
        if controller_addrs.is_empty() {
            return Err(ConfigError::Blank("controllerAddr"));
        }
        Ok(ControllerModeConfig {
            controller_addrs,
            sync_controller_metadata_period: Duration::from_secs(10),
            sync_broker_metadata_period: Duration::from_secs(5),
            check_sync_state_set_period: Duration::from_secs(5),
            controller_heart_beat_timeout: Duration::from_secs(10),
            broker_heartbeat_interval: Duration::from_secs(1),
            send_heartbeat_timeout: Duration::from_secs(1),
            broker_election_priority: i32::MAX,
            store_path_broker_identity: default_identity_path(),
            request_timeout: Duration::from_secs(3),
            start_retry_interval: Duration::from_secs(5),
            inner_client_authentication_credentials: None,
            tls: None,
        })
    }

    /// The same options with the identity file at `path`.
    pub fn with_identity_path(mut self, path: impl Into<PathBuf>) -> ControllerModeConfig {
        self.store_path_broker_identity = path.into();
        self
    }

    /// Sets one option by its Java name, with Java's value syntax
    /// (milliseconds for periods): `syncBrokerMetadataPeriod=500`. Values are
    /// trimmed, as Java's setters see them. `Ok(false)` for a key that is
    /// not a controller-mode option.
    ///
    /// # Errors
    /// [`ConfigError::Value`] for a value that does not parse (or a period
    /// of 0); what `new` refuses for `controllerAddr`.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool, ConfigError> {
        let value = value.trim();
        let bad = || ConfigError::Value {
            key: key.to_owned(),
            value: value.to_owned(),
        };
        let period = || match value.parse::<u64>() {
            Ok(ms) if ms > 0 => Ok(Duration::from_millis(ms)),
            _ => Err(bad()),
        };
        match key {
            "controllerAddr" => {
                self.controller_addrs = ControllerModeConfig::new(value)?.controller_addrs;
            }
            "syncControllerMetadataPeriod" => self.sync_controller_metadata_period = period()?,
            "syncBrokerMetadataPeriod" => self.sync_broker_metadata_period = period()?,
            "checkSyncStateSetPeriod" => self.check_sync_state_set_period = period()?,
            "controllerHeartBeatTimeoutMills" => self.controller_heart_beat_timeout = period()?,
            "brokerHeartbeatInterval" => self.broker_heartbeat_interval = period()?,
            "sendHeartbeatTimeoutMillis" => self.send_heartbeat_timeout = period()?,
            "brokerElectionPriority" => {
                self.broker_election_priority = value.parse().map_err(|_| bad())?;
            }
            "storePathBrokerIdentity" if !value.is_empty() => {
                self.store_path_broker_identity = PathBuf::from(value);
            }
            "storePathBrokerIdentity" => return Err(bad()),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `<storePathBrokerIdentity>-temp`, where an id is kept between
    /// applying for it and owning it.
    pub fn temp_identity_path(&self) -> PathBuf {
        let mut name = self.store_path_broker_identity.clone().into_os_string();
        name.push("-temp");
        PathBuf::from(name)
    }
}

/// `<storePathRootDir>/brokerIdentity` with Java's default root,
/// `${user.home}/store`.
fn default_identity_path() -> PathBuf {
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
    home.join("store").join("brokerIdentity")
}

/// Milliseconds of `d` as the `long` Java puts on the wire.
pub(crate) fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_java() {
        let config = ControllerModeConfig::new("127.0.0.1:9878; 127.0.0.1:9868;").unwrap();
        assert_eq!(
            config.controller_addrs,
            ["127.0.0.1:9878", "127.0.0.1:9868"]
        );
        assert_eq!(millis(config.sync_controller_metadata_period), 10_000);
        assert_eq!(millis(config.sync_broker_metadata_period), 5_000);
        assert_eq!(millis(config.check_sync_state_set_period), 5_000);
        assert_eq!(millis(config.controller_heart_beat_timeout), 10_000);
        assert_eq!(millis(config.broker_heartbeat_interval), 1_000);
        assert_eq!(millis(config.send_heartbeat_timeout), 1_000);
        assert_eq!(config.broker_election_priority, i32::MAX);
        assert!(config
            .store_path_broker_identity
            .ends_with("store/brokerIdentity"));
        assert_eq!(
            rmq_protocol::version::parse_release("5.5.1"),
            Some(CONTROLLER_REQUEST_VERSION)
        );
    }

    #[test]
    fn options_are_set_by_their_java_names() {
        let mut config = ControllerModeConfig::new("h:1").unwrap();
        assert!(config.set("syncBrokerMetadataPeriod", " 500 ").unwrap());
        assert!(config
            .set("controllerHeartBeatTimeoutMills", "3000")
            .unwrap());
        assert!(config.set("brokerElectionPriority", "-2").unwrap());
        assert!(config.set("controllerAddr", "a:1;b:2").unwrap());
        assert_eq!(
            config.sync_broker_metadata_period,
            Duration::from_millis(500)
        );
        assert_eq!(config.controller_heart_beat_timeout, Duration::from_secs(3));
        assert_eq!(config.broker_election_priority, -2);
        assert_eq!(config.controller_addrs, ["a:1", "b:2"]);
        assert!(!config.set("listenPort", "1").unwrap());
        assert!(matches!(
            config.set("brokerHeartbeatInterval", "0"),
            Err(ConfigError::Value { .. })
        ));
        assert!(config.set("checkSyncStateSetPeriod", "soon").is_err());
    }

    #[test]
    fn temp_file_sits_beside_the_identity_file() {
        let config = ControllerModeConfig::new("h:1")
            .unwrap()
            .with_identity_path("/data/broker-a/brokerIdentity");
        assert_eq!(
            config.temp_identity_path(),
            PathBuf::from("/data/broker-a/brokerIdentity-temp")
        );
    }

    #[test]
    fn a_bad_controller_list_is_refused() {
        assert!(matches!(
            ControllerModeConfig::new(" ; "),
            Err(ConfigError::Blank("controllerAddr"))
        ));
        assert!(matches!(
            ControllerModeConfig::new("nohost"),
            Err(ConfigError::Address { .. })
        ));
    }
}
