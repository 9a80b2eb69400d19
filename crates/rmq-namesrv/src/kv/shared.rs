//! The KV store as the server shares it: readers never wait for a disk
//! write, because a writer stages its change on a copy, persists it, and
//! only then swaps the copy in. Writers take turns, so the file always holds
//! the latest acknowledged write.

use std::io;
use std::path::PathBuf;

use parking_lot::{Mutex, RwLock, RwLockReadGuard};

use super::{KvQuotaError, KvStore};
use crate::limits::Limits;

/// The KV store behind its lock, with the turn of its writers.
#[derive(Debug)]
pub struct SharedKv {
    store: RwLock<KvStore>,
    /// Serializes writers: a put's quota check and its write see the same store.
    writer: Mutex<()>,
}

/// Why a KV write changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum KvWriteError {
    /// The put would break a quota of [`Limits`].
    #[error(transparent)]
    Quota(#[from] KvQuotaError),
    /// The new file could not be made durable; memory is as it was.
    #[error("failed to persist {}: {source}", path.display())]
    Persist {
        /// `kvConfigPath`.
        path: PathBuf,
        /// What the disk said.
        source: io::Error,
    },
}

impl SharedKv {
    /// Shares `store`.
    pub fn new(store: KvStore) -> SharedKv {
        SharedKv {
            store: RwLock::new(store),
            writer: Mutex::new(()),
        }
    }

    /// Shared access to the store.
    pub fn read(&self) -> RwLockReadGuard<'_, KvStore> {
        self.store.read()
    }

    /// PUT_KV_CONFIG: `value` under `namespace`/`key` (`None` removes the
    /// key and keeps the namespace), acknowledged once it is on disk.
    ///
    /// # Errors
    /// A quota the put would break ([`KvStore::check_quota`]), or the failed
    /// write; the store is unchanged either way.
    pub fn put(
        &self,
        namespace: &str,
        key: &str,
        value: Option<&str>,
        limits: &Limits,
    ) -> Result<(), KvWriteError> {
        let _turn = self.writer.lock();
        self.read().check_quota(namespace, key, value, limits)?;
        self.stage(|staged| staged.put(namespace, key, value))
    }

    /// DELETE_KV_CONFIG: removes the key if present and persists whether or
    /// not it was (as Java does).
    ///
    /// # Errors
    /// The failed write; the store is unchanged.
    pub fn delete(&self, namespace: &str, key: &str) -> Result<(), KvWriteError> {
        let _turn = self.writer.lock();
        self.stage(|staged| staged.delete(namespace, key))
    }

    /// Applies `change` (which persists) to a copy and swaps the copy in
    /// once it succeeded. The caller holds the writers' turn.
    fn stage(
        &self,
        change: impl FnOnce(&mut KvStore) -> io::Result<()>,
    ) -> Result<(), KvWriteError> {
        let mut staged = self.read().clone();
        change(&mut staged).map_err(|source| KvWriteError::Persist {
            path: staged.path().to_path_buf(),
            source,
        })?;
        *self.store.write() = staged;
        Ok(())
    }
}
