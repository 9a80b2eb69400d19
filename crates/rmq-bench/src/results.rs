//! The results of a run as written to JSON: runs per scenario id; files of earlier versions are
//! converted on reading.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::peer::PeerKind;
use crate::pin::Machine;
use crate::provenance::GitState;
use crate::scenario::TWO_CPUS;

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
    #[serde(default)]
    pub git: Option<GitState>,
    pub pinning: Pinning,
    /// The NameServer peers.
    pub peers: Vec<PeerInfo>,
    #[serde(default)]
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

    /// Reads what [`Self::save`] (or an earlier version of it) wrote.
    pub fn load(path: &Path) -> anyhow::Result<Results> {
        let shown = path.display();
        let bytes = std::fs::read(path).with_context(|| format!("cannot read {shown}"))?;
        let value = serde_json::from_slice(&bytes);
        let value = value.with_context(|| format!("{shown} is not JSON"))?;
        let results = Results::from_json(value);
        results.with_context(|| format!("{shown} is not a results file"))
    }

    /// Reads a results value, converting the typed fields of older files.
    pub fn from_json(mut value: Value) -> anyhow::Result<Results> {
        if let Some(top) = value.as_object_mut() {
            convert_typed_fields(top);
        }
        Ok(serde_json::from_value(value)?)
    }
}

/// The typed fields of results written before runs were kept by scenario id: field, scenario,
/// part. A two-CPU pass's field holds its runs beside what becomes the scenario's note.
const TYPED_FIELDS: [(&str, &str, &str); 15] = [
    ("route_qps", "route-qps", ""),
    ("route_qps_two_cores", "route-qps", TWO_CPUS),
    ("route_sweep", "route-sweep", ""),
    ("route_under_storm", "route-under-storm", ""),
    ("register", "register", ""),
    ("register_two_cores", "register", TWO_CPUS),
    ("failover", "failover", ""),
    ("startup", "startup", ""),
    ("controller_heartbeats", "controller", "heartbeats"),
    ("controller_failover", "controller", "failover"),
    ("hostile", "hostile", ""),
    ("security_signing", "security", "signing"),
    ("security_tls", "security", "tls"),
    ("route_change_latency", "route-change-latency", ""),
    (
        "route_change_latency_push_off",
        "route-change-latency",
        "push-off",
    ),
];

/// Moves the typed fields of older files (and their controller groups) into `scenarios`,
/// flattening `params.layout` (`{"layout": {"brokers": 10, …}, …}`).
fn convert_typed_fields(top: &mut Map<String, Value>) {
    let mut scenarios = BTreeMap::<String, ScenarioRuns>::new();
    for (field, id, part) in TYPED_FIELDS {
        let scenario = scenarios.entry(id.to_owned()).or_default();
        let outcomes = match top.remove(field) {
            Some(Value::Object(mut pass)) if part == TWO_CPUS => {
                let runs = pass.remove("runs").or_else(|| pass.remove("register"));
                scenario.info.insert(TWO_CPUS.into(), Value::Object(pass));
                runs.unwrap_or_default()
            }
            Some(outcomes) if part != TWO_CPUS => outcomes,
            _ => continue,
        };
        let outcomes: Vec<Value> = serde_json::from_value(outcomes).unwrap_or_default();
        for mut run in outcomes
            .into_iter()
            .filter_map(|o| Run::deserialize(o).ok())
        {
            run.part = part.to_owned();
            let params = run.result.as_mut().and_then(|r| r.get_mut("params"));
            if let Some(params) = params.and_then(Value::as_object_mut) {
                if let Some(Value::Object(layout)) = params.remove("layout") {
                    params.extend(layout);
                }
            }
            scenario.runs.push(run);
        }
    }
    let peers = top.remove("controller_peers");
    let peers = peers.filter(|p| p.as_array().is_some_and(|a| !a.is_empty()));
    let namesrv = top.remove("controller_namesrv").filter(|n| !n.is_null());
    // A field without runs makes no scenario (a two-CPU pass is one by its note).
    scenarios.retain(|_, s| !s.runs.is_empty() || !s.info.is_empty());
    if let Some(controller) = scenarios.get_mut("controller") {
        let notes = [("peers", peers), ("namesrv", namesrv)];
        let notes = notes
            .into_iter()
            .filter_map(|(key, note)| Some((key.into(), note?)));
        controller.info.extend(notes);
    }
    if !scenarios.is_empty() {
        let scenarios = serde_json::to_value(scenarios).unwrap_or_default();
        top.insert("scenarios".into(), scenarios);
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typed_fields_of_older_files_become_runs_by_scenario() {
        let ok = |params: Value| json!({"peer": "waymark", "result": {"params": params, "qps": 1.0}, "error": null});
        let old = json!({
            "command": "c", "started_at": "t", "duration_s": 1.0, "quick": false,
            "machine": {"cpu_model": "x", "cpus": 2, "memory_mib": 1, "kernel": "k",
                        "load_at_start": "", "load_at_end": ""},
            "pinning": {}, "peers": [],
            "route_qps": [ok(json!({"layout": {"brokers": 10, "topics_per_broker": 100}, "depth": 4})),
                          {"peer": "java", "result": null, "error": "boom"}],
            "route_qps_two_cores": {"server_cpus": "", "shares_generator_cpus": false,
                                    "skipped": "the machine has 1 CPU", "runs": []},
            "register": [],
            "register_two_cores": {"server_cpus": "0,1", "shares_generator_cpus": true,
                                   "skipped": null, "register": [ok(json!({}))]},
            "controller_peers": [{"peer": "java", "version": "v", "command": "c"}],
            "controller_namesrv": "rmq-namesrv",
            "controller_failover": [ok(json!({}))],
            "route_change_latency_push_off": [ok(json!({}))],
        });
        let r = Results::from_json(old).unwrap();
        let qps = &r.scenarios["route-qps"];
        assert_eq!(qps.runs.len(), 2);
        assert_eq!(qps.runs[1].outcome::<Value>(), Err("boom".into()));
        let params = &qps.runs[0].result.as_ref().unwrap()["params"];
        assert_eq!(
            (params["brokers"].as_u64(), params["depth"].as_u64()),
            (Some(10), Some(4))
        );
        assert!(params.get("layout").is_none());
        assert_eq!(qps.info["two-cpus"]["skipped"], "the machine has 1 CPU");
        let register = &r.scenarios["register"].runs;
        assert_eq!((register.len(), register[0].part.as_str()), (1, "two-cpus"));
        let controller = &r.scenarios["controller"];
        assert_eq!(controller.runs[0].part, "failover");
        assert_eq!(controller.info["namesrv"], "rmq-namesrv");
        assert_eq!(controller.info["peers"][0]["peer"], "java");
        assert_eq!(r.scenarios["route-change-latency"].runs[0].part, "push-off");
        // Empty fields make no scenario.
        assert!(!r.scenarios.contains_key("startup"));

        // Today's shape round-trips as it is.
        let back = Results::from_json(serde_json::to_value(&r).unwrap()).unwrap();
        assert_eq!(back.scenarios, r.scenarios);
        assert!(utc_now().ends_with(" UTC") && utc_now().len() == 23);
    }
}
