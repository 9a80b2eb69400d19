//! Durable file replacement, for the servers' own files (the NameServer's
//! kvConfig.json and config store, the controller's config store).
//!
//! A write is acknowledged only after the new content is on disk: write a
//! temporary file beside the target, fsync it, rename it over the target,
//! fsync the directory. Like Java, the previous content is kept as
//! `<file>.bak` first. A crash at any point leaves either the old or the new
//! file whole, never a torn one (Java overwrites in place).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Replaces `path` with `contents` durably; see the module doc.
pub fn replace_file(path: &Path, contents: &[u8]) -> io::Result<()> {
    if path.exists() {
        fs::copy(path, backup_of(path))?;
    }
    write_atomically(path, contents)
}

/// Replaces `path` with `contents` durably, as [`replace_file`] but leaving
/// its backup as it is (for restoring a file from that backup).
pub fn write_atomically(path: &Path, contents: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir)?;
    let tmp = sibling(path, ".tmp");
    let result = write_synced(&tmp, contents).and_then(|()| fs::rename(&tmp, path));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result?;
    sync_dir(&dir)
}

fn write_synced(path: &Path, contents: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    file.write_all(contents)?;
    file.sync_all()
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// The backup [`replace_file`] keeps of `path`'s previous content.
pub fn backup_of(path: &Path) -> PathBuf {
    sibling(path, ".bak")
}

/// `path` with `suffix` appended to its file name.
pub fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(suffix);
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_and_keeps_a_backup() {
        let dir = std::env::temp_dir().join(format!("waymark-persist-{}", std::process::id()));
        let path = dir.join("nested").join("kvConfig.json");
        replace_file(&path, b"one").unwrap();
        replace_file(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert_eq!(fs::read(sibling(&path, ".bak")).unwrap(), b"one");
        assert!(!sibling(&path, ".tmp").exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_write_reports_the_error() {
        let dir = std::env::temp_dir().join(format!("waymark-persist-ro-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        // A directory where the file should be: rename cannot replace it.
        let path = dir.join("target");
        fs::create_dir_all(path.join("inner")).unwrap();
        assert!(replace_file(&path, b"x").is_err());
        fs::remove_dir_all(&dir).unwrap();
    }
}
