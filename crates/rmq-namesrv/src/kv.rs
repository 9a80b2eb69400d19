//! The KV configuration store, Java's `KVConfigManager`: namespace → key →
//! value, kept in `kvConfigPath` in Java's kvConfig.json format.
//!
//! A PUT or DELETE is acknowledged only once the whole new file is durably
//! on disk; if that fails the error is returned and memory is left as it was
//! (Java logs the IOException and answers success).
//!
//! Quotas ([`Limits`]: value size, keys per namespace) are checked by
//! [`KvStore::check_quota`] before a PUT is staged; a store written before
//! them still loads, with a warning ([`KvStore::warn_over_quota`]).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use rmq_protocol::{Dialect, JavaJson, KvConfigSerializeWrapper};
use serde::Deserialize;

use rmq_transport::durable::{backup_of, replace_file, sibling, write_atomically};

use crate::limits::Limits;

mod shared;

pub use shared::{KvWriteError, SharedKv};

/// KV namespace of order-topic configuration: a topic's value there is its
/// `orderTopicConf` in route answers, and brokers are sent the namespace
/// when they register (`returnOrderTopicConfigToBroker`).
pub const ORDER_TOPIC_CONFIG: &str = "ORDER_TOPIC_CONFIG";

/// One namespace's entries.
pub type Namespace = BTreeMap<String, String>;

/// kvConfig.json: `{"configTable":{"<namespace>":{"<key>":"<value>"}}}`.
#[derive(Debug, Default, Deserialize)]
struct KvFile {
    #[serde(rename = "configTable", default)]
    config_table: BTreeMap<String, BTreeMap<String, Option<String>>>,
}

/// A kvConfig.json that cannot be read at start-up.
#[derive(Debug, thiserror::Error)]
pub enum KvLoadError {
    /// The file exists but cannot be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file is not kvConfig.json (an empty file neither), and its backup
    /// cannot stand in for it.
    #[error("{path} is not a valid kvConfig.json ({source}), and its backup {backup} {backup_state}; refusing to start with an empty KV store")]
    Format {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
        /// `<file>.bak`, the previous content every write keeps.
        backup: PathBuf,
        /// What is wrong with the backup.
        backup_state: String,
    },
    /// The backup was good, but putting it in place of the damaged file failed.
    #[error("cannot restore {path} from its backup: {source}")]
    Restore {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

/// A PUT_KV_CONFIG that would take the store past a quota of [`Limits`].
/// The messages name the limit's configuration key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KvQuotaError {
    /// The value is larger than `maxKvValueBytes`.
    #[error("value of {len} bytes exceeds maxKvValueBytes ({limit})")]
    ValueTooLarge {
        /// The value's size in UTF-8 bytes.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// The namespace already holds `maxKvKeysPerNamespace` keys.
    #[error("namespace {namespace} already holds {keys} keys, maxKvKeysPerNamespace is {limit}")]
    TooManyKeys {
        /// The namespace.
        namespace: String,
        /// Keys it holds now.
        keys: usize,
        /// The limit.
        limit: usize,
    },
}

/// The store and its file. Cloning is cheap enough for the small tables a
/// NameServer keeps; writers stage a change on a clone ([`SharedKv`]).
#[derive(Debug, Clone)]
pub struct KvStore {
    tables: BTreeMap<String, Namespace>,
    path: PathBuf,
}

impl KvStore {
    /// Loads `path`; a missing file is an empty store.
    ///
    /// A file that is not kvConfig.json (an empty one included: a disk that
    /// filled up, an editor's mistake) never becomes an empty store. If its
    /// backup (`<file>.bak`, the content before the last write) decodes, the
    /// damaged file is kept as `<file>.corrupt` and the backup restored in
    /// its place, with a warning naming both; otherwise loading fails,
    /// naming the file.
    pub fn load(path: impl Into<PathBuf>) -> Result<KvStore, KvLoadError> {
        let path = path.into();
        let bytes = match std::fs::read(&path) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                return Ok(KvStore {
                    tables: BTreeMap::new(),
                    path,
                })
            }
            Err(source) => return Err(KvLoadError::Io { path, source }),
            Ok(bytes) => bytes,
        };
        let source = match decode(&bytes) {
            Ok(tables) => return Ok(KvStore { tables, path }),
            Err(source) => source,
        };
        let backup = backup_of(&path);
        let backup_state = match std::fs::read(&backup) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => "does not exist".to_owned(),
            Err(err) => format!("cannot be read ({err})"),
            Ok(saved) => match decode(&saved) {
                Err(err) => format!("is not valid either ({err})"),
                Ok(tables) => {
                    // Copy, then replace: a crash in between leaves the damaged
                    // file and its backup, never no file at all.
                    let corrupt = sibling(&path, ".corrupt");
                    std::fs::copy(&path, &corrupt)
                        .and_then(|_| write_atomically(&path, &saved))
                        .map_err(|source| KvLoadError::Restore {
                            path: path.clone(),
                            source,
                        })?;
                    tracing::warn!(
                        file = %path.display(),
                        kept_as = %corrupt.display(),
                        restored_from = %backup.display(),
                        error = %source,
                        "kvConfig.json was damaged; restored from its backup, which lacks at most the last KV write"
                    );
                    return Ok(KvStore { tables, path });
                }
            },
        };
        Err(KvLoadError::Format {
            path,
            source,
            backup,
            backup_state,
        })
    }

    /// The file this store persists to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// One value.
    pub fn get(&self, namespace: &str, key: &str) -> Option<&str> {
        self.tables.get(namespace)?.get(key).map(String::as_str)
    }

    /// Every namespace, by name.
    pub fn namespaces(&self) -> impl Iterator<Item = (&String, &Namespace)> {
        self.tables.iter()
    }

    /// One namespace; an emptied namespace still exists.
    pub fn namespace(&self, namespace: &str) -> Option<&Namespace> {
        self.tables.get(namespace)
    }

    /// Whether PUT_KV_CONFIG of `value` under `namespace`/`key` stays within
    /// `limits`. Removing (`None`) and replacing an existing key never add a
    /// key, so only the value size applies to them.
    ///
    /// # Errors
    /// The first quota the put would break.
    pub fn check_quota(
        &self,
        namespace: &str,
        key: &str,
        value: Option<&str>,
        limits: &Limits,
    ) -> Result<(), KvQuotaError> {
        let Some(value) = value else {
            return Ok(());
        };
        if value.len() > limits.max_kv_value_bytes {
            return Err(KvQuotaError::ValueTooLarge {
                len: value.len(),
                limit: limits.max_kv_value_bytes,
            });
        }
        let entries = self.tables.get(namespace);
        let keys = entries.map_or(0, Namespace::len);
        let adds_key = entries.is_none_or(|entries| !entries.contains_key(key));
        if adds_key && keys >= limits.max_kv_keys_per_namespace {
            return Err(KvQuotaError::TooManyKeys {
                namespace: namespace.to_owned(),
                keys,
                limit: limits.max_kv_keys_per_namespace,
            });
        }
        Ok(())
    }

    /// Logs a warning for every namespace over a quota of `limits` (a store
    /// written before the quotas, or under larger ones). Such a store stays
    /// readable; only further growth is refused.
    pub fn warn_over_quota(&self, limits: &Limits) {
        for (namespace, entries) in &self.tables {
            let large = entries
                .values()
                .filter(|v| v.len() > limits.max_kv_value_bytes)
                .count();
            if entries.len() > limits.max_kv_keys_per_namespace || large > 0 {
                tracing::warn!(
                    file = %self.path.display(),
                    %namespace,
                    keys = entries.len(),
                    max_kv_keys_per_namespace = limits.max_kv_keys_per_namespace,
                    values_over_limit = large,
                    max_kv_value_bytes = limits.max_kv_value_bytes,
                    "KV namespace exceeds a quota; it is kept, but puts that grow it are refused"
                );
            }
        }
    }

    /// Stores a value (creating the namespace) and persists. `None` removes
    /// the key but keeps the namespace, as a Java null value does.
    pub fn put(&mut self, namespace: &str, key: &str, value: Option<&str>) -> io::Result<()> {
        let mut next = self.tables.clone();
        let entries = next.entry(namespace.to_owned()).or_default();
        match value {
            Some(value) => {
                entries.insert(key.to_owned(), value.to_owned());
            }
            None => {
                entries.remove(key);
            }
        }
        self.commit(next)
    }

    /// Removes a key if present and persists (always, as Java).
    pub fn delete(&mut self, namespace: &str, key: &str) -> io::Result<()> {
        let mut next = self.tables.clone();
        if let Some(entries) = next.get_mut(namespace) {
            entries.remove(key);
        }
        self.commit(next)
    }

    fn commit(&mut self, next: BTreeMap<String, Namespace>) -> io::Result<()> {
        replace_file(&self.path, &encode(&next))?;
        self.tables = next;
        Ok(())
    }
}

/// The tables of a kvConfig.json (`null` values read as absent, as Java).
fn decode(bytes: &[u8]) -> Result<BTreeMap<String, Namespace>, serde_json::Error> {
    let file: KvFile = serde_json::from_slice(bytes)?;
    Ok(file
        .config_table
        .into_iter()
        .map(|(ns, entries)| {
            let present = entries.into_iter().filter_map(|(k, v)| Some((k, v?)));
            (ns, present.collect())
        })
        .collect())
}

/// The file content exactly as Java's fastjson writes it (default dialect:
/// e.g. U+2028 and U+007F–U+009F escaped, other non-ASCII raw).
fn encode(tables: &BTreeMap<String, Namespace>) -> Vec<u8> {
    KvConfigSerializeWrapper {
        config_table: tables.clone(),
    }
    .to_json(Dialect::Default)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_path(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("waymark-kv-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir.join("kvConfig.json")
    }

    #[test]
    fn put_get_delete_survive_a_reload_in_java_format() {
        let path = temp_path("reload");
        let mut store = KvStore::load(&path).unwrap();
        store
            .put("ORDER_TOPIC_CONFIG", "UnitTest", Some("test"))
            .unwrap();
        assert_eq!(store.get("ORDER_TOPIC_CONFIG", "UnitTest"), Some("test"));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            r#"{"configTable":{"ORDER_TOPIC_CONFIG":{"UnitTest":"test"}}}"#
        );
        store.delete("ORDER_TOPIC_CONFIG", "UnitTest").unwrap();
        let reloaded = KvStore::load(&path).unwrap();
        assert_eq!(reloaded.get("ORDER_TOPIC_CONFIG", "UnitTest"), None);
        assert_eq!(
            reloaded.namespace("ORDER_TOPIC_CONFIG").map(|n| n.len()),
            Some(0)
        );
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[test]
    fn the_file_uses_fastjson_escaping_and_reads_back() {
        let path = temp_path("escape");
        let mut store = KvStore::load(&path).unwrap();
        let value = "a/b\u{e9}\u{2028}\u{7f}\"";
        store.put("ns", "k", Some(value)).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"configTable\":{\"ns\":{\"k\":\"a/b\u{e9}\\u2028\\u007F\\\"\"}}}"
        );
        assert_eq!(KvStore::load(&path).unwrap().get("ns", "k"), Some(value));
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[test]
    fn java_null_values_read_as_absent() {
        let path = temp_path("null");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, r#"{"configTable":{"ns":{"k":null,"j":"v"}}}"#).unwrap();
        let store = KvStore::load(&path).unwrap();
        assert_eq!(
            (store.get("ns", "k"), store.get("ns", "j")),
            (None, Some("v"))
        );
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    /// Java `KVConfigManagerTest`: put then get; on a fresh manager a delete
    /// in a missing namespace is harmless and both lookups stay empty.
    #[test]
    fn java_kv_config_manager_test() {
        let path = temp_path("java");
        let mut store = KvStore::load(&path).unwrap();
        store
            .put("ORDER_TOPIC_CONFIG", "UnitTest", Some("test"))
            .unwrap();
        assert_eq!(store.get("ORDER_TOPIC_CONFIG", "UnitTest"), Some("test"));
        assert!(store.namespace("ORDER_TOPIC_CONFIG").is_some());

        let mut fresh = KvStore::load(temp_path("java-fresh")).unwrap();
        fresh.delete("ORDER_TOPIC_CONFIG", "UnitTest").unwrap();
        assert!(fresh.namespace("ORDER_TOPIC_CONFIG").is_none());
        assert_eq!(fresh.get("ORDER_TOPIC_CONFIG", "UnitTest"), None);
        for store in [store, fresh] {
            std::fs::remove_dir_all(store.path().parent().unwrap()).unwrap();
        }
    }

    #[test]
    fn deleting_from_a_missing_namespace_is_harmless() {
        let path = temp_path("missing");
        let mut store = KvStore::load(&path).unwrap();
        store.delete("nope", "k").unwrap();
        assert!(store.namespace("nope").is_none());
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_failed_persist_changes_nothing_in_memory() {
        let path = temp_path("fail");
        std::fs::create_dir_all(path.join("blocker")).unwrap(); // a directory where the file goes
        let mut store = KvStore {
            tables: BTreeMap::new(),
            path: path.clone(),
        };
        assert!(store.put("ns", "k", Some("v")).is_err());
        assert_eq!(store.get("ns", "k"), None);
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_malformed_or_empty_file_without_a_good_backup_is_a_load_error() {
        let path = temp_path("bad");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        for (content, backup) in [
            (&b"{not json"[..], None),
            (b"", None),
            (b"", Some(&b"[also broken"[..])),
        ] {
            std::fs::write(&path, content).unwrap();
            if let Some(backup) = backup {
                std::fs::write(backup_of(&path), backup).unwrap();
            }
            let error = KvStore::load(&path).unwrap_err();
            assert!(matches!(error, KvLoadError::Format { .. }), "{error}");
            let text = error.to_string();
            assert!(
                text.contains("kvConfig.json") && text.contains(".bak"),
                "{text}"
            );
            assert_eq!(
                std::fs::read(&path).unwrap(),
                content,
                "the file is left alone"
            );
        }
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[test]
    fn quotas_refuse_large_values_and_new_keys_past_the_limit() {
        let path = temp_path("quota");
        let mut store = KvStore::load(&path).unwrap();
        let limits = Limits {
            max_kv_value_bytes: 8,
            max_kv_keys_per_namespace: 2,
            ..Limits::default()
        };
        assert_eq!(
            store.check_quota("ns", "a", Some("12345678"), &limits),
            Ok(())
        );
        let large = store.check_quota("ns", "a", Some("123456789"), &limits);
        assert_eq!(large, Err(KvQuotaError::ValueTooLarge { len: 9, limit: 8 }));
        assert!(large.unwrap_err().to_string().contains("maxKvValueBytes"));
        store.put("ns", "a", Some("1")).unwrap();
        store.put("ns", "b", Some("2")).unwrap();
        let full = store
            .check_quota("ns", "c", Some("3"), &limits)
            .unwrap_err();
        assert!(
            matches!(
                &full,
                KvQuotaError::TooManyKeys {
                    keys: 2,
                    limit: 2,
                    ..
                }
            ),
            "{full}"
        );
        assert!(full.to_string().contains("maxKvKeysPerNamespace"));
        // Replacing or removing a key, and other namespaces, stay allowed.
        assert_eq!(store.check_quota("ns", "a", Some("x"), &limits), Ok(()));
        assert_eq!(store.check_quota("ns", "c", None, &limits), Ok(()));
        assert_eq!(store.check_quota("other", "c", Some("3"), &limits), Ok(()));
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_store_over_quota_still_loads() {
        let path = temp_path("over-quota");
        let mut store = KvStore::load(&path).unwrap();
        for key in ["a", "b", "c"] {
            store.put("ns", key, Some("a long value")).unwrap();
        }
        let limits = Limits {
            max_kv_value_bytes: 4,
            max_kv_keys_per_namespace: 2,
            ..Limits::default()
        };
        let reloaded = KvStore::load(&path).unwrap();
        reloaded.warn_over_quota(&limits);
        assert_eq!(reloaded.namespace("ns").map(Namespace::len), Some(3));
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_damaged_file_is_restored_from_its_backup() {
        let path = temp_path("restore");
        let mut store = KvStore::load(&path).unwrap();
        store.put("ns", "first", Some("1")).unwrap();
        store.put("ns", "second", Some("2")).unwrap();
        // A torn or emptied file (not by Waymark, which replaces it whole).
        std::fs::write(&path, b"").unwrap();
        let restored = KvStore::load(&path).unwrap();
        assert_eq!(restored.get("ns", "first"), Some("1"));
        assert_eq!(
            restored.get("ns", "second"),
            None,
            "the backup predates the last write"
        );
        assert_eq!(std::fs::read(sibling(&path, ".corrupt")).unwrap(), b"");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            r#"{"configTable":{"ns":{"first":"1"}}}"#
        );
        // The next write backs up the restored file, not the damaged one.
        let mut restored = restored;
        restored.put("ns", "third", Some("3")).unwrap();
        assert_eq!(
            std::fs::read_to_string(backup_of(&path)).unwrap(),
            r#"{"configTable":{"ns":{"first":"1"}}}"#
        );
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }
}
