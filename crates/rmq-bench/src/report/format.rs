//! How figures are written in the report, each in one place.

use crate::sample::ServerCpu;
use crate::stats::Latency;

/// `a ÷ b` as `4.10×` (`41×` from 10 up), or `n/a`.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match div(a, b).filter(|_| a.is_some_and(|a| a > 0.0)) {
        Some(r) if r >= 10.0 => format!("{r:.0}×"),
        Some(r) => format!("{r:.2}×"),
        None => "n/a".into(),
    }
}

/// `a ÷ b`, if `b` is positive.
pub fn div(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a? / b.filter(|b| *b > 0.0)?)
}

/// A whole number with thousands separators: `1,234,567`.
pub fn num(value: f64) -> String {
    let rounded = value.round() as i64;
    let digits = rounded.unsigned_abs().to_string().into_bytes();
    let groups = digits.rchunks(3).rev().flat_map(std::str::from_utf8);
    let groups: Vec<&str> = groups.collect();
    format!("{}{}", if rounded < 0 { "-" } else { "" }, groups.join(","))
}

/// Microseconds as milliseconds: `1.23 ms`, `12.3 ms`, `123 ms`.
pub fn ms(us: f64) -> String {
    match us / 1_000.0 {
        ms if ms >= 100.0 => format!("{ms:.0} ms"),
        ms if ms >= 10.0 => format!("{ms:.1} ms"),
        ms => format!("{ms:.2} ms"),
    }
}

/// A percentile of `latency` as [`ms`], `n/a` when nothing was answered.
pub fn answered_ms(latency: &Latency, us: f64) -> String {
    or_na((latency.count > 0).then_some(us), ms)
}

/// Seconds: `1.23 s`, under a second as [`ms`].
pub fn seconds(s: f64) -> String {
    if s < 1.0 {
        ms(s * 1e6)
    } else {
        format!("{s:.2} s")
    }
}

/// KiB as `12.3 MiB`, or `n/a`.
pub fn mib(kib: Option<u64>) -> String {
    mib_of(kib.map(|k| k as f64))
}

/// As [`mib`], of a fractional KiB figure (a median).
pub fn mib_of(kib: Option<f64>) -> String {
    or_na(kib, |k| format!("{:.1} MiB", k / 1024.0))
}

/// Other processes' CPU during a measurement (the machine is shared).
pub fn noise(percent: Option<f64>) -> String {
    or_na(percent, |p| format!("{p:.0} %"))
}

/// Microseconds of CPU: `3.42 µs`, `123 µs`, `1,234 µs`, or `n/a`.
pub fn us(value: Option<f64>) -> String {
    match value {
        Some(v) if v >= 1_000.0 => format!("{} µs", num(v)),
        Some(v) if v >= 100.0 => format!("{v:.0} µs"),
        Some(v) => format!("{v:.2} µs"),
        None => "n/a".into(),
    }
}

/// The server's share of one CPU over a window, raw (however few ticks).
pub fn cpu_share(cpu: Option<&ServerCpu>) -> String {
    or_na(cpu, |c| format!("{:.1} %", c.server_cpu_percent))
}

/// A value with a format, or `n/a`.
pub fn or_na<T>(value: Option<T>, format: impl FnOnce(T) -> String) -> String {
    value.map_or_else(|| "n/a".into(), format)
}

/// `yes`, `**no**` or `n/a`.
pub fn met(met: Option<bool>) -> &'static str {
    match met {
        Some(true) => "yes",
        Some(false) => "**no**",
        None => "n/a",
    }
}

/// `ms` as `12 ms`, or `missing`.
pub fn ms_or(ms: Option<f64>, missing: &str) -> String {
    ms.map_or_else(|| missing.into(), |v| format!("{v:.0} ms"))
}

/// Each of `samples` as [`ms_or`], comma-separated.
pub fn ms_list(samples: &[Option<f64>], missing: &str) -> String {
    let shown: Vec<String> = samples.iter().map(|&s| ms_or(s, missing)).collect();
    shown.join(", ")
}
