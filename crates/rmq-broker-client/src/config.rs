//! `BrokerConfig`: the broker identity and every option that shapes its
//! registration (Java `BrokerConfig`, `BrokerIdentity`, `MessageStoreConfig`),
//! with Java's defaults.
//!
//! This module owns the settings and their validation only. What changes at
//! runtime (broker id after a role change, permission, isolation) lives in the
//! [`Registrar`](crate::Registrar); the schedule derived from these settings is
//! [`Schedule`](crate::Schedule).

use std::time::Duration;

use rmq_auth::Credentials;
use rmq_transport::tls::TlsClient;

use crate::error::ConfigError;

/// Which generation of Java broker the registration imitates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Flavor {
    /// 5.x (5.3.3, version 479): `enableActingMaster` always sent,
    /// `heartbeatTimeoutMillis` with acting master, 5.x body.
    #[default]
    V5,
    /// 4.x (4.9.7, version 407): no `enableActingMaster` /
    /// `heartbeatTimeoutMillis`, 4.x body, honest `compressed`.
    V4,
}

impl Flavor {
    /// The `version` (Java `MQVersion` ordinal) put on every request.
    pub fn version(self) -> i32 {
        match self {
            Flavor::V5 => rmq_wire::CURRENT_VERSION,
            // 4.9.7 = 213 + 20·9 + 2·7 (rmq_protocol::version::release_ordinal).
            Flavor::V4 => 407,
        }
    }

    /// The body layout of this flavour.
    pub fn body(self) -> rmq_protocol::BodyFlavor {
        match self {
            Flavor::V5 => rmq_protocol::BodyFlavor::V5,
            Flavor::V4 => rmq_protocol::BodyFlavor::V4,
        }
    }
}

/// Java `brokerRole` (MessageStoreConfig) for static deployments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BrokerRole {
    /// Asynchronously replicating master; its id is forced to 0.
    #[default]
    AsyncMaster,
    /// Synchronously replicating master; its id is forced to 0.
    SyncMaster,
    /// Slave; its id must be > 0.
    Slave,
}

/// Permission bit: readable (`PermName.PERM_READ`).
pub const PERM_READ: i32 = 4;
/// Permission bit: writable (`PermName.PERM_WRITE`).
pub const PERM_WRITE: i32 = 2;
/// Permission bit: inherited by auto-created topics (`PermName.PERM_INHERIT`).
pub const PERM_INHERIT: i32 = 1;

/// Everything a registrar needs to know about its broker. Field names are the
/// Java option names in snake case; durations replace the `...Millis` longs.
///
/// Not `PartialEq`: a [`TlsClient`] holds a rustls configuration, which has
/// no meaningful equality.
#[derive(Debug, Clone)]
pub struct BrokerConfig {
    /// `brokerClusterName`.
    pub cluster_name: String,
    /// `brokerName`, the broker group.
    pub broker_name: String,
    /// `brokerId` as configured; masters are forced to 0 ([`Self::effective_broker_id`]).
    pub broker_id: i64,
    /// `brokerRole`.
    pub broker_role: BrokerRole,
    /// `brokerIP1:listenPort`.
    pub broker_addr: String,
    /// `brokerIP2:haListenPort`.
    pub ha_server_addr: String,
    /// `brokerPermission`, default read|write (6).
    pub broker_permission: i32,
    /// `registerNameServerPeriod`, clamped to [10 s, 60 s] by the schedule.
    pub register_name_server_period: Duration,
    /// `registerBrokerTimeoutMills`: per request and total wait (24 s).
    pub register_broker_timeout: Duration,
    /// `forceRegister`: periodic registrations skip QUERY_DATA_VERSION (true).
    pub force_register: bool,
    /// `compressedRegister`: zlib body, sent with `compressed=true` (false).
    pub compressed_register: bool,
    /// `enableSplitRegistration` (false).
    pub enable_split_registration: bool,
    /// `splitRegistrationSize` (800).
    pub split_registration_size: usize,
    /// `enableSlaveActingMaster` (false): `enableActingMaster=true`, a short
    /// `heartbeatTimeoutMillis` and the lightweight heartbeat.
    pub enable_slave_acting_master: bool,
    /// `brokerNotActiveTimeoutMillis` (10 s), sent as `heartbeatTimeoutMillis`.
    pub broker_not_active_timeout: Duration,
    /// `brokerHeartbeatInterval` (1 s).
    pub broker_heartbeat_interval: Duration,
    /// `sendHeartbeatTimeoutMillis` (1 s).
    pub send_heartbeat_timeout: Duration,
    /// `compatibleWithOldNameSrv` (true): heartbeat with one-way
    /// QUERY_DATA_VERSION instead of BROKER_HEARTBEAT.
    pub compatible_with_old_name_srv: bool,
    /// `disappearTimeAfterStart` (-1 = `None`): periodic registration waits this long.
    pub disappear_time_after_start: Option<Duration>,
    /// `totalReplicas` (1): > 1 with acting master starts isolated.
    pub total_replicas: u32,
    /// `skipPreOnline` (false).
    pub skip_pre_online: bool,
    /// `haMasterAddress`: a static HA master (≥ 6 characters) that
    /// registration results never change.
    pub ha_master_address: Option<String>,
    /// `fetchNamesrvAddrInterval` (10 s), first fetch after one interval.
    pub fetch_namesrv_addr_interval: Duration,
    /// `connectTimeoutMillis` of the remoting client (3 s).
    pub connect_timeout: Duration,
    /// Overall bound of UNREGISTER_BROKER at shutdown (Java: 3 s per server).
    pub unregister_timeout: Duration,
    /// Zone sent as `__ZONE_NAME` on every request (`rocketmq.zone`).
    pub zone_name: Option<String>,
    /// Sent as `__ZONE_MODE` on every request (`rocketmq.zone.mode`).
    pub zone_mode: Option<String>,
    /// The Java generation to imitate.
    pub flavor: Flavor,
    /// Masked registrations keep only name, queue counts and perm, as Java
    /// does (`registerBrokerAll` builds new configs from those four fields,
    /// losing `topicSysFlag` and `order`). Default false: every field kept,
    /// only `perm` masked.
    pub lossy_perm_masking: bool,
    /// `innerClientAuthenticationCredentials` (5.3+ brokers): every request
    /// to the NameServers — registrations, heartbeats, unregistration — is
    /// signed with them as Java's `AclClientRPCHook` signs, which a
    /// NameServer with authentication on requires. Default `None`: unsigned,
    /// as 4.x and 5.0–5.2 brokers always are.
    /// [`credentials_from_json`](crate::security::credentials_from_json)
    /// reads Java's JSON form.
    pub inner_client_authentication_credentials: Option<Credentials>,
    /// TLS for every NameServer connection (Java `useTLS` or `tls.enable`,
    /// with the `tls.client.*` keys;
    /// [`tls_from_properties`](crate::security::tls_from_properties) reads
    /// them). Default `None`: plain, as Java's default.
    pub tls: Option<TlsClient>,
}

impl BrokerConfig {
    /// A master of `broker_name` in `cluster_name` listening at `broker_addr`
    /// (`ip:port`); the HA address is the same IP with port + 1, all options
    /// at their Java defaults.
    pub fn new(
        cluster_name: impl Into<String>,
        broker_name: impl Into<String>,
        broker_addr: impl Into<String>,
    ) -> BrokerConfig {
        let broker_addr = broker_addr.into();
        let ha_server_addr = default_ha_addr(&broker_addr);
        BrokerConfig {
            cluster_name: cluster_name.into(),
            broker_name: broker_name.into(),
            broker_id: 0,
            broker_role: BrokerRole::AsyncMaster,
            broker_addr,
            ha_server_addr,
            broker_permission: PERM_READ | PERM_WRITE,
            register_name_server_period: Duration::from_secs(30),
            register_broker_timeout: Duration::from_secs(24),
            force_register: true,
            compressed_register: false,
            enable_split_registration: false,
            split_registration_size: 800,
            enable_slave_acting_master: false,
            broker_not_active_timeout: Duration::from_secs(10),
            broker_heartbeat_interval: Duration::from_secs(1),
            send_heartbeat_timeout: Duration::from_secs(1),
            compatible_with_old_name_srv: true,
            disappear_time_after_start: None,
            total_replicas: 1,
            skip_pre_online: false,
            ha_master_address: None,
            fetch_namesrv_addr_interval: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(3),
            unregister_timeout: Duration::from_secs(3),
            zone_name: None,
            zone_mode: None,
            flavor: Flavor::V5,
            lossy_perm_masking: false,
            inner_client_authentication_credentials: None,
            tls: None,
        }
    }

    /// The same broker as a slave with `broker_id` (> 0).
    pub fn slave(mut self, broker_id: i64) -> BrokerConfig {
        self.broker_role = BrokerRole::Slave;
        self.broker_id = broker_id;
        self
    }

    /// The id sent to the NameServer at start: 0 for masters whatever
    /// `broker_id` says (BrokerStartup), the configured id for slaves.
    pub fn effective_broker_id(&self) -> i64 {
        match self.broker_role {
            BrokerRole::AsyncMaster | BrokerRole::SyncMaster => 0,
            BrokerRole::Slave => self.broker_id,
        }
    }

    /// Whether the static HA master address is set (Java: ≥ 6 characters),
    /// which stops registration results from re-pointing HA replication.
    pub fn has_static_ha_master(&self) -> bool {
        self.ha_master_address
            .as_ref()
            .is_some_and(|addr| addr.len() >= 6)
    }

    /// Whether the broker starts isolated: acting master with more than one
    /// replica and pre-online not skipped (Java `BrokerController.start`).
    pub fn starts_isolated(&self) -> bool {
        self.enable_slave_acting_master && self.total_replicas > 1 && !self.skip_pre_online
    }

    /// Checks what Java's startup checks, plus what this crate cannot honour.
    ///
    /// # Errors
    /// A slave with id ≤ 0, a blank cluster/broker name, an address that is not
    /// `host:port`, a split size of 0, or acting master with the 4.x flavour.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.broker_role == BrokerRole::Slave && self.broker_id <= 0 {
            return Err(ConfigError::SlaveId(self.broker_id));
        }
        if self.cluster_name.trim().is_empty() {
            return Err(ConfigError::Blank("brokerClusterName"));
        }
        if self.broker_name.trim().is_empty() {
            return Err(ConfigError::Blank("brokerName"));
        }
        crate::nsaddr::check_host_port(&self.broker_addr)?;
        crate::nsaddr::check_host_port(&self.ha_server_addr)?;
        if self.split_registration_size == 0 {
            return Err(ConfigError::SplitSize);
        }
        if self.flavor == Flavor::V4 && self.enable_slave_acting_master {
            return Err(ConfigError::ActingMasterOnV4);
        }
        Ok(())
    }
}

/// `ip:port+1`, or the address unchanged when it has no numeric port.
fn default_ha_addr(broker_addr: &str) -> String {
    match broker_addr.rsplit_once(':') {
        Some((host, port)) => match port.parse::<u16>() {
            Ok(port) => format!("{host}:{}", port.wrapping_add(1)),
            Err(_) => broker_addr.to_owned(),
        },
        None => broker_addr.to_owned(),
    }
}

/// Whether `perm` lacks read or write, so that every topic is masked.
pub fn masks_topics(perm: i32) -> bool {
    perm & PERM_READ == 0 || perm & PERM_WRITE == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_java() {
        let config = BrokerConfig::new("DefaultCluster", "broker-a", "127.0.0.1:10911");
        assert_eq!(config.ha_server_addr, "127.0.0.1:10912");
        assert_eq!(config.broker_permission, 6);
        assert!(config.force_register && !config.compressed_register);
        assert_eq!(config.split_registration_size, 800);
        assert!(config.validate().is_ok());
        assert!(!config.starts_isolated());
    }

    #[test]
    fn master_id_is_forced_and_slave_id_checked() {
        let mut config = BrokerConfig::new("c", "b", "10.0.0.1:10911");
        config.broker_id = 3;
        assert_eq!(config.effective_broker_id(), 0);
        let slave = config.clone().slave(2);
        assert_eq!(slave.effective_broker_id(), 2);
        assert!(matches!(
            config.slave(0).validate(),
            Err(ConfigError::SlaveId(0))
        ));
    }

    #[test]
    fn masking_and_static_ha_master() {
        assert!(!masks_topics(6));
        assert!(!masks_topics(7));
        assert!(masks_topics(4));
        assert!(masks_topics(2));
        assert!(masks_topics(0));
        let mut config = BrokerConfig::new("c", "b", "h:1");
        config.ha_master_address = Some("a:1".into());
        assert!(!config.has_static_ha_master());
        config.ha_master_address = Some("1.2.3.4:10912".into());
        assert!(config.has_static_ha_master());
    }

    #[test]
    fn v4_cannot_act_as_master() {
        let mut config = BrokerConfig::new("c", "b", "h:1");
        config.flavor = Flavor::V4;
        config.enable_slave_acting_master = true;
        assert!(matches!(
            config.validate(),
            Err(ConfigError::ActingMasterOnV4)
        ));
        assert_eq!(Flavor::V4.version(), 407);
        assert_eq!(
            rmq_protocol::version::parse_release("4.9.7"),
            Some(Flavor::V4.version())
        );
    }
}
