//! NameServer configuration with Java's option names: every `NamesrvConfig`
//! and `NettyServerConfig` key, the `-c` properties file,
//! UPDATE_NAMESRV_CONFIG and the GET_NAMESRV_CONFIG text.
//!
//! Values follow Java's setter conversion (`rmq_protocol::options`) once
//! they have passed [`check_value`]: a value Java would silently drop or
//! store though its own start-up would refuse it stops the start when it
//! comes from the `-c` file or the command line, and is refused by
//! UPDATE_NAMESRV_CONFIG, which then changes nothing.
//! What Waymark does with each key is in `effects`.

mod effects;
mod shared;

pub use effects::{effect_of, Effect, IgnoredSetting, KeyEffect, KEY_EFFECTS};
pub use shared::{ConfigWriteError, SharedConfig, UpdateRefusal};

/// Keys UPDATE_NAMESRV_CONFIG may never touch, whatever `configBlackList` says
/// (writing them once allowed arbitrary file writes, CVE-2023-37582).
const ALWAYS_BLACK_LISTED: [&str; 4] = [
    "configBlackList",
    "configStorePath",
    "kvConfigPath",
    "rocketmqHome",
];

rmq_protocol::java_options! {
    /// Every option, by its Java name.
    pub struct NamesrvConfig {
        rocketmq_home: Option<String> = "rocketmqHome", |_, r: &Option<String>| r.clone();
        kv_config_path: String = "kvConfigPath", |h: &std::path::Path, _| path_in(h, "namesrv/kvConfig.json");
        config_store_path: String = "configStorePath", |h: &std::path::Path, _| path_in(h, "namesrv/namesrv.properties");
        product_env_name: String = "productEnvName", |_, _| "center".to_owned();
        cluster_test: bool = "clusterTest", |_, _| false;
        order_message_enable: bool = "orderMessageEnable", |_, _| false;
        return_order_topic_config_to_broker: bool = "returnOrderTopicConfigToBroker", |_, _| true;
        client_request_thread_pool_nums: i32 = "clientRequestThreadPoolNums", |_, _| 8;
        default_thread_pool_nums: i32 = "defaultThreadPoolNums", |_, _| 16;
        client_request_thread_pool_queue_capacity: i32 = "clientRequestThreadPoolQueueCapacity", |_, _| 50_000;
        default_thread_pool_queue_capacity: i32 = "defaultThreadPoolQueueCapacity", |_, _| 10_000;
        scan_not_active_broker_interval: i64 = "scanNotActiveBrokerInterval", |_, _| 5_000;
        unregister_broker_queue_capacity: i32 = "unRegisterBrokerQueueCapacity", |_, _| 3_000;
        support_acting_master: bool = "supportActingMaster", |_, _| false;
        enable_all_topic_list: bool = "enableAllTopicList", |_, _| true;
        enable_topic_list: bool = "enableTopicList", |_, _| true;
        notify_min_broker_id_changed: bool = "notifyMinBrokerIdChanged", |_, _| false;
        enable_controller_in_namesrv: bool = "enableControllerInNamesrv", |_, _| false;
        need_wait_for_service: bool = "needWaitForService", |_, _| false;
        wait_seconds_for_service: i32 = "waitSecondsForService", |_, _| 45;
        delete_topic_with_broker_registration: bool = "deleteTopicWithBrokerRegistration", |_, _| false;
        config_black_list: String = "configBlackList", |_, _| "configBlackList;configStorePath;kvConfigPath".to_owned();
        bind_address: String = "bindAddress", |_, _| "0.0.0.0".to_owned();
        listen_port: i32 = "listenPort", |_, _| 9876;
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

rmq_protocol::java_options! {
    /// Waymark's route snapshot keys (docs/configuration.md, "Warm restart:
    /// the route snapshot"); a Java NameServer given the same file ignores
    /// them. Read at start-up only, from the `-c` file and `--set`.
    pub struct SnapshotKeys {
        route_snapshot_path: String = "routeSnapshotPath", |h: &std::path::Path, _| path_in(h, "namesrv/routes.snapshot");
        route_snapshot_max_bytes: i64 = "routeSnapshotMaxBytes", |_, _| SnapshotKeys::DEFAULT_MAX_BYTES;
    }
}

rmq_protocol::java_options! {
    /// Waymark's HTTP port (docs/metrics.md): `/metrics`, `/health`,
    /// `/ready`, `/api/v1`, the dashboard and the address server
    /// (`crate::address_server`). Read at start-up only.
    pub struct OpsKeys {
        http_listen_addr: String = "httpListenAddr", |_, _| OpsKeys::DEFAULT_HTTP_LISTEN_ADDR.to_owned();
        address_server_subgroup: String = "addressServerSubgroup", |_, _| crate::address_server::DEFAULT_SUBGROUP.to_owned();
        address_server_list: String = "addressServerList", |_, _| String::new();
    }
}

impl OpsKeys {
    /// Default of `httpListenAddr`: loopback only, beside the remoting
    /// port; exposing it is a decision (`0.0.0.0:9877`).
    pub const DEFAULT_HTTP_LISTEN_ADDR: &'static str = "127.0.0.1:9877";

    /// The defaults, then the keys of `properties` (other keys are left out).
    pub fn from_properties(properties: &std::collections::BTreeMap<String, String>) -> OpsKeys {
        let mut keys = OpsKeys::from_env();
        for (key, value) in properties {
            keys.set(key, value);
        }
        keys
    }

    /// Why `key` may not be `value` at start-up: `httpListenAddr` is empty
    /// (no HTTP port) or `ip:port`; the address server's subgroup is one
    /// URL path segment, its list `host:port;...` or blank. `Ok` for other
    /// keys.
    pub fn check(key: &str, value: &str) -> Result<(), String> {
        match key {
            rmq_ops::http::LISTEN_KEY => rmq_ops::http::check_listen_addr(value),
            "addressServerSubgroup" => crate::address_server::check_subgroup(key, value),
            "addressServerList" => crate::address_server::check_list(key, value),
            _ => Ok(()),
        }
    }

    /// The HTTP port's address; `None` when `httpListenAddr` is empty.
    pub fn http_address(&self) -> Option<String> {
        let address = self.http_listen_addr.trim();
        (!address.is_empty()).then(|| address.to_owned())
    }
}

impl SnapshotKeys {
    /// Default of `routeSnapshotMaxBytes`: 256 MiB, some seven times the
    /// snapshot of 100,000 topics on each of 10 broker groups.
    pub const DEFAULT_MAX_BYTES: i64 = 256 << 20;

    /// The defaults with `HOME` as the home directory, then the keys of
    /// `properties` (other keys are left out).
    pub fn from_properties(
        properties: &std::collections::BTreeMap<String, String>,
    ) -> SnapshotKeys {
        let mut keys = SnapshotKeys::from_env();
        for (key, value) in properties {
            keys.set(key, value);
        }
        keys
    }

    /// Why `key` may not be `value` at start-up: the path takes any text
    /// without control characters (empty turns snapshots off), the size a
    /// whole number of at least 1. `Ok` for other keys.
    pub fn check(key: &str, value: &str) -> Result<(), String> {
        match key {
            "routeSnapshotMaxBytes" => {
                rmq_protocol::options::check_limit(key, value, SnapshotKeys::check_update)
            }
            "routeSnapshotPath" => SnapshotKeys::check_update(key, value),
            _ => Ok(()),
        }
    }

    /// The snapshot file; `None` when `routeSnapshotPath` is empty (off).
    pub fn path(&self) -> Option<std::path::PathBuf> {
        let path = self.route_snapshot_path.trim();
        (!path.is_empty()).then(|| std::path::PathBuf::from(path))
    }

    /// The largest snapshot read or written, in bytes.
    pub fn max_bytes(&self) -> usize {
        rmq_protocol::options::limit_size(self.route_snapshot_max_bytes)
    }
}

/// Lowest values the NameServer starts with, for keys whose lower values
/// Java refuses by failing at start-up (a thread pool, queue or scan period
/// of zero throws there, a negative backlog too) and Waymark would otherwise
/// round silently.
const STARTUP_MINIMUMS: [(&str, i64); 4] = [
    ("defaultThreadPoolNums", 1),
    ("scanNotActiveBrokerInterval", 1),
    ("serverSocketBacklog", 0),
    ("unRegisterBrokerQueueCapacity", 1),
];

fn path_in(home: &std::path::Path, rest: &str) -> String {
    home.join(rest).to_string_lossy().into_owned()
}

impl NamesrvConfig {
    /// The black-listed keys of UPDATE_NAMESRV_CONFIG: the fixed ones plus
    /// `configBlackList` entries as read at start-up.
    /// The security keys (authentication, TLS and the trusted PROXY
    /// protocol proxies) and the route snapshot keys are black-listed too: only the `-c` file and
    /// `--set` set them (a remote request that could add its sender to the
    /// trusted proxies would choose the address the allow-lists see).
    pub fn black_list(&self) -> Vec<String> {
        let mut keys = NamesrvConfig::black_list_of(&ALWAYS_BLACK_LISTED, &self.config_black_list);
        keys.extend(
            crate::security::AuthKeys::KEYS
                .iter()
                .chain(rmq_transport::tls::KEYS.iter())
                // A remote request must not choose a file the server writes
                // (CVE-2023-37582, as kvConfigPath).
                .chain(SnapshotKeys::KEYS.iter())
                .chain(OpsKeys::KEYS.iter())
                .chain([&rmq_transport::ProxyProtocol::KEY])
                .map(|key| (*key).to_owned()),
        );
        keys
    }

    /// Whether the NameServer may start with `key=value` from its `-c` file
    /// or command line, and why not (naming the key and what it takes):
    /// UPDATE_NAMESRV_CONFIG's check ([`NamesrvConfig::check_update`]), so
    /// that a value Java's setters would silently drop (`listenPort=abc`,
    /// `enableTopicList=yes`) is an error rather than a default, plus the
    /// minimums Java enforces by failing at start-up. Keys no option has pass
    /// (they are kept and warned about).
    pub fn check_startup(key: &str, value: &str) -> Result<(), String> {
        NamesrvConfig::check_update(key, value)?;
        let minimum = STARTUP_MINIMUMS.iter().find(|(k, _)| *k == key);
        match minimum {
            Some((_, min)) if value.trim().parse::<i64>().is_ok_and(|v| v < *min) => {
                Err(format!("invalid value for {key}: must be at least {min}"))
            }
            _ => Ok(()),
        }
    }

    /// How the listener is bound: `serverSocketBacklog`, and the socket
    /// buffer sizes when above 0 (0, the default, leaves the kernel's, as
    /// Java does).
    pub fn listen_options(&self) -> rmq_transport::server::ListenOptions {
        let positive = |size: i32| u32::try_from(size).ok().filter(|size| *size > 0);
        let defaults = rmq_transport::server::ListenOptions::default();
        rmq_transport::server::ListenOptions {
            // A negative backlog never gets here: check_startup refuses it.
            backlog: u32::try_from(self.server_socket_backlog).unwrap_or(defaults.backlog),
            send_buffer: positive(self.server_socket_snd_buf_size),
            recv_buffer: positive(self.server_socket_rcv_buf_size),
        }
    }
}

/// Whether the NameServer takes `key=value`, and why not (naming the key and
/// the rule): the one check of every value, from the `-c` file and `--set`
/// at start-up and from UPDATE_NAMESRV_CONFIG at run time, so that a value
/// one refuses the other refuses too. Each key is checked by the options it
/// belongs to: Waymark's limits, route snapshot, HTTP port, cluster and
/// authentication keys by their own rules; the TLS keys not here but
/// together, when the TLS settings are built; with the controller embedded
/// (`embedded_controller`), its keys by the controller's option types; every
/// other key as a NameServer key ([`NamesrvConfig::check_startup`]: Java's
/// type, ranges and the minimums Java enforces by failing to start).
pub fn check_value(key: &str, value: &str, embedded_controller: bool) -> Result<(), String> {
    use crate::cluster::ClusterKeys;
    use crate::limits::LimitKeys;
    use crate::security::AuthKeys;
    use rmq_transport::ServerLimits;

    if ServerLimits::KEYS.contains(&key) {
        ServerLimits::check(key, value)
    } else if LimitKeys::KEYS.contains(&key) {
        LimitKeys::check(key, value)
    } else if SnapshotKeys::KEYS.contains(&key) {
        SnapshotKeys::check(key, value)
    } else if OpsKeys::KEYS.contains(&key) {
        OpsKeys::check(key, value)
    } else if ClusterKeys::KEYS.contains(&key) {
        ClusterKeys::check(key, value)
    } else if AuthKeys::KEYS.contains(&key) {
        AuthKeys::check(key, value)
    } else if crate::security::is_security_key(key) {
        // TLS keys: checked together when the TLS settings are built.
        Ok(())
    } else if embedded_controller
        && !NamesrvConfig::KEYS.contains(&key)
        && rmq_controller::ControllerConfig::KEYS.contains(&key)
    {
        rmq_controller::ControllerConfig::check_update(key, value)
    } else {
        NamesrvConfig::check_startup(key, value)
    }
}

/// Whether `key` is one of Waymark's own keys (limits, keepalive, route
/// snapshot, HTTP port, cluster, authentication and TLS), which the server
/// reads once at start-up: their values are copied into the listener, the
/// connections and the request state when those are built, so an
/// UPDATE_NAMESRV_CONFIG could only store a value that takes effect at some
/// later restart, if that restart accepts it. Such an update is refused,
/// saying so; Java's keys keep Java's behaviour (stored, and read where
/// Java reads them).
pub fn is_start_up_only(key: &str) -> bool {
    rmq_transport::ServerLimits::KEYS.contains(&key)
        || crate::limits::LimitKeys::KEYS.contains(&key)
        || SnapshotKeys::KEYS.contains(&key)
        || OpsKeys::KEYS.contains(&key)
        || crate::cluster::ClusterKeys::KEYS.contains(&key)
        || crate::security::is_security_key(key)
}

/// Every entry of `properties` (read from `origin`: the `-c` file, or
/// `--set`) that `check` refuses, as one message each naming the origin, the
/// key, the value and what the key takes.
pub fn startup_refusals(
    origin: &str,
    properties: &std::collections::BTreeMap<String, String>,
    check: impl Fn(&str, &str) -> Result<(), String>,
) -> Vec<String> {
    properties
        .iter()
        .filter_map(|(key, value)| {
            check(key, value)
                .err()
                .map(|why| format!("{origin}: {why} (got {value:?})"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact GET_NAMESRV_CONFIG text of a Java 5.x NameServer with its
    /// defaults (home `/home/rocketmq`, `rocketmqHome=/opt/rocketmq`),
    /// generated from the Java classes.
    const JAVA_DEFAULTS: &str = "bindAddress=0.0.0.0\nclientRequestThreadPoolNums=8\nclientRequestThreadPoolQueueCapacity=50000\nclusterTest=false\nconfigBlackList=configBlackList;configStorePath;kvConfigPath\nconfigStorePath=/home/rocketmq/namesrv/namesrv.properties\ndefaultThreadPoolNums=16\ndefaultThreadPoolQueueCapacity=10000\ndeleteTopicWithBrokerRegistration=false\nenableAllTopicList=true\nenableControllerInNamesrv=false\nenableShutdownGracefully=false\nenableTopicList=true\nkvConfigPath=/home/rocketmq/namesrv/kvConfig.json\nlistenPort=9876\nneedWaitForService=false\nnotifyMinBrokerIdChanged=false\norderMessageEnable=false\nproductEnvName=center\nreturnOrderTopicConfigToBroker=true\nrocketmqHome=/opt/rocketmq\nscanNotActiveBrokerInterval=5000\nserverAsyncSemaphoreValue=64\nserverCallbackExecutorThreads=0\nserverChannelMaxIdleTimeSeconds=120\nserverNettyWorkerGroupEnable=true\nserverOnewaySemaphoreValue=256\nserverPooledByteBufAllocatorEnable=true\nserverSelectorThreads=3\nserverSocketBacklog=1024\nserverSocketRcvBufSize=0\nserverSocketSndBufSize=0\nserverWorkerThreads=8\nshutdownWaitTimeSeconds=30\nsupportActingMaster=false\nunRegisterBrokerQueueCapacity=3000\nuseEpollNativeSelector=false\nwaitSecondsForService=45\nwriteBufferHighWaterMark=0\nwriteBufferLowWaterMark=0\n";

    fn java_like() -> NamesrvConfig {
        NamesrvConfig::defaults(
            std::path::Path::new("/home/rocketmq"),
            Some("/opt/rocketmq".into()),
        )
    }

    #[test]
    fn defaults_print_exactly_as_java() {
        assert_eq!(java_like().to_text(), JAVA_DEFAULTS);
    }

    #[test]
    fn start_up_refuses_what_java_would_silently_drop_naming_the_key() {
        let refused = [
            ("listenPort", "abc", "a port must be from 0 to 65535"),
            ("listenPort", "70000", "a port must be from 0 to 65535"),
            ("enableTopicList", "yes", "must be true or false"),
            ("serverWorkerThreads", "8 threads", "must be a whole number"),
            ("defaultThreadPoolNums", "0", "must be at least 1"),
            ("unRegisterBrokerQueueCapacity", "-1", "must be at least 1"),
            ("scanNotActiveBrokerInterval", "0", "must be at least 1"),
            ("serverSocketBacklog", "-1", "must be at least 0"),
        ];
        for (key, value, why) in refused {
            let error = NamesrvConfig::check_startup(key, value).unwrap_err();
            assert!(error.contains(why), "{key}={value}: {error}");
            assert!(error.contains(key), "names the key: {error}");
        }
        let accepted = [
            ("listenPort", " 9877 "),
            ("enableTopicList", "FALSE"),
            ("serverSocketBacklog", "0"),
            ("serverSocketSndBufSize", "-1"),
            ("defaultThreadPoolNums", "1"),
            ("noSuchOption", "anything"),
        ];
        for (key, value) in accepted {
            assert_eq!(NamesrvConfig::check_startup(key, value), Ok(()), "{key}");
        }
    }

    #[test]
    fn start_up_refusals_name_origin_key_and_value() {
        let properties = [("listenPort", "abc"), ("enableTopicList", "true")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let refusals = startup_refusals("--set", &properties, NamesrvConfig::check_startup);
        assert_eq!(
            refusals,
            vec![
                "--set: invalid value for listenPort: a port must be from 0 to 65535 (got \"abc\")"
                    .to_owned()
            ]
        );
    }

    #[test]
    fn route_snapshot_keys_default_beside_the_kv_store_and_are_checked() {
        let keys = SnapshotKeys::defaults(std::path::Path::new("/home/rocketmq"), None);
        assert_eq!(
            keys.path(),
            Some(std::path::PathBuf::from(
                "/home/rocketmq/namesrv/routes.snapshot"
            ))
        );
        assert_eq!(keys.max_bytes(), 256 << 20);
        let properties = [
            ("routeSnapshotPath", " "),
            ("routeSnapshotMaxBytes", "1000"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let off = SnapshotKeys::from_properties(&properties);
        assert_eq!(off.path(), None, "empty turns snapshots off");
        assert_eq!(off.max_bytes(), 1000);
        for (key, value) in [
            ("routeSnapshotMaxBytes", "0"),
            ("routeSnapshotMaxBytes", "big"),
            ("routeSnapshotPath", "/tmp/a\nkvConfigPath=/x"),
        ] {
            let error = SnapshotKeys::check(key, value).unwrap_err();
            assert!(error.contains(key), "{error}");
        }
        assert_eq!(SnapshotKeys::check("routeSnapshotPath", ""), Ok(()));
        assert_eq!(SnapshotKeys::check("listenPort", "x"), Ok(()));
        // UPDATE_NAMESRV_CONFIG must not choose a file the server writes.
        let black_list = java_like().black_list();
        for key in SnapshotKeys::KEYS {
            assert!(black_list.iter().any(|k| k == key), "{key}");
        }
    }

    #[test]
    fn listen_options_follow_the_socket_keys() {
        let mut config = java_like();
        let defaults = config.listen_options();
        assert_eq!(
            (defaults.backlog, defaults.send_buffer, defaults.recv_buffer),
            (1024, None, None)
        );
        config.server_socket_backlog = 64;
        config.server_socket_snd_buf_size = 65_536;
        config.server_socket_rcv_buf_size = -1;
        let options = config.listen_options();
        assert_eq!(
            (options.backlog, options.send_buffer, options.recv_buffer),
            (64, Some(65_536), None)
        );
    }

    // What `set` does for UPDATE_NAMESRV_CONFIG after its check and for the
    // file after start-up's check: Java's conversion, kept for the values
    // those checks let through.
    #[test]
    fn values_convert_like_java_setters() {
        let mut config = java_like();
        assert!(config.set("enableTopicList", "FALSE"));
        assert!(!config.enable_topic_list);
        assert!(config.set("supportActingMaster", "yes"));
        assert!(!config.support_acting_master);
        assert!(config.set("listenPort", "not a number"));
        assert_eq!(config.listen_port, 9876);
        assert!(config.set("listenPort", " 9877 "));
        assert_eq!(config.listen_port, 9877);
        assert!(!config.set("noSuchOption", "1"));
    }

    #[test]
    fn unknown_file_keys_are_kept_and_reported() {
        let mut config = java_like();
        let file: std::collections::BTreeMap<String, String> =
            [("listenPort", "9999"), ("custom", "x")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        assert_eq!(config.apply_file(&file), vec!["custom".to_owned()]);
        assert_eq!(config.listen_port, 9999);
        assert!(config.to_text().contains("custom=x\n"));
    }

    #[test]
    fn updates_are_checked_per_key_before_anything_is_applied() {
        let ok = [
            ("enableTopicList", " FALSE "),
            ("listenPort", "0"),
            ("listenPort", "65535"),
            ("scanNotActiveBrokerInterval", "9223372036854775807"),
            ("productEnvName", r"east\zone one"),
            ("somethingUnknown", "x"),
        ];
        for (key, value) in ok {
            assert_eq!(
                NamesrvConfig::check_update(key, value),
                Ok(()),
                "{key}={value}"
            );
        }
        let refused = [
            ("enableTopicList", "false\nkvConfigPath=/tmp/evil", "U+000A"),
            ("productEnvName", "a\rconfigBlackList=", "U+000D"),
            ("productEnvName", "a\u{0}", "U+0000"),
            ("evil\nkvConfigPath", "x", "U+000A"),
            ("listenPort", "70000", "from 0 to 65535"),
            ("listenPort", "-1", "from 0 to 65535"),
            ("serverWorkerThreads", "eight", "whole number"),
            ("defaultThreadPoolNums", "2147483648", "whole number"),
            ("enableTopicList", "yes", "true or false"),
            ("", "x", "empty key"),
        ];
        for (key, value, why) in refused {
            let error = NamesrvConfig::check_update(key, value).unwrap_err();
            assert!(error.contains(why), "{key}={value}: {error}");
            let shown = key.replace('\n', "\\u{a}");
            assert!(error.contains(&shown), "names the key: {error}");
        }
    }

    #[test]
    fn the_saved_file_reads_back_to_the_same_configuration() {
        let mut config = java_like();
        config.product_env_name = "east\\zone\nlistenPort=1".to_owned();
        config
            .extra
            .insert("custom key".to_owned(), " spaced".to_owned());
        let text = config.to_file_text();
        assert!(!text.contains("\nlistenPort=1"), "{text}");
        let mut back = java_like();
        back.apply_file(&rmq_protocol::properties::parse(&text).unwrap());
        assert_eq!(back, config);
    }

    #[test]
    fn black_list_always_holds_the_path_keys() {
        let mut config = java_like();
        config.config_black_list = "listenPort".into();
        let list = config.black_list();
        for key in [
            "configBlackList",
            "configStorePath",
            "kvConfigPath",
            "rocketmqHome",
            "listenPort",
            "proxyProtocolTrustedAddresses",
        ] {
            assert!(list.iter().any(|k| k == key), "{key}");
        }
    }
}
