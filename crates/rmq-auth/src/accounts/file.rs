//! An accounts file that is re-read when it changes.
//!
//! The caller polls [`AccountsFile::reload_if_changed`] from its own timer:
//! this crate starts no thread and reads no clock. A bad new file is reported
//! once and the previous accounts stay in force, so a half-saved edit never
//! locks everyone out, and a fixed file is picked up on the next poll.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use sha1::{Digest, Sha1};

use super::{Accounts, AccountsError, LoadOptions};

/// Larger files are refused rather than read: an accounts file is a few
/// kilobytes, and a wrong path must not make a server read gigabytes.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The accounts of one file, with what is needed to notice it changed.
#[derive(Debug)]
pub struct AccountsFile {
    path: PathBuf,
    options: LoadOptions,
    current: Arc<Accounts>,
    /// What the last poll saw, good or bad; `None` when the file was missing.
    seen: Option<Seen>,
}

/// The file as last examined: `(mtime, length)` to skip reading an
/// untouched file, and a content hash to skip re-parsing a touched one.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    modified: Option<SystemTime>,
    len: u64,
    hash: [u8; 20],
}

/// What [`AccountsFile::reload_if_changed`] did.
#[derive(Debug)]
pub enum ReloadOutcome {
    /// Same file as last time (or the same bad file, already reported).
    Unchanged,
    /// New accounts are in force.
    Reloaded {
        /// To be logged, as at start-up.
        warnings: Vec<String>,
    },
    /// The file changed and is unusable; the previous accounts stay.
    Rejected {
        /// Why, naming file and line.
        error: AccountsError,
    },
}

impl AccountsFile {
    /// Loads the file; fails if it is unusable (there is nothing to fall back on yet).
    ///
    /// # Errors
    /// As [`Accounts::load`].
    pub fn open(
        path: &Path,
        options: LoadOptions,
    ) -> Result<(AccountsFile, Vec<String>), AccountsError> {
        let modified_and_len = stat(path)?;
        let text = read_text(path)?;
        let (accounts, warnings) = Accounts::parse(&text, &path.display().to_string(), options)?;
        let file = AccountsFile {
            path: path.to_owned(),
            options,
            current: Arc::new(accounts),
            seen: Some(Seen {
                modified: modified_and_len.0,
                len: modified_and_len.1,
                hash: Sha1::digest(text.as_bytes()).into(),
            }),
        };
        Ok((file, warnings))
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The accounts in force: the last good file's.
    pub fn accounts(&self) -> Arc<Accounts> {
        Arc::clone(&self.current)
    }

    /// Re-reads the file if its modification time or length changed, and
    /// re-parses it if its content did.
    ///
    /// An edit that keeps both the length and the modification time is not
    /// seen until the next change; file systems with nanosecond timestamps
    /// (ext4, xfs, btrfs, tmpfs) make that practically impossible.
    pub fn reload_if_changed(&mut self) -> ReloadOutcome {
        let (modified, len) = match stat(&self.path) {
            Ok(stamp) => stamp,
            Err(error) => {
                // Report a vanished file once, not on every poll.
                return match self.seen.take() {
                    Some(_) => ReloadOutcome::Rejected { error },
                    None => ReloadOutcome::Unchanged,
                };
            }
        };
        if let Some(seen) = &self.seen {
            if seen.modified == modified && seen.len == len {
                return ReloadOutcome::Unchanged;
            }
        }
        let text = match read_text(&self.path) {
            Ok(text) => text,
            Err(error) => {
                self.seen = None;
                return ReloadOutcome::Rejected { error };
            }
        };
        let hash: [u8; 20] = Sha1::digest(text.as_bytes()).into();
        let same_content = self.seen.as_ref().is_some_and(|seen| seen.hash == hash);
        self.seen = Some(Seen {
            modified,
            len,
            hash,
        });
        if same_content {
            return ReloadOutcome::Unchanged;
        }
        match Accounts::parse(&text, &self.path.display().to_string(), self.options) {
            Ok((accounts, warnings)) => {
                self.current = Arc::new(accounts);
                ReloadOutcome::Reloaded { warnings }
            }
            Err(error) => ReloadOutcome::Rejected { error },
        }
    }
}

fn stat(path: &Path) -> Result<(Option<SystemTime>, u64), AccountsError> {
    let meta = fs::metadata(path).map_err(|source| read_error(path, source))?;
    Ok((meta.modified().ok(), meta.len()))
}

/// Reads a small UTF-8 text file (accounts, `tools.yml`).
pub(crate) fn read_text(path: &Path) -> Result<String, AccountsError> {
    let file = fs::File::open(path).map_err(|source| read_error(path, source))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| read_error(path, source))?;
    let invalid = |message: String| AccountsError::Invalid {
        origin: path.display().to_string(),
        line: None,
        message,
    };
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(invalid(format!("is larger than {MAX_FILE_BYTES} bytes")));
    }
    String::from_utf8(bytes).map_err(|e| invalid(format!("is not UTF-8 text ({e})")))
}

fn read_error(path: &Path, source: std::io::Error) -> AccountsError {
    AccountsError::Read {
        path: path.to_owned(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> TempDir {
            let dir = std::env::temp_dir().join(format!("rmq-auth-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    const GOOD: &str = "accounts:\n  - accessKey: broker-key-1\n    secretKey: broker-secret-1\n";
    const GOOD_TOO: &str =
        "accounts:\n  - accessKey: broker-key-2\n    secretKey: broker-secret-2\n    admin: true\n";
    const BAD: &str = "accounts:\n  - accessKey: short\n    secretKey: broker-secret-1\n";

    #[test]
    fn keeps_the_last_good_accounts_and_reports_a_bad_file_once() {
        let dir = TempDir::new("reload");
        let path = dir.0.join("accounts.yml");
        fs::write(&path, GOOD).unwrap();
        let (mut file, warnings) = AccountsFile::open(&path, LoadOptions::default()).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(file.path(), path);
        assert!(file.accounts().get("broker-key-1").is_some());
        assert!(matches!(file.reload_if_changed(), ReloadOutcome::Unchanged));

        fs::write(&path, GOOD_TOO).unwrap();
        assert!(matches!(
            file.reload_if_changed(),
            ReloadOutcome::Reloaded { .. }
        ));
        assert!(file.accounts().get("broker-key-2").unwrap().is_admin());

        fs::write(&path, format!("{BAD}# longer\n")).unwrap();
        match file.reload_if_changed() {
            ReloadOutcome::Rejected { error } => {
                let text = error.to_string();
                assert!(
                    text.contains("accounts.yml:2: accounts[0].accessKey"),
                    "{text}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(file.reload_if_changed(), ReloadOutcome::Unchanged));
        assert!(
            file.accounts().get("broker-key-2").is_some(),
            "previous accounts stay"
        );

        fs::remove_file(&path).unwrap();
        assert!(matches!(
            file.reload_if_changed(),
            ReloadOutcome::Rejected {
                error: AccountsError::Read { .. }
            }
        ));
        assert!(matches!(file.reload_if_changed(), ReloadOutcome::Unchanged));
        assert!(file.accounts().get("broker-key-2").is_some());

        fs::write(&path, GOOD).unwrap();
        assert!(matches!(
            file.reload_if_changed(),
            ReloadOutcome::Reloaded { .. }
        ));
        assert!(file.accounts().get("broker-key-1").is_some());
    }

    #[test]
    fn a_touched_file_with_the_same_content_is_not_reparsed() {
        let dir = TempDir::new("touch");
        let path = dir.0.join("accounts.yml");
        fs::write(&path, GOOD).unwrap();
        let (mut file, _) = AccountsFile::open(&path, LoadOptions::default()).unwrap();
        let before = file.accounts();
        fs::write(&path, GOOD).unwrap();
        let later = SystemTime::now() + std::time::Duration::from_secs(5);
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert!(matches!(file.reload_if_changed(), ReloadOutcome::Unchanged));
        assert!(Arc::ptr_eq(&before, &file.accounts()));
    }

    #[test]
    fn open_and_load_refuse_what_cannot_be_read() {
        let dir = TempDir::new("open");
        let missing = dir.0.join("missing.yml");
        assert!(matches!(
            AccountsFile::open(&missing, LoadOptions::default()),
            Err(AccountsError::Read { .. })
        ));
        let binary = dir.0.join("binary.yml");
        fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
        let err = Accounts::load(&binary, LoadOptions::default()).unwrap_err();
        assert!(err.to_string().contains("is not UTF-8"), "{err}");
    }
}
