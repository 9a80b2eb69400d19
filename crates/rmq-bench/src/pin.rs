//! CPU pinning (`taskset`), what the machine is, and reading a process's CPU time from `/proc`.

use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Instant;

use serde::{Deserialize, Serialize};

/// Set in the environment of the re-executed, pinned generator.
const PINNED_ENV: &str = "WAYMARK_BENCH_PINNED";

/// Clock ticks per second of `/proc/<pid>/stat` and `/proc/stat` (Linux's
/// `USER_HZ`, 100 on every architecture it supports).
pub const TICKS_PER_SECOND: f64 = 100.0;

/// One field of `/proc/<pid>/status` (`None`: this process's).
pub fn proc_status_field(pid: Option<u32>, field: &str) -> Option<String> {
    let text = std::fs::read_to_string(proc_file(pid, "status")).ok()?;
    value_of(&text, field).map(str::to_owned)
}

/// The value of the first `key: value` line of a `/proc` file (blanks may precede the colon).
fn value_of<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let mut lines = text.lines();
    let value = lines.find_map(|l| l.strip_prefix(key)?.trim_start().strip_prefix(':'));
    value.map(str::trim)
}

/// `/proc/<pid>/<name>` (`None`: this process's).
fn proc_file(pid: Option<u32>, name: &str) -> String {
    let pid = pid.map_or_else(|| "self".to_owned(), |p| p.to_string());
    format!("/proc/{pid}/{name}")
}

/// A `kB` figure of `/proc` (`  1234 kB`).
fn kib(value: &str) -> Option<u64> {
    value.trim().trim_end_matches("kB").trim().parse().ok()
}

/// Resident set size of `pid` in KiB (`VmRSS`).
pub fn rss_kib(pid: u32) -> Option<u64> {
    kib(&proc_status_field(Some(pid), "VmRSS")?)
}

/// The CPUs of a `taskset -c` list (`0,2-3` → 0, 2, 3); `None` if it does not parse.
fn cpu_list(cpus: &str) -> Option<Vec<usize>> {
    let mut list = Vec::new();
    for part in cpus.split(',') {
        let cpu = |n: &str| n.trim().parse::<usize>().ok();
        match part.split_once('-') {
            Some((from, to)) => list.extend(cpu(from)?..=cpu(to)?),
            None => list.push(cpu(part)?),
        }
    }
    Some(list)
}

/// Two CPUs for a server (its own and the next one the generator does not use, else a
/// generator's), and whether the generator shares them.
pub fn two_server_cpus(
    server_cpus: &str,
    client_cpus: &str,
    cpus: usize,
) -> Option<(String, bool)> {
    let (server, client) = (cpu_list(server_cpus)?, cpu_list(client_cpus)?);
    let own = *server.first()?;
    let (other, shared) = match (0..cpus).find(|cpu| *cpu != own && !client.contains(cpu)) {
        Some(cpu) => (cpu, false),
        None => ((0..cpus).find(|cpu| *cpu != own)?, true),
    };
    let (low, high) = (own.min(other), own.max(other));
    Some((format!("{low},{high}"), shared || client.contains(&own)))
}

/// The server pinning to use: `Some(cpus)` if those CPUs exist and taskset
/// runs, else `None` (unpinned, said in the report).
pub fn usable(cpus: &str) -> Option<String> {
    let machine = Machine::probe().cpus;
    let exist = cpu_list(cpus).is_some_and(|list| list.iter().all(|cpu| *cpu < machine));
    let taskset = Command::new("taskset").arg("-V").output();
    let taskset = taskset.is_ok_and(|o| o.status.success());
    (exist && taskset).then(|| cpus.to_owned())
}

/// Re-executes this process under `taskset -c cpus` unless it already runs
/// there (or was re-executed once). Returns only if no re-exec happened.
pub fn pin_self(cpus: &str) -> anyhow::Result<()> {
    let already = proc_status_field(None, "Cpus_allowed_list").as_deref() == Some(cpus);
    if std::env::var_os(PINNED_ENV).is_some() || already {
        return Ok(());
    }
    if usable(cpus).is_none() {
        let why = "cannot pin the generator (no such CPUs or no taskset); running unpinned";
        tracing::warn!(cpus, "{why}");
        return Ok(());
    }
    let error = Command::new("taskset")
        .arg("-c")
        .arg(cpus)
        .arg(std::env::current_exe()?)
        .args(std::env::args_os().skip(1))
        .env(PINNED_ENV, "1")
        .exec();
    Err(anyhow::anyhow!("cannot re-execute under taskset: {error}"))
}

/// The machine the run happened on: CPU model, logical CPUs, memory (MiB),
/// kernel release, `/proc/loadavg` when the run started and ended.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Machine {
    pub cpu_model: String,
    pub cpus: usize,
    pub memory_mib: u64,
    pub kernel: String,
    pub load_at_start: String,
    pub load_at_end: String,
}

impl Machine {
    pub fn probe() -> Machine {
        let cpuinfo = read("/proc/cpuinfo");
        let memory = value_of(&read("/proc/meminfo"), "MemTotal").and_then(kib);
        Machine {
            cpu_model: value_of(&cpuinfo, "model name")
                .unwrap_or("unknown")
                .to_owned(),
            cpus: cpuinfo
                .lines()
                .filter(|l| l.starts_with("processor"))
                .count(),
            memory_mib: memory.map_or(0, |kib| kib / 1024),
            kernel: read("/proc/sys/kernel/osrelease"),
            load_at_start: load_average(),
            load_at_end: String::new(),
        }
    }
}

/// The 1, 5 and 15 minute load averages.
pub fn load_average() -> String {
    let load = read("/proc/loadavg");
    let averages: Vec<&str> = load.split_whitespace().take(3).collect();
    averages.join(" ")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).map_or_else(|_| String::new(), |s| s.trim().to_owned())
}

/// CPU counters at one moment: the machine's busy ticks, the servers' and the generator's.
#[derive(Debug, Clone, Copy)]
pub struct CpuSnapshot {
    busy: u64,
    server: u64,
    generator: u64,
    at: Instant,
}

/// `utime + stime` of `/proc/<pid>/stat` (all threads; this process's with `None`), clock ticks.
pub fn process_ticks(pid: Option<u32>) -> Option<u64> {
    let text = std::fs::read_to_string(proc_file(pid, "stat")).ok()?;
    // Fields after the parenthesised command name; utime and stime are 14 and 15.
    let fields: Vec<&str> = text[text.rfind(')')? + 1..].split_whitespace().collect();
    let field = |i: usize| fields.get(i)?.parse::<u64>().ok();
    Some(field(11)? + field(12)?)
}

/// Busy ticks of `/proc/stat`'s `cpu` line: user, nice, system and steal; not irq and softirq
/// (the loopback traffic measured, which no process's time holds).
fn process_busy_ticks(cpu: &[u64]) -> Option<u64> {
    Some(cpu.first()? + cpu.get(1)? + cpu.get(2)? + cpu.get(7)?)
}

impl CpuSnapshot {
    pub fn take(server_pid: u32) -> Option<CpuSnapshot> {
        CpuSnapshot::take_all(&[server_pid])
    }

    /// Reads `/proc/stat`, the generator's times and the sum of the times of
    /// `server_pids` (the processes of one server group).
    pub fn take_all(server_pids: &[u32]) -> Option<CpuSnapshot> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let cpu = stat.lines().next()?.split_whitespace().skip(1);
        let cpu: Vec<u64> = cpu.filter_map(|v| v.parse().ok()).collect();
        let server = server_pids.iter().map(|&pid| process_ticks(Some(pid)));
        let server = server.sum::<Option<u64>>()?;
        let (busy, generator) = (process_busy_ticks(&cpu)?, process_ticks(None)?);
        let at = Instant::now();
        Some(CpuSnapshot {
            busy,
            server,
            generator,
            at,
        })
    }

    /// CPU used by everything but the servers and the generator since `earlier`, in % of one CPU.
    pub fn others_percent_since(&self, earlier: &CpuSnapshot) -> f64 {
        let busy = self.busy.saturating_sub(earlier.busy);
        let generator = self.generator.saturating_sub(earlier.generator);
        let ours = self.server_ticks_since(earlier) + generator;
        busy.saturating_sub(ours) as f64 / self.seconds_since(earlier).max(1e-3)
    }

    pub fn server_seconds_since(&self, earlier: &CpuSnapshot) -> f64 {
        self.server_ticks_since(earlier) as f64 / TICKS_PER_SECOND
    }

    pub fn server_ticks_since(&self, earlier: &CpuSnapshot) -> u64 {
        self.server.saturating_sub(earlier.server)
    }

    pub fn seconds_since(&self, earlier: &CpuSnapshot) -> f64 {
        self.at.duration_since(earlier.at).as_secs_f64()
    }
}
