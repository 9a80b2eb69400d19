//! Harness for the integration tests: starts the real `rmq-namesrv` binary on
//! a loopback port with its files in a private directory, waits for the boot
//! line, and kills it when dropped. Plus request builders and raw-socket
//! helpers for byte-exact checks.

#![allow(dead_code)] // each test module uses a different part

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use rmq_protocol::{
    body_crc32, DataVersion, Dialect, JavaJson, RegisterBrokerBody, TopicConfig,
    TopicConfigSerializeWrapper,
};
use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::{frame, RemotingCommand, RequestCode, ResponseCode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long any single request may take in these tests.
pub const TIMEOUT: Duration = Duration::from_secs(5);

static NEXT_DIR: AtomicU32 = AtomicU32::new(0);

/// A private directory, removed on drop.
#[derive(Debug)]
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new() -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "waymark-it-{}-{}",
            std::process::id(),
            NEXT_DIR.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running NameServer process.
#[derive(Debug)]
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
    pub boot_line: String,
    /// The HTTP port, when it listens.
    pub http: Option<SocketAddr>,
}

impl Server {
    /// Starts a server in `dir` with extra `--set key=value` options.
    pub fn start(dir: &TempDir, sets: &[(&str, &str)]) -> Server {
        Server::start_with_env(dir, sets, &[])
    }

    /// As [`Server::start`], with environment variables.
    pub fn start_with_env(dir: &TempDir, sets: &[(&str, &str)], env: &[(&str, &str)]) -> Server {
        let mut args = vec!["--listen".to_string(), "127.0.0.1:0".to_string()];
        // Never the operator's default port: tests run side by side.
        args.extend([
            "--set".to_string(),
            "httpListenAddr=127.0.0.1:0".to_string(),
        ]);
        let kv = format!("kvConfigPath={}", dir.path("kvConfig.json").display());
        let store = format!(
            "configStorePath={}",
            dir.path("namesrv.properties").display()
        );
        for set in [kv, store]
            .into_iter()
            .chain(sets.iter().map(|(k, v)| format!("{k}={v}")))
        {
            args.push("--set".into());
            args.push(set);
        }
        Server::spawn(dir, &args, env)
    }

    /// Runs the binary on loopback with `sets` (`--set key=value`, HOME =
    /// `dir`), which must stop its start; returns what it wrote to stderr.
    pub fn refused_start(dir: &TempDir, sets: &[(&str, &str)]) -> String {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rmq-namesrv"));
        cmd.args(["--listen", "127.0.0.1:0"]);
        for (key, value) in sets {
            cmd.arg("--set").arg(format!("{key}={value}"));
        }
        let output = cmd
            .env("HOME", &dir.0)
            .stdin(Stdio::null())
            .output()
            .expect("run rmq-namesrv");
        assert!(!output.status.success(), "started with {sets:?}");
        String::from_utf8_lossy(&output.stderr).into_owned()
    }

    /// Starts the binary with exactly `args` (HOME = `dir`) and waits for boot.
    pub fn spawn(dir: &TempDir, args: &[String], env: &[(&str, &str)]) -> Server {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rmq-namesrv"));
        cmd.args(args);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.path("server.log"))
            .unwrap();
        cmd.env("RUST_LOG", "info")
            .env("HOME", &dir.0)
            .env_remove("ROCKETMQ_SERIALIZE_TYPE")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log);
        let mut child = cmd.spawn().expect("spawn rmq-namesrv");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let boot_line = loop {
            match rx.recv_timeout(Duration::from_secs(10)) {
                Ok(line) if line.contains("The Name Server boot success") => break line,
                Ok(_) => continue,
                Err(_) => {
                    let _ = child.kill();
                    let log = std::fs::read_to_string(dir.path("server.log")).unwrap_or_default();
                    panic!("rmq-namesrv did not boot; log:\n{log}");
                }
            }
        };
        let addr = boot_line
            .rsplit("address ")
            .next()
            .and_then(|a| a.trim().parse().ok())
            .unwrap_or_else(|| panic!("no address in {boot_line:?}"));
        // The HTTP line follows the boot line(s) at once when the port listens.
        let mut http = None;
        while let Ok(line) = rx.recv_timeout(Duration::from_millis(500)) {
            if let Some(url) = line.strip_prefix("Waymark HTTP listening on http://") {
                http = Some(url.trim().parse().expect("HTTP address"));
                break;
            }
        }
        Server {
            child,
            addr,
            boot_line,
            http,
        }
    }

    /// A client connection.
    pub async fn client(&self) -> RpcClient {
        RpcClient::connect(self.addr, ClientConfig::default())
            .await
            .expect("connect to rmq-namesrv")
    }

    /// Sends one request on a fresh connection and returns the response.
    pub async fn call(&self, request: RemotingCommand) -> RemotingCommand {
        self.client()
            .await
            .invoke(request, TIMEOUT)
            .await
            .expect("response")
    }

    /// Kills the process and waits for it.
    pub fn stop(mut self) {
        self.kill();
    }

    /// Stops the process with SIGTERM, as a service manager does, and
    /// returns once it has exited (killed after `within`).
    pub fn terminate(mut self, within: Duration) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill -TERM {pid}");
        let deadline = std::time::Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "rmq-namesrv did not exit within {within:?} of SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The process's resident memory (VmRSS), in bytes.
    pub fn rss_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the server's /proc status");
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kb| kb * 1024)
            .expect("VmRSS in /proc status")
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A request with ext fields.
/// A node of NameServer cluster `cluster_id` (gossip on an ephemeral port,
/// 100 ms rounds) with `sets`; the first of a cluster has no `seeds`.
pub fn cluster_node(
    dir: &TempDir,
    cluster_id: &str,
    seeds: Option<&str>,
    sets: &[(&str, &str)],
) -> Server {
    let mut all = vec![
        ("clusterGossipAddr", "127.0.0.1:0"),
        ("clusterId", cluster_id),
        ("clusterGossipIntervalMillis", "100"),
    ];
    if let Some(seeds) = seeds {
        all.push(("clusterSeeds", seeds));
    }
    all.extend_from_slice(sets);
    Server::start(dir, &all)
}

pub fn request(code: RequestCode, ext: &[(&str, &str)]) -> RemotingCommand {
    ext.iter()
        .fold(RemotingCommand::request(code, 1), |r, (k, v)| {
            r.with_ext(*k, *v)
        })
}

/// A REGISTER_BROKER request as a 5.x broker sends it (JSON body, CRC set).
#[derive(Debug, Clone)]
pub struct Register {
    pub cluster: String,
    pub name: String,
    pub addr: String,
    pub ha: String,
    pub id: i64,
    pub topics: Vec<TopicConfig>,
    pub version: DataVersion,
    pub extra: Vec<(String, String)>,
}

impl Register {
    pub fn new(name: &str, addr: &str, id: i64, topics: &[&str]) -> Register {
        Register {
            cluster: "DefaultCluster".into(),
            name: name.into(),
            addr: addr.into(),
            ha: "127.0.0.1:10912".into(),
            id,
            topics: topics.iter().map(|t| TopicConfig::new(*t)).collect(),
            version: DataVersion::new(1, 0, 100),
            extra: Vec::new(),
        }
    }

    pub fn ext(mut self, key: &str, value: &str) -> Register {
        self.extra.push((key.into(), value.into()));
        self
    }

    pub fn wrapper(&self) -> TopicConfigSerializeWrapper {
        TopicConfigSerializeWrapper {
            data_version: self.version,
            topic_config_table: self
                .topics
                .iter()
                .map(|t| (t.topic_name.clone(), t.clone()))
                .collect(),
            ..TopicConfigSerializeWrapper::default()
        }
    }

    pub fn body(&self) -> RegisterBrokerBody {
        RegisterBrokerBody {
            filter_server_list: Some(Vec::new()),
            topic_config_serialize_wrapper: self.wrapper(),
        }
    }

    /// The request with `body` (its CRC computed) instead of the JSON body.
    pub fn request_with(&self, body: Vec<u8>) -> RemotingCommand {
        let crc = body_crc32(&body).to_string();
        let id = self.id.to_string();
        let mut req = request(
            RequestCode::RegisterBroker,
            &[
                ("brokerName", &self.name),
                ("brokerAddr", &self.addr),
                ("clusterName", &self.cluster),
                ("haServerAddr", &self.ha),
                ("brokerId", &id),
                ("enableActingMaster", "false"),
                ("compressed", "false"),
                ("bodyCrc32", &crc),
            ],
        );
        for (k, v) in &self.extra {
            req = req.with_ext(k.clone(), v.clone());
        }
        req.with_body(body)
    }

    pub fn request(&self) -> RemotingCommand {
        self.request_with(self.body().to_json(Dialect::Default))
    }

    /// QUERY_DATA_VERSION for this broker as a Java broker sends it, asking
    /// whether `version` is what the NameServer holds.
    pub fn query_data_version(&self, version: DataVersion) -> RemotingCommand {
        let id = self.id.to_string();
        request(
            RequestCode::QueryDataVersion,
            &[
                ("brokerName", &self.name),
                ("brokerAddr", &self.addr),
                ("clusterName", &self.cluster),
                ("brokerId", &id),
            ],
        )
        .with_body(version.to_json(Dialect::Default))
    }
}

/// Asserts the response code, showing the remark on failure.
#[track_caller]
pub fn assert_code(response: &RemotingCommand, code: ResponseCode) {
    assert_eq!(
        response.response_code(),
        code,
        "remark: {:?}",
        response.remark
    );
}

/// The body as UTF-8 text ("" when absent).
pub fn body_text(response: &RemotingCommand) -> String {
    String::from_utf8(response.body.as_deref().unwrap_or_default().to_vec()).unwrap()
}

/// The frame Java sends for a JSON header text and a body.
pub fn json_frame(header: &str, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&((4 + header.len() + body.len()) as u32).to_be_bytes());
    out.extend_from_slice(&(header.len() as u32).to_be_bytes()); // type byte 0 = JSON
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(body);
    out
}

/// A raw connection for byte-level checks.
pub struct Raw(pub TcpStream);

impl Raw {
    pub async fn connect(addr: SocketAddr) -> Raw {
        Raw(TcpStream::connect(addr).await.unwrap())
    }

    pub async fn send(&mut self, bytes: &[u8]) {
        self.0.write_all(bytes).await.unwrap();
    }

    pub async fn send_command(&mut self, command: &RemotingCommand) {
        let bytes = frame::encode_to_bytes(command);
        self.send(&bytes).await;
    }

    /// The next whole frame's bytes, prefix included; `None` on EOF, a reset,
    /// or nothing within `wait`.
    pub async fn read_frame(&mut self, wait: Duration) -> Option<Vec<u8>> {
        let read = async {
            let mut len = [0u8; 4];
            self.0.read_exact(&mut len).await.ok()?;
            let mut rest = vec![0u8; u32::from_be_bytes(len) as usize];
            self.0.read_exact(&mut rest).await.ok()?;
            let mut frame = len.to_vec();
            frame.extend_from_slice(&rest);
            Some(frame)
        };
        tokio::time::timeout(wait, read).await.ok().flatten()
    }

    /// The next frame decoded.
    pub async fn read_command(&mut self, wait: Duration) -> Option<RemotingCommand> {
        let bytes = self.read_frame(wait).await?;
        Some(frame::decode(Bytes::from(bytes)).expect("a valid frame"))
    }

    /// True once the server has closed the connection (EOF or reset) within `wait`.
    pub async fn closed_by_peer(&mut self, wait: Duration) -> bool {
        let mut buf = BytesMut::with_capacity(64);
        matches!(
            tokio::time::timeout(wait, self.0.read_buf(&mut buf)).await,
            Ok(Ok(0)) | Ok(Err(_))
        )
    }
}

/// Polls `check` every 50 ms until it holds or `within` passes.
pub async fn eventually<F, Fut>(within: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if check().await {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// GET_ROUTEINFO_BY_TOPIC.
pub fn route_request(topic: &str) -> RemotingCommand {
    request(RequestCode::GetRouteInfoByTopic, &[("topic", topic)])
}

/// Reads a file or "" if missing.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}
