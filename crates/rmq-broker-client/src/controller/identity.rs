//! The controller broker id on disk: the identity file
//! `<cluster>#<brokerName>#<brokerId>` and, while an id is being applied
//! for, the temporary file `<identity>-temp` holding
//! `<cluster>#<brokerName>#<brokerId>#<registerCheckCode>`, both written as
//! Java's `BrokerMetadata` / `TempBrokerMetadata` write them (no newline).
//!
//! Owns the formats and the file operations; the order of the steps (ask,
//! write temp, apply, promote) is [`join`](super::join)'s. Every write is
//! durable (temporary file, fsync, rename, directory fsync): Java deletes
//! and rewrites in place, so a crash can leave it an empty identity file
//! and a broker that asks for a new id.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use rmq_transport::durable::replace_file;

/// What the identity file holds: this replica's controller id for good.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerIdentity {
    /// `brokerClusterName` when the id was obtained.
    pub cluster_name: String,
    /// `brokerName` when the id was obtained.
    pub broker_name: String,
    /// The controller broker id (≥ 1).
    pub broker_id: i64,
}

impl BrokerIdentity {
    /// `<cluster>#<brokerName>#<brokerId>`, Java's `encodeToStr`.
    pub fn encode(&self) -> String {
        format!(
            "{}#{}#{}",
            self.cluster_name, self.broker_name, self.broker_id
        )
    }

    /// Reads Java's format; `None` unless both names are non-empty and the
    /// id is a number (Java's `isLoaded`). Fields past the third are
    /// ignored, as Java's `split` does; surrounding whitespace is tolerated.
    pub fn decode(text: &str) -> Option<BrokerIdentity> {
        let mut fields = text.trim().split('#');
        let cluster_name = fields.next().filter(|f| !f.is_empty())?.to_owned();
        let broker_name = fields.next().filter(|f| !f.is_empty())?.to_owned();
        let broker_id = fields.next()?.parse().ok()?;
        Some(BrokerIdentity {
            cluster_name,
            broker_name,
            broker_id,
        })
    }
}

/// What the temporary file holds: an id asked for and not yet owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingIdentity {
    /// The id and names.
    pub identity: BrokerIdentity,
    /// `<brokerAddr>;<wall ms>`: lets the controller recognise a repeated
    /// apply by the same broker.
    pub register_check_code: String,
}

impl PendingIdentity {
    /// The pending id `broker_id` for a broker at `broker_addr`, stamped
    /// with `wall_ms`.
    pub fn new(
        cluster_name: &str,
        broker_name: &str,
        broker_id: i64,
        broker_addr: &str,
        wall_ms: i64,
    ) -> PendingIdentity {
        PendingIdentity {
            identity: BrokerIdentity {
                cluster_name: cluster_name.to_owned(),
                broker_name: broker_name.to_owned(),
                broker_id,
            },
            register_check_code: format!("{broker_addr};{wall_ms}"),
        }
    }

    /// `<cluster>#<brokerName>#<brokerId>#<registerCheckCode>`.
    pub fn encode(&self) -> String {
        format!("{}#{}", self.identity.encode(), self.register_check_code)
    }

    /// Reads Java's format; `None` unless all four fields are there.
    pub fn decode(text: &str) -> Option<PendingIdentity> {
        let identity = BrokerIdentity::decode(text)?;
        let register_check_code = text.trim().split('#').nth(3).filter(|f| !f.is_empty())?;
        Some(PendingIdentity {
            identity,
            register_check_code: register_check_code.to_owned(),
        })
    }
}

/// What is on disk, in the order Java looks: the identity file first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stored {
    /// The identity file loads: the id is ours.
    Owned(BrokerIdentity),
    /// Only the temporary file loads: apply for that id again.
    Pending(PendingIdentity),
    /// Neither: ask for a new id.
    Nothing,
}

/// The two files of one replica.
#[derive(Debug, Clone)]
pub struct IdentityFiles {
    path: PathBuf,
    temp: PathBuf,
}

impl IdentityFiles {
    /// The files at `path` and `temp`.
    pub fn new(path: impl Into<PathBuf>, temp: impl Into<PathBuf>) -> IdentityFiles {
        IdentityFiles {
            path: path.into(),
            temp: temp.into(),
        }
    }

    /// The identity file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The temporary file.
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// What the files hold. A file that is missing or does not parse counts
    /// as absent, as in Java.
    ///
    /// # Errors
    /// A read failure other than "not found".
    pub fn load(&self) -> io::Result<Stored> {
        if let Some(identity) = read(&self.path)?
            .as_deref()
            .and_then(BrokerIdentity::decode)
        {
            return Ok(Stored::Owned(identity));
        }
        if let Some(pending) = read(&self.temp)?
            .as_deref()
            .and_then(PendingIdentity::decode)
        {
            return Ok(Stored::Pending(pending));
        }
        Ok(Stored::Nothing)
    }

    /// Writes the temporary file durably.
    ///
    /// # Errors
    /// The write failure.
    pub fn write_pending(&self, pending: &PendingIdentity) -> io::Result<()> {
        replace_file(&self.temp, pending.encode().as_bytes())
    }

    /// Makes the applied id ours: the identity file is written durably
    /// first, then the temporary file goes. A crash between the two leaves
    /// both, and the identity file wins at the next load.
    ///
    /// # Errors
    /// The write or delete failure.
    pub fn promote(&self, pending: &PendingIdentity) -> io::Result<BrokerIdentity> {
        replace_file(&self.path, pending.identity.encode().as_bytes())?;
        self.remove_pending()?;
        Ok(pending.identity.clone())
    }

    /// Deletes the temporary file (an apply was refused: ask again).
    ///
    /// # Errors
    /// A delete failure other than "not found".
    pub fn remove_pending(&self) -> io::Result<()> {
        remove(&self.temp)
    }

    /// Deletes the identity file (it could not be written whole).
    ///
    /// # Errors
    /// A delete failure other than "not found".
    pub fn remove_identity(&self) -> io::Result<()> {
        remove(&self.path)
    }
}

fn read(path: &Path) -> io::Result<Option<String>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

/// Deletes `path` and syncs its directory, so that the deletion survives a
/// crash as the writes do.
fn remove(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(error),
    }
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => File::open(dir)?.sync_all(),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(dir: &Path) -> IdentityFiles {
        IdentityFiles::new(dir.join("brokerIdentity"), dir.join("brokerIdentity-temp"))
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "rmq-broker-client-identity-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn formats_are_javas() {
        let pending = PendingIdentity::new(
            "DefaultCluster",
            "broker-a",
            1,
            "10.0.0.1:30911",
            1_700_000_000_000,
        );
        assert_eq!(
            pending.encode(),
            "DefaultCluster#broker-a#1#10.0.0.1:30911;1700000000000"
        );
        assert_eq!(pending.identity.encode(), "DefaultCluster#broker-a#1");
        assert_eq!(
            PendingIdentity::decode(&pending.encode()),
            Some(pending.clone())
        );
        assert_eq!(
            BrokerIdentity::decode("DefaultCluster#broker-a#1\n"),
            Some(pending.identity)
        );
    }

    #[test]
    fn incomplete_files_do_not_load() {
        assert_eq!(BrokerIdentity::decode(""), None);
        assert_eq!(BrokerIdentity::decode("c#b"), None);
        assert_eq!(BrokerIdentity::decode("c##1"), None);
        assert_eq!(BrokerIdentity::decode("c#b#x"), None);
        assert_eq!(PendingIdentity::decode("c#b#1"), None);
        assert_eq!(PendingIdentity::decode("c#b#1#"), None);
    }

    #[test]
    fn the_identity_file_wins_over_the_temp_file() {
        let dir = scratch("order");
        let files = files(&dir);
        assert_eq!(files.load().unwrap(), Stored::Nothing);

        let pending = PendingIdentity::new("c", "b", 2, "h:1", 7);
        files.write_pending(&pending).unwrap();
        assert_eq!(files.load().unwrap(), Stored::Pending(pending.clone()));

        let owned = files.promote(&pending).unwrap();
        assert!(!files.temp_path().exists());
        assert_eq!(std::fs::read_to_string(files.path()).unwrap(), "c#b#2");
        assert_eq!(files.load().unwrap(), Stored::Owned(owned.clone()));

        // A crash between writing the identity and deleting the temp file.
        files
            .write_pending(&PendingIdentity::new("c", "b", 3, "h:1", 8))
            .unwrap();
        assert_eq!(files.load().unwrap(), Stored::Owned(owned));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
