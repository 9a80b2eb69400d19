//! The process's own figures from `/proc/self` (Linux), as the Prometheus
//! client libraries of other languages export them: CPU seconds, resident
//! and virtual memory, open and allowed file descriptors, threads, start
//! time. Elsewhere the collector exports nothing rather than zeros.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// Clock ticks per second of `/proc/<pid>/stat` (USER_HZ). Linux fixes it at
/// 100 on every architecture Waymark builds for; reading it with sysconf
/// would need unsafe FFI.
const TICKS_PER_SECOND: f64 = 100.0;

/// The figures at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ProcessFigures {
    /// User plus system CPU time, seconds.
    pub cpu_seconds: f64,
    /// Resident set size, bytes.
    pub resident_bytes: u64,
    /// Virtual memory size, bytes.
    pub virtual_bytes: u64,
    /// Open file descriptors.
    pub open_fds: u64,
    /// The soft limit on file descriptors.
    pub max_fds: Option<u64>,
    /// Threads.
    pub threads: u64,
    /// Start time, seconds since the Unix epoch.
    pub start_time_seconds: Option<f64>,
}

/// Reads the figures of this process; `None` where `/proc` is missing.
pub fn read() -> Option<ProcessFigures> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: the
    // fields after it are counted from the last ')'.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // after_name starts at field 3 (state): field n is fields[n - 3].
    let field = |n: usize| fields.get(n - 3).and_then(|v| v.parse::<u64>().ok());
    let cpu_ticks = field(14)? + field(15)?;
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = |key: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(key))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
            .map(|v| v * 1024)
    };
    let open_fds = std::fs::read_dir("/proc/self/fd").map_or(0, |dir| dir.count() as u64);
    let max_fds = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|limits| {
            limits
                .lines()
                .find_map(|line| line.strip_prefix("Max open files"))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|v| v.parse::<u64>().ok())
        });
    let boot_time = std::fs::read_to_string("/proc/stat").ok().and_then(|stat| {
        stat.lines()
            .find_map(|line| line.strip_prefix("btime "))
            .and_then(|v| v.trim().parse::<u64>().ok())
    });
    let start_time_seconds = match (boot_time, field(22)) {
        (Some(boot), Some(ticks)) => Some(boot as f64 + ticks as f64 / TICKS_PER_SECOND),
        _ => None,
    };
    Some(ProcessFigures {
        cpu_seconds: cpu_ticks as f64 / TICKS_PER_SECOND,
        resident_bytes: kib("VmRSS:").unwrap_or(0),
        virtual_bytes: kib("VmSize:").unwrap_or(0),
        open_fds,
        max_fds,
        threads: field(20).unwrap_or(0),
        start_time_seconds,
    })
}

/// Exports [`read`] at each scrape under the `process_` names.
#[derive(Debug, Default)]
pub struct ProcessCollector;

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let Some(figures) = read() else {
            return Ok(());
        };
        let counter = ConstCounter::new(figures.cpu_seconds);
        counter.encode(encoder.encode_descriptor(
            "process_cpu_seconds",
            "User and system CPU time spent, seconds.",
            None,
            counter.metric_type(),
        )?)?;
        let gauges = [
            (
                "process_resident_memory_bytes",
                "Resident memory size, bytes.",
                Some(figures.resident_bytes as f64),
            ),
            (
                "process_virtual_memory_bytes",
                "Virtual memory size, bytes.",
                Some(figures.virtual_bytes as f64),
            ),
            (
                "process_open_fds",
                "Open file descriptors.",
                Some(figures.open_fds as f64),
            ),
            (
                "process_max_fds",
                "Maximum number of open file descriptors (soft limit).",
                figures.max_fds.map(|v| v as f64),
            ),
            ("process_threads", "Threads.", Some(figures.threads as f64)),
            (
                "process_start_time_seconds",
                "Start time of the process since the Unix epoch, seconds.",
                figures.start_time_seconds,
            ),
        ];
        for (name, help, value) in gauges {
            if let Some(value) = value {
                let gauge = ConstGauge::new(value);
                gauge.encode(encoder.encode_descriptor(
                    name,
                    help,
                    None,
                    gauge.metric_type(),
                )?)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_memory_threads_and_descriptors() {
        let figures = read().expect("/proc is mounted on Linux");
        assert!(figures.resident_bytes > 1 << 20, "{figures:?}");
        assert!(figures.threads >= 1, "{figures:?}");
        assert!(figures.open_fds >= 3, "{figures:?}");
        let started = figures.start_time_seconds.expect("start time");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        assert!(
            started <= now + 1.0 && started > now - 86_400.0 * 365.0,
            "{started} vs {now}"
        );
    }
}
