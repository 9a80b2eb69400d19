//! CPU pinning and what the machine is.
//!
//! The generator and the server must not compete for a core: the server runs
//! under `taskset -c <server cpus>` and the generator re-executes itself
//! under `taskset -c <client cpus>` (so pinning holds however `rmq-bench`
//! was started). What each process was actually allowed is read back from
//! `/proc/<pid>/status` (`Cpus_allowed_list`) and reported.

use std::os::unix::process::CommandExt;
use std::process::Command;

use serde::{Deserialize, Serialize};

/// Set in the environment of the re-executed, pinned generator.
const PINNED_ENV: &str = "WAYMARK_BENCH_PINNED";

/// One field of `/proc/<pid>/status` (`None` for this process).
pub fn proc_status_field(pid: Option<u32>, field: &str) -> Option<String> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/status"),
        None => "/proc/self/status".to_owned(),
    };
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .map(|value| value.trim().to_owned())
}

/// Resident set size of `pid` in KiB (`VmRSS`).
pub fn rss_kib(pid: u32) -> Option<u64> {
    proc_status_field(Some(pid), "VmRSS")?
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// Whether `cpus` (a `taskset -c` list) names only CPUs this machine has.
fn cpus_exist(cpus: &str) -> bool {
    let total = std::fs::read_to_string("/proc/cpuinfo")
        .map(|t| t.lines().filter(|l| l.starts_with("processor")).count())
        .unwrap_or(0);
    cpus.split(',').all(|part| {
        part.split('-')
            .all(|n| n.trim().parse::<usize>().is_ok_and(|n| n < total))
    })
}

/// The CPUs of a `taskset -c` list (`0,2-3` → 0, 2, 3); `None` if it does
/// not parse.
fn cpu_list(cpus: &str) -> Option<Vec<usize>> {
    let mut list = Vec::new();
    for part in cpus.split(',') {
        match part.split_once('-') {
            Some((from, to)) => {
                let from: usize = from.trim().parse().ok()?;
                let to: usize = to.trim().parse().ok()?;
                list.extend(from..=to);
            }
            None => list.push(part.trim().parse().ok()?),
        }
    }
    Some(list)
}

/// Two CPUs for a server measured on two cores, and whether the generator
/// (on `client_cpus`) shares them: the server's own CPU and the next one the
/// generator does not use if the machine (`cpus` CPUs) has one, else the
/// server's CPU and a generator's. `None` with fewer than two CPUs.
pub fn two_server_cpus(
    server_cpus: &str,
    client_cpus: &str,
    cpus: usize,
) -> Option<(String, bool)> {
    let server = cpu_list(server_cpus)?;
    let client = cpu_list(client_cpus)?;
    let own = *server.first()?;
    let free = (0..cpus).find(|cpu| *cpu != own && !client.contains(cpu));
    let (other, shared) = match free {
        Some(cpu) => (cpu, false),
        None => ((0..cpus).find(|cpu| *cpu != own)?, true),
    };
    let (low, high) = (own.min(other), own.max(other));
    Some((format!("{low},{high}"), shared || client.contains(&own)))
}

/// Whether `taskset` can be run.
pub fn taskset_available() -> bool {
    Command::new("taskset")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The server pinning to use: `Some(cpus)` if those CPUs exist and taskset
/// runs, else `None` (unpinned, said in the report).
pub fn usable(cpus: &str) -> Option<String> {
    (cpus_exist(cpus) && taskset_available()).then(|| cpus.to_owned())
}

/// Re-executes this process under `taskset -c cpus` unless it already runs
/// there (or was re-executed once). Returns only if no re-exec happened.
pub fn pin_self(cpus: &str) -> anyhow::Result<()> {
    if std::env::var_os(PINNED_ENV).is_some() {
        return Ok(());
    }
    if proc_status_field(None, "Cpus_allowed_list").as_deref() == Some(cpus) {
        return Ok(());
    }
    if usable(cpus).is_none() {
        tracing::warn!(
            cpus,
            "cannot pin the generator (no such CPUs or no taskset); running unpinned"
        );
        return Ok(());
    }
    let exe = std::env::current_exe()?;
    let error = Command::new("taskset")
        .arg("-c")
        .arg(cpus)
        .arg(exe)
        .args(std::env::args_os().skip(1))
        .env(PINNED_ENV, "1")
        .exec();
    Err(anyhow::anyhow!("cannot re-execute under taskset: {error}"))
}

/// The machine the run happened on.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Machine {
    /// CPU model.
    pub cpu_model: String,
    /// Logical CPUs.
    pub cpus: usize,
    /// Physical memory in MiB.
    pub memory_mib: u64,
    /// Kernel release.
    pub kernel: String,
    /// `/proc/loadavg` when the run started.
    pub load_at_start: String,
    /// `/proc/loadavg` when the run ended.
    pub load_at_end: String,
}

impl Machine {
    /// Reads `/proc`.
    pub fn probe() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| {
                l.strip_prefix("model name")?
                    .split_once(':')
                    .map(|(_, v)| v.trim())
            })
            .unwrap_or("unknown")
            .to_owned();
        let cpus = cpuinfo
            .lines()
            .filter(|l| l.starts_with("processor"))
            .count();
        let memory_mib = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("MemTotal:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            })
            .map_or(0, |kib| kib / 1024);
        Machine {
            cpu_model,
            cpus,
            memory_mib,
            kernel: read_trimmed("/proc/sys/kernel/osrelease"),
            load_at_start: load_average(),
            load_at_end: String::new(),
        }
    }
}

/// The three load averages.
pub fn load_average() -> String {
    read_trimmed("/proc/loadavg")
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

/// CPU counters at one moment, to tell how much CPU other processes took
/// while a measurement ran (the machine is shared), and how much the
/// servers themselves used.
#[derive(Debug, Clone, Copy)]
pub struct CpuSnapshot {
    busy: u64,
    server: u64,
    generator: u64,
    at: std::time::Instant,
}

/// Clock ticks per second of `/proc/<pid>/stat` and `/proc/stat`
/// (Linux's `USER_HZ`, 100 on every architecture it supports).
pub const TICKS_PER_SECOND: f64 = 100.0;

/// `utime + stime` of `/proc/<pid>/stat` (all threads, this process's
/// own with `None`), clock ticks.
pub fn process_ticks(pid: Option<u32>) -> Option<u64> {
    let path = pid.map_or_else(
        || "/proc/self/stat".to_owned(),
        |p| format!("/proc/{p}/stat"),
    );
    let text = std::fs::read_to_string(path).ok()?;
    // Fields after the parenthesised command name; utime and stime are 14 and 15.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// The ticks processes ran or were kept from running, of the `cpu` line of
/// `/proc/stat` (user nice system idle iowait irq softirq steal …): user,
/// nice, system and steal (another guest's time). Not idle or iowait, and
/// not irq and softirq either: that is the kernel's network stack carrying
/// the measured traffic over loopback (a fifth of a CPU at 25,000–50,000
/// paced queries a second), which no process's utime or stime holds; counted
/// as busy, it read as another process disturbing the measurement.
fn process_busy_ticks(cpu: &[u64]) -> Option<u64> {
    let field = |i: usize| cpu.get(i).copied();
    Some(field(0)? + field(1)? + field(2)? + field(7)?)
}

impl CpuSnapshot {
    /// Reads `/proc/stat` and the two processes' times.
    pub fn take(server_pid: u32) -> Option<CpuSnapshot> {
        CpuSnapshot::take_all(&[server_pid])
    }

    /// Reads `/proc/stat`, the generator's times and the sum of the times of
    /// `server_pids` (the processes of one server group).
    pub fn take_all(server_pids: &[u32]) -> Option<CpuSnapshot> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let cpu: Vec<u64> = stat
            .lines()
            .next()?
            .split_whitespace()
            .skip(1)
            .filter_map(|v| v.parse().ok())
            .collect();
        let busy = process_busy_ticks(&cpu)?;
        let mut server = 0;
        for &pid in server_pids {
            server += process_ticks(Some(pid))?;
        }
        Some(CpuSnapshot {
            busy,
            server,
            generator: process_ticks(None)?,
            at: std::time::Instant::now(),
        })
    }

    /// CPU used by everything but the server and the generator since
    /// `earlier`, in % of one CPU (100 ticks per second assumed, Linux's USER_HZ).
    pub fn others_percent_since(&self, earlier: &CpuSnapshot) -> f64 {
        let secs = self.at.duration_since(earlier.at).as_secs_f64().max(1e-3);
        let busy = self.busy.saturating_sub(earlier.busy);
        let ours = self.server.saturating_sub(earlier.server)
            + self.generator.saturating_sub(earlier.generator);
        busy.saturating_sub(ours) as f64 / secs
    }

    /// CPU time the servers used since `earlier`, seconds.
    pub fn server_seconds_since(&self, earlier: &CpuSnapshot) -> f64 {
        self.server_ticks_since(earlier) as f64 / TICKS_PER_SECOND
    }

    /// CPU time the servers used since `earlier`, clock ticks (10 ms each).
    pub fn server_ticks_since(&self, earlier: &CpuSnapshot) -> u64 {
        self.server.saturating_sub(earlier.server)
    }

    /// Wall time since `earlier`, seconds.
    pub fn seconds_since(&self, earlier: &CpuSnapshot) -> f64 {
        self.at.duration_since(earlier.at).as_secs_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_own_status() {
        assert!(proc_status_field(None, "Cpus_allowed_list").is_some());
        assert!(rss_kib(std::process::id()).is_some_and(|kib| kib > 0));
        assert!(cpus_exist("0"));
        assert_eq!(cpu_list("0,2-4"), Some(vec![0, 2, 3, 4]));
        assert_eq!(cpu_list("x"), None);
        // Two CPUs: the server's second is the generator's.
        assert_eq!(two_server_cpus("1", "0", 2), Some(("0,1".into(), true)));
        // Four: the next one the generator does not use.
        assert_eq!(two_server_cpus("1", "0", 4), Some(("1,2".into(), false)));
        assert_eq!(two_server_cpus("2", "0,1", 4), Some(("2,3".into(), false)));
        assert_eq!(two_server_cpus("0", "0", 1), None);
        assert!(!cpus_exist("4096"));
        assert!(Machine::probe().cpus >= 1);
    }

    #[test]
    fn busy_is_processes_time_not_idle_nor_interrupts() {
        // user nice system idle iowait irq softirq steal guest guest_nice
        let cpu = [100, 1, 50, 900, 7, 3, 40, 2, 0, 0];
        assert_eq!(process_busy_ticks(&cpu), Some(153));
        assert_eq!(process_busy_ticks(&cpu[..7]), None, "no steal field");
    }

    #[test]
    fn others_are_the_busy_ticks_the_measured_processes_did_not_use() {
        let start = std::time::Instant::now();
        let before = CpuSnapshot {
            busy: 1_000,
            server: 400,
            generator: 200,
            at: start,
        };
        let after = CpuSnapshot {
            busy: 1_300,
            server: 500,
            generator: 250,
            at: start + std::time::Duration::from_secs(2),
        };
        // 300 busy ticks in 2 s, 150 of them the server's and the generator's:
        // others used 75 ticks a second, 75 % of one CPU.
        assert_eq!(after.others_percent_since(&before), 75.0);
        assert_eq!(after.server_seconds_since(&before), 1.0);
        // Counters read a moment apart can cross: never below zero.
        let crossed = CpuSnapshot {
            busy: 1_100,
            ..after
        };
        assert_eq!(crossed.others_percent_since(&before), 0.0);
    }
}
