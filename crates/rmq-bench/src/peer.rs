//! The servers under test: how each is started (pinned, on loopback, in its
//! own temporary directory), when it counts as ready, its memory, and how it
//! is stopped.
//!
//! Every peer gets a fresh process and a fresh directory per scenario, with
//! its default settings apart from the port and the file locations, and
//! whatever [`PeerOptions`] a scenario adds (the `security` scenario's
//! accounts file and TLS certificate). Ready
//! means "answered a request": the harness connects and sends
//! GET_ROUTEINFO_BY_TOPIC for a missing topic until an answer arrives, which
//! is also what the startup scenario times.

use std::fs::File;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context};
use clap::ValueEnum;
use rmq_transport::{ClientConfig, RpcClient};
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use rmq_testkit::ports;

use crate::pin;
use crate::workload::{self, Layout};

/// Which server.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum PeerKind {
    /// Waymark's `rmq-namesrv` (release build).
    Waymark,
    /// Apache RocketMQ's Java NameServer.
    Java,
    /// The `rocketmq-namesrv` crate (RocketMQ Rust port).
    RustPort,
    /// The ceiling server inside rmq-bench: precomputed answers.
    Ceiling,
}

impl PeerKind {
    /// Every kind, in report order.
    pub const ALL: [PeerKind; 4] = [
        PeerKind::Waymark,
        PeerKind::Java,
        PeerKind::RustPort,
        PeerKind::Ceiling,
    ];

    /// The name used in results and flags.
    pub fn id(self) -> &'static str {
        match self {
            PeerKind::Waymark => "waymark",
            PeerKind::Java => "java",
            PeerKind::RustPort => "rust-port",
            PeerKind::Ceiling => "ceiling",
        }
    }

    /// The name used in the report.
    pub fn title(self) -> &'static str {
        match self {
            PeerKind::Waymark => "Waymark",
            PeerKind::Java => "Java",
            PeerKind::RustPort => "Rust port",
            PeerKind::Ceiling => "ceiling",
        }
    }

    /// Whether the peer keeps real route state (the ceiling does not).
    pub fn is_real(self) -> bool {
        self != PeerKind::Ceiling
    }

    /// Whether the peer has a controller (the `controller` scenario):
    /// Waymark's `rmq-controller` and Apache RocketMQ's Java controller.
    pub fn has_controller(self) -> bool {
        matches!(self, PeerKind::Waymark | PeerKind::Java)
    }
}

/// How to run the Java NameServer.
#[derive(Debug, Clone)]
pub struct JavaSetup {
    /// The `java` executable.
    pub java: PathBuf,
    /// Runtime classpath of `rocketmq-namesrv`.
    pub classpath: String,
    /// Heap size for `-Xms`/`-Xmx` (e.g. `1g`).
    pub heap: String,
}

/// How to run the Java controller: interop/java's `ControllerLauncher`,
/// one node of Apache RocketMQ's `ControllerManager` per JVM.
#[derive(Debug, Clone)]
pub struct JavaControllerSetup {
    /// The `java` executable.
    pub java: PathBuf,
    /// Runtime classpath of the interop project's `rmq5` profile
    /// (`target/rmq5/classpath.txt`: its classes and `rocketmq-controller`).
    pub classpath: String,
    /// `-Xmx` of each node (interop/java/controller.sh's default is 256m).
    pub heap: String,
}

/// What one start adds to a peer's defaults: files written into its
/// directory before it starts, and settings (Waymark: `--set key=value`;
/// Java: lines of its `-c` properties file). [`DIR`] in a value stands for
/// the peer's directory, so that a setting can name a file written there and
/// the report can show it as `<dir>/…`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeerOptions {
    /// `(file name, contents)`, written into the peer's directory.
    pub files: Vec<(String, Vec<u8>)>,
    /// `(key, value)`, in order.
    pub settings: Vec<(String, String)>,
}

/// Stands for the peer's directory in [`PeerOptions::settings`] values.
pub const DIR: &str = "<dir>";

impl PeerOptions {
    /// The settings with [`DIR`] replaced by `dir`.
    fn settings_in(&self, dir: &Path) -> Vec<(String, String)> {
        let dir = dir.to_string_lossy();
        self.settings
            .iter()
            .map(|(k, v)| (k.clone(), v.replace(DIR, &dir)))
            .collect()
    }
}

/// Everything needed to start any peer; resolved once per run.
#[derive(Debug, Clone)]
pub struct PeerSetup {
    /// Waymark's `rmq-namesrv`.
    pub waymark_bin: PathBuf,
    /// Waymark's `rmq-controller` (the controller scenario).
    pub waymark_controller_bin: PathBuf,
    /// The Java controller, if it will be run.
    pub java_controller: Option<JavaControllerSetup>,
    /// The Rust port's `rocketmq-namesrv-rust`.
    pub rust_port_bin: PathBuf,
    /// Java, if it will be run.
    pub java: Option<JavaSetup>,
    /// This executable (serves the ceiling).
    pub bench_bin: PathBuf,
    /// `taskset -c` list for servers; `None` runs them unpinned.
    pub server_cpus: Option<String>,
    /// Keep each peer's directory (logs) after it stopped.
    pub keep_dirs: bool,
}

/// Flags of the Java NameServer: those of RocketMQ's `bin/runserver.sh` for
/// JDK ≥ 9, with the heap set by [`JavaSetup::heap`] instead of 4 GiB and
/// the GC log left out.
pub fn java_flags(heap: &str) -> Vec<String> {
    let mut flags: Vec<String> = vec![
        "-server".into(),
        format!("-Xms{heap}"),
        format!("-Xmx{heap}"),
    ];
    flags.extend(
        [
            "-XX:MetaspaceSize=128m",
            "-XX:MaxMetaspaceSize=320m",
            "-XX:+UseG1GC",
            "-XX:G1HeapRegionSize=16m",
            "-XX:G1ReservePercent=25",
            "-XX:InitiatingHeapOccupancyPercent=30",
            "-XX:SoftRefLRUPolicyMSPerMB=0",
            "-XX:-OmitStackTraceInFastThrow",
            "-XX:-UseLargePages",
        ]
        .map(String::from),
    );
    flags
}

/// A started peer. Dropping it kills the process.
#[derive(Debug)]
pub struct RunningPeer {
    /// Which server.
    pub kind: PeerKind,
    /// Where it listens.
    pub addr: SocketAddr,
    /// The command line it was started with (for the report).
    pub command: String,
    /// From spawning to the first answered request.
    pub ready_after: Duration,
    child: Child,
    dir: PathBuf,
    keep_dir: bool,
}

impl RunningPeer {
    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's resident memory now, KiB.
    pub fn rss_kib(&self) -> Option<u64> {
        pin::rss_kib(self.pid())
    }

    /// The CPUs the server may run on, as the kernel reports them.
    pub fn cpus_allowed(&self) -> Option<String> {
        pin::proc_status_field(Some(self.pid()), "Cpus_allowed_list")
    }

    /// The peer's directory (logs, data).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How the server exited, if it did (a peer that dies under load is a
    /// result in the hostile scenario).
    pub fn exit_status(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            _ => None,
        }
    }

    /// Kills the server and removes its directory (unless kept).
    pub fn stop(mut self) {
        self.kill();
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !self.keep_dir {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

impl Drop for RunningPeer {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill();
        }
    }
}

/// A fresh directory for one peer process.
pub(crate) fn peer_dir(kind: PeerKind) -> anyhow::Result<PathBuf> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "waymark-bench-{}-{}-{n}",
        std::process::id(),
        kind.id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("home"))
        .with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

/// The command that starts `kind` on `port` in `dir` (without pinning).
fn command_for(
    setup: &PeerSetup,
    kind: PeerKind,
    port: u16,
    dir: &Path,
    ceiling_layout: &Layout,
    options: &PeerOptions,
) -> anyhow::Result<Command> {
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    if !options.settings.is_empty() && !matches!(kind, PeerKind::Waymark | PeerKind::Java) {
        bail!("{} takes no extra settings here", kind.title());
    }
    let mut command;
    match kind {
        PeerKind::Waymark => {
            command = Command::new(&setup.waymark_bin);
            command
                .arg("--listen")
                .arg(format!("127.0.0.1:{port}"))
                .arg("--set")
                .arg(format!("kvConfigPath={}", path("kv.json")))
                .arg("--set")
                .arg(format!("configStorePath={}", path("ns.properties")))
                // Its own route snapshot: the default is under the shared HOME, and
                // routes restored from an earlier run would change what is measured.
                .arg("--set")
                .arg(format!("routeSnapshotPath={}", path("routes.snapshot")));
            for (key, value) in options.settings_in(dir) {
                command.arg("--set").arg(format!("{key}={value}"));
            }
        }
        PeerKind::Java => {
            let java = setup
                .java
                .as_ref()
                .context("the Java NameServer was not set up")?;
            command = Command::new(&java.java);
            command
                .args(java_flags(&java.heap))
                .arg(format!("-Duser.home={}", path("home")))
                .arg("-cp")
                .arg(&java.classpath)
                .arg("org.apache.rocketmq.namesrv.NamesrvStartup")
                .arg("-c")
                .arg(path("namesrv.properties"))
                .env("ROCKETMQ_HOME", dir);
        }
        PeerKind::RustPort => {
            command = Command::new(&setup.rust_port_bin);
            command
                .arg("--listenPort")
                .arg(port.to_string())
                .arg("--bindAddress")
                .arg("127.0.0.1")
                .arg("--rocketmqHome")
                .arg(dir)
                .arg("--kvConfigPath")
                .arg(path("kv.json"))
                .env("ROCKETMQ_HOME", dir)
                .env("HOME", path("home"));
        }
        PeerKind::Ceiling => {
            command = Command::new(&setup.bench_bin);
            command
                .arg("ceiling-server")
                .arg("--listen")
                .arg(format!("127.0.0.1:{port}"))
                .arg("--brokers")
                .arg(ceiling_layout.brokers.to_string())
                .arg("--topics")
                .arg(ceiling_layout.topics_per_broker.to_string())
                .arg("--spread")
                .arg(ceiling_layout.spread.to_string())
                .arg("--queues")
                .arg(ceiling_layout.queues.to_string());
        }
    }
    command.current_dir(dir);
    Ok(command)
}

/// Starts with fresh ports before a peer that cannot bind is given up.
const PORT_ATTEMPTS: usize = 5;

/// Starts `kind`, pinned to the server CPUs, and waits until it answers,
/// probing every `poll`. `ceiling_layout` shapes the ceiling's answers.
///
/// Every peer is told its port, chosen below the kernel's ephemeral range
/// ([`rmq_testkit::ports`]); a peer that exits because the port was taken
/// in the meantime is started again on a fresh one.
///
/// # Errors
/// The process cannot be spawned, exits, or does not answer within `limit`;
/// or it could not bind in [`PORT_ATTEMPTS`] attempts (the error names each
/// port and what held it).
pub async fn start(
    setup: &PeerSetup,
    kind: PeerKind,
    ceiling_layout: &Layout,
    poll: Duration,
    limit: Duration,
) -> anyhow::Result<RunningPeer> {
    start_with(
        setup,
        kind,
        ceiling_layout,
        &PeerOptions::default(),
        poll,
        limit,
    )
    .await
}

/// [`start`] with `options` added to the peer's defaults.
///
/// # Errors
/// As [`start`]; also options for a peer that takes none (the Rust port,
/// the ceiling), or a file that cannot be written.
pub async fn start_with(
    setup: &PeerSetup,
    kind: PeerKind,
    ceiling_layout: &Layout,
    options: &PeerOptions,
    poll: Duration,
    limit: Duration,
) -> anyhow::Result<RunningPeer> {
    let mut tried = Vec::new();
    for attempt in 1..=PORT_ATTEMPTS {
        let port = ports::choose().with_context(|| {
            let (low, high) = ports::candidate_range();
            format!("no free port in {low}..={high}")
        })?;
        match start_on(setup, kind, port, ceiling_layout, options, poll, limit).await {
            Ok(peer) => return Ok(peer),
            Err(Start::PortTaken { log }) => {
                tried.push(format!(
                    "attempt {attempt}: {} ({log})",
                    ports::holder(port)
                ));
            }
            Err(Start::Failed(error)) => return Err(error),
        }
    }
    bail!(
        "{} could not bind a port in {PORT_ATTEMPTS} attempts with fresh ports: {}",
        kind.title(),
        tried.join("; ")
    )
}

/// Why one start did not give a running peer.
enum Start {
    /// It exited saying that its address was in use.
    PortTaken {
        log: String,
    },
    Failed(anyhow::Error),
}

impl<E: Into<anyhow::Error>> From<E> for Start {
    fn from(error: E) -> Start {
        Start::Failed(error.into())
    }
}

async fn start_on(
    setup: &PeerSetup,
    kind: PeerKind,
    port: u16,
    ceiling_layout: &Layout,
    options: &PeerOptions,
    poll: Duration,
    limit: Duration,
) -> Result<RunningPeer, Start> {
    let dir = peer_dir(kind)?;
    for (name, contents) in &options.files {
        let file = dir.join(name);
        std::fs::write(&file, contents)
            .with_context(|| format!("cannot write {}", file.display()))?;
    }
    if kind == PeerKind::Java {
        let mut properties = format!(
            "listenPort={port}\nbindAddress=127.0.0.1\nkvConfigPath={}\n",
            dir.join("kv.json").display()
        );
        for (key, value) in options.settings_in(&dir) {
            properties.push_str(&format!("{key}={value}\n"));
        }
        std::fs::write(dir.join("namesrv.properties"), properties)?;
    }
    let inner = command_for(setup, kind, port, &dir, ceiling_layout, options)?;
    let mut command = pinned(setup, inner, &dir);
    let log = File::create(dir.join("server.log"))?;
    command
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    let shown = show_command(&command);
    let spawned = Instant::now();
    let child = command
        .spawn()
        .with_context(|| format!("cannot start {}: {shown}", kind.title()))?;
    let mut peer = RunningPeer {
        kind,
        addr: SocketAddr::from(([127, 0, 0, 1], port)),
        command: shown,
        ready_after: Duration::ZERO,
        child,
        keep_dir: setup.keep_dirs,
        dir,
    };
    match wait_ready(&mut peer, spawned, poll, limit).await {
        Ok(ready_after) => {
            peer.ready_after = ready_after;
            Ok(peer)
        }
        Err(error) => {
            let exited = matches!(peer.child.try_wait(), Ok(Some(_)));
            let log = std::fs::read_to_string(peer.dir.join("server.log")).unwrap_or_default();
            if exited && ports::is_bind_failure(&log) {
                Err(Start::PortTaken {
                    log: log_tail(&peer.dir),
                })
            } else {
                Err(Start::Failed(error))
            }
        }
    }
}

/// `inner` under `taskset -c <server cpus>`, if servers are pinned.
pub(crate) fn pinned(setup: &PeerSetup, inner: Command, dir: &Path) -> Command {
    let Some(cpus) = &setup.server_cpus else {
        return inner;
    };
    let mut command = Command::new("taskset");
    command.arg("-c").arg(cpus).arg(inner.get_program());
    command.args(inner.get_args());
    for (key, value) in inner.get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    command.current_dir(dir);
    command
}

/// How `kind` is started, with `<port>` and `<dir>` for what varies.
///
/// # Errors
/// Java was not set up.
pub fn command_line(setup: &PeerSetup, kind: PeerKind, layout: &Layout) -> anyhow::Result<String> {
    command_line_with(setup, kind, layout, &PeerOptions::default())
}

/// [`command_line`] of a start with `options` (Java's settings go to its
/// `-c` file, which the command line does not show).
///
/// # Errors
/// Java was not set up; options for a peer that takes none.
pub fn command_line_with(
    setup: &PeerSetup,
    kind: PeerKind,
    layout: &Layout,
    options: &PeerOptions,
) -> anyhow::Result<String> {
    let dir = Path::new(DIR);
    let command = pinned(
        setup,
        command_for(setup, kind, 0, dir, layout, options)?,
        dir,
    );
    let mut shown = show_command(&command).replace("127.0.0.1:0", "127.0.0.1:<port>");
    shown = shown.replace("--listenPort 0", "--listenPort <port>");
    for (key, value) in command.get_envs() {
        if let Some(value) = value {
            shown = format!(
                "{}={} {shown}",
                key.to_string_lossy(),
                value.to_string_lossy()
            );
        }
    }
    Ok(shown)
}

async fn wait_ready(
    peer: &mut RunningPeer,
    spawned: Instant,
    poll: Duration,
    limit: Duration,
) -> anyhow::Result<Duration> {
    let probe = workload::route_request("WaymarkBenchReadinessProbe");
    let config = ClientConfig {
        connect_timeout: Duration::from_millis(500),
        inbound_capacity: 0,
        ..ClientConfig::default()
    };
    loop {
        if let Ok(Some(status)) = peer.child.try_wait() {
            bail!(
                "{} exited ({status}) before answering; log: {}",
                peer.kind.title(),
                log_tail(&peer.dir)
            );
        }
        if spawned.elapsed() > limit {
            bail!(
                "{} did not answer within {limit:?}; log: {}",
                peer.kind.title(),
                log_tail(&peer.dir)
            );
        }
        if let Ok(client) = RpcClient::connect(peer.addr, config.clone()).await {
            // Any answer counts (TOPIC_NOT_EXIST is the expected one), as long as
            // our process is still there: one that exited could not have answered.
            loop {
                match client.invoke(probe.clone(), Duration::from_secs(2)).await {
                    Ok(_) if matches!(peer.child.try_wait(), Ok(None)) => {
                        return Ok(spawned.elapsed())
                    }
                    Ok(_) => bail!(
                        "{} exited, and another process answered on {}; log: {}",
                        peer.kind.title(),
                        peer.addr,
                        log_tail(&peer.dir)
                    ),
                    Err(_) if client.is_closed() || spawned.elapsed() > limit => break,
                    Err(_) => tokio::time::sleep(poll).await,
                }
            }
        }
        tokio::time::sleep(poll).await;
    }
}

/// The last lines of a peer's log, for error messages.
pub fn log_tail(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
    let lines: Vec<&str> = text.lines().rev().take(8).collect();
    let tail: Vec<&str> = lines.into_iter().rev().collect();
    if tail.is_empty() {
        "(empty)".to_owned()
    } else {
        tail.join(" | ")
    }
}

/// A command line as one shell-like string; the classpath is abbreviated.
fn show_command(command: &Command) -> String {
    show_command_as(command, "<rocketmq-namesrv classpath>")
}

/// A command line as one shell-like string, the classpath shown as `classpath`.
pub(crate) fn show_command_as(command: &Command, classpath: &str) -> String {
    let mut parts = vec![command.get_program().to_string_lossy().into_owned()];
    let mut after_cp = false;
    for arg in command.get_args() {
        let arg = arg.to_string_lossy();
        if after_cp {
            parts.push(classpath.to_owned());
            after_cp = false;
            continue;
        }
        after_cp = arg == "-cp";
        parts.push(arg.into_owned());
    }
    parts.join(" ")
}
