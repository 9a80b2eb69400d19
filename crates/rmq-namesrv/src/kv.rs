//! The KV configuration store (nameserver.md §8): namespace → key → value,
//! kept in `kvConfigPath` in Java's kvConfig.json format.
//!
//! A PUT or DELETE is acknowledged only once the whole new file is durably
//! on disk; if that fails the error is returned and memory is left as it was
//! (Java logs the IOException and answers success).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use rmq_protocol::{Dialect, JavaJson, KvConfigSerializeWrapper};
use serde::Deserialize;

use rmq_transport::durable::replace_file;

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
    /// The file is not kvConfig.json.
    #[error("{path} is not a valid kvConfig.json: {source}")]
    Format {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
}

/// The store and its file. Cloning is cheap enough for the small tables a
/// NameServer keeps; writers stage a change on a clone (see `handlers::kv`).
#[derive(Debug, Clone)]
pub struct KvStore {
    tables: BTreeMap<String, Namespace>,
    path: PathBuf,
}

impl KvStore {
    /// Loads `path`; a missing file is an empty store.
    pub fn load(path: impl Into<PathBuf>) -> Result<KvStore, KvLoadError> {
        let path = path.into();
        let tables = match std::fs::read(&path) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => BTreeMap::new(),
            Err(source) => return Err(KvLoadError::Io { path, source }),
            Ok(bytes) => {
                let file: KvFile =
                    serde_json::from_slice(&bytes).map_err(|source| KvLoadError::Format {
                        path: path.clone(),
                        source,
                    })?;
                file.config_table
                    .into_iter()
                    .map(|(ns, entries)| {
                        (
                            ns,
                            entries
                                .into_iter()
                                .filter_map(|(k, v)| Some((k, v?)))
                                .collect(),
                        )
                    })
                    .collect()
            }
        };
        Ok(KvStore { tables, path })
    }

    /// The file this store persists to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// One value.
    pub fn get(&self, namespace: &str, key: &str) -> Option<&str> {
        self.tables.get(namespace)?.get(key).map(String::as_str)
    }

    /// One namespace; an emptied namespace still exists.
    pub fn namespace(&self, namespace: &str) -> Option<&Namespace> {
        self.tables.get(namespace)
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
    fn a_malformed_file_is_a_load_error() {
        let path = temp_path("bad");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"{not json").unwrap();
        assert!(matches!(
            KvStore::load(&path),
            Err(KvLoadError::Format { .. })
        ));
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }
}
