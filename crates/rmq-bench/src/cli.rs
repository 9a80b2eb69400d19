//! The command line: the options every sub-command takes, `compare`,
//! `report`, the hidden `ceiling-server`, and one sub-command per scenario
//! of [`scenario::ALL`], whose flags are its parameters' own.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Command};

use crate::peer::PeerKind;
use crate::provenance::Allow;
use crate::scenario;
use crate::workload::Layout;

pub fn command() -> Command {
    let mut command = Global::augment_args(
        Command::new("rmq-bench")
            .version(env!("CARGO_PKG_VERSION"))
            .about(
                "Runs NameServer workloads against Waymark, the Java NameServer, the \
                 `rocketmq-namesrv` Rust port and a ceiling server, and controller workloads \
                 against Waymark's and the Java controller, side by side.",
            )
            .after_help(
                "Examples:\n  \
                 rmq-bench compare                       every scenario on every peer, writes docs/benchmarks.md\n  \
                 rmq-bench --quick --peers waymark,ceiling compare --report /tmp/b.md\n  \
                 rmq-bench route-qps --peers waymark,java --duration 10s --depth 8\n  \
                 rmq-bench --peers waymark,java compare --scenarios controller,security\n  \
                 rmq-bench report --input .bench/bench-results.json\n\n\
                 Servers run under `taskset -c <server-cpus>`; rmq-bench re-executes itself under\n\
                 `taskset -c <client-cpus>`. Progress goes to stderr, JSON results to stdout (or --json).",
            )
            .subcommand_required(true),
    );
    command = command
        .subcommand(CompareArgs::augment_args(Command::new("compare").about(
            "Every scenario (or those of --scenarios) on every peer; writes the results and \
             their sections of the report",
        )))
        .subcommand(ReportArgs::augment_args(
            Command::new("report").about("Writes the report's sections from a results file"),
        ))
        .subcommand(CeilingArgs::augment_args(
            Command::new("ceiling-server").hide(true),
        ));
    for entry in scenario::ALL {
        command = command.subcommand(entry.command());
    }
    command
}

#[derive(Debug, Clone, Args)]
pub struct Global {
    /// Peers to run, comma-separated.
    #[arg(
        long,
        global = true,
        value_delimiter = ',',
        default_value = "waymark,java,rust-port,ceiling"
    )]
    pub peers: Vec<PeerKind>,
    /// A few seconds per scenario and smaller fleets: checks the harness, not performance.
    #[arg(long, global = true)]
    pub quick: bool,
    /// Also write the JSON results to this file.
    #[arg(long, global = true, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Waymark's rmq-namesrv [default: next to this executable].
    #[arg(long, global = true, value_name = "PATH")]
    pub waymark_bin: Option<PathBuf>,
    /// The Rust port's rocketmq-namesrv-rust [default: .bench/rust-port/bin/ of the workspace].
    #[arg(long, global = true, value_name = "PATH")]
    pub rust_port_bin: Option<PathBuf>,
    /// The Maven project whose runtime classpath runs the Java NameServer
    /// [default: crates/rmq-bench/java/pom.xml].
    #[arg(long, global = true, value_name = "FILE")]
    pub java_pom: Option<PathBuf>,
    /// Java heap (-Xms and -Xmx).
    #[arg(long, global = true, default_value = "1g")]
    pub java_heap: String,
    /// Waymark's rmq-controller [default: next to this executable].
    #[arg(long, global = true, value_name = "PATH")]
    pub waymark_controller_bin: Option<PathBuf>,
    /// The interop Maven project whose `rmq5` profile runs the Java controller
    /// (`mvn -P rmq5 test-compile` writes its classpath) [default: interop/java/pom.xml].
    #[arg(long, global = true, value_name = "FILE")]
    pub java_controller_pom: Option<PathBuf>,
    /// -Xmx of each Java controller node (interop/java/controller.sh's default).
    #[arg(long, global = true, default_value = "256m")]
    pub java_controller_heap: String,
    /// CPUs of the generator (taskset -c list).
    #[arg(long, global = true, default_value = "0")]
    pub client_cpus: String,
    /// CPUs of the servers (taskset -c list).
    #[arg(long, global = true, default_value = "1")]
    pub server_cpus: String,
    /// Pin nothing.
    #[arg(long, global = true)]
    pub no_pin: bool,
    /// Keep each server's temporary directory (logs) after it stopped.
    #[arg(long, global = true)]
    pub keep_dirs: bool,
}

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Scenarios to run, comma-separated [default: every scenario whose help
    /// does not say "only when named"; with --quick, every scenario].
    #[arg(long, value_delimiter = ',', value_parser = scenario_id)]
    pub scenarios: Option<Vec<String>>,
    /// The report to write (the sections of the scenarios that ran are
    /// replaced, the rest kept).
    #[arg(long, default_value = "docs/benchmarks.md")]
    pub report: PathBuf,
    /// Where the JSON results go.
    #[arg(long, default_value = ".bench/bench-results.json")]
    pub results: PathBuf,
    /// The exact command to quote in the report [default: this process's arguments].
    #[arg(long, env = "RMQ_BENCH_COMMAND")]
    pub command_line: Option<String>,
    /// What the report may be written from.
    #[command(flatten)]
    pub allow: AllowArgs,
}

fn scenario_id(text: &str) -> Result<String, String> {
    let ids: Vec<&str> = scenario::ALL.iter().map(|e| e.id()).collect();
    match ids.contains(&text) {
        true => Ok(text.to_owned()),
        false => Err(format!("no scenario {text:?} (one of {})", ids.join(", "))),
    }
}

/// Overrides of the rule that keeps a dirty tree or a disturbed machine out
/// of the report (the results file is written in any case).
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct AllowArgs {
    /// Write the report even though the work tree had uncommitted changes
    /// (it then says so in each section).
    #[arg(long)]
    pub allow_dirty: bool,
    /// Write the report even though other processes used more than 15 % of
    /// a CPU during a kept measurement (it then says which, in each section).
    #[arg(long)]
    pub allow_disturbed: bool,
}

impl AllowArgs {
    pub fn allow(self) -> Allow {
        let (dirty, disturbed) = (self.allow_dirty, self.allow_disturbed);
        Allow { dirty, disturbed }
    }
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// JSON written by `compare`.
    #[arg(long, default_value = ".bench/bench-results.json")]
    pub input: PathBuf,
    /// The report to write.
    #[arg(long, default_value = "docs/benchmarks.md")]
    pub report: PathBuf,
    /// What the report may be written from.
    #[command(flatten)]
    pub allow: AllowArgs,
}

#[derive(Debug, Clone, Args)]
pub struct CeilingArgs {
    /// Listen address.
    #[arg(long)]
    pub listen: SocketAddr,
    /// Brokers of the layout whose routes are answered.
    #[arg(long, default_value_t = 10)]
    pub brokers: usize,
    /// Topics per broker.
    #[arg(long, default_value_t = 100)]
    pub topics: usize,
    /// Brokers per topic set.
    #[arg(long, default_value_t = 10)]
    pub spread: usize,
    /// Queues per topic.
    #[arg(long, default_value_t = 8)]
    pub queues: i32,
}

impl CeilingArgs {
    pub fn layout(&self) -> Layout {
        Layout {
            brokers: self.brokers,
            topics_per_broker: self.topics,
            spread: self.spread.max(1),
            queues: self.queues,
        }
    }
}

/// Parses `20s`, `500ms`, `2m` or a bare number of seconds, into seconds.
pub fn secs(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let units = [("ms", 0.001), ("s", 1.0), ("m", 60.0)];
    let unit = units
        .iter()
        .find_map(|&(unit, scale)| Some((text.strip_suffix(unit)?, scale)));
    let (number, scale) = unit.unwrap_or((text, 1.0));
    match number.trim().parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value * scale),
        _ => Err(format!(
            "not a duration: {text:?} (use e.g. 20s, 500ms, 2m)"
        )),
    }
}

/// As [`secs`], into whole milliseconds.
pub fn millis(text: &str) -> Result<u64, String> {
    Ok((secs(text)? * 1_000.0).round() as u64)
}
