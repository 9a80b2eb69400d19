//! Shared pieces of the rmq-admin tests: real `rmq-namesrv` processes on
//! 127.0.0.1:0 (`rmq-testkit`), brokers registered by sending REGISTER_BROKER ourselves, and
//! running the built `rmq-admin` binary; broker sets in real `rmq-controller`
//! processes ([`controller`]).

#![allow(dead_code)]

pub mod controller;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::process::Command;
use std::time::Duration;

use rmq_protocol::headers::RegisterBrokerRequestHeader;
use rmq_protocol::{
    body_crc32, BodyFlavor, DataVersion, RegisterBrokerBody, TopicConfig,
    TopicConfigSerializeWrapper,
};
use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};

/// A running Waymark `rmq-namesrv` (`rmq-testkit`) with its own KV and
/// config files; killed on drop. Always Waymark's, whatever
/// `WAYMARK_JAVA_NAMESRV_CLASSPATH` says: these tests check `rmq-admin`'s
/// output for Waymark's answers, remarks included.
pub struct NameServer {
    /// `127.0.0.1:<port>`.
    pub addr: String,
    _process: rmq_testkit::Namesrv,
}

impl NameServer {
    /// Starts one and waits for `The Name Server boot success`.
    pub fn start() -> NameServer {
        NameServer::start_with(&[])
    }

    /// Starts one with `options` (`key=value`, Java's names).
    pub fn start_with(options: &[&str]) -> NameServer {
        let process = rmq_testkit::Namesrv::waymark(options);
        NameServer {
            addr: process.addr.clone(),
            _process: process,
        }
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

/// Runs `rmq-admin` with `args`, none of the variables it reads in its
/// environment (so the test's own environment cannot sign or redirect it).
pub fn admin(args: &[&str]) -> Run {
    admin_env(args, &[])
}

/// Runs `rmq-admin` with `args` and `env` as the only variables it reads.
pub fn admin_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rmq-admin"));
    command.args(args);
    for read in [
        "NAMESRV_ADDR",
        "ROCKETMQ_HOME",
        "ROCKETMQ_ACCESS_KEY",
        "ROCKETMQ_SECRET_KEY",
    ] {
        command.env_remove(read);
    }
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

/// An address that refuses connections (held for the test process, so no
/// other process can start listening there).
pub fn dead_addr() -> String {
    rmq_testkit::ports::refused_addr().to_string()
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
