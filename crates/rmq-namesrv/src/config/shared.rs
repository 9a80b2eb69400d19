//! The configuration as the server shares it: read by every request that
//! depends on an option, changed by UPDATE_NAMESRV_CONFIG, which checks
//! every entry as start-up does and persists the whole new configuration
//! before anyone reads it.

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
    /// Whether the controller runs in this process (`enableControllerInNamesrv`
    /// at start-up): its keys are then checked by its option types, as at
    /// start-up.
    embedded_controller: bool,
    /// Serializes updates with their persistence, so the file always holds
    /// the latest update.
    writer: Mutex<()>,
}

/// Why an UPDATE_NAMESRV_CONFIG changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum UpdateRefusal {
    /// A key of the black list (Java's refusal).
    #[error("{key} is black-listed")]
    BlackListed {
        /// The key.
        key: String,
    },
    /// A value start-up would refuse: the reason names the key and the rule.
    #[error("{0}")]
    Invalid(String),
    /// One of Waymark's own keys, read at start-up only.
    #[error("{key} cannot be changed at run time: it is read once at start-up; set it in the -c file or with --set and restart")]
    NeedsRestart {
        /// The key.
        key: String,
    },
    /// The new configuration could not be written.
    #[error(transparent)]
    Write(#[from] ConfigWriteError),
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
            embedded_controller: config.enable_controller_in_namesrv,
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

    /// Why UPDATE_NAMESRV_CONFIG may not apply `updates`, judged whole
    /// before anything changes, in Java's order first: a black-listed key
    /// (NO_PERMISSION in Java too), then a value the `-c` file would be
    /// refused for ([`super::check_value`], so that no update stores what
    /// the next start refuses or Java's own start fails on), then one of
    /// Waymark's start-up keys ([`super::is_start_up_only`]).
    ///
    /// # Errors
    /// The first refusal, in key order within each kind.
    pub fn check_update(&self, updates: &BTreeMap<String, String>) -> Result<(), UpdateRefusal> {
        if let Some(key) = updates.keys().find(|key| self.is_black_listed(key)) {
            return Err(UpdateRefusal::BlackListed { key: key.clone() });
        }
        for (key, value) in updates {
            super::check_value(key, value, self.embedded_controller)
                .map_err(UpdateRefusal::Invalid)?;
        }
        if let Some(key) = updates.keys().find(|key| super::is_start_up_only(key)) {
            return Err(UpdateRefusal::NeedsRestart { key: key.clone() });
        }
        Ok(())
    }

    /// Checks `updates` ([`SharedConfig::check_update`]), applies them to a
    /// copy of the configuration, writes the copy to `configStorePath`
    /// durably, and only then makes it current.
    ///
    /// # Errors
    /// The refusal or the failed write; the configuration, running and
    /// saved, is unchanged.
    pub fn update(&self, updates: &BTreeMap<String, String>) -> Result<(), UpdateRefusal> {
        self.check_update(updates)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn shared_in(dir: &std::path::Path) -> SharedConfig {
        let mut config = NamesrvConfig::defaults(dir, None);
        config.config_store_path = dir.join("namesrv.properties").display().to_string();
        SharedConfig::new(config)
    }

    fn updates(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    /// What start-up refuses, an update refuses, naming the key and the
    /// rule, and then neither the running configuration nor the file moves,
    /// even for the good entries of the same update.
    #[test]
    fn an_update_is_checked_as_start_up_and_refused_whole() {
        let dir = std::env::temp_dir().join(format!("shared-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let shared = shared_in(&dir);
        let before = shared.read().clone();
        for (key, value, rule) in [
            ("scanNotActiveBrokerInterval", "-5", "must be at least 1"),
            ("scanNotActiveBrokerInterval", "0", "must be at least 1"),
            ("defaultThreadPoolNums", "-5", "must be at least 1"),
            ("serverSocketBacklog", "-5", "must be at least 0"),
            ("unRegisterBrokerQueueCapacity", "0", "must be at least 1"),
            ("listenPort", "abc", "from 0 to 65535"),
        ] {
            let refusal = shared
                .update(&updates(&[("orderMessageEnable", "true"), (key, value)]))
                .unwrap_err();
            let UpdateRefusal::Invalid(why) = &refusal else {
                panic!("{key}={value}: {refusal:?}");
            };
            assert!(why.contains(key) && why.contains(rule), "{why}");
            assert_eq!(
                NamesrvConfig::check_startup(key, value).unwrap_err(),
                *why,
                "start-up's words"
            );
        }
        for key in ["maxHeaderBytes", "tcpKeepaliveProbes", "maxKvValueBytes"] {
            let refusal = shared.update(&updates(&[(key, "5")])).unwrap_err();
            assert!(
                matches!(&refusal, UpdateRefusal::NeedsRestart { key: k } if k == key),
                "{refusal:?}"
            );
            assert!(refusal.to_string().contains("restart"), "{refusal}");
        }
        // A bad value of a start-up key is named by its rule first.
        let refusal = shared
            .update(&updates(&[("maxHeaderBytes", "0")]))
            .unwrap_err();
        assert!(
            refusal
                .to_string()
                .contains("maxHeaderBytes: must be at least 1"),
            "{refusal}"
        );
        assert!(matches!(
            shared.update(&updates(&[("kvConfigPath", "/tmp/x")])),
            Err(UpdateRefusal::BlackListed { .. })
        ));
        assert_eq!(*shared.read(), before, "nothing applied");
        assert!(!dir.join("namesrv.properties").exists(), "nothing written");

        shared
            .update(&updates(&[("scanNotActiveBrokerInterval", "1")]))
            .unwrap();
        assert_eq!(shared.read().scan_not_active_broker_interval, 1);
        assert!(std::fs::read_to_string(dir.join("namesrv.properties"))
            .unwrap()
            .contains("scanNotActiveBrokerInterval=1\n"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
