//! Controller groups in this test process: every node on a loopback
//! listener bound before its configuration is written (port 0, so nothing
//! is guessed), its Raft store in a temporary directory that outlives a
//! restart, and a client that speaks the controller protocol.

#![allow(dead_code)] // each test file uses some of these

use std::sync::Arc;
use std::time::Duration;

use rmq_controller::{ControllerConfig, ControllerNode};
use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::{ExtFields, RemotingCommand, RequestCode, SerializeType};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// One node: its address, and while it runs, its server task.
pub struct Node {
    pub id: String,
    pub addr: String,
    pub config: ControllerConfig,
    pub store: tempfile::TempDir,
    pub running: Option<(
        Arc<ControllerNode>,
        JoinHandle<()>,
        tokio::sync::oneshot::Sender<()>,
    )>,
}

impl Node {
    /// Stops the node (its server and Raft); the store stays.
    pub async fn stop(&mut self) {
        if let Some((_, task, stop)) = self.running.take() {
            let _ = stop.send(());
            let _ = task.await;
        }
    }

    /// Starts it again on the same address with the same store.
    pub async fn start(&mut self) {
        assert!(self.running.is_none(), "{} is running", self.id);
        let listener = bind_again(&self.addr).await;
        self.running = Some(launch(listener, self.config.clone(), self.store.path()).await);
    }

    pub fn node(&self) -> &Arc<ControllerNode> {
        &self.running.as_ref().expect("running").0
    }
}

/// A group of `n` nodes `n0…`, each configured with `options`.
pub async fn group(n: usize, options: &[(&str, &str)]) -> Vec<Node> {
    let mut listeners = Vec::new();
    for _ in 0..n {
        listeners.push(TcpListener::bind("127.0.0.1:0").await.expect("bind"));
    }
    let addrs: Vec<String> = listeners
        .iter()
        .map(|l| l.local_addr().unwrap().to_string())
        .collect();
    let peers: String = addrs
        .iter()
        .enumerate()
        .map(|(i, a)| format!("n{i}-{a}"))
        .collect::<Vec<_>>()
        .join(";");
    let mut nodes = Vec::new();
    for (i, listener) in listeners.into_iter().enumerate() {
        let store = tempfile::tempdir().expect("temp dir");
        let mut config = ControllerConfig::defaults(store.path(), None);
        for (key, value) in [
            ("controllerDLegerGroup", "group1"),
            ("controllerDLegerPeers", peers.as_str()),
            ("controllerDLegerSelfId", &format!("n{i}")),
            (
                "configStorePath",
                &store.path().join("controller.properties").to_string_lossy(),
            ),
            ("scanNotActiveBrokerInterval", "200"),
            ("scanInactiveMasterInterval", "200"),
        ] {
            assert!(config.set(key, value));
        }
        for (key, value) in options {
            assert!(config.set(key, value), "{key}");
        }
        let running = launch(listener, config.clone(), store.path()).await;
        nodes.push(Node {
            id: format!("n{i}"),
            addr: addrs[i].clone(),
            config,
            store,
            running: Some(running),
        });
    }
    nodes
}

async fn launch(
    listener: TcpListener,
    config: ControllerConfig,
    store: &std::path::Path,
) -> (
    Arc<ControllerNode>,
    JoinHandle<()>,
    tokio::sync::oneshot::Sender<()>,
) {
    let node = ControllerNode::start(config, &store.join("raft"))
        .await
        .expect("the node starts");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = node.clone();
    let task = tokio::spawn(async move {
        let _ = rmq_controller::server::run(
            listener,
            server,
            SerializeType::Json,
            &Default::default(),
            Default::default(),
            async {
                let _ = stopped.await;
            },
        )
        .await;
    });
    (node, task, stop)
}

/// Binds the address a stopped node had, retrying while the old socket is
/// released.
async fn bind_again(addr: &str) -> TcpListener {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        match TcpListener::bind(addr).await {
            Ok(listener) => return listener,
            Err(error) if tokio::time::Instant::now() < deadline => {
                let _ = error;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(error) => panic!("cannot bind {addr} again: {error}"),
        }
    }
}

/// The node that serves as leader, once one does (within `limit`).
pub async fn leader(nodes: &[Node], limit: Duration) -> usize {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        for (i, node) in nodes.iter().enumerate() {
            if let Some((n, _, _)) = &node.running {
                if n.serving_since().is_some() {
                    return i;
                }
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no leader within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A client of one node.
pub async fn client(addr: &str) -> RpcClient {
    RpcClient::connect(addr, ClientConfig::default())
        .await
        .expect("connect")
}

/// A request as a 5.5.1 broker sends it (version 515).
pub fn request(code: RequestCode, ext: &[(&str, &str)], body: Option<&str>) -> RemotingCommand {
    let mut command = RemotingCommand::request(code, 0);
    command.version = 515;
    command.ext_fields = Some(
        ext.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<ExtFields>(),
    );
    command.body = body.map(|b| b.as_bytes().to_vec().into());
    command
}

/// Sends `request` and returns the response.
pub async fn call(client: &RpcClient, request: RemotingCommand) -> RemotingCommand {
    client
        .invoke(request, Duration::from_secs(5))
        .await
        .expect("an answer")
}

/// The response's ext field `key`.
pub fn ext<'a>(response: &'a RemotingCommand, key: &str) -> Option<&'a str> {
    response.ext_fields.as_ref()?.get(key).map(String::as_str)
}

/// A broker replica's requests: id, registration, heartbeat, election.
pub struct Replica {
    pub name: &'static str,
    pub addr: String,
    pub id: i64,
}

impl Replica {
    pub async fn join(client: &RpcClient, name: &'static str, addr: &str) -> Replica {
        let next = call(
            client,
            request(
                RequestCode::ControllerGetNextBrokerId,
                &[("clusterName", "DefaultCluster"), ("brokerName", name)],
                None,
            ),
        )
        .await;
        let id: i64 = ext(&next, "nextBrokerId")
            .expect("nextBrokerId")
            .parse()
            .unwrap();
        let code = format!("{addr};1700000000000");
        let applied = call(
            client,
            request(
                RequestCode::ControllerApplyBrokerId,
                &[
                    ("clusterName", "DefaultCluster"),
                    ("brokerName", name),
                    ("appliedBrokerId", &id.to_string()),
                    ("registerCheckCode", &code),
                ],
                None,
            ),
        )
        .await;
        assert_eq!(applied.code, 0, "{applied:?}");
        let registered = call(
            client,
            request(
                RequestCode::ControllerRegisterBroker,
                &[
                    ("clusterName", "DefaultCluster"),
                    ("brokerName", name),
                    ("brokerId", &id.to_string()),
                    ("brokerAddress", addr),
                ],
                None,
            ),
        )
        .await;
        assert_eq!(registered.code, 0, "{registered:?}");
        Replica {
            name,
            addr: addr.to_owned(),
            id,
        }
    }

    pub fn heartbeat(&self, timeout_ms: u64, max_offset: i64) -> RemotingCommand {
        request(
            RequestCode::BrokerHeartbeat,
            &[
                ("clusterName", "DefaultCluster"),
                ("brokerAddr", &self.addr),
                ("brokerName", self.name),
                ("brokerId", &self.id.to_string()),
                ("epoch", "0"),
                ("maxOffset", &max_offset.to_string()),
                ("confirmOffset", &max_offset.to_string()),
                ("heartbeatTimeoutMills", &timeout_ms.to_string()),
            ],
            None,
        )
    }

    pub fn elect(&self) -> RemotingCommand {
        request(
            RequestCode::ControllerElectMaster,
            &[
                ("clusterName", "DefaultCluster"),
                ("brokerName", self.name),
                ("brokerId", &self.id.to_string()),
                ("designateElect", "false"),
            ],
            None,
        )
    }
}
