//! Waymark's controller (`rmq-controller`) as child processes: one node or a
//! group of nodes on loopback, stopped with SIGKILL (as a crash) and
//! started again with the same store, on the same address.
//!
//! A controller listens on its own entry of `controllerDLegerPeers`, so its
//! port has to be written into every node's configuration before it binds:
//! ports come from [`ports::choose`] (below the ephemeral range), and a
//! group whose node cannot bind is started again on fresh ports.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::ports;

const BOOT_LINE: &str = "The Controller Server boot success";

/// `n0-127.0.0.1:P0;n1-127.0.0.1:P1;…`: the `controllerDLegerPeers` of nodes on `ports`.
pub fn peer_list<P: std::fmt::Display>(ports: &[P]) -> String {
    let node = |(i, port)| format!("n{i}-127.0.0.1:{port}");
    let nodes: Vec<String> = ports.iter().enumerate().map(node).collect();
    nodes.join(";")
}

/// One running (or stopped) controller node.
#[derive(Debug)]
pub struct Controller {
    /// `127.0.0.1:<port>`, its entry of `controllerDLegerPeers`.
    pub addr: String,
    /// Its peer id (`n0`…).
    pub id: String,
    args: Vec<String>,
    dir: PathBuf,
    child: Option<Child>,
}

impl Controller {
    /// One node (`n0`), with `options` (`key=value`, Java's names) on top
    /// of a test configuration: group `group1`, store and config file in a
    /// temporary directory, scans every 200 ms.
    ///
    /// # Panics
    /// When it does not come up (test code).
    pub fn start(options: &[&str]) -> Controller {
        let [node] = Controller::start_group::<1>(options);
        node
    }

    /// `N` nodes of one group, started together.
    ///
    /// # Panics
    /// When the group does not come up after 5 attempts with fresh ports;
    /// the panic names each port tried and what held it.
    pub fn start_group<const N: usize>(options: &[&str]) -> [Controller; N] {
        let mut tried = Vec::new();
        for attempt in 1..=5 {
            let ports: Vec<u16> = (0..N)
                .map(|_| ports::choose().expect("a free port below the ephemeral range"))
                .collect();
            let peers = peer_list(&ports);
            let mut nodes: Vec<Controller> = (0..N)
                .map(|i| Controller::unstarted(i, ports[i], &peers, options))
                .collect();
            let pending: Vec<_> = nodes.iter_mut().map(|n| n.launch()).collect();
            let mut failed = None;
            for (node, lines) in nodes.iter_mut().zip(pending) {
                if let Err(error) = node.wait_ready(lines) {
                    failed = Some((node.addr.clone(), error));
                }
            }
            match failed {
                None => {
                    wait_serving(&nodes);
                    return nodes
                        .try_into()
                        .unwrap_or_else(|_| unreachable!("N nodes were made"));
                }
                Some((addr, error)) if ports::is_bind_failure(&error) => {
                    let port: u16 = addr
                        .rsplit(':')
                        .next()
                        .and_then(|p| p.parse().ok())
                        .unwrap_or(0);
                    tried.push(format!("attempt {attempt}: {}", ports::holder(port)));
                }
                Some((addr, error)) => panic!("controller {addr} did not start: {error}"),
            }
        }
        panic!(
            "no controller group could bind its ports in 5 attempts: {}",
            tried.join("; ")
        );
    }

    fn unstarted(index: usize, port: u16, peers: &str, options: &[&str]) -> Controller {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "rmq-testkit-controller-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("create the controller's temp dir");
        let id = format!("n{index}");
        let mut settings = vec![
            "controllerDLegerGroup=group1".to_owned(),
            format!("controllerDLegerPeers={peers}"),
            format!("controllerDLegerSelfId={id}"),
            format!("controllerStorePath={}", dir.join("store").display()),
            format!(
                "configStorePath={}",
                dir.join("controller.properties").display()
            ),
            "bindAddress=127.0.0.1".to_owned(),
            "scanNotActiveBrokerInterval=200".to_owned(),
            "scanInactiveMasterInterval=200".to_owned(),
        ];
        settings.extend(options.iter().map(|o| o.to_string()));
        let mut args = Vec::new();
        for setting in settings {
            args.push("--set".to_owned());
            args.push(setting);
        }
        Controller {
            addr: format!("127.0.0.1:{port}"),
            id,
            args,
            dir,
            child: None,
        }
    }

    fn launch(&mut self) -> mpsc::Receiver<String> {
        let stderr = std::fs::File::create(self.dir.join("stderr.log")).expect("stderr file");
        let mut child = Command::new(controller_binary())
            .args(&self.args)
            .env("RUST_LOG", "warn,rmq_controller=info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start rmq-controller: {e}"));
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let _ = tx.send(line);
            }
        });
        self.child = Some(child);
        lines
    }

    fn wait_ready(&mut self, lines: mpsc::Receiver<String>) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) if line.contains(BOOT_LINE) => return Ok(()),
                Ok(_) => {}
                Err(_) => {
                    self.stop();
                    return Err(format!(
                        "no boot line; stderr:\n{}",
                        tail(&self.dir.join("stderr.log"), 30)
                    ));
                }
            }
        }
    }

    /// Kills the process (SIGKILL) and waits for it: a crash. The store stays.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Whether the process runs.
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// Starts a stopped node again with the same store, on the same address
    /// (retrying for up to 20 s while its old socket is released). Returns
    /// once it listens; whether it serves depends on its group.
    ///
    /// # Panics
    /// If it is running, or does not come up.
    pub fn start_again(&mut self) {
        assert!(self.child.is_none(), "start_again on a running controller");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let lines = self.launch();
            match self.wait_ready(lines) {
                Ok(()) => return,
                Err(error) if ports::is_bind_failure(&error) && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(300));
                }
                Err(error) => {
                    let port: u16 = self
                        .addr
                        .rsplit(':')
                        .next()
                        .and_then(|p| p.parse().ok())
                        .unwrap_or(0);
                    panic!(
                        "controller {} did not start again: {error}\n{}",
                        self.addr,
                        ports::holder(port)
                    );
                }
            }
        }
    }

    /// Its stderr so far (its log).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr.log")).unwrap_or_default()
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        self.stop();
        if std::env::var_os(crate::KEEP_DIR_ENV).is_none() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Waits (up to 30 s) until one node of `nodes` says it is the serving
/// leader: the boot line comes before the first leader election ends.
/// Blocking, so that sync and async tests alike can use it.
fn wait_serving(nodes: &[Controller]) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if nodes.iter().any(|n| is_serving_leader(&n.addr)) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "no controller node serves as leader within 30 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// CONTROLLER_GET_METADATA_INFO over a plain blocking socket: whether the
/// node at `addr` answers `isLeader=true`.
pub(crate) fn is_serving_leader(addr: &str) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(addr) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request =
        rmq_wire::RemotingCommand::request(rmq_wire::RequestCode::ControllerGetMetadataInfo, 1);
    if stream
        .write_all(&rmq_wire::frame::encode_to_bytes(&request))
        .is_err()
    {
        return false;
    }
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match rmq_wire::frame::check(&buf) {
            Ok(rmq_wire::frame::FrameStatus::Complete { len }) => {
                return rmq_wire::frame::decode(buf[..len].to_vec().into())
                    .is_ok_and(|answer| answer.ext("isLeader") == Some("true"));
            }
            Ok(rmq_wire::frame::FrameStatus::Incomplete { .. }) => match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return false,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            },
            Err(_) => return false,
        }
    }
}

/// `target/<profile>/rmq-controller` beside the running test executable,
/// built with `cargo build -p rmq-controller` if it is missing.
fn controller_binary() -> PathBuf {
    crate::process::workspace_binary("rmq-controller")
}
