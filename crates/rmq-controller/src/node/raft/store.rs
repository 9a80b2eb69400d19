//! The durable half of Raft: the log, the vote, the committed index and
//! the latest snapshot in one redb database (`<controllerStorePath>/raft.redb`),
//! and the state machine that applies committed entries to
//! [`Replicas`].
//!
//! redb (a well-kept, pure-Rust, crash-safe embedded store) commits each
//! write transaction with an fsync before it returns, so an appended entry
//! is reported flushed to openraft only once it is on disk: nothing counts
//! towards a commit before that. A write error fails the call; openraft
//! then stops the node instead of acknowledging anything.
//!
//! The state machine itself lives in memory, shared with the server, which
//! reads it to decide requests. A restart loads the latest snapshot and
//! openraft re-applies the log entries after it up to the committed index.

use std::fmt::Debug;
use std::io::Cursor;
use std::ops::{Bound, RangeBounds};
use std::path::Path;
use std::sync::{Arc, RwLock};

use openraft::storage::{LogFlushed, LogState, RaftLogStorage, RaftStateMachine, Snapshot};
use openraft::{
    AnyError, Entry, EntryPayload, LogId, RaftLogReader, RaftSnapshotBuilder, SnapshotMeta,
    StorageError, StorageIOError, StoredMembership, Vote,
};
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};

use super::{NodeId, TypeConfig};
use crate::Replicas;

const LOG: TableDefinition<'_, u64, &[u8]> = TableDefinition::new("log");
const META: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("meta");
const VOTE: &str = "vote";
const COMMITTED: &str = "committed";
const LAST_PURGED: &str = "last_purged";
const SNAPSHOT: &str = "snapshot";

/// The file under `controllerStorePath`.
pub const STORE_FILE: &str = "raft.redb";

type Result<T> = std::result::Result<T, StorageError<NodeId>>;
type Membership = StoredMembership<NodeId, openraft::BasicNode>;

fn any(error: impl std::fmt::Display) -> AnyError {
    AnyError::error(error.to_string())
}

/// Opens (or creates) the store in `dir`: the log store and the state
/// machine share one database, and the state machine starts from the
/// stored snapshot.
///
/// # Errors
/// The directory or the database cannot be created or read, or the stored
/// snapshot does not decode.
pub fn open(dir: &Path) -> std::result::Result<(LogStore, StateMachine), OpenError> {
    std::fs::create_dir_all(dir).map_err(|e| OpenError::Io(dir.display().to_string(), e))?;
    let path = dir.join(STORE_FILE);
    let db = Database::create(&path).map_err(|e| match e {
        // Its own kind: a restart within this process waits for the store
        // it closed a moment ago to release the file lock.
        redb::DatabaseError::DatabaseAlreadyOpen => {
            OpenError::AlreadyOpen(path.display().to_string())
        }
        e => OpenError::Db(path.display().to_string(), e.to_string()),
    })?;
    let db = Arc::new(db);
    {
        // Both tables exist from the first start on, so readers never miss one.
        let tx = db
            .begin_write()
            .map_err(|e| OpenError::Db(path.display().to_string(), e.to_string()))?;
        tx.open_table(LOG)
            .map_err(|e| OpenError::Db(path.display().to_string(), e.to_string()))?;
        tx.open_table(META)
            .map_err(|e| OpenError::Db(path.display().to_string(), e.to_string()))?;
        tx.commit()
            .map_err(|e| OpenError::Db(path.display().to_string(), e.to_string()))?;
    }
    let log = LogStore { db: db.clone() };
    let stored: Option<StoredSnapshot> = read_meta(&db, SNAPSHOT)
        .map_err(|e| OpenError::Db(path.display().to_string(), e.to_string()))?;
    let state = match &stored {
        Some(snapshot) => {
            let data: SnapshotData = serde_json::from_slice(&snapshot.data).map_err(|e| {
                OpenError::Db(
                    path.display().to_string(),
                    format!("the stored snapshot does not decode: {e}"),
                )
            })?;
            Applied {
                last_applied: snapshot.meta.last_log_id,
                membership: snapshot.meta.last_membership.clone(),
                replicas: data.replicas,
            }
        }
        None => Applied::default(),
    };
    let machine = StateMachine {
        db,
        state: Arc::new(RwLock::new(state)),
    };
    Ok((log, machine))
}

/// Why the store could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The directory.
    #[error("cannot create {0}: {1}")]
    Io(String, #[source] std::io::Error),
    /// The database file.
    #[error("cannot open the Raft store {0}: {1}")]
    Db(String, String),
    /// Another store of this process (or another process) has the file open.
    #[error("the Raft store {0} is in use by another controller")]
    AlreadyOpen(String),
}

fn read_meta<T: for<'de> Deserialize<'de>>(
    db: &Database,
    key: &str,
) -> std::result::Result<Option<T>, String> {
    let tx = db.begin_read().map_err(|e| e.to_string())?;
    let table = tx.open_table(META).map_err(|e| e.to_string())?;
    let Some(value) = table.get(key).map_err(|e| e.to_string())? else {
        return Ok(None);
    };
    serde_json::from_slice(value.value())
        .map(Some)
        .map_err(|e| format!("{key}: {e}"))
}

/// Runs one write transaction on a blocking thread (redb fsyncs on commit).
async fn write<F>(db: &Arc<Database>, work: F) -> std::result::Result<(), String>
where
    F: FnOnce(&redb::WriteTransaction) -> std::result::Result<(), String> + Send + 'static,
{
    let db = db.clone();
    tokio::task::spawn_blocking(move || {
        let tx = db.begin_write().map_err(|e| e.to_string())?;
        work(&tx)?;
        tx.commit().map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| format!("the store's write task failed: {e}"))?
}

fn put_meta<T: Serialize>(
    tx: &redb::WriteTransaction,
    key: &str,
    value: &T,
) -> std::result::Result<(), String> {
    let bytes = serde_json::to_vec(value).map_err(|e| e.to_string())?;
    let mut table = tx.open_table(META).map_err(|e| e.to_string())?;
    table
        .insert(key, bytes.as_slice())
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// The Raft log, vote and committed index.
#[derive(Debug, Clone)]
pub struct LogStore {
    db: Arc<Database>,
}

impl LogStore {
    /// A handle that tells when every user of the database is gone (the file
    /// is closed, and another store may open it).
    pub fn watch_close(&self) -> std::sync::Weak<Database> {
        Arc::downgrade(&self.db)
    }

    fn entries(
        &self,
        range: (Bound<u64>, Bound<u64>),
    ) -> std::result::Result<Vec<Entry<TypeConfig>>, String> {
        let tx = self.db.begin_read().map_err(|e| e.to_string())?;
        let table = tx.open_table(LOG).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        for item in table.range(range).map_err(|e| e.to_string())? {
            let (_, value) = item.map_err(|e| e.to_string())?;
            out.push(serde_json::from_slice(value.value()).map_err(|e| e.to_string())?);
        }
        Ok(out)
    }

    fn last_entry(&self) -> std::result::Result<Option<Entry<TypeConfig>>, String> {
        let tx = self.db.begin_read().map_err(|e| e.to_string())?;
        let table = tx.open_table(LOG).map_err(|e| e.to_string())?;
        let Some((_, value)) = table.last().map_err(|e| e.to_string())? else {
            return Ok(None);
        };
        serde_json::from_slice(value.value())
            .map(Some)
            .map_err(|e| e.to_string())
    }
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + Send>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry<TypeConfig>>> {
        let bounds = (range.start_bound().cloned(), range.end_bound().cloned());
        self.entries(bounds)
            .map_err(|e| StorageIOError::read_logs(any(e)).into())
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>> {
        let last_purged: Option<LogId<NodeId>> =
            read_meta(&self.db, LAST_PURGED).map_err(|e| StorageIOError::read_logs(any(e)))?;
        let last = self
            .last_entry()
            .map_err(|e| StorageIOError::read_logs(any(e)))?
            .map(|entry| entry.log_id);
        Ok(LogState {
            last_purged_log_id: last_purged,
            last_log_id: last.or(last_purged),
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote<NodeId>) -> Result<()> {
        let vote = *vote;
        write(&self.db, move |tx| put_meta(tx, VOTE, &vote))
            .await
            .map_err(|e| StorageIOError::write_vote(any(e)).into())
    }

    async fn read_vote(&mut self) -> Result<Option<Vote<NodeId>>> {
        read_meta(&self.db, VOTE).map_err(|e| StorageIOError::read_vote(any(e)).into())
    }

    async fn save_committed(&mut self, committed: Option<LogId<NodeId>>) -> Result<()> {
        write(&self.db, move |tx| put_meta(tx, COMMITTED, &committed))
            .await
            .map_err(|e| StorageIOError::write(any(e)).into())
    }

    async fn read_committed(&mut self) -> Result<Option<LogId<NodeId>>> {
        let committed: Option<Option<LogId<NodeId>>> =
            read_meta(&self.db, COMMITTED).map_err(|e| StorageIOError::read(any(e)))?;
        Ok(committed.flatten())
    }

    async fn append<I>(&mut self, entries: I, callback: LogFlushed<TypeConfig>) -> Result<()>
    where
        I: IntoIterator<Item = Entry<TypeConfig>> + Send,
        I::IntoIter: Send,
    {
        let mut encoded = Vec::new();
        for entry in entries {
            let bytes =
                serde_json::to_vec(&entry).map_err(|e| StorageIOError::write_logs(any(e)))?;
            encoded.push((entry.log_id.index, bytes));
        }
        let result = write(&self.db, move |tx| {
            let mut table = tx.open_table(LOG).map_err(|e| e.to_string())?;
            for (index, bytes) in &encoded {
                table
                    .insert(*index, bytes.as_slice())
                    .map_err(|e| e.to_string())?;
            }
            Ok(())
        })
        .await;
        match result {
            Ok(()) => {
                callback.log_io_completed(Ok(()));
                Ok(())
            }
            Err(e) => {
                callback.log_io_completed(Err(std::io::Error::other(e.clone())));
                Err(StorageIOError::write_logs(any(e)).into())
            }
        }
    }

    async fn truncate(&mut self, log_id: LogId<NodeId>) -> Result<()> {
        write(&self.db, move |tx| {
            let mut table = tx.open_table(LOG).map_err(|e| e.to_string())?;
            table
                .retain_in(log_id.index.., |_, _| false)
                .map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| StorageIOError::write_logs(any(e)).into())
    }

    async fn purge(&mut self, log_id: LogId<NodeId>) -> Result<()> {
        write(&self.db, move |tx| {
            put_meta(tx, LAST_PURGED, &log_id)?;
            let mut table = tx.open_table(LOG).map_err(|e| e.to_string())?;
            table
                .retain_in(..=log_id.index, |_, _| false)
                .map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| StorageIOError::write_logs(any(e)).into())
    }
}

/// What has been applied: the state, and where in the log it stands.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    /// The last applied entry.
    pub last_applied: Option<LogId<NodeId>>,
    /// The membership in force.
    pub membership: Membership,
    /// The replicated controller state.
    pub replicas: Replicas,
}

/// A snapshot's payload.
#[derive(Debug, Serialize, Deserialize)]
struct SnapshotData {
    replicas: Replicas,
}

/// The latest snapshot, as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredSnapshot {
    meta: SnapshotMeta<NodeId, openraft::BasicNode>,
    data: Vec<u8>,
}

/// The state machine: applies committed entries to the shared state.
#[derive(Debug, Clone)]
pub struct StateMachine {
    db: Arc<Database>,
    state: Arc<RwLock<Applied>>,
}

impl StateMachine {
    /// The applied state, shared with the server (read it, never hold the
    /// lock across an await).
    pub fn state(&self) -> Arc<RwLock<Applied>> {
        self.state.clone()
    }

    fn read_state(&self) -> std::sync::RwLockReadGuard<'_, Applied> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write_state(&self) -> std::sync::RwLockWriteGuard<'_, Applied> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }
}

impl RaftSnapshotBuilder<TypeConfig> for StateMachine {
    async fn build_snapshot(&mut self) -> Result<Snapshot<TypeConfig>> {
        let (meta, data) = {
            let state = self.read_state();
            let data = serde_json::to_vec(&SnapshotData {
                replicas: state.replicas.clone(),
            })
            .map_err(|e| StorageIOError::read_state_machine(any(e)))?;
            let snapshot_id = match state.last_applied {
                Some(last) => format!("{}-{}", last.leader_id, last.index),
                None => "empty".to_owned(),
            };
            let meta = SnapshotMeta {
                last_log_id: state.last_applied,
                last_membership: state.membership.clone(),
                snapshot_id,
            };
            (meta, data)
        };
        let stored = StoredSnapshot {
            meta: meta.clone(),
            data: data.clone(),
        };
        let signature = meta.signature();
        write(&self.db, move |tx| put_meta(tx, SNAPSHOT, &stored))
            .await
            .map_err(|e| StorageIOError::write_snapshot(Some(signature), any(e)))?;
        Ok(Snapshot {
            meta,
            snapshot: Box::new(Cursor::new(data)),
        })
    }
}

impl RaftStateMachine<TypeConfig> for StateMachine {
    type SnapshotBuilder = StateMachine;

    async fn applied_state(&mut self) -> Result<(Option<LogId<NodeId>>, Membership)> {
        let state = self.read_state();
        Ok((state.last_applied, state.membership.clone()))
    }

    async fn apply<I>(&mut self, entries: I) -> Result<Vec<()>>
    where
        I: IntoIterator<Item = Entry<TypeConfig>> + Send,
        I::IntoIter: Send,
    {
        let mut state = self.write_state();
        let mut responses = Vec::new();
        for entry in entries {
            state.last_applied = Some(entry.log_id);
            match entry.payload {
                EntryPayload::Blank => {}
                EntryPayload::Normal(command) => {
                    for event in &command.events {
                        state.replicas.apply(event);
                    }
                }
                EntryPayload::Membership(membership) => {
                    state.membership = StoredMembership::new(Some(entry.log_id), membership);
                }
            }
            responses.push(());
        }
        Ok(responses)
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        self.clone()
    }

    async fn begin_receiving_snapshot(&mut self) -> Result<Box<Cursor<Vec<u8>>>> {
        Ok(Box::new(Cursor::new(Vec::new())))
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta<NodeId, openraft::BasicNode>,
        snapshot: Box<Cursor<Vec<u8>>>,
    ) -> Result<()> {
        let data = snapshot.into_inner();
        let decoded: SnapshotData = serde_json::from_slice(&data)
            .map_err(|e| StorageIOError::read_snapshot(Some(meta.signature()), any(e)))?;
        let stored = StoredSnapshot {
            meta: meta.clone(),
            data,
        };
        write(&self.db, move |tx| put_meta(tx, SNAPSHOT, &stored))
            .await
            .map_err(|e| StorageIOError::write_snapshot(Some(meta.signature()), any(e)))?;
        let mut state = self.write_state();
        *state = Applied {
            last_applied: meta.last_log_id,
            membership: meta.last_membership.clone(),
            replicas: decoded.replicas,
        };
        Ok(())
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<Snapshot<TypeConfig>>> {
        let stored: Option<StoredSnapshot> = read_meta(&self.db, SNAPSHOT)
            .map_err(|e| StorageIOError::read_snapshot(None, any(e)))?;
        Ok(stored.map(|stored| Snapshot {
            meta: stored.meta,
            snapshot: Box::new(Cursor::new(stored.data)),
        }))
    }
}

#[cfg(test)]
mod tests {
    use openraft::testing::{StoreBuilder, Suite};

    use super::*;

    struct TempStore;

    impl StoreBuilder<TypeConfig, LogStore, StateMachine, tempfile::TempDir> for TempStore {
        async fn build(&self) -> Result<(tempfile::TempDir, LogStore, StateMachine)> {
            let dir = tempfile::tempdir().expect("temp dir");
            let (log, machine) = open(dir.path()).expect("open the store");
            Ok((dir, log, machine))
        }
    }

    #[test]
    fn a_store_still_open_is_reported_as_such() {
        // The kind node start-up waits on when restarting within a process.
        let dir = tempfile::tempdir().expect("temp dir");
        let held = open(dir.path()).expect("open the store");
        assert!(matches!(open(dir.path()), Err(OpenError::AlreadyOpen(_))));
        drop(held);
        assert!(open(dir.path()).is_ok(), "opens once the first is closed");
    }

    #[test]
    fn openraft_storage_conformance_suite() {
        Suite::test_all(TempStore).expect("the store passes openraft's suite");
    }
}
