//! The KV journal, `<kvConfigPath>.journal`: every PUT and DELETE since
//! kvConfig.json was last written, appended as one record each, so that a
//! write costs the size of the change and not of the store.
//!
//! A record is a little-endian `u32` payload length, the payload's CRC-32
//! (`u32`), then the payload: the change as JSON. A crash while appending
//! leaves at most a torn tail, which fails its length or checksum; replay
//! stops at the first such record. Records are only ever appended after the
//! ones before them were fsynced or are being fsynced together, so nothing
//! acknowledged lies past a bad record.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Namespace;

/// Bytes before each record's payload: its length and its checksum.
const RECORD_HEADER_BYTES: usize = 8;

/// One KV write, as the journal keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum Change {
    /// PUT_KV_CONFIG; a `None` value removes the key and keeps (or creates)
    /// the namespace, as Java's null value does.
    Put {
        /// The namespace.
        namespace: String,
        /// The key.
        key: String,
        /// The value.
        value: Option<String>,
    },
    /// DELETE_KV_CONFIG; a missing namespace stays missing.
    Delete {
        /// The namespace.
        namespace: String,
        /// The key.
        key: String,
    },
}

impl Change {
    /// Applies the change to `tables`. Applying a sequence of changes twice
    /// gives what applying it once does (each change sets one key, and no
    /// change removes a namespace), which makes replaying a journal whose
    /// changes are already in kvConfig.json harmless.
    pub fn apply(&self, tables: &mut BTreeMap<String, Namespace>) {
        match self {
            Change::Put {
                namespace,
                key,
                value,
            } => {
                let entries = tables.entry(namespace.clone()).or_default();
                match value {
                    Some(value) => {
                        entries.insert(key.clone(), value.clone());
                    }
                    None => {
                        entries.remove(key);
                    }
                }
            }
            Change::Delete { namespace, key } => {
                if let Some(entries) = tables.get_mut(namespace) {
                    entries.remove(key);
                }
            }
        }
    }

    /// The namespace the change is in.
    pub fn namespace(&self) -> &str {
        match self {
            Change::Put { namespace, .. } | Change::Delete { namespace, .. } => namespace,
        }
    }

    /// The key the change sets, and whether the key exists after it.
    pub fn key_after(&self) -> (&str, bool) {
        match self {
            Change::Put { key, value, .. } => (key, value.is_some()),
            Change::Delete { key, .. } => (key, false),
        }
    }
}

/// The journal's file name for `kv_path`.
pub fn journal_of(kv_path: &Path) -> PathBuf {
    rmq_transport::durable::sibling(kv_path, ".journal")
}

/// `change` as one record.
///
/// # Errors
/// A change too large to frame (over 4 GiB; the value quota keeps every
/// change far below).
pub fn encode_record(change: &Change) -> io::Result<Vec<u8>> {
    let payload = serde_json::to_vec(change).map_err(io::Error::other)?;
    let len = u32::try_from(payload.len()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "KV change too large for a journal record",
        )
    })?;
    let mut record = Vec::with_capacity(RECORD_HEADER_BYTES + payload.len());
    record.extend_from_slice(&len.to_le_bytes());
    record.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    record.extend_from_slice(&payload);
    Ok(record)
}

/// What a journal's bytes hold: the changes of its whole records, and how
/// many bytes those take (anything after is a torn or damaged tail).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Replay {
    /// The changes, oldest first.
    pub changes: Vec<Change>,
    /// Bytes of the whole records.
    pub good_bytes: u64,
    /// Bytes after them, ignored.
    pub ignored_bytes: u64,
}

/// Decodes the records of `bytes`, stopping at the first one that is cut
/// short, fails its checksum or does not decode.
pub fn decode_records(bytes: &[u8]) -> Replay {
    let mut changes = Vec::new();
    let mut at = 0usize;
    while let Some(header) = bytes.get(at..at + RECORD_HEADER_BYTES) {
        let (len, crc) = header.split_at(4);
        let len = u32::from_le_bytes(len.try_into().unwrap_or_default()) as usize;
        let crc = u32::from_le_bytes(crc.try_into().unwrap_or_default());
        let start = at + RECORD_HEADER_BYTES;
        let Some(payload) = start.checked_add(len).and_then(|end| bytes.get(start..end)) else {
            break;
        };
        if crc32fast::hash(payload) != crc {
            break;
        }
        let Ok(change) = serde_json::from_slice::<Change>(payload) else {
            break;
        };
        changes.push(change);
        at = start + len;
    }
    Replay {
        changes,
        good_bytes: at as u64,
        ignored_bytes: (bytes.len() - at) as u64,
    }
}

/// Reads the journal of `kv_path`; a missing journal has no records.
pub fn read(kv_path: &Path) -> io::Result<Replay> {
    match std::fs::read(journal_of(kv_path)) {
        Ok(bytes) => Ok(decode_records(&bytes)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(Replay::default()),
        Err(err) => Err(err),
    }
}

/// The journal open for appending.
#[derive(Debug)]
pub struct Journal {
    /// Shared with the writer that fsyncs while others append.
    file: Arc<File>,
    len: u64,
}

impl Journal {
    /// Opens (creating) the journal of `kv_path`, cut to its first
    /// `good_bytes`: a torn tail must go before anything is appended after
    /// it, or replay would stop there and miss the new records.
    pub fn open(kv_path: &Path, good_bytes: u64) -> io::Result<Journal> {
        let path = journal_of(kv_path);
        if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let existed = path.exists();
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        if file.metadata()?.len() != good_bytes {
            file.set_len(good_bytes)?;
            file.sync_data()?;
        }
        if !existed {
            // A new file's name is durable only once its directory is synced:
            // without it a crash could lose the journal with its records.
            let dir = path.parent().filter(|dir| !dir.as_os_str().is_empty());
            File::open(dir.unwrap_or(Path::new(".")))?.sync_all()?;
        }
        Ok(Journal {
            file: Arc::new(file),
            len: good_bytes,
        })
    }

    /// Bytes in the journal.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Appends `record` without waiting for the disk. On failure the
    /// journal is cut back to where it was, as far as the disk allows; the
    /// caller must not append again before [`Journal::reset`] succeeded.
    pub fn append(&mut self, record: &[u8]) -> io::Result<()> {
        let result = (&*self.file).write_all(record);
        if result.is_err() {
            let _ = self.file.set_len(self.len);
        } else {
            self.len += record.len() as u64;
        }
        result
    }

    /// A handle to fsync the records appended so far without holding the
    /// journal (appending goes on meanwhile).
    pub fn sync_handle(&self) -> Arc<File> {
        self.file.clone()
    }

    /// Empties the journal durably, once kvConfig.json holds its changes.
    pub fn reset(&mut self) -> io::Result<()> {
        self.file.set_len(0)?;
        self.file.sync_data()?;
        self.len = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(key: &str, value: &str) -> Change {
        Change::Put {
            namespace: "ns".into(),
            key: key.into(),
            value: Some(value.into()),
        }
    }

    #[test]
    fn records_decode_back_in_order() {
        let changes = vec![
            put("a", "1"),
            Change::Delete {
                namespace: "ns".into(),
                key: "a".into(),
            },
            Change::Put {
                namespace: "other".into(),
                key: "k".into(),
                value: None,
            },
        ];
        let bytes: Vec<u8> = changes
            .iter()
            .flat_map(|change| encode_record(change).unwrap())
            .collect();
        let replay = decode_records(&bytes);
        assert_eq!(replay.changes, changes);
        assert_eq!(replay.good_bytes, bytes.len() as u64);
        assert_eq!(replay.ignored_bytes, 0);
    }

    #[test]
    fn a_torn_or_damaged_tail_is_ignored() {
        let first = encode_record(&put("a", "1")).unwrap();
        let second = encode_record(&put("b", "2")).unwrap();
        let whole = [first.clone(), second.clone()].concat();
        // Cut anywhere inside the second record: header or payload.
        for cut in first.len() + 1..whole.len() {
            let replay = decode_records(&whole[..cut]);
            assert_eq!(replay.changes, vec![put("a", "1")], "cut at {cut}");
            assert_eq!(replay.good_bytes, first.len() as u64);
            assert_eq!(replay.ignored_bytes, (cut - first.len()) as u64);
        }
        // A flipped payload byte fails the checksum.
        let mut damaged = whole.clone();
        let last = damaged.len() - 2;
        damaged[last] ^= 0x20;
        assert_eq!(decode_records(&damaged).changes, vec![put("a", "1")]);
        // A length past the end (a torn header of garbage) too.
        let mut huge = first.clone();
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        huge.extend_from_slice(&[0; 12]);
        assert_eq!(decode_records(&huge).changes, vec![put("a", "1")]);
    }

    #[test]
    fn opening_cuts_the_torn_tail_before_appending() {
        let dir = std::env::temp_dir().join(format!("waymark-journal-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let kv = dir.join("kvConfig.json");
        let first = encode_record(&put("a", "1")).unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(journal_of(&kv), [&first[..], &[7, 0, 0]].concat()).unwrap();
        let replay = read(&kv).unwrap();
        assert_eq!(replay.ignored_bytes, 3);
        let mut journal = Journal::open(&kv, replay.good_bytes).unwrap();
        journal
            .append(&encode_record(&put("b", "2")).unwrap())
            .unwrap();
        let changes = read(&kv).unwrap().changes;
        assert_eq!(changes, vec![put("a", "1"), put("b", "2")]);
        journal.reset().unwrap();
        assert_eq!(read(&kv).unwrap(), Replay::default());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
