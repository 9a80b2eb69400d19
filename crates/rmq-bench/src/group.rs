//! Controller groups under test: the nodes of one controller group, each
//! its own process, pinned like every server, on loopback.
//!
//! A controller node serves on its own entry of `controllerDLegerPeers`,
//! so every node is told every port before any of them binds: the ports
//! are chosen below the kernel's ephemeral range ([`rmq_testkit::ports`]),
//! and a group one of whose nodes exits because its port was taken in the
//! meantime is started again on fresh ports, as [`crate::peer`] does for a
//! single server.
//!
//! Waymark: `rmq-controller --set key=value …`. Java: interop/java's
//! `ControllerLauncher` (one `ControllerManager` of `rocketmq-controller`,
//! DLedger type, built from `key=value` settings as `ControllerStartup`
//! builds it from its `-c` file) with interop/java/controller.sh's JVM
//! flags. Both get the same settings: group, peers, self id, store, config
//! file and `rocketmqHome` in the node's own directory, `bindAddress`
//! 127.0.0.1; everything else stays at its default (for Java with the
//! launcher's one harness default, 16 MiB DLedger data files).
//!
//! Ready means: every node answers CONTROLLER_GET_METADATA_INFO and one of
//! them says it is the leader, which for both implementations means a
//! leader that serves every request.

use std::fmt::Display;
use std::fs::File;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context};
use rmq_testkit::ports;
use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};
use tokio::time::Instant;

use crate::peer::{self, log_tail, PeerKind, PeerSetup};
use crate::pin;

/// The Java launcher's main class (interop/java, `rmq5` profile).
pub const JAVA_LAUNCHER: &str = "dev.waymark.interop.harness.ControllerLauncher";
/// The group name (that of RocketMQ's quick-start configuration).
const GROUP: &str = "group1";
/// Starts with fresh ports before a group that cannot bind is given up.
const PORT_ATTEMPTS: usize = 5;

/// JVM flags of one Java controller node: interop/java/controller.sh's,
/// with `-Xmx` from `heap` (the script's default is 256m).
pub fn java_controller_flags(heap: &str) -> Vec<String> {
    let mut flags = vec![
        format!("-Xmx{heap}"),
        "-XX:MaxDirectMemorySize=128m".to_owned(),
    ];
    flags.extend(
        [
            "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--add-opens=java.base/java.util=ALL-UNNAMED",
            "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
        ]
        .map(String::from),
    );
    flags
}

/// `n0-127.0.0.1:P0;n1-127.0.0.1:P1;…`, the peer list of nodes on `ports`.
pub fn peer_list<P: Display>(ports: &[P]) -> String {
    ports
        .iter()
        .enumerate()
        .map(|(i, port)| format!("n{i}-127.0.0.1:{port}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// The settings of node `self_id` whose files live in `dir`.
fn settings(peers: &str, self_id: &str, dir: &Path) -> Vec<String> {
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    vec![
        format!("controllerDLegerGroup={GROUP}"),
        format!("controllerDLegerPeers={peers}"),
        format!("controllerDLegerSelfId={self_id}"),
        format!("controllerStorePath={}", path("store")),
        format!("configStorePath={}", path("controller.properties")),
        format!("rocketmqHome={}", dir.display()),
        "bindAddress=127.0.0.1".to_owned(),
    ]
}

/// The command that starts node `self_id` of a `kind` group (without pinning).
fn node_command(
    setup: &PeerSetup,
    kind: PeerKind,
    peers: &str,
    self_id: &str,
    dir: &Path,
) -> anyhow::Result<Command> {
    let mut command;
    match kind {
        PeerKind::Waymark => {
            command = Command::new(&setup.waymark_controller_bin);
            for setting in settings(peers, self_id, dir) {
                command.arg("--set").arg(setting);
            }
        }
        PeerKind::Java => {
            let java = setup
                .java_controller
                .as_ref()
                .context("the Java controller was not set up")?;
            command = Command::new(&java.java);
            command
                .args(java_controller_flags(&java.heap))
                .arg(format!("-Duser.home={}", dir.join("home").display()))
                .arg("-cp")
                .arg(&java.classpath)
                .arg(JAVA_LAUNCHER)
                .args(settings(peers, self_id, dir));
        }
        PeerKind::RustPort | PeerKind::Ceiling => {
            bail!("{} has no controller", kind.title())
        }
    }
    command.current_dir(dir);
    Ok(command)
}

/// How node `n0` of a `kind` group is started, with `<dir>` and
/// `<port0>`… for what varies.
///
/// # Errors
/// The kind has no controller, or Java was not set up.
pub fn command_line(setup: &PeerSetup, kind: PeerKind, nodes: usize) -> anyhow::Result<String> {
    let dir = Path::new("<dir>");
    let placeholders: Vec<String> = (0..nodes).map(|i| format!("<port{i}>")).collect();
    let inner = node_command(setup, kind, &peer_list(&placeholders), "n0", dir)?;
    let command = peer::pinned(setup, inner, dir);
    Ok(peer::show_command_as(
        &command,
        "<interop/java rmq5 classpath>",
    ))
}

/// One node of a running group. Dropping it kills the process.
#[derive(Debug)]
pub struct GroupNode {
    /// Its peer id (`n0`…).
    pub id: String,
    /// Where it serves (its entry of the peer list).
    pub addr: SocketAddr,
    child: Child,
    /// Held open: the Java launcher stops when its stdin closes, so a node
    /// cannot outlive the harness.
    _stdin: Option<ChildStdin>,
    dir: PathBuf,
    keep_dir: bool,
}

impl GroupNode {
    /// The node's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process still runs.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The node's directory (store, logs).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !self.keep_dir {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

impl Drop for GroupNode {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A running controller group. Dropping it kills every node.
#[derive(Debug)]
pub struct ControllerGroup {
    /// Which implementation.
    pub kind: PeerKind,
    /// Its nodes, `n0` first.
    pub nodes: Vec<GroupNode>,
    /// From spawning the nodes to a serving leader.
    pub ready_after: Duration,
}

impl ControllerGroup {
    /// `host:port;host:port;…`, what brokers are given as `controllerAddr`.
    pub fn controller_addr(&self) -> String {
        self.nodes
            .iter()
            .map(|n| n.addr.to_string())
            .collect::<Vec<_>>()
            .join(";")
    }

    /// The nodes' process ids.
    pub fn pids(&self) -> Vec<u32> {
        self.nodes.iter().map(GroupNode::pid).collect()
    }

    /// Each node's resident memory now, KiB.
    pub fn rss_kib(&self) -> Vec<Option<u64>> {
        self.nodes.iter().map(|n| pin::rss_kib(n.pid())).collect()
    }

    /// The CPUs each node may run on, as the kernel reports them.
    pub fn cpus_allowed(&self) -> Vec<Option<String>> {
        self.nodes
            .iter()
            .map(|n| pin::proc_status_field(Some(n.pid()), "Cpus_allowed_list"))
            .collect()
    }

    /// Fails naming the first node that is no longer running.
    ///
    /// # Errors
    /// A node exited.
    pub fn check_running(&mut self) -> anyhow::Result<()> {
        for node in &mut self.nodes {
            if !node.is_running() {
                bail!(
                    "{} controller {} at {} exited; log: {}",
                    self.kind.title(),
                    node.id,
                    node.addr,
                    log_tail(&node.dir)
                );
            }
        }
        Ok(())
    }

    /// Every node's CONTROLLER_GET_METADATA_INFO answer (`None`: no answer).
    pub async fn metadata(&self) -> Vec<Option<RemotingCommand>> {
        let mut answers = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            answers.push(metadata_of(node.addr).await);
        }
        answers
    }

    /// The address of the node that serves as leader now, if one does.
    pub async fn leader(&self) -> Option<SocketAddr> {
        let answers = self.metadata().await;
        self.nodes
            .iter()
            .zip(answers)
            .find(|(_, answer)| answer.as_ref().is_some_and(is_leader))
            .map(|(node, _)| node.addr)
    }

    /// Kills every node (SIGKILL) and removes their directories (unless kept).
    pub fn stop(self) {
        drop(self);
    }

    async fn wait_ready(&mut self, spawned: Instant, limit: Duration) -> anyhow::Result<()> {
        loop {
            self.check_running()?;
            let answers = self.metadata().await;
            let all_answer = answers.iter().all(Option::is_some);
            if all_answer && answers.iter().flatten().any(is_leader) {
                return Ok(());
            }
            if spawned.elapsed() > limit {
                let silent: Vec<String> = self
                    .nodes
                    .iter()
                    .zip(&answers)
                    .filter(|(_, a)| a.is_none())
                    .map(|(n, _)| format!("{} ({})", n.id, log_tail(&n.dir)))
                    .collect();
                bail!(
                    "the {} controller group had no serving leader within {limit:?}; \
                     nodes not answering: [{}]",
                    self.kind.title(),
                    silent.join("; ")
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn is_leader(answer: &RemotingCommand) -> bool {
    answer.response_code() == ResponseCode::Success && answer.ext("isLeader") == Some("true")
}

/// CONTROLLER_GET_METADATA_INFO to `addr` on a connection of its own.
async fn metadata_of(addr: SocketAddr) -> Option<RemotingCommand> {
    let config = ClientConfig {
        connect_timeout: Duration::from_millis(500),
        inbound_capacity: 0,
        ..ClientConfig::default()
    };
    let client = RpcClient::connect(addr, config).await.ok()?;
    let request = RemotingCommand::request(RequestCode::ControllerGetMetadataInfo, 0);
    let answer = client.invoke(request, Duration::from_secs(2)).await.ok();
    client.close();
    answer.filter(|a| a.response_code() == ResponseCode::Success)
}

/// Why one start did not give a running group.
enum Start {
    /// A node exited saying that its address was in use.
    PortTaken {
        port: u16,
        log: String,
    },
    Failed(anyhow::Error),
}

impl<E: Into<anyhow::Error>> From<E> for Start {
    fn from(error: E) -> Start {
        Start::Failed(error.into())
    }
}

/// Starts a `kind` group of `nodes` nodes, pinned to the server CPUs, and
/// waits (up to `limit`) until it has a serving leader.
///
/// # Errors
/// A node cannot be spawned or exits, no leader within `limit`, or the
/// group could not bind its ports in 5 attempts (the error
/// names each port and what held it).
pub async fn start(
    setup: &PeerSetup,
    kind: PeerKind,
    nodes: usize,
    limit: Duration,
) -> anyhow::Result<ControllerGroup> {
    let mut tried = Vec::new();
    for attempt in 1..=PORT_ATTEMPTS {
        let mut chosen: Vec<u16> = Vec::with_capacity(nodes);
        while chosen.len() < nodes {
            let port = ports::choose().with_context(|| {
                let (low, high) = ports::candidate_range();
                format!("no free port in {low}..={high}")
            })?;
            if !chosen.contains(&port) {
                chosen.push(port);
            }
        }
        match start_on(setup, kind, &chosen, limit).await {
            Ok(group) => return Ok(group),
            Err(Start::PortTaken { port, log }) => {
                tried.push(format!(
                    "attempt {attempt}: {} ({log})",
                    ports::holder(port)
                ));
            }
            Err(Start::Failed(error)) => return Err(error),
        }
    }
    bail!(
        "the {} controller group could not bind its ports in {PORT_ATTEMPTS} attempts \
         with fresh ports: {}",
        kind.title(),
        tried.join("; ")
    )
}

async fn start_on(
    setup: &PeerSetup,
    kind: PeerKind,
    ports: &[u16],
    limit: Duration,
) -> Result<ControllerGroup, Start> {
    let peers = peer_list(ports);
    let spawned = Instant::now();
    let mut group = ControllerGroup {
        kind,
        nodes: Vec::with_capacity(ports.len()),
        ready_after: Duration::ZERO,
    };
    for (i, &port) in ports.iter().enumerate() {
        let dir = peer::peer_dir(kind)?;
        let id = format!("n{i}");
        let inner = node_command(setup, kind, &peers, &id, &dir)?;
        let mut command = peer::pinned(setup, inner, &dir);
        let log = File::create(dir.join("server.log"))?;
        let stdin = if kind == PeerKind::Java {
            Stdio::piped()
        } else {
            Stdio::null()
        };
        command.stdin(stdin).stdout(log.try_clone()?).stderr(log);
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(error) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(Start::Failed(anyhow::Error::new(error).context(format!(
                    "cannot start {} controller {id}: {}",
                    kind.title(),
                    peer::show_command_as(&command, "<classpath>")
                ))));
            }
        };
        let stdin = child.stdin.take();
        group.nodes.push(GroupNode {
            id,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            child,
            _stdin: stdin,
            dir,
            keep_dir: setup.keep_dirs,
        });
    }
    match group.wait_ready(spawned, limit).await {
        Ok(()) => {
            group.ready_after = spawned.elapsed();
            Ok(group)
        }
        Err(error) => {
            for node in &mut group.nodes {
                if node.is_running() {
                    continue;
                }
                let log = std::fs::read_to_string(node.dir.join("server.log")).unwrap_or_default();
                if ports::is_bind_failure(&log) {
                    return Err(Start::PortTaken {
                        port: node.addr.port(),
                        log: log_tail(&node.dir),
                    });
                }
            }
            Err(Start::Failed(error))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_lists_name_every_node() {
        assert_eq!(
            peer_list(&[9878, 9879]),
            "n0-127.0.0.1:9878;n1-127.0.0.1:9879"
        );
        let s = settings("n0-127.0.0.1:1", "n0", Path::new("/d"));
        assert!(s.contains(&"controllerStorePath=/d/store".to_owned()));
        assert!(s.contains(&"bindAddress=127.0.0.1".to_owned()));
        assert!(java_controller_flags("256m")[0] == "-Xmx256m");
    }
}
