//! Controller configuration with Java's option names (a key is the setter's
//! name without `set`, so `isProcessReadEvent` reads `processReadEvent`):
//! every `ControllerConfig` key (and `NettyServerConfig`'s, which Java reads
//! from the same file), the `-c` properties file, UPDATE_CONTROLLER_CONFIG
//! and the GET_CONTROLLER_CONFIG text.
//!
//! Every key is either honoured or named in a start-up warning
//! ([`ControllerConfig::warnings`]); the peers are checked before anything
//! starts ([`ControllerConfig::peers`]).

use std::path::{Path, PathBuf};

use crate::node::raft::{node_id_of, NodeId};

/// Keys UPDATE_CONTROLLER_CONFIG may never touch, whatever `configBlackList`
/// says: they name files the controller writes, or its identity.
const ALWAYS_BLACK_LISTED: [&str; 7] = [
    "configBlackList",
    "configStorePath",
    "rocketmqHome",
    "controllerStorePath",
    "controllerDLegerPeers",
    "controllerDLegerSelfId",
    "controllerDLegerGroup",
];

rmq_protocol::java_options! {
    /// Every option, by its Java name.
    pub struct ControllerConfig {
        rocketmq_home: Option<String> = "rocketmqHome", |_, r: &Option<String>| r.clone();
        controller_type: String = "controllerType", |_, _| "DLedger".to_owned();
        scan_not_active_broker_interval: i64 = "scanNotActiveBrokerInterval", |_, _| 5_000;
        controller_thread_pool_nums: i32 = "controllerThreadPoolNums", |_, _| 16;
        controller_request_thread_pool_queue_capacity: i32 = "controllerRequestThreadPoolQueueCapacity", |_, _| 50_000;
        controller_dleger_group: Option<String> = "controllerDLegerGroup", |_, _| None;
        controller_dleger_peers: Option<String> = "controllerDLegerPeers", |_, _| None;
        controller_dleger_self_id: Option<String> = "controllerDLegerSelfId", |_, _| None;
        mapped_file_size: i32 = "mappedFileSize", |_, _| 1024 * 1024 * 1024;
        controller_store_path: String = "controllerStorePath", |_, _| String::new();
        elect_master_max_retry_count: i32 = "electMasterMaxRetryCount", |_, _| 3;
        enable_elect_unclean_master: bool = "enableElectUncleanMaster", |_, _| false;
        process_read_event: bool = "processReadEvent", |_, _| false;
        notify_broker_role_changed: bool = "notifyBrokerRoleChanged", |_, _| true;
        scan_inactive_master_interval: i64 = "scanInactiveMasterInterval", |_, _| 5_000;
        metrics_exporter_type: String = "metricsExporterType", |_, _| "DISABLE".to_owned();
        metrics_grpc_exporter_target: String = "metricsGrpcExporterTarget", |_, _| String::new();
        metrics_grpc_exporter_header: String = "metricsGrpcExporterHeader", |_, _| String::new();
        metric_grpc_exporter_time_out_in_mills: i64 = "metricGrpcExporterTimeOutInMills", |_, _| 3_000;
        metric_grpc_exporter_interval_in_mills: i64 = "metricGrpcExporterIntervalInMills", |_, _| 60_000;
        metric_logging_exporter_interval_in_mills: i64 = "metricLoggingExporterIntervalInMills", |_, _| 10_000;
        metrics_prom_exporter_port: i32 = "metricsPromExporterPort", |_, _| 5557;
        metrics_prom_exporter_host: String = "metricsPromExporterHost", |_, _| String::new();
        metrics_label: String = "metricsLabel", |_, _| String::new();
        metrics_in_delta: bool = "metricsInDelta", |_, _| false;
        config_store_path: String = "configStorePath", |h: &Path, _| path_in(h, "controller/controller.properties");
        config_black_list: String = "configBlackList", |_, _| "configBlackList;configStorePath".to_owned();
        j_raft_election_timeout_ms: i32 = "jRaftElectionTimeoutMs", |_, _| 1_000;
        j_raft_scan_wait_timeout_ms: i32 = "jRaftScanWaitTimeoutMs", |_, _| 1_000;
        j_raft_snapshot_interval_secs: i32 = "jRaftSnapshotIntervalSecs", |_, _| 3_600;
        j_raft_group_id: String = "jRaftGroupId", |_, _| "jRaft-Controller".to_owned();
        j_raft_server_id: String = "jRaftServerId", |_, _| "localhost:9880".to_owned();
        j_raft_init_conf: String = "jRaftInitConf", |_, _| "localhost:9880,localhost:9881,localhost:9882".to_owned();
        j_raft_controller_rpc_addr: String = "jRaftControllerRPCAddr", |_, _| "localhost:9770,localhost:9771,localhost:9772".to_owned();
        listen_port: i32 = "listenPort", |_, _| 19_876;
        bind_address: String = "bindAddress", |_, _| "0.0.0.0".to_owned();
        server_worker_threads: i32 = "serverWorkerThreads", |_, _| 8;
        server_callback_executor_threads: i32 = "serverCallbackExecutorThreads", |_, _| 0;
        server_selector_threads: i32 = "serverSelectorThreads", |_, _| 3;
        server_oneway_semaphore_value: i32 = "serverOnewaySemaphoreValue", |_, _| 256;
        server_async_semaphore_value: i32 = "serverAsyncSemaphoreValue", |_, _| 64;
        server_channel_max_idle_time_seconds: i32 = "serverChannelMaxIdleTimeSeconds", |_, _| 120;
        server_socket_snd_buf_size: i32 = "serverSocketSndBufSize", |_, _| 0;
        server_socket_rcv_buf_size: i32 = "serverSocketRcvBufSize", |_, _| 0;
        write_buffer_high_water_mark: i32 = "writeBufferHighWaterMark", |_, _| 0;
        write_buffer_low_water_mark: i32 = "writeBufferLowWaterMark", |_, _| 0;
        server_socket_backlog: i32 = "serverSocketBacklog", |_, _| 1024;
        server_netty_worker_group_enable: bool = "serverNettyWorkerGroupEnable", |_, _| true;
        server_pooled_byte_buf_allocator_enable: bool = "serverPooledByteBufAllocatorEnable", |_, _| true;
        enable_shutdown_gracefully: bool = "enableShutdownGracefully", |_, _| false;
        shutdown_wait_time_seconds: i32 = "shutdownWaitTimeSeconds", |_, _| 30;
        use_epoll_native_selector: bool = "useEpollNativeSelector", |_, _| false;
    }
}

fn path_in(home: &Path, rest: &str) -> String {
    home.join(rest).to_string_lossy().into_owned()
}

/// Keys that are read (and printed by `-p`) but change nothing here, with
/// the reason the start-up warning gives. The rest are honoured.
const WITHOUT_EFFECT: &[(&str, &str)] = &[
    (
        "mappedFileSize",
        "DLedger's data-file size; Waymark's Raft store is one redb file",
    ),
    (
        "controllerThreadPoolNums",
        "requests run on the async runtime; decisions are serialised by design",
    ),
    (
        "metricsExporterType",
        "the controller's metrics are not exported through OpenTelemetry",
    ),
    (
        "metricsGrpcExporterTarget",
        "the controller's metrics are not exported through OpenTelemetry",
    ),
    (
        "metricsGrpcExporterHeader",
        "the controller's metrics are not exported through OpenTelemetry",
    ),
    (
        "metricGrpcExporterTimeOutInMills",
        "the controller's metrics are not exported through OpenTelemetry",
    ),
    (
        "metricGrpcExporterIntervalInMills",
        "the controller's metrics are not exported through OpenTelemetry",
    ),
    (
        "metricLoggingExporterIntervalInMills",
        "the controller's metrics are not exported through OpenTelemetry",
    ),
    (
        "metricsPromExporterPort",
        "the controller's metrics are not exported through OpenTelemetry",
    ),
    (
        "metricsPromExporterHost",
        "the controller's metrics are not exported through OpenTelemetry",
    ),
    (
        "metricsLabel",
        "the controller's metrics are not exported through OpenTelemetry",
    ),
    (
        "metricsInDelta",
        "the controller's metrics are not exported through OpenTelemetry",
    ),
    (
        "jRaftElectionTimeoutMs",
        "only the DLedger-style configuration (controllerDLeger*) is served",
    ),
    (
        "jRaftScanWaitTimeoutMs",
        "only the DLedger-style configuration (controllerDLeger*) is served",
    ),
    (
        "jRaftSnapshotIntervalSecs",
        "only the DLedger-style configuration (controllerDLeger*) is served",
    ),
    (
        "jRaftGroupId",
        "only the DLedger-style configuration (controllerDLeger*) is served",
    ),
    (
        "jRaftServerId",
        "only the DLedger-style configuration (controllerDLeger*) is served",
    ),
    (
        "jRaftInitConf",
        "only the DLedger-style configuration (controllerDLeger*) is served",
    ),
    (
        "jRaftControllerRPCAddr",
        "only the DLedger-style configuration (controllerDLeger*) is served",
    ),
    (
        "listenPort",
        "the controller listens on its own peer's port of controllerDLegerPeers, as Java's does",
    ),
    (
        "serverWorkerThreads",
        "Netty thread tuning; the async runtime sizes itself",
    ),
    (
        "serverCallbackExecutorThreads",
        "Netty thread tuning; the async runtime sizes itself",
    ),
    (
        "serverSelectorThreads",
        "Netty thread tuning; the async runtime sizes itself",
    ),
    (
        "serverOnewaySemaphoreValue",
        "Netty tuning; requests are bounded per connection",
    ),
    (
        "serverAsyncSemaphoreValue",
        "Netty tuning; requests are bounded per connection",
    ),
    (
        "serverSocketSndBufSize",
        "socket buffer sizes are the kernel's",
    ),
    (
        "serverSocketRcvBufSize",
        "socket buffer sizes are the kernel's",
    ),
    (
        "writeBufferHighWaterMark",
        "Netty tuning; writes are bounded per connection",
    ),
    (
        "writeBufferLowWaterMark",
        "Netty tuning; writes are bounded per connection",
    ),
    ("serverSocketBacklog", "the listen backlog is the runtime's"),
    ("serverNettyWorkerGroupEnable", "Netty tuning"),
    ("serverPooledByteBufAllocatorEnable", "Netty tuning"),
    (
        "enableShutdownGracefully",
        "SIGTERM always drains in-flight requests",
    ),
    (
        "shutdownWaitTimeSeconds",
        "SIGTERM always drains in-flight requests",
    ),
    ("useEpollNativeSelector", "Netty tuning"),
];

/// One Raft peer of `controllerDLegerPeers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    /// Its peer id (`n0`).
    pub id: String,
    /// Its Raft node id ([`node_id_of`]).
    pub node_id: NodeId,
    /// `host:port`: where it serves brokers, operators and its peers.
    pub addr: String,
}

/// A configuration the controller cannot start with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A required key is missing.
    #[error("{0} is required (e.g. {1})")]
    Missing(&'static str, &'static str),
    /// A key's value cannot be used.
    #[error("{key}: {problem}")]
    Invalid {
        /// The key.
        key: &'static str,
        /// What is wrong.
        problem: String,
    },
}

impl ControllerConfig {
    /// The Raft peers, checked: every entry `id-host:port`, ids unique (as
    /// node ids too), and this node's id among them.
    ///
    /// # Errors
    /// A missing or malformed `controllerDLegerGroup`, `controllerDLegerPeers`
    /// or `controllerDLegerSelfId`, or a `controllerType` other than DLedger.
    pub fn peers(&self) -> Result<(Vec<Peer>, Peer), ConfigError> {
        if !self.controller_type.eq_ignore_ascii_case("DLedger") {
            return Err(ConfigError::Invalid {
                key: "controllerType",
                problem: format!(
                    "{} is not served: configure the group with controllerDLegerGroup, controllerDLegerPeers and controllerDLegerSelfId (controllerType=DLedger)",
                    self.controller_type
                ),
            });
        }
        if self
            .controller_dleger_group
            .as_deref()
            .is_none_or(str::is_empty)
        {
            return Err(ConfigError::Missing(
                "controllerDLegerGroup",
                "controllerDLegerGroup=group1",
            ));
        }
        let text = self
            .controller_dleger_peers
            .as_deref()
            .filter(|t| !t.trim().is_empty())
            .ok_or(ConfigError::Missing(
                "controllerDLegerPeers",
                "controllerDLegerPeers=n0-127.0.0.1:9878;n1-127.0.0.1:9868",
            ))?;
        let self_id = self
            .controller_dleger_self_id
            .as_deref()
            .filter(|t| !t.is_empty())
            .ok_or(ConfigError::Missing(
                "controllerDLegerSelfId",
                "controllerDLegerSelfId=n0",
            ))?;
        let invalid = |problem: String| ConfigError::Invalid {
            key: "controllerDLegerPeers",
            problem,
        };
        let mut peers: Vec<Peer> = Vec::new();
        for entry in text.split(';').map(str::trim).filter(|e| !e.is_empty()) {
            let (id, addr) = entry
                .split_once('-')
                .filter(|(id, addr)| {
                    !id.is_empty()
                        && addr
                            .rsplit_once(':')
                            .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
                })
                .ok_or_else(|| invalid(format!("{entry:?} is not id-host:port")))?;
            let node_id = node_id_of(id);
            if peers.iter().any(|p| p.id == id || p.node_id == node_id) {
                return Err(invalid(format!("peer {id} is listed twice")));
            }
            peers.push(Peer {
                id: id.to_owned(),
                node_id,
                addr: addr.to_owned(),
            });
        }
        let me = peers
            .iter()
            .find(|p| p.id == self_id)
            .cloned()
            .ok_or_else(|| ConfigError::Invalid {
                key: "controllerDLegerSelfId",
                problem: format!("{self_id} is not one of the peers in controllerDLegerPeers"),
            })?;
        Ok((peers, me))
    }

    /// Where this node listens: `bindAddress` and the port of its own entry
    /// of `controllerDLegerPeers` (Java overwrites `listenPort` with it).
    ///
    /// # Errors
    /// As [`ControllerConfig::peers`].
    pub fn listen_address(&self) -> Result<String, ConfigError> {
        let (_, me) = self.peers()?;
        let port = me.addr.rsplit_once(':').map_or("", |(_, port)| port);
        Ok(format!("{}:{port}", self.bind_address))
    }

    /// Where the Raft store lives: `controllerStorePath`, or Java's default
    /// `${user.home}/DLedgerController` when it is empty.
    pub fn store_dir(&self, home: &Path) -> PathBuf {
        if self.controller_store_path.trim().is_empty() {
            home.join(format!("{}Controller", self.controller_type))
        } else {
            PathBuf::from(self.controller_store_path.trim())
        }
    }

    /// One line per key that was set (to something other than its default)
    /// but changes nothing here, naming the key and why; and one per unknown
    /// key.
    pub fn warnings(&self, defaults: &ControllerConfig) -> Vec<String> {
        let mut warnings = Vec::new();
        let mine = self.to_properties();
        let theirs = defaults.to_properties();
        for (key, reason) in WITHOUT_EFFECT {
            if mine.get(*key) != theirs.get(*key) {
                warnings.push(format!("{key} is set but has no effect: {reason}"));
            }
        }
        for key in self.extra.keys() {
            warnings.push(format!(
                "{key} is not a controller option; it is kept and shown, and changes nothing"
            ));
        }
        warnings
    }

    /// GET_CONTROLLER_CONFIG's text: sorted `key=value` lines as Java prints
    /// its options, by field name, so `processReadEvent` shows as
    /// `isProcessReadEvent` (its field). The persisted form
    /// ([`ControllerConfig::to_text`]) keeps the settable key, so that it
    /// reads back.
    pub fn java_text(&self) -> String {
        let mut all = self.to_properties();
        if let Some(value) = all.remove("processReadEvent") {
            all.insert("isProcessReadEvent".to_owned(), value);
        }
        all.iter().map(|(k, v)| format!("{k}={v}\n")).collect()
    }

    /// The black-listed keys of UPDATE_CONTROLLER_CONFIG: the fixed ones,
    /// the trusted PROXY protocol proxies (an update that could add its
    /// sender would choose the address the allow-lists see) and
    /// `configBlackList` entries.
    pub fn black_list(&self) -> Vec<String> {
        let mut keys =
            ControllerConfig::black_list_of(&ALWAYS_BLACK_LISTED, &self.config_black_list);
        keys.push(rmq_transport::ProxyProtocol::KEY.to_owned());
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> ControllerConfig {
        let mut config = ControllerConfig::defaults(Path::new("/home/rocketmq"), None);
        for (k, v) in pairs {
            assert!(config.set(k, v), "{k}");
        }
        config
    }

    #[test]
    fn peers_of_the_quick_start_file() {
        let config = config(&[
            ("controllerDLegerGroup", "group1"),
            (
                "controllerDLegerPeers",
                "n0-127.0.0.1:9878;n1-127.0.0.1:9868;n2-127.0.0.1:9858",
            ),
            ("controllerDLegerSelfId", "n1"),
        ]);
        let (peers, me) = config.peers().unwrap();
        assert_eq!(peers.len(), 3);
        assert_eq!(
            (me.id.as_str(), me.node_id, me.addr.as_str()),
            ("n1", 1, "127.0.0.1:9868")
        );
    }

    #[test]
    fn bad_peer_settings_are_named() {
        let missing = config(&[("controllerDLegerGroup", "g")])
            .peers()
            .unwrap_err();
        assert!(missing
            .to_string()
            .starts_with("controllerDLegerPeers is required"));
        let stranger = config(&[
            ("controllerDLegerGroup", "g"),
            ("controllerDLegerPeers", "n0-127.0.0.1:9878"),
            ("controllerDLegerSelfId", "n5"),
        ])
        .peers()
        .unwrap_err();
        assert!(stranger.to_string().contains("n5 is not one of the peers"));
        let malformed = config(&[
            ("controllerDLegerGroup", "g"),
            ("controllerDLegerPeers", "n0:127.0.0.1:9878"),
            ("controllerDLegerSelfId", "n0"),
        ])
        .peers()
        .unwrap_err();
        assert!(malformed.to_string().contains("is not id-host:port"));
        let twice = config(&[
            ("controllerDLegerGroup", "g"),
            ("controllerDLegerPeers", "n0-127.0.0.1:1;n0-127.0.0.1:2"),
            ("controllerDLegerSelfId", "n0"),
        ])
        .peers()
        .unwrap_err();
        assert!(twice.to_string().contains("listed twice"));
        let jraft = config(&[("controllerType", "jRaft")]).peers().unwrap_err();
        assert!(jraft
            .to_string()
            .starts_with("controllerType: jRaft is not served"));
    }

    #[test]
    fn keys_without_effect_are_warned_about_by_name() {
        let defaults = config(&[]);
        assert!(defaults.warnings(&defaults).is_empty());
        let mut tuned = config(&[
            ("mappedFileSize", "1024"),
            ("electMasterMaxRetryCount", "5"),
        ]);
        tuned.apply_file(&[("custom".to_string(), "x".to_string())].into());
        let warnings = tuned.warnings(&defaults);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].starts_with("mappedFileSize is set but has no effect"));
        assert!(warnings[1].starts_with("custom is not a controller option"));
    }

    #[test]
    fn get_controller_config_prints_field_names_as_java() {
        let config = config(&[("processReadEvent", "true")]);
        assert!(config.java_text().contains("\nisProcessReadEvent=true\n"));
        assert!(!config.java_text().contains("\nprocessReadEvent="));
        assert!(config.to_text().contains("\nprocessReadEvent=true\n"));
    }

    #[test]
    fn store_dir_defaults_like_java() {
        let home = Path::new("/home/rocketmq");
        assert_eq!(config(&[]).store_dir(home), home.join("DLedgerController"));
        assert_eq!(
            config(&[("controllerStorePath", "/data/ctl")]).store_dir(home),
            PathBuf::from("/data/ctl")
        );
    }

    #[test]
    fn every_honoured_key_is_a_key_and_the_black_list_holds_the_identity() {
        for (key, _) in WITHOUT_EFFECT {
            assert!(ControllerConfig::KEYS.contains(key), "{key}");
        }
        let list = config(&[]).black_list();
        for key in [
            "configStorePath",
            "controllerStorePath",
            "controllerDLegerPeers",
            "proxyProtocolTrustedAddresses",
        ] {
            assert!(list.iter().any(|k| k == key), "{key}");
        }
    }
}
