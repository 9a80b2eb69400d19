//! Shared pieces of the rmq-admin tests: real `rmq-namesrv` processes on
//! 127.0.0.1:0, brokers registered by sending REGISTER_BROKER ourselves, and
//! running the built `rmq-admin` binary.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, OnceLock};
use std::time::Duration;

use rmq_protocol::headers::RegisterBrokerRequestHeader;
use rmq_protocol::{
    body_crc32, BodyFlavor, DataVersion, RegisterBrokerBody, TopicConfig,
    TopicConfigSerializeWrapper,
};
use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};

/// The `rmq-namesrv` binary next to this test's target directory, built
/// (same target directory and profile) if it is not there.
fn namesrv_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable path");
        let profile_dir = exe
            .parent()
            .and_then(|deps| deps.parent())
            .expect("target/<profile>");
        let bin = profile_dir.join(format!("rmq-namesrv{}", std::env::consts::EXE_SUFFIX));
        if !bin.exists() {
            let target_dir = profile_dir.parent().expect("target dir");
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
            let mut build = Command::new(cargo);
            build
                .args(["build", "-p", "rmq-namesrv", "--target-dir"])
                .arg(target_dir)
                .current_dir(env!("CARGO_MANIFEST_DIR"));
            if profile_dir
                .file_name()
                .is_some_and(|name| name == "release")
            {
                build.arg("--release");
            }
            let status = build.status().expect("run cargo build -p rmq-namesrv");
            assert!(status.success(), "cargo build -p rmq-namesrv failed");
        }
        bin
    })
    .clone()
}

/// A running `rmq-namesrv` with its own KV and config files; killed on drop.
pub struct NameServer {
    child: Child,
    /// `127.0.0.1:<port>`.
    pub addr: String,
    dir: PathBuf,
}

impl NameServer {
    /// Starts one and waits for `The Name Server boot success`.
    pub fn start() -> NameServer {
        static SEQ: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "rmq-admin-test-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let mut child = Command::new(namesrv_bin())
            .arg("--listen")
            .arg("127.0.0.1:0")
            .arg("--set")
            .arg(format!("kvConfigPath={}", dir.join("kv.json").display()))
            .arg("--set")
            .arg(format!(
                "configStorePath={}",
                dir.join("ns.properties").display()
            ))
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn rmq-namesrv");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let _ = tx.send(line);
            }
        });
        let addr = loop {
            let line = rx
                .recv_timeout(Duration::from_secs(20))
                .expect("rmq-namesrv did not report boot success");
            if line.contains("The Name Server boot success") {
                let addr = line
                    .rsplit("address ")
                    .next()
                    .expect("address in boot line");
                break addr.trim().to_owned();
            }
        };
        NameServer { child, addr, dir }
    }
}

impl Drop for NameServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One broker registration: `topics` are `(name, queues, perm)`.
#[derive(Debug, Clone)]
pub struct Broker<'a> {
    pub cluster: &'a str,
    pub name: &'a str,
    pub id: i64,
    pub addr: &'a str,
    pub topics: &'a [(&'a str, i32, i32)],
}

/// Registered brokers. The NameServer drops a broker when its connection
/// closes, so the connections live as long as this value.
pub struct Brokers {
    runtime: tokio::runtime::Runtime,
    connections: Vec<RpcClient>,
}

impl Brokers {
    pub fn new() -> Brokers {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        Brokers {
            runtime,
            connections: Vec::new(),
        }
    }

    /// Sends REGISTER_BROKER (JSON body, 5.x style, bodyCrc32 set) to `namesrv`.
    pub fn register(&mut self, namesrv: &str, broker: &Broker<'_>) {
        let topic_config_table: BTreeMap<String, TopicConfig> = broker
            .topics
            .iter()
            .map(|&(name, queues, perm)| {
                let config = TopicConfig {
                    read_queue_nums: queues,
                    write_queue_nums: queues,
                    perm,
                    ..TopicConfig::new(name)
                };
                (name.to_owned(), config)
            })
            .collect();
        let body = RegisterBrokerBody {
            filter_server_list: Some(Vec::new()),
            topic_config_serialize_wrapper: TopicConfigSerializeWrapper {
                data_version: DataVersion::new(1, 0, 1_700_000_000_000),
                topic_config_table,
                ..Default::default()
            },
        }
        .to_json_flavor(BodyFlavor::V5);
        let (host, port) = broker.addr.rsplit_once(':').expect("broker host:port");
        let port: u16 = port.parse().expect("broker port");
        let header = RegisterBrokerRequestHeader {
            broker_name: broker.name.to_owned(),
            broker_addr: broker.addr.to_owned(),
            cluster_name: broker.cluster.to_owned(),
            ha_server_addr: format!("{host}:{}", port + 1),
            broker_id: broker.id,
            enable_acting_master: Some(false),
            body_crc32: body_crc32(&body),
            ..Default::default()
        };
        let request = RemotingCommand::request(RequestCode::RegisterBroker, 0)
            .with_header(&header)
            .with_body(body);
        let namesrv = namesrv.to_owned();
        let client = self.runtime.block_on(async move {
            let client = RpcClient::connect(namesrv.as_str(), ClientConfig::default())
                .await
                .expect("connect to rmq-namesrv");
            let response = client
                .invoke(request, Duration::from_secs(5))
                .await
                .expect("REGISTER_BROKER response");
            assert_eq!(
                response.response_code(),
                ResponseCode::Success,
                "REGISTER_BROKER failed: {:?}",
                response.remark
            );
            client
        });
        self.connections.push(client);
    }
}

/// What one `rmq-admin` run produced.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Standard output as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }

    /// Standard output split into rows of whitespace-separated cells.
    pub fn rows(&self) -> Vec<Vec<String>> {
        self.stdout
            .lines()
            .map(|line| line.split_whitespace().map(str::to_owned).collect())
            .collect()
    }

    /// True if some stdout row is exactly `cells`.
    pub fn has_row(&self, cells: &[&str]) -> bool {
        self.rows().iter().any(|row| row == cells)
    }
}

/// Runs `rmq-admin` with `args` (NAMESRV_ADDR removed from the environment).
pub fn admin(args: &[&str]) -> Run {
    admin_env(args, &[])
}

/// Runs `rmq-admin` with `args` and extra environment variables.
pub fn admin_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rmq-admin"));
    command.args(args).env_remove("NAMESRV_ADDR");
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("run rmq-admin");
    Run {
        code: output.status.code().expect("rmq-admin exited by signal"),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// An address nothing listens on (connection refused).
pub fn dead_addr() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("local addr");
    drop(listener);
    addr.to_string()
}

/// A server that accepts connections and never answers; lives until the
/// test process ends.
pub fn silent_addr() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("local addr").to_string();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    addr
}

/// The usual two-group cluster: broker-a (master and slave) and broker-b.
/// Every broker registers at least two topics: like Java, the NameServer
/// refuses a first registration with exactly one topic (it takes it for a
/// single-topic registration racing ahead of the full one).
pub const BROKER_A0: Broker<'static> = Broker {
    cluster: "DefaultCluster",
    name: "broker-a",
    id: 0,
    addr: "127.0.0.1:10911",
    topics: &[("TopicTest", 4, 6), ("TopicOrder", 8, 6)],
};
pub const BROKER_A1: Broker<'static> = Broker {
    id: 1,
    addr: "127.0.0.1:10921",
    ..BROKER_A0
};
pub const BROKER_B0: Broker<'static> = Broker {
    cluster: "DefaultCluster",
    name: "broker-b",
    id: 0,
    addr: "127.0.0.1:10931",
    topics: &[("TopicTest", 4, 6), ("SELF_TEST_TOPIC", 1, 6)],
};
