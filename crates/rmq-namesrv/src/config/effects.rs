//! What Waymark does with each NameServer key: honoured (live or from
//! start-up) or accepted but ignored, and why. This one table feeds the
//! start-up warning, the marks of `-p` and the key table of
//! docs/configuration.md (a test compares them), so the three cannot drift
//! apart. It does not own the values: those are [`NamesrvConfig`]'s.

use super::NamesrvConfig;

/// What Waymark does with a key's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Read whenever it is needed, so UPDATE_NAMESRV_CONFIG changes
    /// behaviour at once, as in Java.
    Live,
    /// Read once at start-up, as in Java: an update is persisted and shown,
    /// and applies from the next start.
    AtStart,
    /// Accepted, shown and persisted like any key, but it changes nothing
    /// here.
    Ignored,
}

/// One key's entry in [`KEY_EFFECTS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyEffect {
    /// The Java key.
    pub key: &'static str,
    /// What Waymark does with it.
    pub effect: Effect,
    /// What it does here (honoured) or why it does nothing (ignored); the
    /// latter is what the warning and `-p` say.
    pub note: &'static str,
}

const fn live(key: &'static str, note: &'static str) -> KeyEffect {
    KeyEffect {
        key,
        effect: Effect::Live,
        note,
    }
}

const fn at_start(key: &'static str, note: &'static str) -> KeyEffect {
    KeyEffect {
        key,
        effect: Effect::AtStart,
        note,
    }
}

const fn ignored(key: &'static str, reason: &'static str) -> KeyEffect {
    KeyEffect {
        key,
        effect: Effect::Ignored,
        note: reason,
    }
}

const NETTY_THREADS: &str = "Netty thread tuning; the async runtime runs one worker per core";
const NO_SHARED_QUEUE: &str = "route queries are answered as they are read and never queue (Java answers SYSTEM_BUSY when its client pool is full); each connection has at most 256 requests in flight and is not read beyond that";
const SERVER_SENT_REQUESTS: &str = "bounds requests the server itself sends over accepted connections; the NameServer sends none (NOTIFY goes over connections of its own)";
const WRITE_BUFFER: &str = "Netty's write buffer; a connection's unwritten responses are bounded by `responseBudgetBytesPerConnection` instead";
const NETTY_ONLY: &str = "Netty internals with no counterpart in the async runtime";
const SHUTDOWN: &str = "SIGTERM always stops accepting and drains in-flight requests for up to 10 s; there is no GO_AWAY window";

/// Every NameServer key (`NamesrvConfig::KEYS`, sorted), once.
pub const KEY_EFFECTS: &[KeyEffect] = &[
    at_start("bindAddress", "listen address; `--listen` overrides it"),
    ignored("clientRequestThreadPoolNums", "route queries are answered on the async runtime's workers (one per core), not on a pool of their own"),
    ignored("clientRequestThreadPoolQueueCapacity", NO_SHARED_QUEUE),
    ignored("clusterTest", "cluster-test mode (routes looked up in another NameServer) is not implemented"),
    at_start("configBlackList", "keys UPDATE_NAMESRV_CONFIG refuses; `configBlackList`, `configStorePath`, `kvConfigPath` and `rocketmqHome` are refused whatever it says"),
    at_start("configStorePath", "where UPDATE_NAMESRV_CONFIG persists (durably); `-c` sets it to that file, as Java"),
    at_start("defaultThreadPoolNums", "registrations run at once, at most one per core (KV writes have 16 slots of their own, sharing the journal's fsyncs; configuration writes one)"),
    at_start("defaultThreadPoolQueueCapacity", "requests waiting for a slot in each of the four heavy pools (registrations; cluster pull answers; KV writes; configuration writes); beyond it SYSTEM_BUSY, as Java"),
    live("deleteTopicWithBrokerRegistration", "drop topics a master's registration no longer lists"),
    live("enableAllTopicList", "allow GET_ALL_TOPIC_LIST_FROM_NAMESERVER"),
    at_start("enableControllerInNamesrv", "run the controller in this process, on its own port"),
    ignored("enableShutdownGracefully", SHUTDOWN),
    live("enableTopicList", "allow GET_TOPICS_BY_CLUSTER and the unit topic lists"),
    at_start("kvConfigPath", "the KV store's file, in Java's format; writes are journaled durably in `<kvConfigPath>.journal` beside it and folded into the file past `kvJournalCompactionPercent`, at start-up and on a graceful stop ([architecture.md](architecture.md#the-kv-store-on-disk)). A cluster node (`clusterGossipAddr`) also keeps its generation in `<kvConfigPath>.clusterGeneration` ([NameServer cluster](#nameserver-cluster))"),
    at_start("listenPort", "listen port; `--listen` overrides it, 0 picks a free one"),
    live("needWaitForService", "refuse route queries for `waitSecondsForService` after start"),
    live("notifyMinBrokerIdChanged", "send NOTIFY_MIN_BROKER_ID_CHANGE"),
    live("orderMessageEnable", "add the order topic configuration to routes"),
    ignored("productEnvName", "used only by cluster-test mode, which is not implemented"),
    live("returnOrderTopicConfigToBroker", "return ORDER_TOPIC_CONFIG to registering brokers"),
    ignored("rocketmqHome", "Java requires it to find its installation; Waymark needs none (logging: RUST_LOG)"),
    at_start("scanNotActiveBrokerInterval", "expiry scan period; the first scan is 5 s after start, as Java's"),
    ignored("serverAsyncSemaphoreValue", SERVER_SENT_REQUESTS),
    ignored("serverCallbackExecutorThreads", NETTY_THREADS),
    at_start("serverChannelMaxIdleTimeSeconds", "close a connection idle this long; 0 or less: never"),
    ignored("serverNettyWorkerGroupEnable", NETTY_ONLY),
    ignored("serverOnewaySemaphoreValue", SERVER_SENT_REQUESTS),
    ignored("serverPooledByteBufAllocatorEnable", NETTY_ONLY),
    ignored("serverSelectorThreads", NETTY_THREADS),
    at_start("serverSocketBacklog", "listen(2) backlog; the kernel caps it (Linux: net.core.somaxconn)"),
    at_start("serverSocketRcvBufSize", "SO_RCVBUF of accepted connections, set on the listener; 0 or less: the kernel's"),
    at_start("serverSocketSndBufSize", "SO_SNDBUF of accepted connections, set on the listener; 0 or less: the kernel's"),
    ignored("serverWorkerThreads", NETTY_THREADS),
    ignored("shutdownWaitTimeSeconds", SHUTDOWN),
    live("supportActingMaster", "rewrite routes with an acting master"),
    at_start("unRegisterBrokerQueueCapacity", "bound of the batch unregistration queue"),
    ignored("useEpollNativeSelector", NETTY_ONLY),
    live("waitSecondsForService", "see `needWaitForService`; counted from start"),
    ignored("writeBufferHighWaterMark", WRITE_BUFFER),
    ignored("writeBufferLowWaterMark", WRITE_BUFFER),
];

/// The entry of `key`, or `None` for a key no option has.
pub fn effect_of(key: &str) -> Option<&'static KeyEffect> {
    KEY_EFFECTS.iter().find(|entry| entry.key == key)
}

/// A key Waymark ignores that was given a value other than its default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IgnoredSetting {
    /// The key.
    pub key: &'static str,
    /// Its value.
    pub value: String,
    /// Why it changes nothing.
    pub reason: &'static str,
}

/// The first line of `-p`: what the comment lines mean.
const PRINT_HEADER: &str = "# rmq-namesrv configuration. A key after a \"# ignored:\" line is accepted and shown but changes nothing in Waymark.\n";

impl NamesrvConfig {
    /// Ignored keys whose value differs from `defaults`, in key order.
    ///
    /// Only values that differ: files made by `mqnamesrv -p > file` carry
    /// every key at its default, and warning about those on every start
    /// would teach operators to skip the warning. A value that differs is a
    /// setting someone expects to matter; the full list of ignored keys is
    /// in `-p`'s marks and docs/configuration.md.
    pub fn ignored_settings(&self, defaults: &NamesrvConfig) -> Vec<IgnoredSetting> {
        let (mine, theirs) = (self.to_properties(), defaults.to_properties());
        KEY_EFFECTS
            .iter()
            .filter(|entry| entry.effect == Effect::Ignored)
            .filter_map(|entry| {
                let value = mine.get(entry.key)?;
                (theirs.get(entry.key) != Some(value)).then(|| IgnoredSetting {
                    key: entry.key,
                    value: value.clone(),
                    reason: entry.note,
                })
            })
            .collect()
    }

    /// The one start-up warning naming every ignored key set to something
    /// other than its default ([`NamesrvConfig::ignored_settings`]), or
    /// `None` if there is none.
    pub fn ignored_warning(&self, defaults: &NamesrvConfig) -> Option<String> {
        let settings = self.ignored_settings(defaults);
        if settings.is_empty() {
            return None;
        }
        let list: Vec<String> = settings
            .iter()
            .map(|s| format!("{}={} ({})", s.key, s.value, s.reason))
            .collect();
        Some(format!(
            "configuration accepted but ignored, it changes nothing in Waymark: {}",
            list.join("; ")
        ))
    }

    /// `-p`'s text: the lines of [`NamesrvConfig::to_text`] (GET_NAMESRV_CONFIG's
    /// text, which stays exactly Java's), after a header comment, each ignored
    /// key preceded by `# ignored: <reason>` and each key no option has by
    /// `# unknown key: ...`. Comment lines are part of the properties format,
    /// so the text still reads back as the same properties.
    pub fn to_annotated_text(&self) -> String {
        let mut text = PRINT_HEADER.to_owned();
        for (key, value) in self.to_properties() {
            match effect_of(&key) {
                Some(entry) if entry.effect == Effect::Ignored => {
                    text.push_str(&format!("# ignored: {}\n", entry.note));
                }
                Some(_) => {}
                // Printed with the other limits, after the Java keys.
                None if rmq_transport::ServerLimits::KEYS.contains(&key.as_str())
                    || crate::limits::LimitKeys::KEYS.contains(&key.as_str())
                    || super::SnapshotKeys::KEYS.contains(&key.as_str()) =>
                {
                    continue
                }
                None => text.push_str(
                    "# unknown key: kept, shown by GET_NAMESRV_CONFIG and persisted; changes nothing\n",
                ),
            }
            text.push_str(&format!("{key}={value}\n"));
        }
        text
    }
}

#[cfg(test)]
mod tests;
