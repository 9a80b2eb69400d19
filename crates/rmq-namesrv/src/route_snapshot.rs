//! The route snapshot's file (`routeSnapshotPath`): read once at start, so
//! that a restarted NameServer answers routes at once instead of
//! TOPIC_NOT_EXIST until every broker has registered again; written while
//! the server runs, at most once per [`WRITE_INTERVAL`] and only when the
//! routes changed, and once more when the server is told to stop, before
//! its connections are closed.
//!
//! Owns the I/O and its timing only. What a snapshot holds and how a
//! restored broker behaves is `route::snapshot`'s and the route table's.
//! A snapshot is a cache of what brokers will say again within 30 s, so no
//! failure here stops the server: an unreadable, damaged or foreign file is
//! a warning and an empty start, a failed write a warning and a retry at the
//! next tick.

use std::hash::{Hash, Hasher};
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rmq_transport::durable::{sibling, write_atomically};

use crate::route::{Millis, RouteTable, SharedRoutes};

/// Least time between two snapshot writes: a registration storm after a
/// deployment costs one write a second, not one per registration.
pub const WRITE_INTERVAL: Duration = Duration::from_secs(1);

/// After an encoding that took `t`, the next waits at least this many times
/// `t`: encoding takes at most a twentieth of one core. A million topic-queue
/// entries take 140–210 ms to encode while brokers re-register, and at one
/// encoding a second that was a sixth of the server's CPU, with
/// registrations waiting on the read lock meanwhile; such a table is now
/// written every three to four seconds. Small tables still go every second.
pub const WRITER_SHARE_DIVISOR: u32 = 20;

/// Where the snapshot lives and how large it may be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotFile {
    /// `routeSnapshotPath`.
    pub path: PathBuf,
    /// `routeSnapshotMaxBytes`: a larger file is not read, a larger snapshot
    /// not written.
    pub max_bytes: usize,
}

impl SnapshotFile {
    /// The routes of the snapshot, restored as at `now`
    /// ([`RouteTable::restore`]); `None`, with a warning, when there is no
    /// usable snapshot. A damaged or foreign file is kept as `<file>.corrupt`
    /// for inspection, since the next write replaces it.
    pub fn load(&self, now: Millis) -> Option<RouteTable> {
        let file = self.path.display();
        let bytes = match self.read() {
            Ok(Some(bytes)) => bytes,
            Ok(None) => {
                tracing::info!(%file, "no route snapshot: starting with no routes");
                return None;
            }
            Err(error) => {
                tracing::warn!(%file, %error, "route snapshot not read: starting with no routes until brokers register");
                return None;
            }
        };
        match RouteTable::restore(&bytes, now) {
            Ok(table) => {
                tracing::info!(
                    %file,
                    topics = table.topic_count(),
                    brokers = table.provisional_count(),
                    "routes restored from the snapshot; each broker is provisional until it registers again or its heartbeat timeout passes"
                );
                Some(table)
            }
            Err(error) => {
                let kept = sibling(&self.path, ".corrupt");
                let kept_as = match std::fs::rename(&self.path, &kept) {
                    Ok(()) => kept.display().to_string(),
                    Err(rename) => format!("(not kept: {rename})"),
                };
                tracing::warn!(%file, %error, %kept_as, "route snapshot unusable: starting with no routes until brokers register");
                None
            }
        }
    }

    /// The file's bytes, never more than `max_bytes + 1` of them read;
    /// `None` if there is no file.
    fn read(&self) -> io::Result<Option<Vec<u8>>> {
        let file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(error),
        };
        let mut bytes = Vec::new();
        let limit = u64::try_from(self.max_bytes).unwrap_or(u64::MAX);
        file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
        if bytes.len() > self.max_bytes {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("larger than routeSnapshotMaxBytes ({})", self.max_bytes),
            ));
        }
        Ok(Some(bytes))
    }
}

/// Writes the snapshot of the routes when they changed. Every write goes
/// through its lock, so the periodic task and the shutdown write never
/// write the file at once.
#[derive(Debug)]
pub struct SnapshotWriter {
    file: SnapshotFile,
    last: Mutex<LastWrite>,
}

/// What the file holds now, as far as this process knows.
#[derive(Debug, Default)]
struct LastWrite {
    /// [`SharedRoutes::changes`] when the file was last brought up to date.
    changes: Option<u64>,
    /// Hash of the bytes last written: a route write that changed nothing
    /// persisted (a periodic re-registration) costs an encoding, not a write.
    content: Option<u64>,
    /// Whether the last attempt wrote nothing (the disk failed, or the
    /// snapshot was over the limit), so that either is one warning, not one
    /// a second.
    failing: bool,
    /// Set by the write at shutdown: what the table holds after it (brokers
    /// unregistered as their connections are closed) is not written.
    closed: bool,
}

impl SnapshotWriter {
    /// A writer for `file`.
    pub fn new(file: SnapshotFile) -> SnapshotWriter {
        SnapshotWriter {
            file,
            last: Mutex::new(LastWrite::default()),
        }
    }

    /// The file written.
    pub fn file(&self) -> &SnapshotFile {
        &self.file
    }

    /// Brings the file up to date with `routes`; blocks on the disk. The
    /// snapshot is encoded under the table's read lock (route queries go on;
    /// registrations wait for it) and written after the lock is released.
    /// Returns how long the encoding took (zero when nothing changed).
    pub fn write(&self, routes: &SharedRoutes) -> Duration {
        self.write_locked(&mut self.last.lock(), routes)
    }

    /// The last write: brings the file up to date (after a write in
    /// progress, if any), then writes no more.
    pub fn close(&self, routes: &SharedRoutes) {
        let mut last = self.last.lock();
        self.write_locked(&mut last, routes);
        last.closed = true;
    }

    fn write_locked(&self, last: &mut LastWrite, routes: &SharedRoutes) -> Duration {
        if last.closed || last.changes == Some(routes.changes()) {
            return Duration::ZERO;
        }
        let (bytes, changes, encoded_in) = {
            let table = routes.read();
            // Timed from the lock on: waiting for a registration to finish
            // is not the encoding's cost.
            let encoding = Instant::now();
            let bytes = table.snapshot();
            // Read under the lock: no writer can change the table meanwhile.
            (bytes, routes.changes(), encoding.elapsed())
        };
        tracing::debug!(
            encoded_ms = encoded_in.as_secs_f64() * 1e3,
            bytes = bytes.len(),
            "route snapshot encoded"
        );
        self.write_encoded(last, &bytes, changes);
        encoded_in
    }

    fn write_encoded(&self, last: &mut LastWrite, bytes: &[u8], changes: u64) {
        let content = content_hash(bytes);
        if last.content == Some(content) {
            last.changes = Some(changes);
            return;
        }
        let file = self.file.path.display();
        if bytes.len() > self.file.max_bytes {
            // A stale snapshot would restore routes that are gone; no
            // snapshot only means a cold start.
            let removed = std::fs::remove_file(&self.file.path);
            if !last.failing {
                tracing::warn!(%file, bytes = bytes.len(), max_bytes = self.file.max_bytes, removed = removed.is_ok(), "route snapshot larger than routeSnapshotMaxBytes: not written, the previous one removed; a restart starts with no routes");
            }
            *last = LastWrite {
                changes: Some(changes),
                failing: true,
                ..LastWrite::default()
            };
            return;
        }
        match write_atomically(&self.file.path, bytes) {
            Ok(()) => {
                if last.failing {
                    tracing::info!(%file, "route snapshot written again");
                }
                *last = LastWrite {
                    changes: Some(changes),
                    content: Some(content),
                    ..LastWrite::default()
                };
            }
            Err(error) => {
                if !last.failing {
                    tracing::warn!(%file, %error, "route snapshot not written; retrying every second");
                }
                last.failing = true;
            }
        }
    }
}

fn content_hash(bytes: &[u8]) -> u64 {
    // Compared only within this process, so the std hasher's fixed keys do.
    let mut hasher = std::hash::DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}

/// Restores the routes of `file` into `routes` (fresh ones, before the
/// server serves them) as at `now`, and gives the writer that keeps the file
/// up to date once served.
pub fn attach(routes: &SharedRoutes, now: Millis, file: SnapshotFile) -> Arc<SnapshotWriter> {
    if let Some(table) = file.load(now) {
        *routes.write() = table;
    }
    Arc::new(SnapshotWriter::new(file))
}

/// Writes the snapshot when the routes changed, every [`WRITE_INTERVAL`] or
/// [`WRITER_SHARE_DIVISOR`] times the last encoding's time, whichever is
/// longer; runs until aborted (its thread ends with it).
///
/// The encoding runs on a thread of its own at [`ENCODER_NICE`]: it is a
/// burst of CPU (tens of milliseconds for a large table) that nothing waits
/// for, and at normal priority it took the CPU from route answers, of this
/// server and of any other on the same CPU (several cluster nodes on one
/// machine, a NameServer beside a broker).
pub async fn periodic_writer(routes: Arc<SharedRoutes>, writer: Arc<SnapshotWriter>) {
    let (requests, next) = std::sync::mpsc::channel::<tokio::sync::oneshot::Sender<Duration>>();
    let encoder = std::thread::Builder::new()
        .name("route-snapshot".into())
        .spawn(move || {
            lower_priority();
            while let Ok(done) = next.recv() {
                let _ = done.send(writer.write(&routes));
            }
        });
    if let Err(error) = encoder {
        tracing::warn!(%error, "cannot start the route snapshot thread: the snapshot is not written until a restart");
        return;
    }
    loop {
        let (done, encoded) = tokio::sync::oneshot::channel();
        if requests.send(done).is_err() {
            return;
        }
        let encoded_in = encoded.await.unwrap_or_default();
        tokio::time::sleep(pause_after(encoded_in)).await;
    }
}

/// The nice value of the snapshot's thread: its CPU weight is a tenth of a
/// request thread's while both want the CPU, and all of it otherwise.
pub const ENCODER_NICE: i32 = 10;

/// Gives the calling thread [`ENCODER_NICE`] (Linux: a thread's own nice
/// value). Raising it needs no privilege; where it fails, the thread runs at
/// normal priority, as every thread did before.
fn lower_priority() {
    let thread = rustix::thread::gettid();
    if let Err(error) = rustix::process::setpriority_process(Some(thread), ENCODER_NICE) {
        tracing::debug!(%error, "the route snapshot thread keeps normal priority");
    }
}

/// The pause before the next look at the routes, after an encoding that took
/// `encoded_in`.
fn pause_after(encoded_in: Duration) -> Duration {
    WRITE_INTERVAL.max(encoded_in.saturating_mul(WRITER_SHARE_DIVISOR))
}

/// The last write, when the server stops ([`SnapshotWriter::close`]).
pub async fn final_write(routes: Arc<SharedRoutes>, writer: Arc<SnapshotWriter>) {
    let _ = tokio::task::spawn_blocking(move || writer.close(&routes)).await;
}

#[cfg(test)]
mod tests {
    use rmq_protocol::{DataVersion, TopicConfig};

    use super::*;
    use crate::route::BrokerRegistration;

    fn registration(name: &str, addr: &str, topics: &[&str]) -> BrokerRegistration {
        BrokerRegistration {
            cluster: "DefaultCluster".into(),
            broker_addr: addr.into(),
            broker_name: name.into(),
            broker_id: 0,
            ha_server_addr: String::new(),
            zone_name: None,
            heartbeat_timeout_ms: None,
            enable_acting_master: Some(false),
            data_version: DataVersion::new(1, 0, 100),
            topic_configs: topics.iter().map(|t| TopicConfig::new(*t)).collect(),
            mappings: Default::default(),
            filter_servers: Some(Vec::new()),
            conn: 1,
            client_version: 0,
        }
    }

    fn temp_file(name: &str, max_bytes: usize) -> SnapshotFile {
        let dir =
            std::env::temp_dir().join(format!("waymark-snapshot-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        SnapshotFile {
            path: dir.join("routes.snapshot"),
            max_bytes,
        }
    }

    /// The nice value of this process's thread named `name`, once there is one.
    fn nice_of_thread(name: &str) -> Option<i64> {
        std::fs::read_dir("/proc/self/task")
            .ok()?
            .flatten()
            .find_map(|task| {
                let comm = std::fs::read_to_string(task.path().join("comm")).ok()?;
                if comm.trim() != name {
                    return None;
                }
                let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
                // After the command's closing parenthesis: state is field 3,
                // nice field 19.
                let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
                fields.get(16)?.parse().ok()
            })
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn the_periodic_writer_encodes_on_a_thread_of_lower_priority() {
        let file = temp_file("periodic", 1 << 20);
        let routes = Arc::new(SharedRoutes::new());
        let reg = registration("broker-a", "127.0.0.1:10911", &["T1", "T2"]);
        routes.register_broker(reg, 0, false, false).unwrap();
        let writer = Arc::new(SnapshotWriter::new(file.clone()));
        let task = tokio::spawn(periodic_writer(routes, writer));
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !file.path.exists() && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(file.load(0).expect("written").all_topics(), ["T1", "T2"]);
        assert_eq!(
            nice_of_thread("route-snapshot"),
            Some(i64::from(ENCODER_NICE))
        );
        // Aborting the writer ends its thread (it waits for no more work).
        task.abort();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while nice_of_thread("route-snapshot").is_some() && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(nice_of_thread("route-snapshot"), None, "the thread ended");
        let _ = std::fs::remove_dir_all(file.path.parent().unwrap());
    }

    #[test]
    fn writes_what_changed_and_nothing_after_close() {
        let file = temp_file("close", 1 << 20);
        let routes = SharedRoutes::new();
        let writer = SnapshotWriter::new(file.clone());
        let reg = registration("broker-a", "127.0.0.1:10911", &["T1", "T2"]);
        routes.register_broker(reg, 0, false, false).unwrap();
        assert!(writer.write(&routes) > Duration::ZERO, "encoded");
        let written = std::fs::read(&file.path).unwrap();
        assert_eq!(file.load(0).unwrap().all_topics(), ["T1", "T2"]);
        assert_eq!(writer.write(&routes), Duration::ZERO, "nothing changed");

        // A write that changes nothing persisted leaves the file alone.
        std::fs::write(&file.path, b"marker").unwrap();
        let again = registration("broker-a", "127.0.0.1:10911", &["T1", "T2"]);
        routes.register_broker(again, 10, false, false).unwrap();
        writer.write(&routes);
        assert_eq!(std::fs::read(&file.path).unwrap(), b"marker");
        std::fs::write(&file.path, &written).unwrap();

        let other = registration("broker-b", "127.0.0.1:10912", &["T3", "T4"]);
        routes.register_broker(other, 20, false, false).unwrap();
        writer.close(&routes);
        assert_eq!(file.load(0).unwrap().topic_count(), 4);
        // After the write at shutdown, unregistrations are not written.
        let gone = routes
            .read()
            .unregistration_for(&crate::route::BrokerKey::new(
                "DefaultCluster",
                "127.0.0.1:10912",
            ));
        routes.write().unregister_batch(&[gone.unwrap()], false);
        writer.write(&routes);
        assert_eq!(file.load(0).unwrap().topic_count(), 4);
        let _ = std::fs::remove_dir_all(file.path.parent().unwrap());
    }

    #[test]
    fn a_slow_encoding_spaces_the_next_out() {
        assert_eq!(pause_after(Duration::ZERO), WRITE_INTERVAL);
        assert_eq!(pause_after(Duration::from_millis(20)), WRITE_INTERVAL);
        assert_eq!(
            pause_after(Duration::from_millis(150)),
            Duration::from_secs(3)
        );
    }

    #[test]
    fn an_over_large_snapshot_removes_the_old_one() {
        let file = temp_file("large", 600);
        let routes = SharedRoutes::new();
        let writer = SnapshotWriter::new(file.clone());
        let small = registration("broker-a", "127.0.0.1:10911", &["T1", "T2"]);
        routes.register_broker(small, 0, false, false).unwrap();
        writer.write(&routes);
        assert!(file.path.exists(), "under 600 bytes: written");
        let topics: Vec<String> = (0..60).map(|i| format!("Topic{i}")).collect();
        let names: Vec<&str> = topics.iter().map(String::as_str).collect();
        let large = registration("broker-b", "127.0.0.1:10912", &names);
        routes.register_broker(large, 0, false, false).unwrap();
        writer.write(&routes);
        assert!(!file.path.exists(), "a stale snapshot is not left behind");
        assert!(file.load(0).is_none());
        let _ = std::fs::remove_dir_all(file.path.parent().unwrap());
    }
}
