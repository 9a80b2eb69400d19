//! Controller groups under test: three nodes, each its own process, ready when every node
//! answers and one serves as leader.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context};
use rmq_testkit::peer_list;
use rmq_transport::RpcClient;
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};
use tokio::time::Instant;

use crate::load;
use crate::peer::{self, on_fresh_ports, PeerKind, PeerSetup, Process, Start};

/// The Java launcher's main class (interop/java, `rmq5` profile).
const JAVA_LAUNCHER: &str = "dev.waymark.interop.harness.ControllerLauncher";

/// JVM flags of one Java controller node: interop/java/controller.sh's, with `-Xmx` from `heap`
/// (the script's default is 256m).
fn java_controller_flags(heap: &str) -> Vec<String> {
    let opens = "java.nio sun.nio.ch java.lang java.util jdk.internal.ref".split(' ');
    let mut flags = vec![format!("-Xmx{heap}"), "-XX:MaxDirectMemorySize=128m".into()];
    flags.extend(opens.map(|package| format!("--add-opens=java.base/{package}=ALL-UNNAMED")));
    flags.insert(4, "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED".into());
    flags
}

/// The settings of node `self_id` whose files live in `dir`.
fn settings(peers: &str, self_id: &str, dir: &Path) -> Vec<String> {
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    vec![
        "controllerDLegerGroup=group1".to_owned(),
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
            command.args(java_controller_flags(&java.heap));
            command.arg(format!("-Duser.home={}", dir.join("home").display()));
            command.arg("-cp").arg(&java.classpath).arg(JAVA_LAUNCHER);
            command.args(settings(peers, self_id, dir));
        }
        PeerKind::RustPort | PeerKind::Ceiling => bail!("{} has no controller", kind.title()),
    }
    command.current_dir(dir);
    Ok(command)
}

/// How node `n0` of a `kind` group is started, with `<dir>` and `<port0>`… for what varies.
pub fn command_line(setup: &PeerSetup, kind: PeerKind, nodes: usize) -> anyhow::Result<String> {
    let dir = Path::new("<dir>");
    let ports: Vec<String> = (0..nodes).map(|i| format!("<port{i}>")).collect();
    let inner = node_command(setup, kind, &peer_list(&ports), "n0", dir)?;
    let classpath = "<interop/java rmq5 classpath>";
    Ok(peer::show_pinned(setup, inner, dir, classpath))
}

/// One node of a running group: its peer id (`n0`…), where it serves.
#[derive(Debug)]
pub struct GroupNode {
    pub id: String,
    pub addr: SocketAddr,
    pub process: Process,
}

/// A running controller group, its nodes `n0` first, and how long from spawning them to a
/// serving leader. Dropping it kills every node.
#[derive(Debug)]
pub struct ControllerGroup {
    pub kind: PeerKind,
    pub nodes: Vec<GroupNode>,
    pub ready_after: Duration,
}

impl ControllerGroup {
    /// `host:port;host:port;…`, what brokers are given as `controllerAddr`.
    pub fn controller_addr(&self) -> String {
        let addrs: Vec<String> = self.nodes.iter().map(|n| n.addr.to_string()).collect();
        addrs.join(";")
    }

    pub fn pids(&self) -> Vec<u32> {
        self.each(Process::pid)
    }
    pub fn rss_kib(&self) -> Vec<Option<u64>> {
        self.each(Process::rss_kib)
    }
    pub fn cpus_allowed(&self) -> Vec<Option<String>> {
        self.each(Process::cpus_allowed)
    }
    fn each<T>(&self, of: fn(&Process) -> T) -> Vec<T> {
        self.nodes.iter().map(|n| of(&n.process)).collect()
    }

    /// Fails naming the first node that is no longer running.
    pub fn check_running(&mut self) -> anyhow::Result<()> {
        for node in &mut self.nodes {
            if node.process.exit_status().is_some() {
                let (kind, log) = (self.kind.title(), node.process.log_tail());
                let (id, addr) = (&node.id, node.addr);
                bail!("{kind} controller {id} at {addr} exited; log: {log}");
            }
        }
        Ok(())
    }

    /// Kills every node (SIGKILL) and removes their directories (unless kept).
    pub fn stop(self) {}

    async fn wait_ready(&mut self, spawned: Instant, limit: Duration) -> anyhow::Result<()> {
        loop {
            self.check_running()?;
            let mut answers = Vec::new();
            for node in &self.nodes {
                answers.push(metadata_of(node.addr).await);
            }
            let mut answered = answers.iter().flatten();
            let leader = answered.any(|a| a.ext("isLeader") == Some("true"));
            if leader && answers.iter().all(Option::is_some) {
                return Ok(());
            }
            if spawned.elapsed() > limit {
                let silent = self.nodes.iter().zip(&answers).filter(|(_, a)| a.is_none());
                let silent = silent.map(|(n, _)| format!("{} ({})", n.id, n.process.log_tail()));
                let (kind, silent) = (self.kind.title(), silent.collect::<Vec<_>>().join("; "));
                bail!(
                    "the {kind} controller group had no serving leader within {limit:?}; nodes not answering: [{silent}]"
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// CONTROLLER_GET_METADATA_INFO to `addr` on a connection of its own; the answer if it was SUCCESS.
async fn metadata_of(addr: SocketAddr) -> Option<RemotingCommand> {
    let client = RpcClient::connect(addr, load::probe_config()).await.ok()?;
    let request = RemotingCommand::request(RequestCode::ControllerGetMetadataInfo, 0);
    let answer = client.invoke(request, Duration::from_secs(2)).await.ok();
    client.close();
    answer.filter(|a| a.response_code() == ResponseCode::Success)
}

/// Starts a `kind` group of `nodes` nodes, pinned to the server CPUs, and waits (up to `limit`)
/// until it has a serving leader.
pub async fn start(
    setup: &PeerSetup,
    kind: PeerKind,
    nodes: usize,
    limit: Duration,
) -> anyhow::Result<ControllerGroup> {
    let what = format!("the {} controller group", kind.title());
    on_fresh_ports(&what, nodes, async |ports: &[u16]| {
        let peers = peer_list(ports);
        let spawned = Instant::now();
        let (nodes, ready_after) = (Vec::new(), Duration::ZERO);
        let mut group = ControllerGroup {
            kind,
            nodes,
            ready_after,
        };
        for (i, &port) in ports.iter().enumerate() {
            let (dir, id) = (peer::dir_for(kind)?, format!("n{i}"));
            let command = node_command(setup, kind, &peers, &id, &dir)?;
            let process = Process::spawn(setup, command, dir, kind == PeerKind::Java)
                .with_context(|| format!("{} controller {id}", kind.title()))?;
            let addr = SocketAddr::from(([127, 0, 0, 1], port));
            group.nodes.push(GroupNode { id, addr, process });
        }
        if let Err(error) = group.wait_ready(spawned, limit).await {
            let nodes = group.nodes.iter_mut().map(|n| (n.addr, &mut n.process));
            return Err(Start::after(error, nodes));
        }
        group.ready_after = spawned.elapsed();
        Ok(group)
    })
    .await
}
