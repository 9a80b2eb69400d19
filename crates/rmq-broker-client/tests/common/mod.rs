//! Test harness: the real `rmq-namesrv` binary as a child process, and a
//! few NameServer queries (route, cluster info, KV) spoken over real bytes.
//!
//! The binary is found next to the test executable's target directory
//! (`target/debug/rmq-namesrv`) and built with `cargo build -p rmq-namesrv`
//! if it is missing.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use rmq_broker_client::{numbered_topics, BrokerConfig, NameServerList, Registrar, TopicTable};
use rmq_protocol::headers::{GetRouteInfoRequestHeader, PutKvConfigRequestHeader};
use rmq_protocol::{ClusterInfo, JavaJson, TopicRouteData};
use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};

static BUILD: Mutex<()> = Mutex::new(());

/// `target/<profile>/rmq-namesrv`, built if absent.
pub fn namesrv_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test> → target/<profile>
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("test executable lives in target/<profile>/deps");
    let binary = profile_dir.join(format!("rmq-namesrv{}", std::env::consts::EXE_SUFFIX));
    let _guard = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    if !binary.exists() {
        let target_dir = profile_dir.parent().expect("target dir");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-p", "rmq-namesrv"])
            .env("CARGO_TARGET_DIR", target_dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo build -p rmq-namesrv");
        assert!(status.success(), "cargo build -p rmq-namesrv failed");
    }
    binary
}

/// A running `rmq-namesrv`; killed on drop.
pub struct Namesrv {
    child: Option<Child>,
    pub addr: String,
    dir: PathBuf,
    extra: Vec<String>,
}

impl Namesrv {
    /// Starts one on a free port with `extra` `--set KEY=VALUE` options.
    pub fn start(extra: &[&str]) -> Namesrv {
        let dir = std::env::temp_dir().join(format!(
            "rmq-broker-client-test-{}-{}",
            std::process::id(),
            fastrand::u64(..)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let mut ns = Namesrv {
            child: None,
            addr: String::new(),
            dir,
            extra: extra.iter().map(|s| s.to_string()).collect(),
        };
        ns.spawn("127.0.0.1:0");
        ns
    }

    fn spawn(&mut self, listen: &str) {
        let mut command = Command::new(namesrv_binary());
        command
            .arg("--listen")
            .arg(listen)
            .arg("--set")
            .arg(format!(
                "kvConfigPath={}",
                self.dir.join("kv.json").display()
            ))
            .arg("--set")
            .arg(format!(
                "configStorePath={}",
                self.dir.join("ns.properties").display()
            ));
        for option in &self.extra {
            command.arg("--set").arg(option);
        }
        let mut child = command
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start rmq-namesrv");
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let line = loop {
            let line = lines
                .next()
                .expect("rmq-namesrv exited before booting")
                .unwrap();
            if line.contains("The Name Server boot success") {
                break line;
            }
        };
        self.addr = line
            .rsplit("address ")
            .next()
            .expect("boot line names the address")
            .trim()
            .to_owned();
        self.child = Some(child);
    }

    /// Kills it (the port is then free).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same address, with an empty route table.
    pub fn restart(&mut self) {
        self.stop();
        let addr = self.addr.clone();
        self.spawn(&addr);
    }
}

impl Drop for Namesrv {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn client(addr: &str) -> RpcClient {
    RpcClient::connect(addr, ClientConfig::default())
        .await
        .expect("connect to the name server")
}

const TIMEOUT: Duration = Duration::from_secs(5);

/// GET_ROUTEINFO_BY_TOPIC; `None` for TOPIC_NOT_EXIST.
pub async fn route(addr: &str, topic: &str) -> Option<TopicRouteData> {
    let request = RemotingCommand::request(RequestCode::GetRouteInfoByTopic, 0).with_header(
        &GetRouteInfoRequestHeader {
            topic: topic.into(),
            ..Default::default()
        },
    );
    let response = client(addr).await.invoke(request, TIMEOUT).await.unwrap();
    match response.response_code() {
        ResponseCode::Success => Some(TopicRouteData::from_json(&response.body.unwrap()).unwrap()),
        ResponseCode::TopicNotExist => None,
        other => panic!("route query failed: {other:?} {:?}", response.remark),
    }
}

/// GET_BROKER_CLUSTER_INFO.
pub async fn cluster_info(addr: &str) -> ClusterInfo {
    let request = RemotingCommand::request(RequestCode::GetBrokerClusterInfo, 0);
    let response = client(addr).await.invoke(request, TIMEOUT).await.unwrap();
    ClusterInfo::from_json(&response.body.unwrap()).unwrap()
}

/// PUT_KV_CONFIG.
pub async fn put_kv(addr: &str, namespace: &str, key: &str, value: &str) {
    let request = RemotingCommand::request(RequestCode::PutKvConfig, 0).with_header(
        &PutKvConfigRequestHeader {
            namespace: namespace.into(),
            key: key.into(),
            value: Some(value.into()),
        },
    );
    let response = client(addr).await.invoke(request, TIMEOUT).await.unwrap();
    assert_eq!(response.response_code(), ResponseCode::Success);
}

/// Polls `check` every 50 ms until it is true or `limit` passes.
pub async fn eventually<F, Fut>(limit: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + limit;
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

/// A master `name` at a made-up address with `topics` topics `<name>-t<i>`.
pub fn master(name: &str, port: u16) -> BrokerConfig {
    BrokerConfig::new("TestCluster", name, format!("127.0.0.1:{port}"))
}

/// A registrar for `config` with `topics` numbered topics (prefix `topic`).
pub fn registrar(config: BrokerConfig, prefix: &str, topics: usize, addrs: &[&str]) -> Registrar {
    let table = TopicTable::with_topics(
        numbered_topics(prefix, topics, 4),
        rmq_broker_client::wall_ms(),
    );
    let namesrv = NameServerList::from_static(&addrs.join(";")).unwrap();
    Registrar::new(config, table, namesrv).unwrap()
}
