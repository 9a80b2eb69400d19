//! The servers under test: how each is started, when it counts as ready (it
//! answered a route query), its memory, and how it is stopped.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::ValueEnum;
use rmq_transport::{ClientConfig, RpcClient};
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::load;
use crate::process::{self, on_fresh_ports, Process, Start};
use crate::workload::{self, Layout};

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
    /// The settings with [`DIR`] replaced by `dir`.
    fn settings_in(&self, dir: &Path) -> impl Iterator<Item = (&str, String)> {
        let dir = dir.to_string_lossy().into_owned();
        self.settings
            .iter()
            .map(move |(k, v)| (k.as_str(), v.replace(DIR, &dir)))
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

/// Flags of the Java NameServer: `bin/runserver.sh`'s for JDK ≥ 9, with `heap` instead of 4 GiB
/// and no GC log.
pub fn java_flags(heap: &str) -> Vec<String> {
    let fixed = [
        "-XX:MetaspaceSize=128m",
        "-XX:MaxMetaspaceSize=320m",
        "-XX:+UseG1GC",
        "-XX:G1HeapRegionSize=16m",
        "-XX:G1ReservePercent=25",
        "-XX:InitiatingHeapOccupancyPercent=30",
        "-XX:SoftRefLRUPolicyMSPerMB=0",
        "-XX:-OmitStackTraceInFastThrow",
        "-XX:-UseLargePages",
    ];
    let heap = [
        "-server".to_owned(),
        format!("-Xms{heap}"),
        format!("-Xmx{heap}"),
    ];
    heap.into_iter().chain(fixed.map(String::from)).collect()
}

/// A started peer: where it listens, how long from spawning to its first
/// answered request, and its process (killed when dropped).
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

    /// The server's resident memory now, KiB.
    pub fn rss_kib(&self) -> Option<u64> {
        self.process.rss_kib()
    }

    /// The CPUs the server may run on, as the kernel reports them.
    pub fn cpus_allowed(&self) -> Option<String> {
        self.process.cpus_allowed()
    }

    /// Kills the server and removes its directory (unless kept).
    pub fn stop(self) {}
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
            command.arg("--listen").arg(format!("127.0.0.1:{port}"));
            // Its own route snapshot: the default is under the shared HOME, and
            // routes restored from an earlier run would change what is measured.
            let files = [
                ("kvConfigPath", "kv.json"),
                ("configStorePath", "ns.properties"),
                ("routeSnapshotPath", "routes.snapshot"),
            ];
            for (key, file) in files {
                command.arg("--set").arg(format!("{key}={}", path(file)));
            }
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
                .arg(format!("-Duser.home={}", path("home")));
            command
                .arg("-cp")
                .arg(&java.classpath)
                .arg("org.apache.rocketmq.namesrv.NamesrvStartup");
            command
                .arg("-c")
                .arg(path("namesrv.properties"))
                .env("ROCKETMQ_HOME", dir);
        }
        PeerKind::RustPort => {
            command = Command::new(&setup.rust_port_bin);
            command.args([
                "--listenPort",
                &port.to_string(),
                "--bindAddress",
                "127.0.0.1",
                "--rocketmqHome",
            ]);
            command.arg(dir).arg("--kvConfigPath").arg(path("kv.json"));
            command.env("ROCKETMQ_HOME", dir).env("HOME", path("home"));
        }
        PeerKind::Ceiling => {
            let l = ceiling_layout;
            command = Command::new(&setup.bench_bin);
            command.args(["ceiling-server", "--listen", &format!("127.0.0.1:{port}")]);
            command.args([
                "--brokers",
                &l.brokers.to_string(),
                "--topics",
                &l.topics_per_broker.to_string(),
            ]);
            command.args([
                "--spread",
                &l.spread.to_string(),
                "--queues",
                &l.queues.to_string(),
            ]);
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
    let start = async |ports: &[u16]| {
        start_on(setup, kind, ports[0], ceiling_layout, options, poll, limit).await
    };
    on_fresh_ports(kind.title(), 1, start).await
}

/// [`start`] on `port`, for servers told each other's ports before they start
/// ([`on_fresh_ports`]).
pub async fn start_on(
    setup: &PeerSetup,
    kind: PeerKind,
    port: u16,
    ceiling_layout: &Layout,
    options: &PeerOptions,
    poll: Duration,
    limit: Duration,
) -> Result<RunningPeer, Start> {
    let dir = process::dir_for(kind)?;
    for (name, contents) in &options.files {
        let file = dir.join(name);
        std::fs::write(&file, contents)
            .with_context(|| format!("cannot write {}", file.display()))?;
    }
    if kind == PeerKind::Java {
        let kv = dir.join("kv.json");
        let mut properties = format!(
            "listenPort={port}\nbindAddress=127.0.0.1\nkvConfigPath={}\n",
            kv.display()
        );
        for (key, value) in options.settings_in(&dir) {
            properties.push_str(&format!("{key}={value}\n"));
        }
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
    match wait_ready(&mut peer, spawned, poll, limit).await {
        Ok(ready_after) => Ok(RunningPeer {
            ready_after,
            ..peer
        }),
        Err(_) if peer.process.lost_its_port() => {
            Err(Start::PortTaken(port, peer.process.log_tail()))
        }
        Err(error) => Err(Start::Failed(error)),
    }
}

/// How `kind` is started with `options`, `<port>` and `<dir>` standing for what varies.
pub fn command_line(
    setup: &PeerSetup,
    kind: PeerKind,
    layout: &Layout,
    options: &PeerOptions,
) -> anyhow::Result<String> {
    let dir = Path::new(DIR);
    let command = process::pinned(
        setup,
        command_for(setup, kind, 0, dir, layout, options)?,
        dir,
    );
    let shown = process::show_command(&command, "<rocketmq-namesrv classpath>");
    Ok(shown
        .replace("127.0.0.1:0", "127.0.0.1:<port>")
        .replace("--listenPort 0", "--listenPort <port>"))
}

/// Until `peer` answers a request (any answer: TOPIC_NOT_EXIST is the
/// expected one) while its process still runs; how long from `spawned`.
async fn wait_ready(
    peer: &mut RunningPeer,
    spawned: Instant,
    poll: Duration,
    limit: Duration,
) -> anyhow::Result<Duration> {
    let probe = workload::route_request("WaymarkBenchReadinessProbe");
    let config = ClientConfig {
        connect_timeout: Duration::from_millis(500),
        ..load::client_config()
    };
    let title = peer.kind.title();
    loop {
        if let Some(status) = peer.process.exit_status() {
            bail!(
                "{title} exited ({status}) before answering; log: {}",
                peer.process.log_tail()
            );
        }
        if spawned.elapsed() > limit {
            bail!(
                "{title} did not answer within {limit:?}; log: {}",
                peer.process.log_tail()
            );
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
