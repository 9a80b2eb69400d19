//! The results of a run as written to JSON: runs per scenario id.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::peer::PeerKind;
use crate::pin::Machine;
use crate::provenance::GitState;

/// One peer's run of one part of a scenario ("" for a scenario of one; e.g. `two-cpus`, `tls`):
/// its outcome if it completed, else why not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub peer: PeerKind,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub part: String,
    pub result: Option<Value>,
    pub error: Option<String>,
}

impl Run {
    /// The outcome as `T`, or why there is none.
    pub fn outcome<T: DeserializeOwned>(&self) -> Result<T, String> {
        match &self.result {
            Some(value) => T::deserialize(value).map_err(|e| format!("unreadable result: {e}")),
            None => Err(self.error.clone().unwrap_or_else(|| "no result".into())),
        }
    }
}

/// Everything one scenario recorded in a run: its runs, and what it noted beside them by key
/// (the two-CPU pass's CPUs, the controller groups as started, …).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScenarioRuns {
    pub runs: Vec<Run>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub info: BTreeMap<String, Value>,
}

impl ScenarioRuns {
    /// `peer`'s outcome of `part`, if it completed and reads as `T`.
    pub fn of<T: DeserializeOwned>(&self, part: &str, peer: PeerKind) -> Option<T> {
        let run = self.runs.iter().find(|r| r.part == part && r.peer == peer);
        run?.outcome().ok()
    }

    /// The note under `key`, if there is one and it reads as `T`.
    pub fn info<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        T::deserialize(self.info.get(key)?).ok()
    }
}

/// A peer as it was run: what it is, with version, and how it was started (one example; ports
/// and directories vary).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerInfo {
    pub peer: PeerKind,
    pub version: String,
    pub command: String,
}

/// How processes were pinned (the generator's list asked for and allowed, the servers'; `None`:
/// unpinned).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Pinning {
    pub client_cpus_requested: Option<String>,
    pub client_cpus_allowed: Option<String>,
    pub server_cpus: Option<String>,
}

/// Everything one invocation measured (`started_at` in UTC, `duration_s` of the whole run).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Results {
    pub command: String,
    pub started_at: String,
    pub duration_s: f64,
    pub quick: bool,
    pub machine: Machine,
    /// `None`: not recorded, or no git.
    pub git: Option<GitState>,
    pub pinning: Pinning,
    /// The NameServer peers.
    pub peers: Vec<PeerInfo>,
    pub scenarios: BTreeMap<String, ScenarioRuns>,
}

impl Results {
    /// Writes pretty JSON to `path`, creating its directory.
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let json = serde_json::to_vec_pretty(self)?;
        std::fs::write(path, json).with_context(|| format!("cannot write {}", path.display()))
    }

    /// Reads what [`Self::save`] wrote.
    pub fn load(path: &Path) -> anyhow::Result<Results> {
        let shown = path.display();
        let bytes = std::fs::read(path).with_context(|| format!("cannot read {shown}"))?;
        let results = serde_json::from_slice(&bytes);
        results.with_context(|| format!("{shown} is not a results file"))
    }
}

/// Now as `YYYY-MM-DD HH:MM:SS UTC`.
pub fn utc_now() -> String {
    let since_epoch = std::time::UNIX_EPOCH.elapsed();
    let secs = since_epoch.map_or(0, |d| d.as_secs());
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Days since 1970-01-01 to a civil date (proleptic Gregorian).
    let z = days + 719_468;
    let (era, doe) = (z.div_euclid(146_097), z.rem_euclid(146_097));
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s) = (rem / 3_600, rem % 3_600 / 60, rem % 60);
    format!("{year:04}-{month:02}-{day:02} {h:02}:{m:02}:{s:02} UTC")
}
