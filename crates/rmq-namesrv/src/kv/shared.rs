//! The KV store as the server shares it, and its writers' group commit.
//!
//! Readers see only durable writes and never wait for the disk: a change
//! reaches the in-memory store once the journal record holding it is
//! fsynced. Writers append their record under one lock, in turn (a put's
//! quota check and its append see the same store, pending changes
//! included), then wait for an fsync covering it. One writer at a time runs
//! the fsync, with the lock released; every record appended meanwhile is
//! covered by the next one, so concurrent writers share fsyncs instead of
//! queueing one each.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use parking_lot::{Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard};
use rmq_transport::durable::replace_file;

use super::journal::{encode_record, journal_of, Change, Journal};
use super::{encode, KvQuotaError, KvStore};
use crate::limits::Limits;

/// The KV store behind its lock, with the journal its writers append to.
#[derive(Debug)]
pub struct SharedKv {
    /// What readers see: every acknowledged write, nothing else.
    store: RwLock<KvStore>,
    /// The writers' turn and the journal's state.
    writer: Mutex<Writer>,
    /// Signalled whenever an fsync finished (its writers' outcome is known).
    synced: Condvar,
    /// `kvConfigPath`.
    path: PathBuf,
}

/// The journal and the writes in flight.
#[derive(Debug)]
struct Writer {
    /// Opened at the first write (start-up left it empty).
    journal: Option<Journal>,
    /// Appended, not yet fsynced; applied to the store once they are.
    pending: Vec<Change>,
    /// Changes appended so far; a writer's sequence number is this count
    /// once its record is appended.
    appended: u64,
    /// Changes whose fsync finished (well or not).
    settled: u64,
    /// Whether a writer runs an fsync now.
    syncing: bool,
    /// Changes whose fsync failed, by sequence number, until their writer
    /// collects the error.
    failed: HashMap<u64, (io::ErrorKind, String)>,
    /// After a failed append or fsync the journal may hold a partial or
    /// an unacknowledged record: nothing is appended after it until
    /// kvConfig.json has been rewritten and the journal emptied.
    must_compact: bool,
    /// Size of kvConfig.json when last written, for the compaction bound.
    file_bytes: u64,
}

/// Why a KV write changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum KvWriteError {
    /// The put would break a quota of [`Limits`].
    #[error(transparent)]
    Quota(#[from] KvQuotaError),
    /// The change could not be made durable; memory is as it was.
    #[error("failed to persist {}: {source}", path.display())]
    Persist {
        /// The file that failed: the journal, or `kvConfigPath` while
        /// compacting.
        path: PathBuf,
        /// What the disk said.
        source: io::Error,
    },
}

fn persist_error(path: &Path) -> impl FnOnce(io::Error) -> KvWriteError + '_ {
    move |source| KvWriteError::Persist {
        path: path.to_path_buf(),
        source,
    }
}

impl Writer {
    /// The journal size past which it is compacted into kvConfig.json: the
    /// larger of `kvJournalCompactionMinBytes` and
    /// `kvJournalCompactionPercent` of kvConfig.json. Proportional, so that
    /// rewriting the file costs, spread over the writes that filled the
    /// journal, a bounded multiple of their own size.
    fn compaction_bound(&self, limits: &Limits) -> u64 {
        let share = self
            .file_bytes
            .saturating_mul(limits.kv_journal_compaction_percent as u64)
            / 100;
        share.max(limits.kv_journal_compaction_min_bytes as u64)
    }

    fn journal_bytes(&self) -> u64 {
        self.journal.as_ref().map_or(0, Journal::len)
    }
}

impl SharedKv {
    /// Shares `store`, as [`KvStore::load`] left it (its journal empty).
    pub fn new(store: KvStore) -> SharedKv {
        let path = store.path().to_path_buf();
        SharedKv {
            writer: Mutex::new(Writer {
                journal: None,
                pending: Vec::new(),
                appended: 0,
                settled: 0,
                syncing: false,
                failed: HashMap::new(),
                must_compact: false,
                file_bytes: store.file_bytes,
            }),
            store: RwLock::new(store),
            synced: Condvar::new(),
            path,
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
        let writer = self.writer.lock();
        self.read()
            .check_quota_after(&writer.pending, namespace, key, value, limits)?;
        let change = Change::Put {
            namespace: namespace.to_owned(),
            key: key.to_owned(),
            value: value.map(str::to_owned),
        };
        self.write(writer, change, limits)
    }

    /// DELETE_KV_CONFIG: removes the key if present and persists whether or
    /// not it was (as Java does).
    ///
    /// # Errors
    /// The failed write; the store is unchanged.
    pub fn delete(&self, namespace: &str, key: &str, limits: &Limits) -> Result<(), KvWriteError> {
        let writer = self.writer.lock();
        let change = Change::Delete {
            namespace: namespace.to_owned(),
            key: key.to_owned(),
        };
        self.write(writer, change, limits)
    }

    /// Rewrites kvConfig.json with every acknowledged write and empties the
    /// journal, if it holds anything: on a graceful stop, so that the file
    /// alone is the whole store (as a Java NameServer would read it).
    ///
    /// # Errors
    /// The failed write; the journal is kept, and replayed at the next start.
    pub fn compact(&self) -> Result<(), KvWriteError> {
        let mut writer = self.writer.lock();
        self.settle_pending(&mut writer);
        if writer.journal_bytes() == 0 && !writer.must_compact {
            return Ok(());
        }
        self.compact_locked(&mut writer)
    }

    /// Marks the journal as after a failed append.
    #[cfg(test)]
    pub(super) fn suspect_journal(&self) {
        self.writer.lock().must_compact = true;
    }

    /// Appends `change` to the journal and returns once an fsync covered
    /// it, compacting first when the journal is over its bound.
    fn write(
        &self,
        mut writer: MutexGuard<'_, Writer>,
        change: Change,
        limits: &Limits,
    ) -> Result<(), KvWriteError> {
        if writer.must_compact || writer.journal_bytes() > writer.compaction_bound(limits) {
            self.settle_pending(&mut writer);
            self.compact_locked(&mut writer)?;
        }
        let journal_path = journal_of(&self.path);
        let record = encode_record(&change).map_err(persist_error(&journal_path))?;
        if writer.journal.is_none() {
            // Start-up folded the journal into kvConfig.json: it is empty.
            let journal = Journal::open(&self.path, 0).map_err(persist_error(&journal_path))?;
            writer.journal = Some(journal);
        }
        let appended = match writer.journal.as_mut() {
            Some(journal) => journal.append(&record),
            None => Ok(()),
        };
        if let Err(source) = appended {
            writer.must_compact = true;
            return Err(persist_error(&journal_path)(source));
        }
        writer.pending.push(change);
        writer.appended += 1;
        let sequence = writer.appended;
        loop {
            if writer.settled >= sequence {
                return match writer.failed.remove(&sequence) {
                    None => Ok(()),
                    Some((kind, message)) => {
                        Err(persist_error(&journal_path)(io::Error::new(kind, message)))
                    }
                };
            }
            if writer.syncing {
                self.synced.wait(&mut writer);
            } else {
                self.sync_pending(&mut writer);
            }
        }
    }

    /// Waits until no change is pending, running the fsync when no other
    /// writer does.
    fn settle_pending(&self, writer: &mut MutexGuard<'_, Writer>) {
        while writer.syncing || !writer.pending.is_empty() {
            if writer.syncing {
                self.synced.wait(writer);
            } else {
                self.sync_pending(writer);
            }
        }
    }

    /// Fsyncs the journal with the lock released (others keep appending),
    /// then applies the changes it covered to the store, or marks them
    /// failed, and wakes their writers.
    fn sync_pending(&self, writer: &mut MutexGuard<'_, Writer>) {
        let batch = std::mem::take(&mut writer.pending);
        let first = writer.settled + 1;
        let through = writer.appended;
        let synced = match writer.journal.as_ref().map(Journal::sync_handle) {
            Some(file) => {
                writer.syncing = true;
                MutexGuard::unlocked(writer, || file.sync_data())
            }
            None => Err(io::Error::other("the KV journal is not open")),
        };
        match synced {
            Ok(()) => {
                let mut store = self.store.write();
                for change in &batch {
                    store.apply(change);
                }
            }
            Err(error) => {
                tracing::error!(file = %journal_of(&self.path).display(), %error, changes = batch.len(), "fsync of the KV journal failed; its writes are refused");
                writer.must_compact = true;
                for sequence in first..=through {
                    writer
                        .failed
                        .insert(sequence, (error.kind(), error.to_string()));
                }
            }
        }
        writer.settled = through;
        writer.syncing = false;
        self.synced.notify_all();
    }

    /// Writes the store to kvConfig.json and empties the journal. The
    /// caller holds the writers' turn with nothing pending.
    fn compact_locked(&self, writer: &mut Writer) -> Result<(), KvWriteError> {
        let bytes = encode(&self.read().tables);
        replace_file(&self.path, &bytes).map_err(persist_error(&self.path))?;
        writer.file_bytes = bytes.len() as u64;
        // A crash before the journal is emptied replays it over the new
        // file at the next start, which changes nothing.
        if let Some(journal) = writer.journal.as_mut() {
            journal
                .reset()
                .map_err(persist_error(&journal_of(&self.path)))?;
        }
        writer.must_compact = false;
        tracing::debug!(file = %self.path.display(), bytes = bytes.len(), "KV journal compacted into kvConfig.json");
        Ok(())
    }
}
