//! The node's incarnation number in the cluster (its gossip generation),
//! kept on disk so that each start's is above every earlier one's.
//!
//! Peers tell a restarted node from its past life by the generation: a
//! higher one is a new life and ends the old one, a lower one is taken for
//! a stale message of a life already over. The wall-clock start time alone
//! is not enough: a node restarted after its host clock stepped back by
//! more than its downtime would start below its past life, and its peers
//! would take it for down until they forgot that life. So the generation
//! is max(last one + 1, wall-clock start), and it is written durably before
//! the node gossips.

use std::io;
use std::path::{Path, PathBuf};

use rmq_transport::durable::{sibling, write_atomically};

/// The file the generation is kept in: next to the KV store's
/// (`kvConfigPath`), which every NameServer has and keeps across restarts.
pub fn path_for(kv_config_path: &Path) -> PathBuf {
    sibling(kv_config_path, ".clusterGeneration")
}

/// This start's generation: above the one in `path` (if any) and not below
/// `wall_now_ms`, written to `path` before it is returned. A file that
/// does not parse is an error, not a fresh start: a generation below the
/// past life's is what the file is there to prevent.
pub fn next(path: &Path, wall_now_ms: u64) -> io::Result<u64> {
    let last = match std::fs::read_to_string(path) {
        Ok(text) => Some(text.trim().parse::<u64>().map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} does not hold a cluster generation ({e}); remove it only if this node's peers have forgotten its past life",
                    path.display()
                ),
            )
        })?),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let generation = last.map_or(wall_now_ms, |last| wall_now_ms.max(last.saturating_add(1)));
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    write_atomically(path, format!("{generation}\n").as_bytes())?;
    Ok(generation)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "waymark-generation-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn the_first_start_takes_the_wall_clock_and_keeps_it() {
        let path = path_for(&dir().join("kvConfig.json"));
        assert_eq!(next(&path, 1_000).unwrap(), 1_000);
        assert_eq!(std::fs::read_to_string(&path).unwrap().trim(), "1000");
    }

    #[test]
    fn a_restart_after_the_clock_stepped_back_is_still_a_later_life() {
        let path = path_for(&dir().join("kvConfig.json"));
        assert_eq!(next(&path, 5_000_000).unwrap(), 5_000_000);
        // Restarted a minute later by a clock set back an hour.
        assert_eq!(
            next(&path, 5_000_000 + 60_000 - 3_600_000).unwrap(),
            5_000_001
        );
        assert_eq!(next(&path, 0).unwrap(), 5_000_002);
    }

    #[test]
    fn a_restart_with_the_clock_ahead_takes_the_clock() {
        let path = path_for(&dir().join("kvConfig.json"));
        next(&path, 5_000_000).unwrap();
        assert_eq!(next(&path, 9_000_000).unwrap(), 9_000_000);
    }

    #[test]
    fn a_file_that_does_not_parse_stops_the_start() {
        let path = path_for(&dir().join("kvConfig.json"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "yesterday").unwrap();
        let error = next(&path, 1_000).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "yesterday");
    }
}
