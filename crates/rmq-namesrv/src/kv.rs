//! The KV configuration store, Java's `KVConfigManager`: namespace → key →
//! value, kept in `kvConfigPath` in Java's kvConfig.json format plus a
//! journal of the writes since that file was last written
//! (`<kvConfigPath>.journal`, [`journal`]).
//!
//! A PUT or DELETE is one record appended to the journal and acknowledged
//! once the journal is fsynced, so its cost is the size of the change, not
//! of the store; writes that arrive while an fsync runs share the next one
//! ([`SharedKv`]). Once the journal outgrows its bound (a share of
//! kvConfig.json's size, `kvJournalCompactionPercent`, and at least
//! `kvJournalCompactionMinBytes`), kvConfig.json is rewritten whole and the
//! journal emptied; so it is at start-up and on a graceful stop, which
//! leaves kvConfig.json complete for a Java NameServer. If a write fails the
//! error is returned and memory is left as it was (Java logs the
//! IOException and answers success).
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

mod journal;
mod shared;

pub use journal::journal_of;
use journal::Change;
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

/// The store and its file.
#[derive(Debug, Clone)]
pub struct KvStore {
    tables: BTreeMap<String, Namespace>,
    path: PathBuf,
    /// Size of kvConfig.json as last read or written: the journal's
    /// compaction bound is a share of it.
    file_bytes: u64,
}

impl KvStore {
    /// Loads `path`, then replays its journal over it (the journal is the
    /// newer: where they disagree, its records win) and folds the journal
    /// into the file, so that every run starts with an empty journal and a
    /// complete kvConfig.json. A missing file is an empty store; a torn
    /// last record (a crash while appending a write never acknowledged) is
    /// ignored with a warning.
    ///
    /// A file that is not kvConfig.json (an empty one included: a disk that
    /// filled up, an editor's mistake) never becomes an empty store. If its
    /// backup (`<file>.bak`, the content before the last write) decodes, the
    /// damaged file is kept as `<file>.corrupt` and the backup restored in
    /// its place, with a warning naming both; otherwise loading fails,
    /// naming the file.
    pub fn load(path: impl Into<PathBuf>) -> Result<KvStore, KvLoadError> {
        let mut store = KvStore::load_file(path.into())?;
        store.fold_journal()?;
        Ok(store)
    }

    /// Replays the journal over the tables read from the file, writes the
    /// result to the file if the journal changed anything, and empties the
    /// journal.
    fn fold_journal(&mut self) -> Result<(), KvLoadError> {
        let journal = journal_of(&self.path);
        let replay = journal::read(&self.path).map_err(|source| KvLoadError::Io {
            path: journal.clone(),
            source,
        })?;
        if replay.ignored_bytes > 0 {
            tracing::warn!(
                file = %journal.display(),
                records = replay.changes.len(),
                ignored_bytes = replay.ignored_bytes,
                "the KV journal ends in a torn or damaged record (a write cut short by a crash, never acknowledged); it is ignored"
            );
        }
        if replay.good_bytes + replay.ignored_bytes == 0 {
            return Ok(());
        }
        for change in &replay.changes {
            change.apply(&mut self.tables);
        }
        if !replay.changes.is_empty() {
            let bytes = encode(&self.tables);
            replace_file(&self.path, &bytes).map_err(|source| KvLoadError::Io {
                path: self.path.clone(),
                source,
            })?;
            self.file_bytes = bytes.len() as u64;
            tracing::info!(
                file = %self.path.display(),
                records = replay.changes.len(),
                "KV journal folded into kvConfig.json"
            );
        }
        // Only once the file holds the changes: a crash before this leaves
        // the journal to be replayed again, which changes nothing.
        journal::Journal::open(&self.path, 0)
            .map(drop)
            .map_err(|source| KvLoadError::Io {
                path: journal,
                source,
            })
    }

    /// Reads kvConfig.json alone; see [`KvStore::load`].
    fn load_file(path: PathBuf) -> Result<KvStore, KvLoadError> {
        let bytes = match std::fs::read(&path) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                return Ok(KvStore {
                    tables: BTreeMap::new(),
                    path,
                    file_bytes: 0,
                })
            }
            Err(source) => return Err(KvLoadError::Io { path, source }),
            Ok(bytes) => bytes,
        };
        let file_bytes = bytes.len() as u64;
        let source = match decode(&bytes) {
            Ok(tables) => {
                return Ok(KvStore {
                    tables,
                    path,
                    file_bytes,
                })
            }
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
                    return Ok(KvStore {
                        tables,
                        path,
                        file_bytes: saved.len() as u64,
                    });
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
        self.check_quota_after(&[], namespace, key, value, limits)
    }

    /// [`KvStore::check_quota`] of the store as it will be once `pending`
    /// (changes written to the journal, not yet fsynced) is applied.
    fn check_quota_after(
        &self,
        pending: &[Change],
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
        let exists = |key: &str| entries.is_some_and(|entries| entries.contains_key(key));
        // Whether each key the pending changes touch exists once they apply.
        let mut pending_keys = BTreeMap::new();
        for change in pending.iter().filter(|c| c.namespace() == namespace) {
            let (key, present) = change.key_after();
            pending_keys.insert(key, present);
        }
        let mut keys = entries.map_or(0, Namespace::len);
        for (&pending_key, &present) in &pending_keys {
            match (exists(pending_key), present) {
                (false, true) => keys += 1,
                (true, false) => keys = keys.saturating_sub(1),
                _ => {}
            }
        }
        let adds_key = !pending_keys
            .get(key)
            .copied()
            .unwrap_or_else(|| exists(key));
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

    /// Applies a journaled change to memory.
    fn apply(&mut self, change: &Change) {
        change.apply(&mut self.tables);
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
    use super::journal::{encode_record, Journal};
    use super::*;

    fn temp_path(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("waymark-kv-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir.join("kvConfig.json")
    }

    fn shared(path: &Path) -> SharedKv {
        SharedKv::new(KvStore::load(path).unwrap())
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap()
    }

    fn journal_bytes(path: &Path) -> u64 {
        std::fs::metadata(journal_of(path)).map_or(0, |m| m.len())
    }

    fn remove(path: &Path) {
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    const LIMITS: Limits = Limits::DEFAULTS;

    #[test]
    fn writes_are_journaled_and_a_reload_folds_them_into_java_format() {
        let path = temp_path("reload");
        let kv = shared(&path);
        kv.put("ORDER_TOPIC_CONFIG", "UnitTest", Some("test"), &LIMITS)
            .unwrap();
        assert_eq!(
            kv.read().get("ORDER_TOPIC_CONFIG", "UnitTest"),
            Some("test")
        );
        assert!(!path.exists(), "a write appends to the journal only");
        assert!(journal_bytes(&path) > 0);

        let reloaded = KvStore::load(&path).unwrap();
        assert_eq!(reloaded.get("ORDER_TOPIC_CONFIG", "UnitTest"), Some("test"));
        assert_eq!(
            read(&path),
            r#"{"configTable":{"ORDER_TOPIC_CONFIG":{"UnitTest":"test"}}}"#
        );
        assert_eq!(journal_bytes(&path), 0, "folded at load");

        let kv = SharedKv::new(reloaded);
        kv.delete("ORDER_TOPIC_CONFIG", "UnitTest", &LIMITS)
            .unwrap();
        let reloaded = KvStore::load(&path).unwrap();
        assert_eq!(reloaded.get("ORDER_TOPIC_CONFIG", "UnitTest"), None);
        assert_eq!(
            reloaded.namespace("ORDER_TOPIC_CONFIG").map(|n| n.len()),
            Some(0)
        );
        assert_eq!(read(&path), r#"{"configTable":{"ORDER_TOPIC_CONFIG":{}}}"#);
        remove(&path);
    }

    #[test]
    fn the_compacted_file_uses_fastjson_escaping_and_reads_back() {
        let path = temp_path("escape");
        let kv = shared(&path);
        let value = "a/b\u{e9}\u{2028}\u{7f}\"";
        kv.put("ns", "k", Some(value), &LIMITS).unwrap();
        kv.compact().unwrap();
        assert_eq!(
            read(&path),
            "{\"configTable\":{\"ns\":{\"k\":\"a/b\u{e9}\\u2028\\u007F\\\"\"}}}"
        );
        assert_eq!(journal_bytes(&path), 0);
        assert_eq!(KvStore::load(&path).unwrap().get("ns", "k"), Some(value));
        remove(&path);
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
        remove(&path);
    }

    /// Java `KVConfigManagerTest`: put then get; on a fresh manager a delete
    /// in a missing namespace is harmless and both lookups stay empty.
    #[test]
    fn java_kv_config_manager_test() {
        let path = temp_path("java");
        let kv = shared(&path);
        kv.put("ORDER_TOPIC_CONFIG", "UnitTest", Some("test"), &LIMITS)
            .unwrap();
        assert_eq!(
            kv.read().get("ORDER_TOPIC_CONFIG", "UnitTest"),
            Some("test")
        );
        assert!(kv.read().namespace("ORDER_TOPIC_CONFIG").is_some());

        let fresh_path = temp_path("java-fresh");
        let fresh = shared(&fresh_path);
        fresh
            .delete("ORDER_TOPIC_CONFIG", "UnitTest", &LIMITS)
            .unwrap();
        assert!(fresh.read().namespace("ORDER_TOPIC_CONFIG").is_none());
        assert_eq!(fresh.read().get("ORDER_TOPIC_CONFIG", "UnitTest"), None);
        remove(&path);
        remove(&fresh_path);
    }

    #[test]
    fn deleting_from_a_missing_namespace_is_harmless() {
        let path = temp_path("missing");
        let kv = shared(&path);
        kv.delete("nope", "k", &LIMITS).unwrap();
        assert!(kv.read().namespace("nope").is_none());
        assert!(KvStore::load(&path).unwrap().namespace("nope").is_none());
        remove(&path);
    }

    #[test]
    fn a_failed_persist_changes_nothing_in_memory() {
        let path = temp_path("fail");
        let kv = shared(&path);
        // A directory where the journal goes: it cannot be opened.
        std::fs::create_dir_all(journal_of(&path).join("blocker")).unwrap();
        assert!(kv.put("ns", "k", Some("v"), &LIMITS).is_err());
        assert_eq!(kv.read().get("ns", "k"), None);
        assert!(kv.delete("ns", "k", &LIMITS).is_err());
        remove(&path);
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
        remove(&path);
    }

    #[test]
    fn quotas_refuse_large_values_and_new_keys_past_the_limit() {
        let path = temp_path("quota");
        let kv = shared(&path);
        let limits = Limits {
            max_kv_value_bytes: 8,
            max_kv_keys_per_namespace: 2,
            ..LIMITS
        };
        let store = kv.read().clone();
        assert_eq!(
            store.check_quota("ns", "a", Some("12345678"), &limits),
            Ok(())
        );
        let large = store.check_quota("ns", "a", Some("123456789"), &limits);
        assert_eq!(large, Err(KvQuotaError::ValueTooLarge { len: 9, limit: 8 }));
        assert!(large.unwrap_err().to_string().contains("maxKvValueBytes"));
        kv.put("ns", "a", Some("1"), &limits).unwrap();
        kv.put("ns", "b", Some("2"), &limits).unwrap();
        let full = kv.put("ns", "c", Some("3"), &limits).unwrap_err();
        let KvWriteError::Quota(full) = full else {
            panic!("a quota error: {full}")
        };
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
        let store = kv.read();
        assert_eq!(store.check_quota("ns", "a", Some("x"), &limits), Ok(()));
        assert_eq!(store.check_quota("ns", "c", None, &limits), Ok(()));
        assert_eq!(store.check_quota("other", "c", Some("3"), &limits), Ok(()));
        drop(store);
        remove(&path);
    }

    #[test]
    fn quotas_count_the_changes_not_yet_fsynced() {
        let path = temp_path("quota-pending");
        let limits = Limits {
            max_kv_keys_per_namespace: 2,
            ..LIMITS
        };
        let store = KvStore::load(&path).unwrap();
        let put = |key: &str, value: Option<&str>| Change::Put {
            namespace: "ns".into(),
            key: key.into(),
            value: value.map(str::to_owned),
        };
        let two = [put("a", Some("1")), put("b", Some("2"))];
        assert!(store
            .check_quota_after(&two, "ns", "c", Some("3"), &limits)
            .is_err());
        assert_eq!(
            store.check_quota_after(&two, "ns", "a", Some("3"), &limits),
            Ok(())
        );
        let removed = [put("a", Some("1")), put("b", Some("2")), put("a", None)];
        assert_eq!(
            store.check_quota_after(&removed, "ns", "c", Some("3"), &limits),
            Ok(())
        );
    }

    #[test]
    fn a_store_over_quota_still_loads() {
        let path = temp_path("over-quota");
        let kv = shared(&path);
        for key in ["a", "b", "c"] {
            kv.put("ns", key, Some("a long value"), &LIMITS).unwrap();
        }
        let limits = Limits {
            max_kv_value_bytes: 4,
            max_kv_keys_per_namespace: 2,
            ..LIMITS
        };
        let reloaded = KvStore::load(&path).unwrap();
        reloaded.warn_over_quota(&limits);
        assert_eq!(reloaded.namespace("ns").map(Namespace::len), Some(3));
        remove(&path);
    }

    #[test]
    fn a_damaged_file_is_restored_from_its_backup() {
        let path = temp_path("restore");
        let kv = shared(&path);
        kv.put("ns", "first", Some("1"), &LIMITS).unwrap();
        kv.compact().unwrap();
        kv.put("ns", "second", Some("2"), &LIMITS).unwrap();
        kv.compact().unwrap();
        drop(kv);
        // A torn or emptied file (not by Waymark, which replaces it whole).
        std::fs::write(&path, b"").unwrap();
        let restored = KvStore::load(&path).unwrap();
        assert_eq!(restored.get("ns", "first"), Some("1"));
        assert_eq!(
            restored.get("ns", "second"),
            None,
            "the backup predates the last compaction"
        );
        assert_eq!(std::fs::read(sibling(&path, ".corrupt")).unwrap(), b"");
        assert_eq!(read(&path), r#"{"configTable":{"ns":{"first":"1"}}}"#);
        // The next rewrite backs up the restored file, not the damaged one.
        let kv = SharedKv::new(restored);
        kv.put("ns", "third", Some("3"), &LIMITS).unwrap();
        kv.compact().unwrap();
        assert_eq!(
            read(&backup_of(&path)),
            r#"{"configTable":{"ns":{"first":"1"}}}"#
        );
        remove(&path);
    }

    fn write_journal(path: &Path, changes: &[Change]) -> Vec<u8> {
        let bytes: Vec<u8> = changes
            .iter()
            .flat_map(|change| encode_record(change).unwrap())
            .collect();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(journal_of(path), &bytes).unwrap();
        bytes
    }

    #[test]
    fn the_journal_wins_over_the_file_it_follows() {
        let path = temp_path("conflict");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            r#"{"configTable":{"ns":{"a":"old","b":"kept","c":"deleted"}}}"#,
        )
        .unwrap();
        write_journal(
            &path,
            &[
                Change::Put {
                    namespace: "ns".into(),
                    key: "a".into(),
                    value: Some("new".into()),
                },
                Change::Delete {
                    namespace: "ns".into(),
                    key: "c".into(),
                },
                Change::Put {
                    namespace: "added".into(),
                    key: "k".into(),
                    value: None,
                },
            ],
        );
        let store = KvStore::load(&path).unwrap();
        assert_eq!(store.get("ns", "a"), Some("new"));
        assert_eq!(store.get("ns", "b"), Some("kept"));
        assert_eq!(store.get("ns", "c"), None);
        assert_eq!(store.namespace("added").map(Namespace::len), Some(0));
        assert_eq!(
            read(&path),
            r#"{"configTable":{"added":{},"ns":{"a":"new","b":"kept"}}}"#
        );
        assert_eq!(
            read(&backup_of(&path)),
            r#"{"configTable":{"ns":{"a":"old","b":"kept","c":"deleted"}}}"#
        );
        assert_eq!(journal_bytes(&path), 0);
        remove(&path);
    }

    #[test]
    fn a_journal_replayed_over_a_file_that_already_holds_it_changes_nothing() {
        // A crash between rewriting kvConfig.json and emptying the journal.
        let path = temp_path("replay-twice");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, r#"{"configTable":{"ns":{"a":"2"}}}"#).unwrap();
        let put = |value: &str| Change::Put {
            namespace: "ns".into(),
            key: "a".into(),
            value: Some(value.into()),
        };
        let delete = |key: &str| Change::Delete {
            namespace: "ns".into(),
            key: key.into(),
        };
        write_journal(&path, &[delete("a"), put("1"), put("2"), delete("b")]);
        let store = KvStore::load(&path).unwrap();
        assert_eq!(store.get("ns", "a"), Some("2"));
        assert_eq!(read(&path), r#"{"configTable":{"ns":{"a":"2"}}}"#);
        remove(&path);
    }

    #[test]
    fn a_torn_last_record_is_ignored_at_load() {
        let path = temp_path("torn");
        let put = |key: &str| Change::Put {
            namespace: "ns".into(),
            key: key.into(),
            value: Some("v".into()),
        };
        let bytes = write_journal(&path, &[put("whole"), put("torn")]);
        std::fs::write(journal_of(&path), &bytes[..bytes.len() - 3]).unwrap();
        let store = KvStore::load(&path).unwrap();
        assert_eq!(store.get("ns", "whole"), Some("v"));
        assert_eq!(store.get("ns", "torn"), None);
        assert_eq!(journal_bytes(&path), 0);
        // Writing goes on after it.
        let kv = SharedKv::new(store);
        kv.put("ns", "next", Some("v"), &LIMITS).unwrap();
        let store = KvStore::load(&path).unwrap();
        assert_eq!(
            (store.get("ns", "whole"), store.get("ns", "next")),
            (Some("v"), Some("v"))
        );
        remove(&path);
    }

    #[test]
    fn the_journal_is_compacted_past_its_bound() {
        let path = temp_path("bound");
        let limits = Limits {
            kv_journal_compaction_min_bytes: 1_000,
            kv_journal_compaction_percent: 50,
            ..LIMITS
        };
        let kv = shared(&path);
        let value = "x".repeat(100);
        let mut largest = 0;
        for round in 0..100 {
            kv.put("ns", &format!("key-{round}"), Some(&value), &limits)
                .unwrap();
            let file = std::fs::metadata(&path).map_or(0, |m| m.len());
            let bound = (file / 2).max(1_000);
            let journal = journal_bytes(&path);
            // Past the bound by at most the record that crossed it.
            assert!(journal <= bound + 200, "journal {journal}, bound {bound}");
            largest = largest.max(journal);
        }
        assert!(largest > 1_000, "the journal grew up to its bound");
        let file = read(&path);
        assert!(file.starts_with(r#"{"configTable":{"ns":{"key-0":"xxx"#));
        drop(kv);
        let store = KvStore::load(&path).unwrap();
        assert_eq!(store.namespace("ns").map(Namespace::len), Some(100));
        remove(&path);
    }

    #[test]
    fn a_deletion_survives_a_restart_and_a_compaction() {
        let path = temp_path("delete");
        let kv = shared(&path);
        kv.put("ns", "gone", Some("1"), &LIMITS).unwrap();
        kv.put("ns", "kept", Some("2"), &LIMITS).unwrap();
        kv.compact().unwrap();
        kv.delete("ns", "gone", &LIMITS).unwrap();
        drop(kv);
        // Restart: the deletion is only in the journal.
        assert!(read(&path).contains("gone"));
        let store = KvStore::load(&path).unwrap();
        assert_eq!(
            (store.get("ns", "gone"), store.get("ns", "kept")),
            (None, Some("2"))
        );
        // Folded into the file at that start, and so after a compaction.
        assert_eq!(read(&path), r#"{"configTable":{"ns":{"kept":"2"}}}"#);
        let kv = SharedKv::new(store);
        kv.put("ns", "gone", Some("again"), &LIMITS).unwrap();
        kv.delete("ns", "gone", &LIMITS).unwrap();
        kv.compact().unwrap();
        assert_eq!(read(&path), r#"{"configTable":{"ns":{"kept":"2"}}}"#);
        assert_eq!(KvStore::load(&path).unwrap().get("ns", "gone"), None);
        remove(&path);
    }

    #[test]
    fn concurrent_writers_share_fsyncs_and_all_land() {
        let path = temp_path("concurrent");
        let kv = std::sync::Arc::new(shared(&path));
        let writers: Vec<_> = (0..8)
            .map(|writer| {
                let kv = kv.clone();
                std::thread::spawn(move || {
                    for n in 0..25 {
                        let key = format!("{writer}-{n}");
                        kv.put("ns", &key, Some(&key), &LIMITS).unwrap();
                        assert_eq!(kv.read().get("ns", &key), Some(key.as_str()));
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        drop(kv);
        let store = KvStore::load(&path).unwrap();
        assert_eq!(store.namespace("ns").map(Namespace::len), Some(200));
        assert_eq!(store.get("ns", "7-24"), Some("7-24"));
        remove(&path);
    }

    #[test]
    fn a_journal_left_by_a_failed_append_is_emptied_before_the_next_record() {
        let path = temp_path("recover");
        let kv = shared(&path);
        kv.put("ns", "a", Some("1"), &LIMITS).unwrap();
        // As after a failed append: garbage past the last whole record.
        {
            let mut journal = Journal::open(&path, journal_bytes(&path)).unwrap();
            journal.append(&[1, 2, 3]).unwrap();
        }
        kv.suspect_journal();
        kv.put("ns", "b", Some("2"), &LIMITS).unwrap();
        assert_eq!(read(&path), r#"{"configTable":{"ns":{"a":"1"}}}"#);
        drop(kv);
        let store = KvStore::load(&path).unwrap();
        assert_eq!(
            (store.get("ns", "a"), store.get("ns", "b")),
            (Some("1"), Some("2"))
        );
        remove(&path);
    }
}
