//! The configuration as the server shares it: read by every request that
//! depends on an option, changed by UPDATE_NAMESRV_CONFIG, which persists
//! the whole new configuration before anyone reads it.

use std::collections::BTreeMap;
use std::io;

use parking_lot::{Mutex, RwLock, RwLockReadGuard};

use super::NamesrvConfig;

/// The current configuration behind its lock, the keys no update may
/// touch, and the turn of its writers.
#[derive(Debug)]
pub struct SharedConfig {
    current: RwLock<NamesrvConfig>,
    /// [`NamesrvConfig::black_list`] as read at start-up.
    black_list: Vec<String>,
    /// Serializes updates with their persistence, so the file always holds
    /// the latest update.
    writer: Mutex<()>,
}

/// An update that could not be persisted; nothing changed.
#[derive(Debug, thiserror::Error)]
#[error("failed to persist {path}: {source}")]
pub struct ConfigWriteError {
    /// `configStorePath`.
    pub path: String,
    /// What the disk said.
    pub source: io::Error,
}

impl SharedConfig {
    /// Shares `config`; its black list is fixed from now on.
    pub fn new(config: NamesrvConfig) -> SharedConfig {
        SharedConfig {
            black_list: config.black_list(),
            current: RwLock::new(config),
            writer: Mutex::new(()),
        }
    }

    /// The current configuration.
    pub fn read(&self) -> RwLockReadGuard<'_, NamesrvConfig> {
        self.current.read()
    }

    /// Changes options in place, persisting nothing (tests set up a
    /// configuration this way).
    #[cfg(test)]
    pub(crate) fn write(&self) -> parking_lot::RwLockWriteGuard<'_, NamesrvConfig> {
        self.current.write()
    }

    /// Whether UPDATE_NAMESRV_CONFIG refuses to change `key`: a key of
    /// `configBlackList`, one that names a file the server writes, or a
    /// security key (only the `-c` file and `--set` set those).
    pub fn is_black_listed(&self, key: &str) -> bool {
        self.black_list.iter().any(|listed| listed == key)
            || crate::security::is_security_key(key)
            || crate::cluster::ClusterKeys::KEYS.contains(&key)
    }

    /// Applies `updates` to a copy of the configuration, writes the copy to
    /// `configStorePath` durably, and only then makes it current.
    ///
    /// # Errors
    /// The failed write; the configuration is unchanged.
    pub fn update(&self, updates: &BTreeMap<String, String>) -> Result<(), ConfigWriteError> {
        let _turn = self.writer.lock();
        let mut next = self.read().clone();
        next.apply_update(updates);
        let path = next.config_store_path.clone();
        rmq_transport::durable::replace_file(
            std::path::Path::new(&path),
            next.to_file_text().as_bytes(),
        )
        .map_err(|source| ConfigWriteError { path, source })?;
        *self.current.write() = next;
        Ok(())
    }
}
