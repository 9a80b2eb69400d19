//! `rmq-broker-sim`: simulated brokers registering with real NameServers
//! through `rmq-broker-client`. Parses flags, sets up tracing, builds the
//! fleet (`fleet.rs`) or, with `--controller`, the controller-mode replica
//! sets (`replicas.rs`, commands from stdin in `commands.rs`, their output
//! in `output.rs`) and runs it;
//! one output line per registration result and per role change. Signing
//! and TLS flags become every broker's client settings in `security.rs`.

mod commands;
mod fleet;
mod output;
mod replicas;
mod security;
mod stamp;

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, ValueEnum};
use rmq_broker_client::{
    spawn, AddressService, Event, Flavor, NameServerList, RegisterReport, Registrar, Trigger,
};

/// Simulated RocketMQ brokers for tests and benchmarks.
///
/// Each simulated broker registers its topic table with the NameServers
/// exactly as a Java broker does (REGISTER_BROKER at start and periodically,
/// optional heartbeats, UNREGISTER_BROKER at exit). It stores no messages and
/// listens on no port: the registered addresses are made up, so clients that
/// follow the routes will find nobody there.
///
/// With --controller (AutoSwitch HA) every group is --replicas replicas
/// whose roles a controller decides: each obtains a controller id (kept in
/// an identity file), heartbeats the controllers and registers as master
/// (id 0) or slave (its controller id). Each replica listens on its address,
/// but only for the controller's role-change notices.
#[derive(Debug, Parser)]
#[command(
    name = "rmq-broker-sim",
    version,
    after_help = "Output: one line per broker registration result, e.g.\n  \
        register trigger=startup broker=broker-0 id=0 addr=127.0.0.1:20911 topics=1005 \
        bytes=181520 build_ms=1.9 ms=7.4 ok=1/1 master=-\n\n\
        Examples:\n  rmq-broker-sim -n 127.0.0.1:9876 --once\n  \
        rmq-broker-sim -n 'a:9876;b:9876' --brokers 100 --topics 10000 --once\n  \
        rmq-broker-sim -n 127.0.0.1:9876 --slaves-per-broker 1 --period 10s --duration 60s\n  \
        rmq-broker-sim -n 127.0.0.1:9876 --controller 127.0.0.1:9878 --replicas 3\n  \
        ROCKETMQ_SECRET_KEY=... rmq-broker-sim -n 10.0.0.1:9876 --access-key broker-key --tls --tls-trust ca.pem\n\n\
        Controller mode prints one line per id, role change and sync-state-set change, e.g.\n  \
        role time=2025-06-01T12:00:00.123Z replica=broker-0/1 addr=127.0.0.1:20921 id=2 \
        from=slave to=master epoch=2 source=notify\n\
        and reads commands from stdin: `stop master [BROKER]`, `stop BROKER/R`, \
        `start BROKER/R`, `status`. Stopping is a crash (no unregistration)."
)]
pub struct Args {
    /// NameServer list `host:port;host:port`.
    #[arg(short = 'n', long, env = "NAMESRV_ADDR", value_name = "LIST")]
    pub namesrv: Option<String>,
    /// Fetch the NameServer list from this HTTP address service instead
    /// (e.g. http://host:8080/rocketmq/nsaddr), every 10 s.
    #[arg(long, value_name = "URL", conflicts_with = "namesrv")]
    pub address_service: Option<String>,
    /// Cluster name.
    #[arg(long, default_value = "DefaultCluster")]
    pub cluster: String,
    /// Broker group name prefix: groups are `<prefix>-0`, `<prefix>-1`, ...
    #[arg(long, default_value = "broker")]
    pub broker_name: String,
    /// Number of broker groups (each one master).
    #[arg(long, default_value_t = 1)]
    pub brokers: usize,
    /// Slaves per group (ids 1..=N).
    #[arg(long, default_value_t = 0)]
    pub slaves_per_broker: usize,
    /// Topics per group, besides the system topics.
    #[arg(long, default_value_t = 10)]
    pub topics: usize,
    /// Topic name prefix; topics are `<prefix><i>`.
    #[arg(long, default_value = "SimTopic")]
    pub topic_prefix: String,
    /// Give every group its own topic names (`<prefix><group>-<i>`) instead
    /// of all groups sharing the same topics.
    #[arg(long)]
    pub distinct_topics: bool,
    /// Do not add the system topics (TBW102, SELF_TEST_TOPIC, ...).
    #[arg(long)]
    pub no_system_topics: bool,
    /// Read and write queues per topic.
    #[arg(long, default_value_t = 8)]
    pub queues: i32,
    /// IP of the made-up broker addresses.
    #[arg(long, default_value = "127.0.0.1")]
    pub ip: String,
    /// Port of the first broker; each further broker adds 10.
    #[arg(long, default_value_t = 20911)]
    pub base_port: u16,
    /// registerNameServerPeriod (e.g. 30s, 500ms); clamped to [10s, 60s] unless --no-clamp.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub period: Duration,
    /// Use --period as given, and run the first periodic registration one period after start.
    #[arg(long)]
    pub no_clamp: bool,
    /// registerBrokerTimeoutMills.
    #[arg(long, default_value = "24s", value_parser = parse_duration)]
    pub timeout: Duration,
    /// zlib-compressed bodies (sent with compressed=true).
    #[arg(long)]
    pub compressed: bool,
    /// enableSplitRegistration with batches of --split-size topics.
    #[arg(long)]
    pub split: bool,
    /// splitRegistrationSize.
    #[arg(long, default_value_t = 800)]
    pub split_size: usize,
    /// Java generation to imitate.
    #[arg(long, value_enum, default_value_t = FlavorArg::V5)]
    pub version_flavor: FlavorArg,
    /// enableSlaveActingMaster: short NameServer expiry and a 1 s heartbeat.
    #[arg(long)]
    pub acting_master: bool,
    /// brokerPermission (6 = read|write, 4 = read-only, 2 = write-only).
    #[arg(long, default_value_t = 6)]
    pub permission: i32,
    /// Register once (masters first, then slaves) and exit. Exiting closes
    /// the connections, and a NameServer drops a broker whose registration
    /// connection closes: the brokers leave the routes at once.
    #[arg(long, conflicts_with = "duration")]
    pub once: bool,
    /// Run this long, then unregister and exit (default: until Ctrl-C or
    /// SIGTERM, which unregister too).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Delay between the starts of consecutive brokers.
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub stagger: Duration,
    /// Skip UNREGISTER_BROKER at exit.
    #[arg(long)]
    pub no_unregister: bool,
    /// Controller mode (AutoSwitch HA): the controller nodes, `host:port;host:port`
    /// (controllerAddr). Roles come from the controller; --base-port 0 picks
    /// free ports.
    #[arg(long, value_name = "LIST", conflicts_with_all = ["once", "slaves_per_broker"])]
    pub controller: Option<String>,
    /// Replicas per group in controller mode.
    #[arg(long, default_value_t = 3, requires = "controller")]
    pub replicas: usize,
    /// Where replicas keep their identity files
    /// (`<DIR>/<broker>/<replica>/brokerIdentity`); default: a temporary
    /// directory removed at exit.
    #[arg(long, value_name = "DIR", requires = "controller")]
    pub store_dir: Option<PathBuf>,
    /// A controller-mode option by its Java name (repeatable), e.g.
    /// syncBrokerMetadataPeriod=500, controllerHeartBeatTimeoutMills=3000,
    /// brokerHeartbeatInterval=200, checkSyncStateSetPeriod=500.
    #[arg(long = "set", value_name = "KEY=VALUE", requires = "controller")]
    pub set: Vec<String>,
    /// Stop the master replica of every group (as a crash) once, this long after start.
    #[arg(long, value_parser = parse_duration, requires = "controller")]
    pub stop_master_after: Option<Duration>,
    /// Sign every request to the NameServers and controllers with this
    /// access key, as a 5.3+ broker with innerClientAuthenticationCredentials
    /// does (needed when they have authentication on).
    #[arg(
        long,
        env = "ROCKETMQ_ACCESS_KEY",
        hide_env_values = true,
        value_name = "KEY",
        requires = "secret_key",
        help_heading = "Signing and TLS"
    )]
    pub access_key: Option<String>,
    /// The secret key to sign with. Prefer the environment variable: a
    /// command-line argument is visible to every user of the machine (ps,
    /// /proc) and stays in shell history.
    #[arg(
        long,
        env = "ROCKETMQ_SECRET_KEY",
        hide_env_values = true,
        value_name = "SECRET",
        requires = "access_key",
        help_heading = "Signing and TLS"
    )]
    pub secret_key: Option<String>,
    /// Use TLS for every NameServer and controller connection (a broker's
    /// useTLS=true). Needs --tls-trust or --tls-insecure.
    #[arg(long, help_heading = "Signing and TLS")]
    pub tls: bool,
    /// PEM CA certificate(s) the servers' certificates must chain to
    /// (tls.client.trustCertPath; the chain is checked, never the host name).
    #[arg(
        long,
        value_name = "PATH",
        requires = "tls",
        conflicts_with = "tls_insecure",
        help_heading = "Signing and TLS"
    )]
    pub tls_trust: Option<PathBuf>,
    /// Accept any server certificate unverified (Java's default): encrypted,
    /// but anyone who can intercept a connection can pose as the server.
    #[arg(long, requires = "tls", help_heading = "Signing and TLS")]
    pub tls_insecure: bool,
}

/// `--version-flavor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FlavorArg {
    /// 5.x broker.
    #[value(name = "5")]
    V5,
    /// 4.x broker.
    #[value(name = "4")]
    V4,
}

impl From<FlavorArg> for Flavor {
    fn from(flavor: FlavorArg) -> Flavor {
        match flavor {
            FlavorArg::V5 => Flavor::V5,
            FlavorArg::V4 => Flavor::V4,
        }
    }
}

/// `500ms`, `30s`, `2m`, or bare seconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => text.split_at(i),
        None => (text, "s"),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("bad duration {text:?}"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        _ => return Err(format!("unknown unit in {text:?} (use ms, s or m)")),
    };
    Ok(Duration::from_secs_f64(seconds))
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.tls && args.tls_trust.is_none() && !args.tls_insecure {
        Args::command()
            .error(
                ErrorKind::MissingRequiredArgument,
                "--tls needs to know how to check the servers' certificates: --tls-trust CA.pem \
                 (they must chain to that CA) or --tls-insecure (any certificate, Java's default)",
            )
            .exit();
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        // Colour codes only for a terminal: in a redirected log file they are noise.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let ok = runtime.block_on(run(args))?;
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}

async fn run(args: Args) -> anyhow::Result<bool> {
    let (namesrv, service) = match (&args.namesrv, &args.address_service) {
        (Some(list), _) => (NameServerList::from_static(list)?, None),
        (None, Some(url)) => (
            NameServerList::empty(),
            Some(AddressService::from_url(url)?),
        ),
        (None, None) => bail!("give --namesrv (or NAMESRV_ADDR) or --address-service"),
    };
    let security = security::Security::from_args(&args)?;
    if let Some(controller) = &args.controller {
        return replicas::run(&args, &security, controller, namesrv, service).await;
    }
    let fleet =
        fleet::build(&args, &security, &namesrv).context("cannot build the simulated brokers")?;
    if args.once {
        let registered = fleet::register_once(&fleet, args.stagger).await;
        eprintln!(
            "note: --once exits now, closing its connections, and a NameServer drops a broker \
             whose registration connection closes: these brokers leave the routes at once. \
             Run without --once to keep them registered (re-registering every 30 s) until \
             Ctrl-C or SIGTERM, when they unregister as Java brokers do."
        );
        return Ok(registered);
    }

    let mut running = Vec::new();
    let mut printers = Vec::new();
    for (i, registrar) in fleet.iter().enumerate() {
        let (tx, mut events) = tokio::sync::mpsc::unbounded_channel();
        let schedule = fleet::schedule(&args, registrar, service.clone());
        running.push(spawn(registrar.clone(), schedule, Some(tx)));
        let registrar = registrar.clone();
        printers.push(tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                if let Event::Registered { trigger, report } = event {
                    print_report(&registrar, trigger_name(trigger), &report);
                }
            }
        }));
        if i + 1 < fleet.len() && !args.stagger.is_zero() {
            tokio::time::sleep(args.stagger).await;
        }
    }
    match args.duration {
        Some(duration) => tokio::time::sleep(duration).await,
        None => stop_requested().await,
    }
    for run in running {
        let registrar = run.registrar().clone();
        if args.no_unregister {
            drop(run);
            continue;
        }
        let results = run.shutdown().await;
        let failed = results.iter().filter(|r| r.outcome.is_err()).count();
        line(&format!(
            "unregister broker={} id={} ok={}/{}",
            registrar.config().broker_name,
            registrar.broker_id(),
            results.len() - failed,
            results.len()
        ));
    }
    for printer in printers {
        printer.abort();
    }
    Ok(true)
}

/// Ctrl-C or SIGTERM. A Java broker unregisters from every NameServer on
/// both (its shutdown hook); `kill`, systemd and container runtimes send
/// SIGTERM.
pub async fn stop_requested() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// Writes one line to stdout (ignoring a closed pipe).
pub fn line(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
}

/// How a schedule slot is named in output lines.
pub fn trigger_name(trigger: Trigger) -> &'static str {
    match trigger {
        Trigger::Startup => "startup",
        Trigger::Periodic => "periodic",
    }
}

/// The one-line form of a registration result; `trigger` says what caused
/// it (`startup`, `periodic`, `role-change`).
pub fn print_report(registrar: &Arc<Registrar>, trigger: &str, report: &RegisterReport) {
    let config = registrar.config();
    let mut text = format!(
        "register trigger={trigger} broker={} id={} addr={} topics={} bytes={} batches={} build_ms={:.1} ms={:.1} ok={}/{}",
        config.broker_name,
        report.broker_id,
        config.broker_addr,
        report.topics(),
        report.body_bytes(),
        report.batches.len(),
        report.build_time.as_secs_f64() * 1000.0,
        report.elapsed.as_secs_f64() * 1000.0,
        report.succeeded().len(),
        report.attempted(),
    );
    let master = report
        .applied
        .as_ref()
        .and_then(|r| r.master_addr.as_deref());
    text.push_str(&format!(" master={}", master.unwrap_or("-")));
    if let Some(skip) = report.skipped {
        text.push_str(&format!(" skipped=\"{skip}\""));
    }
    for (addr, error) in report.failures() {
        text.push_str(&format!(" error[{addr}]=\"{error}\""));
    }
    line(&text);
}
