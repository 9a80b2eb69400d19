//! Command-line flags: options shared by every sub-command, one sub-command
//! per scenario with its overrides, `compare`, `report`, and the hidden
//! `ceiling-server` the harness starts as a peer.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::peer::PeerKind;
use crate::scenario::hostile::{self, Attack};
use crate::scenario::{
    controller, failover, parse_duration, register, route_change, route_qps, route_sweep, security,
    startup, storm,
};
use crate::workload::Layout;

/// Runs NameServer workloads against Waymark, the Java NameServer, the
/// `rocketmq-namesrv` Rust port and a ceiling server, and controller
/// workloads against Waymark's and the Java controller, side by side.
#[derive(Debug, Parser)]
#[command(
    name = "rmq-bench",
    version,
    after_help = "Examples:\n  \
        rmq-bench compare                       every scenario on every peer, writes docs/benchmarks.md\n  \
        rmq-bench --quick --peers waymark,ceiling compare --report /tmp/b.md\n  \
        rmq-bench route-qps --peers waymark,java --duration 10s --depth 8\n  \
        rmq-bench --peers waymark,java compare --scenarios controller\n  \
        rmq-bench --peers waymark,java compare --scenarios security\n  \
        rmq-bench --peers waymark,java compare --scenarios route-change-latency\n  \
        rmq-bench report --input .bench/bench-results.json\n\n\
        Servers run under `taskset -c <server-cpus>`; rmq-bench re-executes itself under\n\
        `taskset -c <client-cpus>`. Progress goes to stderr, JSON results to stdout (or --json)."
)]
pub struct Cli {
    /// Options of every sub-command.
    #[command(flatten)]
    pub global: Global,
    /// What to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Options of every sub-command.
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

/// The sub-commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Route queries at full speed (10 brokers × 100 topics, 64 connections, 20 s).
    RouteQps(RouteQpsArgs),
    /// Route queries offered at rising fixed rates (10 brokers × 100 topics,
    /// 64 connections) until the server saturates.
    RouteSweep(RouteSweepArgs),
    /// Route queries at a fixed rate while 100 brokers × 2,000 topics re-register.
    RouteUnderStorm(StormArgs),
    /// First registrations of 100 brokers × 10,000 topics, steady
    /// re-registration, RSS; then Waymark and Java again on two server CPUs.
    Register(RegisterArgs),
    /// Dead brokers leaving the routes: connection close and silent timeout.
    Failover(FailoverArgs),
    /// Exec to first answered request, and idle RSS.
    Startup(StartupArgs),
    /// Controller groups of three nodes: CPU per broker heartbeat, RSS, failover.
    Controller(ControllerArgs),
    /// Hostile peers (huge headers, slow frames, unread answers, connection
    /// and topic floods): memory, route queries during, alive after.
    Hostile(HostileArgs),
    /// Server CPU per request: signed against unsigned registrations
    /// (Waymark), TLS against plain route queries (Waymark and Java).
    Security(SecurityArgs),
    /// A broker coming and going until a client following the topic sees
    /// it: route push (Waymark) against polling every 30 s (Java, the Rust
    /// port, Waymark with the client's route push off).
    RouteChangeLatency(RouteChangeLatencyArgs),
    /// Every scenario on every peer (`route-change-latency` only when
    /// named); writes JSON, the report and its charts.
    Compare(CompareArgs),
    /// Writes the report and charts from a saved JSON file.
    Report(ReportArgs),
    /// The ceiling server (started by the harness as a peer).
    #[command(hide = true)]
    CeilingServer(CeilingArgs),
}

/// Overrides of a layout.
#[derive(Debug, Clone, Default, Args)]
pub struct LayoutArgs {
    /// Brokers.
    #[arg(long)]
    pub brokers: Option<usize>,
    /// Topics per broker (≥ 2).
    #[arg(long)]
    pub topics: Option<usize>,
    /// Brokers sharing one topic set (brokers listed in each route).
    #[arg(long)]
    pub spread: Option<usize>,
}

impl LayoutArgs {
    fn apply(&self, layout: &mut Layout) {
        layout.brokers = self.brokers.unwrap_or(layout.brokers);
        layout.topics_per_broker = self.topics.unwrap_or(layout.topics_per_broker);
        layout.spread = self.spread.unwrap_or(layout.spread);
    }
}

fn secs_of(value: Option<Duration>, default: f64) -> f64 {
    value.map_or(default, |d| d.as_secs_f64())
}

/// `route-qps` overrides.
#[derive(Debug, Clone, Default, Args)]
pub struct RouteQpsArgs {
    /// Layout overrides.
    #[command(flatten)]
    pub layout: LayoutArgs,
    /// Query connections.
    #[arg(long)]
    pub connections: Option<usize>,
    /// Requests in flight per connection.
    #[arg(long)]
    pub depth: Option<usize>,
    /// Measured time (e.g. 20s).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Unmeasured lead-in.
    #[arg(long, value_parser = parse_duration)]
    pub warmup: Option<Duration>,
}

impl RouteQpsArgs {
    /// The parameters: defaults with the overrides applied.
    pub fn params(&self, quick: bool) -> route_qps::Params {
        let mut p = route_qps::Params::defaults(quick);
        self.layout.apply(&mut p.layout);
        p.connections = self.connections.unwrap_or(p.connections).max(1);
        p.depth = self.depth.unwrap_or(p.depth).max(1);
        p.duration_s = secs_of(self.duration, p.duration_s);
        p.warmup_s = secs_of(self.warmup, p.warmup_s);
        p
    }
}

/// `route-sweep` overrides.
#[derive(Debug, Clone, Default, Args)]
pub struct RouteSweepArgs {
    /// Layout overrides.
    #[command(flatten)]
    pub layout: LayoutArgs,
    /// Query connections.
    #[arg(long)]
    pub connections: Option<usize>,
    /// Offered rates, queries per second, comma-separated, in the order run.
    #[arg(long, value_delimiter = ',')]
    pub rates: Option<Vec<f64>>,
    /// Measured time of each rate (e.g. 5s).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Unmeasured lead-in of each rate.
    #[arg(long, value_parser = parse_duration)]
    pub warmup: Option<Duration>,
}

impl RouteSweepArgs {
    /// The parameters: defaults with the overrides applied.
    pub fn params(&self, quick: bool) -> route_sweep::Params {
        let mut p = route_sweep::Params::defaults(quick);
        self.layout.apply(&mut p.layout);
        p.connections = self.connections.unwrap_or(p.connections).max(1);
        if let Some(rates) = &self.rates {
            p.rates = rates.iter().copied().filter(|r| *r >= 1.0).collect();
        }
        p.duration_s = secs_of(self.duration, p.duration_s).max(0.1);
        p.warmup_s = secs_of(self.warmup, p.warmup_s);
        p
    }
}

/// `route-under-storm` overrides.
#[derive(Debug, Clone, Default, Args)]
pub struct StormArgs {
    /// Layout overrides.
    #[command(flatten)]
    pub layout: LayoutArgs,
    /// Route queries per second.
    #[arg(long)]
    pub query_rate: Option<f64>,
    /// Query connections.
    #[arg(long)]
    pub query_connections: Option<usize>,
    /// Measured time.
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Unmeasured lead-in.
    #[arg(long, value_parser = parse_duration)]
    pub warmup: Option<Duration>,
}

impl StormArgs {
    /// The parameters: defaults with the overrides applied.
    pub fn params(&self, quick: bool) -> storm::Params {
        let mut p = storm::Params::defaults(quick);
        self.layout.apply(&mut p.layout);
        p.query_rate = self.query_rate.unwrap_or(p.query_rate).max(1.0);
        p.query_connections = self.query_connections.unwrap_or(p.query_connections).max(1);
        p.duration_s = secs_of(self.duration, p.duration_s);
        p.warmup_s = secs_of(self.warmup, p.warmup_s);
        p
    }
}

/// `register` overrides.
#[derive(Debug, Clone, Default, Args)]
pub struct RegisterArgs {
    /// Layout overrides.
    #[command(flatten)]
    pub layout: LayoutArgs,
    /// Steady re-registration time.
    #[arg(long, value_parser = parse_duration)]
    pub steady: Option<Duration>,
    /// Unmeasured re-registrations before the steady window.
    #[arg(long, value_parser = parse_duration)]
    pub steady_warmup: Option<Duration>,
}

impl RegisterArgs {
    /// The parameters: defaults with the overrides applied.
    pub fn params(&self, quick: bool) -> register::Params {
        let mut p = register::Params::defaults(quick);
        self.layout.apply(&mut p.layout);
        p.steady_s = secs_of(self.steady, p.steady_s);
        p.steady_warmup_s = secs_of(self.steady_warmup, p.steady_warmup_s);
        p
    }
}

/// `failover` overrides.
#[derive(Debug, Clone, Default, Args)]
pub struct FailoverArgs {
    /// Connection-close samples.
    #[arg(long)]
    pub close_samples: Option<usize>,
    /// Silent-broker samples.
    #[arg(long)]
    pub silent_samples: Option<usize>,
    /// heartbeatTimeoutMillis of the silent brokers (e.g. 3s).
    #[arg(long, value_parser = parse_duration)]
    pub silent_timeout: Option<Duration>,
}

impl FailoverArgs {
    /// The parameters: defaults with the overrides applied.
    pub fn params(&self, quick: bool) -> failover::Params {
        let mut p = failover::Params::defaults(quick);
        p.close_samples = self.close_samples.unwrap_or(p.close_samples);
        p.silent_samples = self.silent_samples.unwrap_or(p.silent_samples);
        if let Some(timeout) = self.silent_timeout {
            p.silent_timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        }
        p
    }
}

/// `startup` overrides.
#[derive(Debug, Clone, Default, Args)]
pub struct StartupArgs {
    /// Starts measured per peer.
    #[arg(long)]
    pub samples: Option<usize>,
}

impl StartupArgs {
    /// The parameters: defaults with the overrides applied.
    pub fn params(&self, quick: bool) -> startup::Params {
        let mut p = startup::Params::defaults(quick);
        p.samples = self.samples.unwrap_or(p.samples).max(1);
        p
    }
}

/// `controller` overrides.
#[derive(Debug, Clone, Default, Args)]
pub struct ControllerArgs {
    /// Broker sets (3 replicas each) heartbeating the group.
    #[arg(long)]
    pub broker_sets: Option<usize>,
    /// Measured heartbeat window.
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Heartbeats before the window.
    #[arg(long, value_parser = parse_duration)]
    pub warmup: Option<Duration>,
    /// Failover samples.
    #[arg(long)]
    pub samples: Option<usize>,
    /// controllerHeartBeatTimeoutMills of the failover replicas (e.g. 10s).
    #[arg(long, value_parser = parse_duration)]
    pub agent_heartbeat_timeout: Option<Duration>,
}

impl ControllerArgs {
    /// The parameters: defaults with the overrides applied.
    pub fn params(&self, quick: bool) -> controller::Params {
        let mut p = controller::Params::defaults(quick);
        p.broker_sets = self.broker_sets.unwrap_or(p.broker_sets).max(1);
        p.duration_s = secs_of(self.duration, p.duration_s);
        p.warmup_s = secs_of(self.warmup, p.warmup_s);
        p.failover_samples = self.samples.unwrap_or(p.failover_samples);
        if let Some(timeout) = self.agent_heartbeat_timeout {
            p.agent_heartbeat_timeout_ms = u64::try_from(timeout.as_millis())
                .unwrap_or(u64::MAX)
                .max(1);
        }
        p
    }
}

/// `hostile` overrides.
#[derive(Debug, Clone, Default, Args)]
pub struct HostileArgs {
    /// Attacks to run, comma-separated [default: all].
    #[arg(long, value_delimiter = ',')]
    pub attacks: Option<Vec<Attack>>,
    /// How long each attack runs (e.g. 15s).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Route queries per second during an attack.
    #[arg(long)]
    pub query_rate: Option<f64>,
    /// Connections of the connection flood.
    #[arg(long)]
    pub flood_connections: Option<usize>,
    /// Topics of the topic flood's one registration.
    #[arg(long)]
    pub flood_topics: Option<usize>,
}

impl HostileArgs {
    /// The parameters: defaults with the overrides applied.
    pub fn params(&self, quick: bool) -> hostile::Params {
        let mut p = hostile::Params::defaults(quick);
        if let Some(attacks) = &self.attacks {
            p.attacks = attacks.clone();
        }
        p.attack_s = secs_of(self.duration, p.attack_s).max(0.5);
        p.query_rate = self.query_rate.unwrap_or(p.query_rate).max(1.0);
        p.flood_connections = self.flood_connections.unwrap_or(p.flood_connections);
        p.flood_topics = self.flood_topics.unwrap_or(p.flood_topics).max(2);
        p
    }
}

/// `security` overrides.
#[derive(Debug, Clone, Default, Args)]
pub struct SecurityArgs {
    /// Topics of the registration body of the signing part.
    #[arg(long)]
    pub topics: Option<usize>,
    /// Route query connections of the TLS part (plain and TLS alike).
    #[arg(long)]
    pub connections: Option<usize>,
    /// Route queries in flight per connection.
    #[arg(long)]
    pub depth: Option<usize>,
    /// Each measured window (e.g. 20s).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Unmeasured load before each window.
    #[arg(long, value_parser = parse_duration)]
    pub warmup: Option<Duration>,
    /// Unmeasured load over plain and TLS connections together before the
    /// first window of the TLS part.
    #[arg(long, value_parser = parse_duration)]
    pub joint_warmup: Option<Duration>,
}

impl SecurityArgs {
    /// The parameters: defaults with the overrides applied.
    pub fn params(&self, quick: bool) -> security::Params {
        let mut p = security::Params::defaults(quick);
        p.register_topics = self.topics.unwrap_or(p.register_topics).max(2);
        p.query_connections = self.connections.unwrap_or(p.query_connections).max(1);
        p.query_depth = self.depth.unwrap_or(p.query_depth).max(1);
        p.duration_s = secs_of(self.duration, p.duration_s).max(0.1);
        p.warmup_s = secs_of(self.warmup, p.warmup_s);
        p.joint_warmup_s = secs_of(self.joint_warmup, p.joint_warmup_s);
        p
    }
}

/// `route-change-latency` overrides.
#[derive(Debug, Clone, Default, Args)]
pub struct RouteChangeLatencyArgs {
    /// Samples of a client that follows by route push.
    #[arg(long)]
    pub push_samples: Option<usize>,
    /// Samples of a polling client (each takes up to one poll interval).
    #[arg(long)]
    pub poll_samples: Option<usize>,
    /// pollNameServerInterval of the clients (e.g. 30s, Java's default).
    /// Keep it under a minute: the second broker, not re-registered, must
    /// stay within the NameServer's 120 s broker expiry for two changes.
    #[arg(long, value_parser = parse_duration)]
    pub poll_interval: Option<Duration>,
}

impl RouteChangeLatencyArgs {
    /// The parameters: defaults with the overrides applied.
    pub fn params(&self, quick: bool) -> route_change::Params {
        let mut p = route_change::Params::defaults(quick);
        p.push_samples = self.push_samples.unwrap_or(p.push_samples);
        p.poll_samples = self.poll_samples.unwrap_or(p.poll_samples);
        if let Some(interval) = self.poll_interval {
            p.poll_interval_ms = u64::try_from(interval.as_millis())
                .unwrap_or(u64::MAX)
                .max(1);
        }
        p
    }
}

/// A scenario, for `compare --scenarios`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScenarioName {
    /// `route-qps`.
    RouteQps,
    /// `route-sweep`.
    RouteSweep,
    /// `route-under-storm`.
    RouteUnderStorm,
    /// `register`.
    Register,
    /// `failover`.
    Failover,
    /// `startup`.
    Startup,
    /// `controller`.
    Controller,
    /// `hostile`.
    Hostile,
    /// `security`: Waymark and Java only.
    Security,
    /// `route-change-latency`: not in the default set (about 3 minutes per
    /// polling peer).
    RouteChangeLatency,
}

impl ScenarioName {
    /// Whether it measures NameServers (every scenario but `controller`;
    /// `hostile` and `security` too, in their own report sections).
    pub fn is_nameserver(self) -> bool {
        self != ScenarioName::Controller
    }

    /// Whether it starts `kind`'s NameServer (so that `kind` must be set
    /// up): `security` runs Waymark and Java only, `route-change-latency`
    /// the servers that keep brokers, `controller` no NameServer of a
    /// peer's own.
    pub fn runs_nameserver(self, kind: PeerKind) -> bool {
        match self {
            ScenarioName::Controller => false,
            ScenarioName::Security => matches!(kind, PeerKind::Waymark | PeerKind::Java),
            ScenarioName::RouteChangeLatency => kind.is_real(),
            _ => true,
        }
    }
}

/// `compare` options.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Scenarios to run, comma-separated (`security` runs Waymark and Java
    /// only; `route-change-latency`, about 10 minutes with every peer, runs
    /// only when named).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "route-qps,route-sweep,route-under-storm,register,failover,startup,controller,hostile,security"
    )]
    pub scenarios: Vec<ScenarioName>,
    /// The report to write (the generated sections of the scenarios that ran
    /// are replaced, the rest kept).
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

/// Overrides of the rule that keeps a dirty tree or a disturbed machine
/// out of the report (the results file is written in any case).
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct AllowArgs {
    /// Write the report even though the work tree had uncommitted changes
    /// (it then says so at the top).
    #[arg(long)]
    pub allow_dirty: bool,
    /// Write the report even though other processes used more than 15 % of
    /// a CPU during a kept measurement (it then says which, at the top).
    #[arg(long)]
    pub allow_disturbed: bool,
}

impl AllowArgs {
    /// As the refusal rule takes it.
    pub fn allow(self) -> crate::provenance::Allow {
        crate::provenance::Allow {
            dirty: self.allow_dirty,
            disturbed: self.allow_disturbed,
        }
    }
}

/// `report` options.
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

/// `ceiling-server` options.
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
    /// The layout.
    pub fn layout(&self) -> Layout {
        Layout {
            brokers: self.brokers,
            topics_per_broker: self.topics,
            spread: self.spread.max(1),
            queues: self.queues,
        }
    }
}
