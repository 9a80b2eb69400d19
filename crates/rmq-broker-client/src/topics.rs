//! `TopicTable`: the broker's topic configs, static-topic mappings and the
//! one `DataVersion` that stamps them (Java `TopicConfigManager`).
//!
//! Plain data with synchronous methods. Every mutation that changes what the
//! NameServer would see bumps the version (`nextVersion(stateVersion)`);
//! time is an argument (`now_ms`, wall-clock milliseconds, as Java stamps
//! it). Persistence is `topics.json` as Java writes it, durably
//! (write temp + fsync + rename + fsync dir). It does not know NameServers.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;

use rmq_protocol::{
    DataVersion, Dialect, JavaJson, KvTable, TopicConfig, TopicConfigSerializeWrapper,
    TopicQueueMappingInfo,
};

/// A broker's topics and their version.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TopicTable {
    topics: BTreeMap<String, TopicConfig>,
    mappings: BTreeMap<String, TopicQueueMappingInfo>,
    data_version: DataVersion,
    state_version: i64,
}

impl TopicTable {
    /// An empty table whose version is `{counter 0, stateVersion 0, timestamp now}`
    /// (Java `new DataVersion()`).
    pub fn new(now_ms: i64) -> TopicTable {
        TopicTable {
            data_version: DataVersion::new(0, 0, now_ms),
            ..TopicTable::default()
        }
    }

    /// A table holding `topics`, version as [`Self::new`] (what a broker
    /// loads before its first registration; no bump).
    pub fn with_topics(topics: impl IntoIterator<Item = TopicConfig>, now_ms: i64) -> TopicTable {
        let mut table = TopicTable::new(now_ms);
        table.topics = topics
            .into_iter()
            .map(|tc| (tc.topic_name.clone(), tc))
            .collect();
        table
    }

    /// The live version.
    pub fn data_version(&self) -> DataVersion {
        self.data_version
    }

    /// The state version bumps use: 0, or the master epoch in controller mode.
    pub fn state_version(&self) -> i64 {
        self.state_version
    }

    /// Topic name → config, in registration order.
    pub fn topics(&self) -> &BTreeMap<String, TopicConfig> {
        &self.topics
    }

    /// Topic → static-topic mapping of this broker.
    pub fn mappings(&self) -> &BTreeMap<String, TopicQueueMappingInfo> {
        &self.mappings
    }

    /// Number of topics.
    pub fn len(&self) -> usize {
        self.topics.len()
    }

    /// True without topics.
    pub fn is_empty(&self) -> bool {
        self.topics.is_empty()
    }

    /// Java `nextVersion(stateVersion)`: counter + 1, timestamp now.
    pub fn bump(&mut self, now_ms: i64) {
        self.data_version =
            DataVersion::new(self.data_version.counter + 1, self.state_version, now_ms);
    }

    /// Sets the state version and bumps (a controller role change: the state
    /// version is the master epoch).
    pub fn bump_with_state_version(&mut self, state_version: i64, now_ms: i64) {
        self.state_version = state_version;
        self.bump(now_ms);
    }

    /// Inserts or replaces a topic; bumps and returns true iff it changed.
    pub fn upsert(&mut self, config: TopicConfig, now_ms: i64) -> bool {
        if self.topics.get(&config.topic_name) == Some(&config) {
            return false;
        }
        self.topics.insert(config.topic_name.clone(), config);
        self.bump(now_ms);
        true
    }

    /// Inserts or replaces many topics with a single bump (if any changed).
    pub fn upsert_all(
        &mut self,
        configs: impl IntoIterator<Item = TopicConfig>,
        now_ms: i64,
    ) -> bool {
        let mut changed = false;
        for config in configs {
            if self.topics.get(&config.topic_name) != Some(&config) {
                self.topics.insert(config.topic_name.clone(), config);
                changed = true;
            }
        }
        if changed {
            self.bump(now_ms);
        }
        changed
    }

    /// Removes a topic (and its mapping); bumps iff it existed. The next full
    /// registration carries the smaller table.
    pub fn remove(&mut self, topic: &str, now_ms: i64) -> bool {
        let removed = self.topics.remove(topic).is_some() | self.mappings.remove(topic).is_some();
        if removed {
            self.bump(now_ms);
        }
        removed
    }

    /// Sets a static-topic mapping; bumps iff it changed.
    pub fn set_mapping(&mut self, info: TopicQueueMappingInfo, now_ms: i64) -> bool {
        if self.mappings.get(&info.topic) == Some(&info) {
            return false;
        }
        self.mappings.insert(info.topic.clone(), info);
        self.bump(now_ms);
        true
    }

    /// Java `updateOrderTopicConfig`: every topic named in the NameServer's
    /// `ORDER_TOPIC_CONFIG` table that the broker has and that is not ordered
    /// becomes ordered; bumps once if anything changed. Never clears `order`.
    pub fn apply_order_config(&mut self, kv: &KvTable, now_ms: i64) -> bool {
        let mut changed = false;
        for topic in kv.table.keys() {
            if let Some(config) = self.topics.get_mut(topic) {
                if !config.order {
                    config.order = true;
                    changed = true;
                }
            }
        }
        if changed {
            self.bump(now_ms);
        }
        changed
    }

    /// `topics.json` as Java persists it: `{"dataVersion":…,"topicConfigTable":…}`
    /// plus the 5.x mapping fields.
    pub fn to_json(&self) -> Vec<u8> {
        TopicConfigSerializeWrapper {
            data_version: self.data_version,
            mapping_data_version: self.data_version,
            topic_config_table: self.topics.clone(),
            topic_queue_mapping_info_map: self.mappings.clone(),
            ..TopicConfigSerializeWrapper::default()
        }
        .to_json(Dialect::Default)
    }

    /// Reads `topics.json`; the state version is taken from its DataVersion.
    ///
    /// # Errors
    /// Malformed JSON.
    pub fn from_json(bytes: &[u8]) -> Result<TopicTable, rmq_protocol::BodyError> {
        let wrapper = TopicConfigSerializeWrapper::from_json(bytes)?;
        Ok(TopicTable {
            state_version: wrapper.data_version.state_version,
            data_version: wrapper.data_version,
            topics: wrapper.topic_config_table,
            mappings: wrapper.topic_queue_mapping_info_map,
        })
    }

    /// Writes [`Self::to_json`] to `path` durably: the data is acknowledged
    /// only after temp file + fsync + rename + directory fsync succeeded.
    ///
    /// # Errors
    /// Any I/O failure; the previous file is then left intact.
    pub fn save(&self, path: &Path) -> io::Result<()> {
        let tmp = path.with_extension("json.tmp");
        {
            let mut file = File::create(&tmp)?;
            file.write_all(&self.to_json())?;
            file.sync_all()?;
        }
        fs::rename(&tmp, path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            File::open(dir)?.sync_all()?;
        }
        Ok(())
    }

    /// Loads `path`, or `None` if it does not exist.
    ///
    /// # Errors
    /// I/O failures other than "not found", and malformed JSON.
    pub fn load(path: &Path) -> io::Result<Option<TopicTable>> {
        match fs::read(path) {
            Ok(bytes) => TopicTable::from_json(&bytes)
                .map(Some)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// `count` topics named `<prefix><i>` with `queues` read and write queues,
/// perm read|write: the bulk tables of simulations and benchmarks.
pub fn numbered_topics(prefix: &str, count: usize, queues: i32) -> Vec<TopicConfig> {
    (0..count)
        .map(|i| TopicConfig {
            read_queue_nums: queues,
            write_queue_nums: queues,
            ..TopicConfig::new(format!("{prefix}{i}"))
        })
        .collect()
}

/// A subset of the system topics a 5.x broker registers: `TBW102` (8
/// queues, perm 7, present with `autoCreateTopicEnable`), `SELF_TEST_TOPIC`,
/// `OFFSET_MOVED_EVENT`, and the cluster-name and broker-name topics (16
/// queues, perm 7). A real broker never registers fewer than two topics,
/// which matters: the NameServer refuses a *first* registration with exactly
/// one topic, taking it for an incremental registration that overtook the
/// broker's full one (`RouteInfoManager.registerBroker`).
pub fn system_topics(cluster_name: &str, broker_name: &str) -> Vec<TopicConfig> {
    let topic = |name: &str, queues: i32, perm: i32| TopicConfig {
        read_queue_nums: queues,
        write_queue_nums: queues,
        perm,
        ..TopicConfig::new(name)
    };
    vec![
        topic("TBW102", 8, 7),
        topic("SELF_TEST_TOPIC", 1, 6),
        topic("OFFSET_MOVED_EVENT", 1, 6),
        topic(cluster_name, 16, 7),
        topic(broker_name, 16, 7),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_bump_exactly_when_something_changed() {
        let mut table = TopicTable::with_topics(numbered_topics("t", 2, 4), 100);
        assert_eq!(table.data_version(), DataVersion::new(0, 0, 100));
        assert!(!table.upsert(table.topics()["t0"].clone(), 200));
        assert_eq!(table.data_version().counter, 0);
        assert!(table.upsert(TopicConfig::new("t2"), 200));
        assert_eq!(table.data_version(), DataVersion::new(1, 0, 200));
        assert!(!table.remove("nope", 300));
        assert!(table.remove("t2", 300));
        assert_eq!(table.data_version(), DataVersion::new(2, 0, 300));
        table.bump_with_state_version(7, 400);
        assert_eq!(table.data_version(), DataVersion::new(3, 7, 400));
        table.bump(500);
        assert_eq!(table.data_version().state_version, 7);
    }

    #[test]
    fn order_config_sets_order_once() {
        let mut table = TopicTable::with_topics(numbered_topics("t", 2, 4), 1);
        let kv = KvTable {
            table: [
                ("t1".to_string(), "b:4".to_string()),
                ("other".to_string(), "b:4".to_string()),
            ]
            .into(),
        };
        assert!(table.apply_order_config(&kv, 2));
        assert!(table.topics()["t1"].order && !table.topics()["t0"].order);
        assert_eq!(table.data_version().counter, 1);
        assert!(!table.apply_order_config(&kv, 3));
        assert_eq!(table.data_version().counter, 1);
    }

    #[test]
    fn persists_durably_and_reloads() {
        let dir = std::env::temp_dir().join(format!("rmq-topics-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("topics.json");
        assert!(TopicTable::load(&path).unwrap().is_none());
        let mut table = TopicTable::with_topics(numbered_topics("t", 3, 8), 10);
        table.bump_with_state_version(2, 20);
        table.save(&path).unwrap();
        assert_eq!(TopicTable::load(&path).unwrap().unwrap(), table);
        fs::remove_dir_all(&dir).unwrap();
    }
}
