//! Test support: a real `rmq-namesrv` process per test, and a minimal
//! "broker" that registers topics over its own connection (closing the
//! connection unregisters it), plus the admin requests the tests need.
//!
//! Kept small on purpose; `rmq-broker-client` is the real registrar.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{bail, Context};
use rmq_protocol::headers::{
    PutKvConfigRequestHeader, RegisterBrokerRequestHeader, WipeWritePermOfBrokerRequestHeader,
};
use rmq_protocol::{body_crc32, DataVersion, Dialect, JavaJson, RegisterBrokerBody, TopicConfig};
use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};

/// A running NameServer; killed when dropped.
pub struct Namesrv {
    child: Child,
    /// `127.0.0.1:port`.
    pub addr: String,
    _dir: TempDir,
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `target/debug/rmq-namesrv` next to this test executable, built on demand
/// with the same target directory.
fn namesrv_binary() -> anyhow::Result<PathBuf> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().map_err(|e| e.to_string())?;
            // target/<profile>/deps/<test> → target/<profile>
            let profile_dir = exe
                .parent()
                .and_then(|deps| deps.parent())
                .ok_or("test executable has no target dir")?
                .to_path_buf();
            let binary = profile_dir.join("rmq-namesrv");
            if binary.exists() {
                return Ok(binary);
            }
            let target_dir = profile_dir.parent().ok_or("no target dir")?;
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let status = Command::new(cargo)
                .args(["build", "-p", "rmq-namesrv"])
                .env("CARGO_TARGET_DIR", target_dir)
                .status()
                .map_err(|e| format!("cannot run cargo: {e}"))?;
            if !status.success() || !binary.exists() {
                return Err(format!("cargo build -p rmq-namesrv failed: {status}"));
            }
            Ok(binary)
        })
        .clone()
        .map_err(anyhow::Error::msg)
}

impl Namesrv {
    /// Starts a NameServer on an ephemeral port with extra `--set` options.
    pub fn start(options: &[&str]) -> anyhow::Result<Namesrv> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "rmq-route-client-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir)?;
        let dir = TempDir(dir);
        let mut command = Command::new(namesrv_binary()?);
        command
            .args(["--listen", "127.0.0.1:0"])
            .arg("--set")
            .arg(format!("kvConfigPath={}", dir.0.join("kv.json").display()))
            .arg("--set")
            .arg(format!(
                "configStorePath={}",
                dir.0.join("ns.properties").display()
            ));
        for option in options {
            command.args(["--set", option]);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("spawning rmq-namesrv")?;
        let stdout = child.stdout.take().context("no stdout")?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if line.contains("The Name Server boot success") {
                    let _ = tx.send(line);
                }
            }
        });
        let line = match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                bail!("rmq-namesrv did not report boot success");
            }
        };
        let addr = line
            .rsplit(' ')
            .next()
            .context("no address in boot line")?
            .to_owned();
        Ok(Namesrv {
            child,
            addr,
            _dir: dir,
        })
    }

    /// Kills the process (SIGKILL) and waits for it.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Namesrv {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One topic a fake broker serves: `(name, read, write, perm)`.
pub type Topic<'a> = (&'a str, i32, i32, i32);

/// A registered broker: the connection its registration came over. Dropping
/// or closing it makes the NameServer unregister the broker.
pub struct Broker {
    pub conn: RpcClient,
    pub name: String,
}

/// Registers `name` (id 0, cluster `DefaultCluster`) at `addr` with `topics`
/// on NameServer `ns`, over a new connection.
pub async fn register(
    ns: &str,
    name: &str,
    addr: &str,
    topics: &[Topic<'_>],
) -> anyhow::Result<Broker> {
    let conn = RpcClient::connect(ns, ClientConfig::default()).await?;
    register_on(&conn, name, addr, 1, topics).await?;
    Ok(Broker {
        conn,
        name: name.to_owned(),
    })
}

/// Registers over an existing connection with data version `counter`.
pub async fn register_on(
    conn: &RpcClient,
    name: &str,
    addr: &str,
    counter: i64,
    topics: &[Topic<'_>],
) -> anyhow::Result<()> {
    let mut body = RegisterBrokerBody::default();
    let wrapper = &mut body.topic_config_serialize_wrapper;
    wrapper.data_version = DataVersion::new(counter, 0, 1_700_000_000_000 + counter);
    // As real brokers do, also register the topic named after the broker:
    // a first registration with exactly one topic is refused (Java's guard
    // against an incremental registration racing ahead).
    let own: Topic<'_> = (name, 1, 1, 7);
    for (topic, read, write, perm) in topics.iter().chain([&own]) {
        let mut config = TopicConfig::new(*topic);
        (config.read_queue_nums, config.write_queue_nums, config.perm) = (*read, *write, *perm);
        wrapper
            .topic_config_table
            .insert((*topic).to_owned(), config);
    }
    let body = body.to_json(Dialect::Default);
    let header = RegisterBrokerRequestHeader {
        broker_name: name.to_owned(),
        broker_addr: addr.to_owned(),
        cluster_name: "DefaultCluster".into(),
        ha_server_addr: addr.to_owned(),
        broker_id: 0,
        enable_acting_master: Some(false),
        body_crc32: body_crc32(&body),
        ..RegisterBrokerRequestHeader::default()
    };
    let request = RemotingCommand::request(RequestCode::RegisterBroker, 0)
        .with_header(&header)
        .with_body(body);
    expect_success(conn.invoke(request, Duration::from_secs(5)).await?)
}

/// WIPE_WRITE_PERM_OF_BROKER (205) for `broker_name`.
pub async fn wipe_write_perm(ns: &str, broker_name: &str) -> anyhow::Result<()> {
    let header = WipeWritePermOfBrokerRequestHeader {
        broker_name: broker_name.to_owned(),
    };
    admin(
        ns,
        RemotingCommand::request(RequestCode::WipeWritePermOfBroker, 0).with_header(&header),
    )
    .await
}

/// PUT_KV_CONFIG of an order configuration (`ORDER_TOPIC_CONFIG` namespace).
pub async fn put_order_conf(ns: &str, topic: &str, conf: &str) -> anyhow::Result<()> {
    let header = PutKvConfigRequestHeader {
        namespace: "ORDER_TOPIC_CONFIG".into(),
        key: topic.to_owned(),
        value: Some(conf.to_owned()),
    };
    admin(
        ns,
        RemotingCommand::request(RequestCode::PutKvConfig, 0).with_header(&header),
    )
    .await
}

async fn admin(ns: &str, request: RemotingCommand) -> anyhow::Result<()> {
    let conn = RpcClient::connect(ns, ClientConfig::default()).await?;
    let response = conn.invoke(request, Duration::from_secs(5)).await?;
    conn.close();
    expect_success(response)
}

fn expect_success(response: RemotingCommand) -> anyhow::Result<()> {
    if response.response_code() != ResponseCode::Success {
        bail!("code {} remark {:?}", response.code, response.remark);
    }
    Ok(())
}

/// A client config for `addrs` with short timeouts and `poll` refresh.
pub fn config(addrs: &[&str], poll: Duration) -> rmq_route_client::RouteClientConfig {
    let mut config = rmq_route_client::RouteClientConfig {
        namesrv_addrs: addrs.iter().map(|a| a.to_string()).collect(),
        poll_name_server_interval: poll,
        mq_client_api_timeout: Duration::from_secs(2),
        ..Default::default()
    };
    config.channel.connect_timeout = Duration::from_secs(1);
    config
}

/// `broker:queueId` names of a queue list.
pub fn names<'a>(
    queues: impl IntoIterator<Item = &'a rmq_route_client::MessageQueue>,
) -> Vec<String> {
    queues
        .into_iter()
        .map(|q| format!("{}:{}", q.broker_name, q.queue_id))
        .collect()
}
