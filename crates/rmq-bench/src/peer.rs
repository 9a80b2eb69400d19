//! The servers under test: how each is started (a fresh directory, pinned, output to a log,
//! killed when dropped, on fresh ports until none was taken), when it counts as ready (it
//! answered a route query), its memory, and how it is stopped.

use std::fs::File;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context};
use clap::ValueEnum;
use rmq_testkit::ports;
use rmq_transport::RpcClient;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::workload::{self, Layout};
use crate::{load, pin};

/// Which server: Waymark's `rmq-namesrv`, the Java NameServer, the `rocketmq-namesrv` Rust
/// port, or the ceiling.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum PeerKind {
    Waymark,
    Java,
    RustPort,
    Ceiling,
}

impl PeerKind {
    /// Every kind, in report order.
    pub const ALL: [PeerKind; 4] = [Self::Waymark, Self::Java, Self::RustPort, Self::Ceiling];

    /// The name used in results and flags.
    pub fn id(self) -> &'static str {
        ["waymark", "java", "rust-port", "ceiling"][self as usize]
    }

    /// The name used in the report.
    pub fn title(self) -> &'static str {
        ["Waymark", "Java", "Rust port", "ceiling"][self as usize]
    }

    /// Whether the peer keeps real route state (the ceiling does not).
    pub fn is_real(self) -> bool {
        self != PeerKind::Ceiling
    }

    /// Whether the peer has a controller: Waymark's `rmq-controller`, Apache RocketMQ's.
    pub fn has_controller(self) -> bool {
        matches!(self, PeerKind::Waymark | PeerKind::Java)
    }
}

/// How to run a Java peer: `java`, the runtime classpath (the NameServer's, or interop/java's
/// `rmq5` profile's for the controller) and the heap.
#[derive(Debug, Clone)]
pub struct JavaSetup {
    pub java: PathBuf,
    pub classpath: String,
    pub heap: String,
}

/// What one start adds to a peer's defaults: files written into its directory, and settings
/// (Waymark: `--set`; Java: its `-c` file), where [`DIR`] stands for that directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeerOptions {
    pub files: Vec<(String, Vec<u8>)>,
    pub settings: Vec<(String, String)>,
}

/// Stands for the peer's directory in [`PeerOptions::settings`] values.
pub const DIR: &str = "<dir>";

impl PeerOptions {
    fn settings_in(&self, dir: &Path) -> impl Iterator<Item = String> + '_ {
        let dir = dir.to_string_lossy().into_owned();
        let setting = move |(k, v): &(String, String)| format!("{k}={}", v.replace(DIR, &dir));
        self.settings.iter().map(setting)
    }
}

/// Everything needed to start any peer, resolved once per run (`server_cpus` `None`: unpinned).
#[derive(Debug, Clone)]
pub struct PeerSetup {
    pub waymark_bin: PathBuf,
    pub waymark_controller_bin: PathBuf,
    pub java_controller: Option<JavaSetup>,
    pub rust_port_bin: PathBuf,
    pub java: Option<JavaSetup>,
    pub bench_bin: PathBuf,
    pub server_cpus: Option<String>,
    pub keep_dirs: bool,
}

/// A started peer: where it listens, how long from spawning to its first answered request, and
/// its process (killed when dropped).
#[derive(Debug)]
pub struct RunningPeer {
    pub kind: PeerKind,
    pub addr: SocketAddr,
    pub ready_after: Duration,
    pub process: Process,
}

impl RunningPeer {
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }
    pub fn rss_kib(&self) -> Option<u64> {
        self.process.rss_kib()
    }
    pub fn cpus_allowed(&self) -> Option<String> {
        self.process.cpus_allowed()
    }

    /// Kills the server and removes its directory (unless kept).
    pub fn stop(self) {}
}

/// `bin/runserver.sh`'s JVM flags for JDK ≥ 9 after the heap's (no GC log).
const JAVA_NAMESRV_FLAGS: &str = "-XX:MetaspaceSize=128m -XX:MaxMetaspaceSize=320m -XX:+UseG1GC \
    -XX:G1HeapRegionSize=16m -XX:G1ReservePercent=25 -XX:InitiatingHeapOccupancyPercent=30 \
    -XX:SoftRefLRUPolicyMSPerMB=0 -XX:-OmitStackTraceInFastThrow -XX:-UseLargePages";

fn command_for(
    setup: &PeerSetup,
    kind: PeerKind,
    port: u16,
    dir: &Path,
    ceiling_layout: &Layout,
    options: &PeerOptions,
) -> anyhow::Result<Command> {
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    if !options.settings.is_empty() && !kind.has_controller() {
        bail!("{} takes no extra settings here", kind.title());
    }
    let listen = format!("127.0.0.1:{port}");
    let mut command;
    match kind {
        PeerKind::Waymark => {
            command = Command::new(&setup.waymark_bin);
            command.arg("--listen").arg(listen);
            // Its own route snapshot: the default is under the shared HOME, and routes restored
            // from an earlier run would change what is measured.
            let files = [
                ("kvConfigPath", "kv.json"),
                ("configStorePath", "ns.properties"),
                ("routeSnapshotPath", "routes.snapshot"),
            ];
            let files = files.map(|(key, name)| format!("{key}={}", path(name)));
            for setting in files.into_iter().chain(options.settings_in(dir)) {
                command.arg("--set").arg(setting);
            }
        }
        PeerKind::Java => {
            let java = setup.java.as_ref();
            let java = java.context("the Java NameServer was not set up")?;
            command = Command::new(&java.java);
            // The heap is `heap`, not runserver.sh's 4 GiB.
            let heap = [format!("-Xms{}", java.heap), format!("-Xmx{}", java.heap)];
            command.arg("-server").args(heap);
            command.args(JAVA_NAMESRV_FLAGS.split_whitespace());
            command.arg(format!("-Duser.home={}", path("home")));
            command.arg("-cp").arg(&java.classpath);
            command.arg("org.apache.rocketmq.namesrv.NamesrvStartup");
            command.arg("-c").arg(path("namesrv.properties"));
            command.env("ROCKETMQ_HOME", dir);
        }
        PeerKind::RustPort => {
            command = Command::new(&setup.rust_port_bin);
            let port = port.to_string();
            command.args(["--listenPort", &port, "--bindAddress", "127.0.0.1"]);
            command.arg("--rocketmqHome").arg(dir);
            command.arg("--kvConfigPath").arg(path("kv.json"));
            command.env("ROCKETMQ_HOME", dir).env("HOME", path("home"));
        }
        PeerKind::Ceiling => {
            let l = ceiling_layout;
            command = Command::new(&setup.bench_bin);
            command.args(["ceiling-server", "--listen", &listen]);
            let flags = format!(
                "--brokers {} --topics {} --spread {} --queues {}",
                l.brokers, l.topics_per_broker, l.spread, l.queues
            );
            command.args(flags.split(' '));
        }
    }
    command.current_dir(dir);
    Ok(command)
}

/// Starts `kind` with `options`, pinned, on a fresh port, and waits until it answers (probing
/// every `poll`).
pub async fn start(
    setup: &PeerSetup,
    kind: PeerKind,
    ceiling_layout: &Layout,
    options: &PeerOptions,
    poll: Duration,
    limit: Duration,
) -> anyhow::Result<RunningPeer> {
    on_fresh_ports(kind.title(), 1, async |ports: &[u16]| {
        let port = ports[0];
        let dir = dir_for(kind)?;
        for (name, contents) in &options.files {
            let file = dir.join(name);
            let written = std::fs::write(&file, contents);
            written.with_context(|| format!("cannot write {}", file.display()))?;
        }
        if kind == PeerKind::Java {
            let kv = dir.join("kv.json").display().to_string();
            let mut properties =
                format!("listenPort={port}\nbindAddress=127.0.0.1\nkvConfigPath={kv}\n");
            properties.extend(options.settings_in(&dir).map(|s| format!("{s}\n")));
            std::fs::write(dir.join("namesrv.properties"), properties)?;
        }
        let command = command_for(setup, kind, port, &dir, ceiling_layout, options)?;
        let spawned = Instant::now();
        let process = Process::spawn(setup, command, dir, false)?;
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let mut peer = RunningPeer {
            kind,
            addr,
            ready_after: Duration::ZERO,
            process,
        };
        let ready = wait_ready(&mut peer, spawned, poll, limit).await;
        peer.ready_after = ready.map_err(|e| Start::after(e, [(addr, &mut peer.process)]))?;
        Ok(peer)
    })
    .await
}

/// How `kind` is started with `options`, `<port>` and `<dir>` standing for what varies.
pub fn command_line(
    setup: &PeerSetup,
    kind: PeerKind,
    layout: &Layout,
    options: &PeerOptions,
) -> anyhow::Result<String> {
    let dir = Path::new(DIR);
    let command = command_for(setup, kind, 0, dir, layout, options)?;
    let shown = show_pinned(setup, command, dir, "<rocketmq-namesrv classpath>");
    Ok(shown
        .replace("127.0.0.1:0", "127.0.0.1:<port>")
        .replace("--listenPort 0", "--listenPort <port>"))
}

/// Until `peer` answers a request (any answer: TOPIC_NOT_EXIST is the expected one) while its
/// process still runs; how long from `spawned`.
async fn wait_ready(
    peer: &mut RunningPeer,
    spawned: Instant,
    poll: Duration,
    limit: Duration,
) -> anyhow::Result<Duration> {
    let probe = workload::route_request("WaymarkBenchReadinessProbe");
    let config = load::probe_config();
    let title = peer.kind.title();
    loop {
        if let Some(status) = peer.process.exit_status() {
            let log = peer.process.log_tail();
            bail!("{title} exited ({status}) before answering; log: {log}");
        }
        if spawned.elapsed() > limit {
            let log = peer.process.log_tail();
            bail!("{title} did not answer within {limit:?}; log: {log}");
        }
        if let Ok(client) = RpcClient::connect(peer.addr, config.clone()).await {
            loop {
                match client.invoke(probe.clone(), Duration::from_secs(2)).await {
                    // One that exited could not have answered.
                    Ok(_) if peer.process.exit_status().is_none() => return Ok(spawned.elapsed()),
                    Ok(_) => bail!(
                        "{title} exited, and another process answered on {}; log: {}",
                        peer.addr,
                        peer.process.log_tail()
                    ),
                    Err(_) if client.is_closed() || spawned.elapsed() > limit => break,
                    Err(_) => tokio::time::sleep(poll).await,
                }
            }
        }
        tokio::time::sleep(poll).await;
    }
}

/// One running server process, killed (and its directory removed, unless kept) when dropped.
#[derive(Debug)]
pub struct Process {
    child: Child,
    /// Held open: the Java controller launcher stops when its stdin closes, so a node cannot
    /// outlive the harness.
    _stdin: Option<ChildStdin>,
    dir: PathBuf,
    keep_dir: bool,
}

impl Process {
    /// Spawns `inner` in `dir`, pinned, its output to `dir/server.log` (stdin kept open if asked).
    pub fn spawn(
        setup: &PeerSetup,
        inner: Command,
        dir: PathBuf,
        stdin: bool,
    ) -> anyhow::Result<Process> {
        let mut command = pinned(setup, inner, &dir);
        let log = File::create(dir.join("server.log"))?;
        let input = if stdin { Stdio::piped() } else { Stdio::null() };
        command.stdin(input).stdout(log.try_clone()?).stderr(log);
        let shown = show_command(&command, "<classpath>");
        let spawned = command.spawn();
        let mut child = spawned.with_context(|| format!("cannot start {shown}"))?;
        let (_stdin, keep_dir) = (child.stdin.take(), setup.keep_dirs);
        Ok(Process {
            child,
            _stdin,
            dir,
            keep_dir,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
    pub fn rss_kib(&self) -> Option<u64> {
        pin::rss_kib(self.pid())
    }

    /// The CPUs it may run on, as the kernel reports them.
    pub fn cpus_allowed(&self) -> Option<String> {
        pin::proc_status_field(Some(self.pid()), "Cpus_allowed_list")
    }

    pub fn exit_status(&mut self) -> Option<String> {
        self.child.try_wait().ok().flatten().map(|s| s.to_string())
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The last lines of its log, for error messages.
    pub fn log_tail(&self) -> String {
        let text = self.log();
        let lines: Vec<&str> = text.lines().collect();
        match lines.len() {
            0 => "(empty)".to_owned(),
            n => lines[n.saturating_sub(8)..].join(" | "),
        }
    }

    /// Whether it exited saying that its address was in use.
    pub fn lost_its_port(&mut self) -> bool {
        self.exit_status().is_some() && ports::is_bind_failure(&self.log())
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !self.keep_dir {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A fresh directory for one process of `kind`.
pub fn dir_for(kind: PeerKind) -> anyhow::Result<PathBuf> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = format!("waymark-bench-{}-{}-{n}", std::process::id(), kind.id());
    let dir = std::env::temp_dir().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    let created = std::fs::create_dir_all(dir.join("home"));
    created.with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

/// Why one start did not give a running server: one of its processes lost its port (what holds
/// that port, and the process's log), or anything else.
pub enum Start {
    PortTaken(String),
    Failed(anyhow::Error),
}

impl Start {
    /// What ended a start that failed with `error`: the first of `processes` (by the address
    /// each was to listen on) that lost its port, else `error`.
    pub fn after<'a>(
        error: anyhow::Error,
        processes: impl IntoIterator<Item = (SocketAddr, &'a mut Process)>,
    ) -> Start {
        for (addr, process) in processes {
            if process.lost_its_port() {
                let (holder, log) = (ports::holder(addr.port()), process.log_tail());
                return Start::PortTaken(format!("{holder} ({log})"));
            }
        }
        Start::Failed(error)
    }
}

impl<E: Into<anyhow::Error>> From<E> for Start {
    fn from(error: E) -> Start {
        Start::Failed(error.into())
    }
}

/// Starts with fresh ports before a peer that cannot bind is given up.
const PORT_ATTEMPTS: usize = 5;

/// `start` on `count` fresh ports, again on fresh ones while a port was taken, at most
/// [`PORT_ATTEMPTS`] times.
pub async fn on_fresh_ports<T>(
    what: &str,
    count: usize,
    mut start: impl AsyncFnMut(&[u16]) -> Result<T, Start>,
) -> anyhow::Result<T> {
    let mut tried = Vec::new();
    for attempt in 1..=PORT_ATTEMPTS {
        let mut chosen: Vec<u16> = Vec::with_capacity(count);
        while chosen.len() < count {
            let port = ports::choose().with_context(|| {
                let (low, high) = ports::candidate_range();
                format!("no free port in {low}..={high}")
            })?;
            if !chosen.contains(&port) {
                chosen.push(port);
            }
        }
        match start(&chosen).await {
            Ok(started) => return Ok(started),
            Err(Start::PortTaken(why)) => tried.push(format!("attempt {attempt}: {why}")),
            Err(Start::Failed(error)) => return Err(error),
        }
    }
    let tried = tried.join("; ");
    bail!("{what} could not bind in {PORT_ATTEMPTS} attempts with fresh ports: {tried}")
}

/// How `inner` is started ([`show_command`]) under [`pinned`].
pub fn show_pinned(setup: &PeerSetup, inner: Command, dir: &Path, classpath: &str) -> String {
    show_command(&pinned(setup, inner, dir), classpath)
}

/// `inner` under `taskset -c <server cpus>`, if servers are pinned.
fn pinned(setup: &PeerSetup, inner: Command, dir: &Path) -> Command {
    let Some(cpus) = &setup.server_cpus else {
        return inner;
    };
    let mut command = Command::new("taskset");
    command.arg("-c").arg(cpus);
    command.arg(inner.get_program()).args(inner.get_args());
    for (key, value) in inner.get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    command.current_dir(dir);
    command
}

/// A command line as one shell-like string, its environment first, the classpath shown as
/// `classpath`.
fn show_command(command: &Command, classpath: &str) -> String {
    let env = command
        .get_envs()
        .filter_map(|(k, v)| Some(format!("{}={}", k.to_string_lossy(), v?.to_string_lossy())));
    let mut parts: Vec<String> = env.collect();
    parts.reverse();
    parts.push(command.get_program().to_string_lossy().into_owned());
    let mut after_cp = false;
    for arg in command.get_args().map(|a| a.to_string_lossy()) {
        let shown = if after_cp { classpath } else { &arg };
        parts.push(shown.to_owned());
        after_cp = arg == "-cp";
    }
    parts.join(" ")
}
