//! Waymark's own bounds on what one request may make the NameServer hold:
//! topics per registration, KV value sizes and keys, listing sizes, route
//! subscriptions and their queued pushes. Java's NameServer has none of them.
//!
//! Each field is set by the key it is named after
//! (`max_topics_per_registration` ↔ `maxTopicsPerRegistration`), in the
//! properties file or with `--set` ([`LimitKeys`]); a Java NameServer given
//! the same file ignores them. The defaults sit far above what a real
//! deployment sends, so they only ever refuse hostile or broken peers. The bounds on heavy-request queueing are
//! Java's own keys (`defaultThreadPoolQueueCapacity`) and live in the
//! configuration, not here.

use rmq_wire::frame::MAX_LENGTH_FIELD;

/// Room left in a frame for the header and length words when a body is
/// sized against [`MAX_LENGTH_FIELD`] (64 KiB, the largest header the
/// server writes being far smaller).
pub const FRAME_HEADER_ROOM: usize = 64 * 1024;

/// The bounds on request contents. See each field for its key and default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `maxTopicsPerRegistration` (default 200 000): the most topics one
    /// REGISTER_BROKER body may carry; also bounds its static-topic mappings
    /// and filter-server list. Enforced while the body is decoded, so a body
    /// declaring more never allocates past the bound. Real brokers with
    /// 100 000 topics register; a body over the bound is refused with
    /// SYSTEM_ERROR naming the limit.
    pub max_topics_per_registration: usize,
    /// `maxKvValueBytes` (default 64 KiB): the largest value PUT_KV_CONFIG
    /// accepts, in UTF-8 bytes. Java's users store order-topic configuration
    /// (`broker-a:8;broker-b:8`), a few hundred bytes at most. The value
    /// travels in the request header, so under the transport's default
    /// `maxHeaderFieldBytes` (32 KiB) that limit refuses first; this one
    /// holds when the header limits are raised.
    pub max_kv_value_bytes: usize,
    /// `maxKvKeysPerNamespace` (default 10 000): the most keys one KV
    /// namespace may hold; a PUT adding a key beyond it is refused (replacing
    /// an existing key is always allowed).
    pub max_kv_keys_per_namespace: usize,
    /// `maxKvListBytes` (default 16 MiB − 64 KiB): the largest
    /// GET_KVLIST_BY_NAMESPACE body the server sends. Clients refuse frames
    /// over 16 MiB (`rmq_wire::frame::MAX_LENGTH_FIELD`), so a larger listing
    /// is answered with an error naming the namespace and its size instead.
    /// Only stores written before the KV quotas can reach it.
    pub max_kv_list_bytes: usize,
    /// `kvJournalCompactionPercent` (default 100): the KV journal
    /// (`<kvConfigPath>.journal`, every write since kvConfig.json was last
    /// rewritten) is folded into kvConfig.json once it is larger than this
    /// share of kvConfig.json's size, in percent. Bounds the journal's disk
    /// use and the replay at start-up; being proportional, the rewrites it
    /// causes add a bounded multiple of each write's own size.
    pub kv_journal_compaction_percent: usize,
    /// `kvJournalCompactionMinBytes` (default 4 MiB): the journal is never
    /// compacted below this size, so that a small store is not rewritten
    /// on nearly every write.
    pub kv_journal_compaction_min_bytes: usize,
    /// `maxRouteSubscribers` (default 10 000): the most connections that may
    /// hold a route subscription (Waymark's route push) at once; one more
    /// is answered SYSTEM_BUSY and its client polls instead.
    pub max_route_subscribers: usize,
    /// `maxTopicsPerRouteSubscriber` (default 10 000): the most topics one
    /// connection may subscribe to.
    pub max_topics_per_route_subscriber: usize,
    /// `maxRouteSubscriptionEntries` (default 200 000): the most topic
    /// subscriptions of all connections together. Every route change is
    /// checked against each distinct subscribed topic, so this also bounds
    /// the work of a change.
    pub max_route_subscription_entries: usize,
    /// `routePushQueueBytesPerSubscriber` (default 1 MiB): pushes queued
    /// for one subscriber and not yet read, above which its further changes
    /// are coalesced (only the latest route of each topic is sent once it
    /// has read).
    pub route_push_queue_bytes_per_subscriber: usize,
    /// `routePushQueueBytes` (default 64 MiB): the same bound over every
    /// subscriber together, well under the transport's 256 MiB of queued
    /// responses, so that slow subscribers never hold back other clients'
    /// answers.
    pub route_push_queue_bytes: usize,
    /// `routePushStallSeconds` (default 60): a subscriber whose changes
    /// stayed coalesced this long (it does not read) is disconnected.
    pub route_push_stall_seconds: usize,
}

impl Limits {
    /// Default of `maxTopicsPerRegistration`.
    pub const DEFAULT_MAX_TOPICS_PER_REGISTRATION: usize = 200_000;
    /// Default of `maxKvValueBytes`.
    pub const DEFAULT_MAX_KV_VALUE_BYTES: usize = 64 * 1024;
    /// Default of `maxKvKeysPerNamespace`.
    pub const DEFAULT_MAX_KV_KEYS_PER_NAMESPACE: usize = 10_000;
    /// Default of `maxKvListBytes`.
    pub const DEFAULT_MAX_KV_LIST_BYTES: usize = MAX_LENGTH_FIELD - FRAME_HEADER_ROOM;
    /// Default of `kvJournalCompactionPercent`.
    pub const DEFAULT_KV_JOURNAL_COMPACTION_PERCENT: usize = 100;
    /// Default of `kvJournalCompactionMinBytes`.
    pub const DEFAULT_KV_JOURNAL_COMPACTION_MIN_BYTES: usize = 4 << 20;
    /// Default of `maxRouteSubscribers`.
    pub const DEFAULT_MAX_ROUTE_SUBSCRIBERS: usize = 10_000;
    /// Default of `maxTopicsPerRouteSubscriber`.
    pub const DEFAULT_MAX_TOPICS_PER_ROUTE_SUBSCRIBER: usize = 10_000;
    /// Default of `maxRouteSubscriptionEntries`.
    pub const DEFAULT_MAX_ROUTE_SUBSCRIPTION_ENTRIES: usize = 200_000;
    /// Default of `routePushQueueBytesPerSubscriber`.
    pub const DEFAULT_ROUTE_PUSH_QUEUE_BYTES_PER_SUBSCRIBER: usize = 1 << 20;
    /// Default of `routePushQueueBytes`.
    pub const DEFAULT_ROUTE_PUSH_QUEUE_BYTES: usize = 64 << 20;
    /// Default of `routePushStallSeconds`.
    pub const DEFAULT_ROUTE_PUSH_STALL_SECONDS: usize = 60;

    /// Every limit at its default: what a server started without the keys
    /// enforces, and a constant so tests can spell variations of it.
    pub const DEFAULTS: Limits = Limits {
        max_topics_per_registration: Limits::DEFAULT_MAX_TOPICS_PER_REGISTRATION,
        max_kv_value_bytes: Limits::DEFAULT_MAX_KV_VALUE_BYTES,
        max_kv_keys_per_namespace: Limits::DEFAULT_MAX_KV_KEYS_PER_NAMESPACE,
        max_kv_list_bytes: Limits::DEFAULT_MAX_KV_LIST_BYTES,
        kv_journal_compaction_percent: Limits::DEFAULT_KV_JOURNAL_COMPACTION_PERCENT,
        kv_journal_compaction_min_bytes: Limits::DEFAULT_KV_JOURNAL_COMPACTION_MIN_BYTES,
        max_route_subscribers: Limits::DEFAULT_MAX_ROUTE_SUBSCRIBERS,
        max_topics_per_route_subscriber: Limits::DEFAULT_MAX_TOPICS_PER_ROUTE_SUBSCRIBER,
        max_route_subscription_entries: Limits::DEFAULT_MAX_ROUTE_SUBSCRIPTION_ENTRIES,
        route_push_queue_bytes_per_subscriber:
            Limits::DEFAULT_ROUTE_PUSH_QUEUE_BYTES_PER_SUBSCRIBER,
        route_push_queue_bytes: Limits::DEFAULT_ROUTE_PUSH_QUEUE_BYTES,
        route_push_stall_seconds: Limits::DEFAULT_ROUTE_PUSH_STALL_SECONDS,
    };
}

rmq_protocol::java_options! {
    /// The keys of [`Limits`], as read from the properties file and `--set`.
    pub struct LimitKeys {
        max_topics_per_registration: i64 = "maxTopicsPerRegistration", |_, _| Limits::DEFAULT_MAX_TOPICS_PER_REGISTRATION as i64;
        max_kv_value_bytes: i64 = "maxKvValueBytes", |_, _| Limits::DEFAULT_MAX_KV_VALUE_BYTES as i64;
        max_kv_keys_per_namespace: i64 = "maxKvKeysPerNamespace", |_, _| Limits::DEFAULT_MAX_KV_KEYS_PER_NAMESPACE as i64;
        max_kv_list_bytes: i64 = "maxKvListBytes", |_, _| Limits::DEFAULT_MAX_KV_LIST_BYTES as i64;
        kv_journal_compaction_percent: i64 = "kvJournalCompactionPercent", |_, _| Limits::DEFAULT_KV_JOURNAL_COMPACTION_PERCENT as i64;
        kv_journal_compaction_min_bytes: i64 = "kvJournalCompactionMinBytes", |_, _| Limits::DEFAULT_KV_JOURNAL_COMPACTION_MIN_BYTES as i64;
        max_route_subscribers: i64 = "maxRouteSubscribers", |_, _| Limits::DEFAULT_MAX_ROUTE_SUBSCRIBERS as i64;
        max_topics_per_route_subscriber: i64 = "maxTopicsPerRouteSubscriber", |_, _| Limits::DEFAULT_MAX_TOPICS_PER_ROUTE_SUBSCRIBER as i64;
        max_route_subscription_entries: i64 = "maxRouteSubscriptionEntries", |_, _| Limits::DEFAULT_MAX_ROUTE_SUBSCRIPTION_ENTRIES as i64;
        route_push_queue_bytes_per_subscriber: i64 = "routePushQueueBytesPerSubscriber", |_, _| Limits::DEFAULT_ROUTE_PUSH_QUEUE_BYTES_PER_SUBSCRIBER as i64;
        route_push_queue_bytes: i64 = "routePushQueueBytes", |_, _| Limits::DEFAULT_ROUTE_PUSH_QUEUE_BYTES as i64;
        route_push_stall_seconds: i64 = "routePushStallSeconds", |_, _| Limits::DEFAULT_ROUTE_PUSH_STALL_SECONDS as i64;
    }
}

impl LimitKeys {
    /// The defaults (no key depends on the home directory).
    pub fn new() -> LimitKeys {
        LimitKeys::defaults(std::path::Path::new("."), None)
    }

    /// Reads the limit keys of `properties`; other keys are left out.
    pub fn from_properties(properties: &std::collections::BTreeMap<String, String>) -> LimitKeys {
        let mut keys = LimitKeys::new();
        for (key, value) in properties {
            keys.set(key, value);
        }
        keys
    }

    /// Why `key` may not be `value` at start-up: a whole number of at least
    /// 1 (a limit of zero would refuse everything). `Ok` for other keys.
    pub fn check(key: &str, value: &str) -> Result<(), String> {
        if !LimitKeys::KEYS.contains(&key) {
            return Ok(());
        }
        rmq_protocol::options::check_limit(key, value, LimitKeys::check_update)
    }

    /// The limits these keys set.
    pub fn limits(&self) -> Limits {
        let size = rmq_protocol::options::limit_size;
        Limits {
            max_topics_per_registration: size(self.max_topics_per_registration),
            max_kv_value_bytes: size(self.max_kv_value_bytes),
            max_kv_keys_per_namespace: size(self.max_kv_keys_per_namespace),
            max_kv_list_bytes: size(self.max_kv_list_bytes),
            kv_journal_compaction_percent: size(self.kv_journal_compaction_percent),
            kv_journal_compaction_min_bytes: size(self.kv_journal_compaction_min_bytes),
            max_route_subscribers: size(self.max_route_subscribers),
            max_topics_per_route_subscriber: size(self.max_topics_per_route_subscriber),
            max_route_subscription_entries: size(self.max_route_subscription_entries),
            route_push_queue_bytes_per_subscriber: size(self.route_push_queue_bytes_per_subscriber),
            route_push_queue_bytes: size(self.route_push_queue_bytes),
            route_push_stall_seconds: size(self.route_push_stall_seconds),
        }
    }
}

impl Default for LimitKeys {
    fn default() -> LimitKeys {
        LimitKeys::new()
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULTS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keys_default_to_the_limits_and_set_them() {
        assert_eq!(LimitKeys::new().limits(), Limits::default());
        let properties = [("maxKvKeysPerNamespace", "3"), ("listenPort", "1")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let limits = LimitKeys::from_properties(&properties).limits();
        assert_eq!(limits.max_kv_keys_per_namespace, 3);
        assert_eq!(
            limits.max_topics_per_registration,
            Limits::DEFAULT_MAX_TOPICS_PER_REGISTRATION
        );
        assert!(LimitKeys::check("maxTopicsPerRegistration", "0").is_err());
        assert!(LimitKeys::check("maxTopicsPerRegistration", "many").is_err());
        assert!(LimitKeys::check("kvJournalCompactionPercent", "0").is_err());
        assert!(LimitKeys::check("kvJournalCompactionMinBytes", "-1").is_err());
        assert_eq!(LimitKeys::check("kvJournalCompactionMinBytes", "1"), Ok(()));
        assert_eq!(LimitKeys::check("listenPort", "0"), Ok(()));
    }

    #[test]
    fn defaults_fit_real_deployments_and_the_frame_limit() {
        let limits = Limits::default();
        assert!(limits.max_topics_per_registration >= 100_000);
        assert_eq!(limits.max_kv_value_bytes, 65_536);
        assert_eq!(limits.max_kv_keys_per_namespace, 10_000);
        assert!(limits.max_kv_list_bytes < MAX_LENGTH_FIELD);
        // A full namespace of maximal values may exceed a frame: the listing
        // check is what keeps such a store answerable.
        assert!(limits.max_kv_list_bytes > 15 << 20);
    }
}
