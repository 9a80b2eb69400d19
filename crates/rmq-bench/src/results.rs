//! The results of a run, as written to JSON and read back by the report.
//!
//! One [`Results`] holds every scenario's outcome per peer, the machine, the
//! pinning, the peers' versions and command lines, and the command that
//! produced it. A peer that failed a scenario has its error instead of a
//! value, so one broken peer never loses the others' numbers.

use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::peer::PeerKind;
use crate::pin::Machine;
use crate::provenance::GitState;
use crate::scenario::controller::{Failover as ControllerFailover, Heartbeats};
use crate::scenario::failover::Failover;
use crate::scenario::hostile::Hostile;
use crate::scenario::register::Register;
use crate::scenario::route_change::RouteChangeLatency;
use crate::scenario::route_qps::RouteQps;
use crate::scenario::route_sweep::RouteSweep;
use crate::scenario::security::{Signing, TlsQueries};
use crate::scenario::startup::Startup;
use crate::scenario::storm::Storm;

/// One peer's outcome of one scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerOutcome<T> {
    /// Which peer.
    pub peer: PeerKind,
    /// The result, if the scenario completed.
    pub result: Option<T>,
    /// Why it did not, if it did not.
    pub error: Option<String>,
}

impl<T> PeerOutcome<T> {
    /// Wraps a scenario's return value.
    pub fn of(peer: PeerKind, outcome: anyhow::Result<T>) -> PeerOutcome<T> {
        match outcome {
            Ok(result) => PeerOutcome {
                peer,
                result: Some(result),
                error: None,
            },
            Err(error) => PeerOutcome {
                peer,
                result: None,
                error: Some(format!("{error:#}")),
            },
        }
    }
}

/// Finds `peer`'s result in `outcomes`.
pub fn of_peer<T>(outcomes: &[PeerOutcome<T>], peer: PeerKind) -> Option<&T> {
    outcomes
        .iter()
        .find(|o| o.peer == peer)
        .and_then(|o| o.result.as_ref())
}

/// A peer as it was run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerInfo {
    /// Which peer.
    pub peer: PeerKind,
    /// What it is, with version.
    pub version: String,
    /// How it was started (one example; ports and directories vary).
    pub command: String,
}

/// How processes were pinned.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Pinning {
    /// `taskset -c` list requested for the generator.
    pub client_cpus_requested: Option<String>,
    /// `Cpus_allowed_list` of the generator as the kernel reports it.
    pub client_cpus_allowed: Option<String>,
    /// `taskset -c` list the servers were started with (`None`: unpinned).
    pub server_cpus: Option<String>,
}

/// A scenario run again with the server on two CPUs (Waymark and Java).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TwoCores<T> {
    /// `taskset -c` list the servers were started with.
    pub server_cpus: String,
    /// Whether the generator ran on one of them: the machine had no two
    /// CPUs besides the generator's, so the server got what the generator
    /// left of them and its rate says nothing of how it scales.
    pub shares_generator_cpus: bool,
    /// Why it was not run, if it was not.
    pub skipped: Option<String>,
    /// Each peer's run.
    #[serde(alias = "register")]
    pub runs: Vec<PeerOutcome<T>>,
}

impl<T> TwoCores<T> {
    /// Not run, for `why`.
    pub fn skipped(why: String) -> TwoCores<T> {
        TwoCores {
            server_cpus: String::new(),
            shares_generator_cpus: false,
            skipped: Some(why),
            runs: Vec::new(),
        }
    }
}

/// Everything one invocation measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Results {
    /// The command line of the run.
    pub command: String,
    /// UTC time the run started.
    pub started_at: String,
    /// Wall time of the whole run, seconds.
    pub duration_s: f64,
    /// Whether `--quick` was given.
    pub quick: bool,
    /// The machine.
    pub machine: Machine,
    /// The work tree measured (`None`: not recorded, or no git).
    #[serde(default)]
    pub git: Option<GitState>,
    /// The pinning.
    pub pinning: Pinning,
    /// The peers.
    pub peers: Vec<PeerInfo>,
    /// `route-qps`.
    pub route_qps: Vec<PeerOutcome<RouteQps>>,
    /// `route-qps` again with every server on two CPUs (Waymark and Java).
    #[serde(default)]
    pub route_qps_two_cores: Option<TwoCores<RouteQps>>,
    /// `route-sweep`.
    #[serde(default)]
    pub route_sweep: Vec<PeerOutcome<RouteSweep>>,
    /// `route-under-storm`.
    pub route_under_storm: Vec<PeerOutcome<Storm>>,
    /// `register`.
    pub register: Vec<PeerOutcome<Register>>,
    /// `register` again with every server on two CPUs (Waymark and Java).
    #[serde(default)]
    pub register_two_cores: Option<TwoCores<Register>>,
    /// `failover`.
    pub failover: Vec<PeerOutcome<Failover>>,
    /// `startup`.
    pub startup: Vec<PeerOutcome<Startup>>,
    /// `controller`: the controller groups as they were run.
    #[serde(default)]
    pub controller_peers: Vec<PeerInfo>,
    /// `controller`: how the NameServer of the failover part was started.
    #[serde(default)]
    pub controller_namesrv: Option<String>,
    /// `controller`: heartbeats.
    #[serde(default)]
    pub controller_heartbeats: Vec<PeerOutcome<Heartbeats>>,
    /// `controller`: failover.
    #[serde(default)]
    pub controller_failover: Vec<PeerOutcome<ControllerFailover>>,
    /// `hostile`: every attack on every real NameServer.
    #[serde(default)]
    pub hostile: Vec<PeerOutcome<Hostile>>,
    /// `security`: signed against unsigned registrations (Waymark only).
    #[serde(default)]
    pub security_signing: Vec<PeerOutcome<Signing>>,
    /// `security`: TLS against plain route queries (Waymark and Java).
    #[serde(default)]
    pub security_tls: Vec<PeerOutcome<TlsQueries>>,
    /// `route-change-latency`: every real NameServer, its client with route
    /// push on (the client's default).
    #[serde(default)]
    pub route_change_latency: Vec<PeerOutcome<RouteChangeLatency>>,
    /// `route-change-latency`: Waymark again, its client with route push off.
    #[serde(default)]
    pub route_change_latency_push_off: Vec<PeerOutcome<RouteChangeLatency>>,
}

impl Results {
    /// Whether a scenario of the main NameServer section ran (`hostile`
    /// and `security` have their own sections).
    pub fn has_nameserver(&self) -> bool {
        !(self.route_qps.is_empty()
            && self.route_sweep.is_empty()
            && self.route_under_storm.is_empty()
            && self.register.is_empty()
            && self.failover.is_empty()
            && self.startup.is_empty())
    }

    /// Whether the hostile scenario ran (it has its own report section).
    pub fn has_hostile(&self) -> bool {
        !self.hostile.is_empty()
    }

    /// Whether the security scenario ran (it has its own report section).
    pub fn has_security(&self) -> bool {
        !(self.security_signing.is_empty() && self.security_tls.is_empty())
    }

    /// Whether the route-change-latency scenario ran (it has its own report
    /// section).
    pub fn has_route_change(&self) -> bool {
        !(self.route_change_latency.is_empty() && self.route_change_latency_push_off.is_empty())
    }

    /// Whether the controller scenario ran.
    pub fn has_controller(&self) -> bool {
        !(self.controller_heartbeats.is_empty() && self.controller_failover.is_empty())
    }

    /// Writes pretty JSON to `path`, creating its directory.
    ///
    /// # Errors
    /// I/O.
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let json = serde_json::to_vec_pretty(self)?;
        std::fs::write(path, json).with_context(|| format!("cannot write {}", path.display()))
    }

    /// Reads what [`Self::save`] wrote.
    ///
    /// # Errors
    /// I/O or malformed JSON.
    pub fn load(path: &Path) -> anyhow::Result<Results> {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not a results file", path.display()))
    }
}

/// Now as `YYYY-MM-DD HH:MM:SS UTC`.
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Days since 1970-01-01 to a civil date (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_round_trip_through_json() {
        let results = Results {
            route_qps: vec![PeerOutcome::of(
                PeerKind::Java,
                Err(anyhow::anyhow!("boom")),
            )],
            ..Results::default()
        };
        let json = serde_json::to_string(&results).unwrap();
        let back: Results = serde_json::from_str(&json).unwrap();
        assert_eq!(back.route_qps[0].error.as_deref(), Some("boom"));
        assert!(of_peer(&back.route_qps, PeerKind::Java).is_none());
        assert!(utc_now().ends_with(" UTC") && utc_now().len() == 23);
    }
}
