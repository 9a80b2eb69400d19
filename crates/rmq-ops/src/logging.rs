//! Log set-up for the server binaries: to standard error, or with
//! `--log-dir` to `<dir>/<name>.log` (the name Java's logback gives the
//! NameServer's log), rotated daily to `<name>.log.YYYY-MM-DD` with the
//! newest `--log-max-files` kept; plain text (colour only on a terminal) or
//! one JSON object per line (`--log-format json`).
//!
//! Rotation and retention are file-rotate's; the writing happens on
//! tracing-appender's own thread, so a slow disk never stalls a request.
//! That thread blocks the logger rather than drop lines when it falls
//! behind: a line lost silently is worse than a slower warning.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Context;
use file_rotate::compression::Compression;
use file_rotate::suffix::{AppendTimestamp, DateFrom, FileLimit};
use file_rotate::{ContentLimit, FileRotate, TimeFrequency};
use tracing_subscriber::EnvFilter;

/// How the log is written (the binaries' `--log-*` flags).
#[derive(Debug, Clone, clap::Args)]
pub struct LogArgs {
    /// Write the log to <DIR>/<name>.log (namesrv.log, controller.log),
    /// rotated daily, instead of to standard error.
    #[arg(long = "log-dir", value_name = "DIR")]
    pub log_dir: Option<PathBuf>,
    /// Rotated log files kept besides the current one.
    #[arg(long = "log-max-files", value_name = "N", default_value_t = 14)]
    pub log_max_files: usize,
    /// Log line format.
    #[arg(long = "log-format", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// A log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable text.
    Text,
    /// One JSON object per line (timestamp, level, target, fields).
    Json,
}

/// Keeps the log writer's thread alive; dropping it flushes what is queued.
#[must_use = "dropping the guard stops the log file writer"]
#[derive(Debug)]
pub struct LogGuard {
    _writer: Option<tracing_appender::non_blocking::WorkerGuard>,
}

/// Installs the global logger: `file_stem` names the log file
/// (`namesrv` → `namesrv.log`); `RUST_LOG` overrides `default_filter`.
///
/// # Errors
/// When the log directory cannot be created.
pub fn init(args: &LogArgs, file_stem: &str, default_filter: &str) -> anyhow::Result<LogGuard> {
    let filter =
        || EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter));
    let Some(dir) = &args.log_dir else {
        let ansi = std::io::stderr().is_terminal();
        let builder = tracing_subscriber::fmt()
            .with_env_filter(filter())
            .with_writer(std::io::stderr);
        match args.log_format {
            // Colour codes only for a terminal: in a redirected log file they are noise.
            LogFormat::Text => builder.with_ansi(ansi).init(),
            LogFormat::Json => builder.json().with_ansi(false).init(),
        }
        return Ok(LogGuard { _writer: None });
    };
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the log directory {}", dir.display()))?;
    let file = FileRotate::new(
        dir.join(format!("{file_stem}.log")),
        AppendTimestamp::with_format(
            "%Y-%m-%d",
            FileLimit::MaxFiles(args.log_max_files),
            // A file rotated at midnight holds the day before.
            DateFrom::DateYesterday,
        ),
        ContentLimit::Time(TimeFrequency::Daily),
        Compression::None,
        None,
    );
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(false)
        .thread_name("log-writer")
        .finish(file);
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(writer)
        .with_ansi(false);
    match args.log_format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
    Ok(LogGuard {
        _writer: Some(guard),
    })
}

/// Which keys of `set` (every key the operator set, with its value) differ
/// from `defaults`, as `key=value` with secrets shown as `***`; a key with no
/// known default counts as changed.
pub fn non_default_keys<'a>(
    set: impl IntoIterator<Item = (&'a String, &'a String)>,
    defaults: &std::collections::BTreeMap<String, String>,
    is_secret: impl Fn(&str) -> bool,
) -> Vec<String> {
    set.into_iter()
        .filter(|(key, value)| defaults.get(*key) != Some(*value))
        .map(|(key, value)| {
            if is_secret(key) {
                format!("{key}=***")
            } else {
                format!("{key}={value}")
            }
        })
        .collect()
}
