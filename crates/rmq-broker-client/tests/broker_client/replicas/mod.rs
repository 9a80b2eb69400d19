//! Test harness of the controller-mode tests: broker replicas in one test
//! process, each a `Registrar` on a fast schedule driven by a
//! `ControllerAgent`, with a NOTIFY listener on its own loopback address
//! and its identity files in a temporary directory that outlives a stop;
//! the real `rmq-controller` and `rmq-namesrv` processes (`rmq-testkit`);
//! and the few raw controller requests the tests check state with.
#![allow(dead_code)] // each test file uses some of these

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmq_broker_client::controller::{serve_notices, IdOrigin, CONTROLLER_REQUEST_VERSION};
use rmq_broker_client::{
    numbered_topics, wall_ms, AgentEvent, BrokerConfig, ControllerAgent, ControllerModeConfig,
    NameServerList, RegisterReport, Registrar, ReplicaRole, RoleChange, Running, Schedule,
    TopicTable,
};
use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::{ExtFields, RemotingCommand, RequestCode};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use rmq_testkit::{eventually, Controller, Namesrv};

/// The cluster of every replica here.
pub const CLUSTER: &str = "DefaultCluster";
/// How long a test waits for what should happen within a few seconds.
pub const WAIT: Duration = Duration::from_secs(20);
/// `controllerHeartBeatTimeoutMills` of the test replicas.
pub const HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(2);

/// Controller-mode options with short periods.
pub fn fast_config(controllers: &str, dir: &Path) -> ControllerModeConfig {
    let mut config = ControllerModeConfig::new(controllers)
        .unwrap()
        .with_identity_path(dir.join("brokerIdentity"));
    config.sync_controller_metadata_period = Duration::from_secs(1);
    config.sync_broker_metadata_period = Duration::from_millis(300);
    config.check_sync_state_set_period = Duration::from_millis(200);
    config.controller_heart_beat_timeout = HEARTBEAT_TIMEOUT;
    config.broker_heartbeat_interval = Duration::from_millis(200);
    config.send_heartbeat_timeout = Duration::from_millis(500);
    config.start_retry_interval = Duration::from_millis(300);
    config
}

/// What one replica's agent reported.
#[derive(Debug, Default)]
pub struct Log {
    pub ids: Vec<(i64, IdOrigin)>,
    pub changes: Vec<RoleChange>,
    pub registrations: Vec<RegisterReport>,
}

/// One replica of broker set `name`; stopping it is a crash (no
/// unregistration, connections closed), starting it again keeps its
/// identity directory and address.
pub struct Replica {
    pub name: String,
    pub addr: String,
    pub dir: PathBuf,
    pub controllers: String,
    pub namesrv: Vec<String>,
    pub config: ControllerModeConfig,
    pub log: Arc<Mutex<Log>>,
    running: Option<Live>,
}

struct Live {
    agent: ControllerAgent,
    schedule: Running,
    notices: (JoinHandle<()>, oneshot::Sender<()>),
    events: JoinHandle<()>,
}

impl Replica {
    /// A replica with its own temporary directory, on a fresh port.
    pub async fn start(name: &str, controllers: &str, namesrv: &[&str]) -> Replica {
        let dir = scratch_dir(name);
        let config = fast_config(controllers, &dir);
        Replica::start_with(name, controllers, namesrv, config).await
    }

    /// The same with `config`.
    pub async fn start_with(
        name: &str,
        controllers: &str,
        namesrv: &[&str],
        config: ControllerModeConfig,
    ) -> Replica {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut replica = Replica::unstarted(name, controllers, namesrv, config, &listener);
        replica.launch(listener);
        replica
    }

    /// A replica not started yet, at the address of `listener`.
    pub fn unstarted(
        name: &str,
        controllers: &str,
        namesrv: &[&str],
        config: ControllerModeConfig,
        listener: &TcpListener,
    ) -> Replica {
        Replica {
            name: name.to_owned(),
            addr: listener.local_addr().unwrap().to_string(),
            dir: config
                .store_path_broker_identity
                .parent()
                .unwrap()
                .to_path_buf(),
            controllers: controllers.to_owned(),
            namesrv: namesrv.iter().map(|a| a.to_string()).collect(),
            config,
            log: Arc::default(),
            running: None,
        }
    }

    /// Starts the registrar, its schedule, the agent and the listener.
    pub fn launch(&mut self, listener: TcpListener) {
        let broker = BrokerConfig::new(CLUSTER, &self.name, &self.addr);
        let topics = TopicTable::with_topics(
            numbered_topics(&format!("{}-t", self.name), 2, 4),
            wall_ms(),
        );
        let list = NameServerList::from_static(&self.namesrv.join(";")).unwrap();
        let registrar = Arc::new(Registrar::new(broker, topics, list).unwrap());
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let agent = ControllerAgent::start(registrar.clone(), self.config.clone(), Some(tx));
        let schedule = Schedule {
            first_register_delay: Duration::from_millis(500),
            register_period: Duration::from_millis(500),
            ..Schedule::java(registrar.config(), None)
        };
        let schedule = rmq_broker_client::spawn(registrar, schedule, None);
        let (stop, stopped) = oneshot::channel::<()>();
        let service = agent.notice_service();
        let notices = tokio::spawn(async move {
            let _ = serve_notices(listener, service, async {
                let _ = stopped.await;
            })
            .await;
        });
        let log = self.log.clone();
        let events = tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                let mut log = log.lock().unwrap();
                match event {
                    AgentEvent::IdObtained {
                        controller_id,
                        origin,
                    } => log.ids.push((controller_id, origin)),
                    AgentEvent::RoleChanged(change) => log.changes.push(change),
                    AgentEvent::Registered(report) => log.registrations.push(report),
                    _ => {}
                }
            }
        });
        self.running = Some(Live {
            agent,
            schedule,
            notices: (notices, stop),
            events,
        });
    }

    /// The agent, while running.
    pub fn agent(&self) -> &ControllerAgent {
        &self.running.as_ref().expect("running").agent
    }

    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    pub fn role(&self) -> ReplicaRole {
        self.agent().role()
    }

    pub fn id(&self) -> Option<i64> {
        self.agent().controller_id()
    }

    /// Stops it as a crash would: no UNREGISTER_BROKER, every connection
    /// closed, the listener gone.
    pub async fn stop(&mut self) {
        let Some(live) = self.running.take() else {
            return;
        };
        let registrar = live.agent.registrar().clone();
        live.agent.stop().await;
        drop(live.schedule);
        registrar.close_connections();
        let (task, stop) = live.notices;
        let _ = stop.send(());
        let _ = task.await;
        live.events.abort();
    }

    /// Starts it again on the same address with the same identity files.
    pub async fn start_again(&mut self) {
        assert!(self.running.is_none());
        let deadline = tokio::time::Instant::now() + WAIT;
        let listener = loop {
            match TcpListener::bind(&self.addr).await {
                Ok(listener) => break listener,
                Err(error) if tokio::time::Instant::now() < deadline => {
                    let _ = error;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(error) => panic!("cannot bind {} again: {error}", self.addr),
            }
        };
        *self.log.lock().unwrap() = Log::default();
        self.launch(listener);
    }

    /// The role changes so far.
    pub fn changes(&self) -> Vec<RoleChange> {
        self.log.lock().unwrap().changes.clone()
    }

    /// The ids obtained so far.
    pub fn ids(&self) -> Vec<(i64, IdOrigin)> {
        self.log.lock().unwrap().ids.clone()
    }

    /// The identity file's content.
    pub fn identity_file(&self) -> String {
        std::fs::read_to_string(self.dir.join("brokerIdentity")).unwrap_or_default()
    }

    /// Whether the temporary file exists.
    pub fn has_temp_file(&self) -> bool {
        self.dir.join("brokerIdentity-temp").exists()
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A fresh temporary directory for one replica's files.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "rmq-broker-client-replica-{name}-{}-{}",
        std::process::id(),
        fastrand::u64(..)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Waits until `check` holds, or fails naming `what`.
pub async fn until(what: &str, limit: Duration, check: impl FnMut() -> bool) {
    let mut check = check;
    assert!(
        eventually(limit, || std::future::ready(check())).await,
        "not within {limit:?}: {what}"
    );
}

/// The replica (index) that is master now, if exactly one claims it.
pub fn master_of(replicas: &[&Replica]) -> Option<usize> {
    let masters: Vec<usize> = replicas
        .iter()
        .enumerate()
        .filter(|(_, r)| r.is_running() && r.role() == ReplicaRole::Master)
        .map(|(i, _)| i)
        .collect();
    (masters.len() == 1).then(|| masters[0])
}

/// `brokerAddrs` of the set in the NameServer's route of `<name>-t0`.
pub async fn route_addrs(ns: &str, name: &str) -> BTreeMap<i64, String> {
    let topic = format!("{name}-t0");
    match rmq_testkit::admin::route(ns, &topic).await {
        Ok(Some(route)) => route
            .broker_datas
            .into_iter()
            .find(|b| b.broker_name == name)
            .map(|b| b.broker_addrs)
            .unwrap_or_default(),
        _ => BTreeMap::new(),
    }
}

/// Waits until the NameServer's route of `name` is exactly `expected`.
pub async fn route_becomes(ns: &str, name: &str, expected: &BTreeMap<i64, String>) {
    let mut last = BTreeMap::new();
    let deadline = tokio::time::Instant::now() + WAIT;
    while tokio::time::Instant::now() < deadline {
        last = route_addrs(ns, name).await;
        if &last == expected {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("route of {name} is {last:?}, expected {expected:?}");
}

/// A controller request as a 5.5.1 broker sends it.
pub fn request(code: RequestCode, ext: &[(&str, &str)]) -> RemotingCommand {
    let mut command = RemotingCommand::request(code, 0);
    command.version = CONTROLLER_REQUEST_VERSION;
    command.ext_fields = Some(
        ext.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<ExtFields>(),
    );
    command
}

/// Sends `request` to `addr` on a new connection.
pub async fn call(addr: &str, request: RemotingCommand) -> RemotingCommand {
    let client = RpcClient::connect(addr, ClientConfig::default())
        .await
        .unwrap();
    let answer = client
        .invoke(request, Duration::from_secs(5))
        .await
        .unwrap();
    client.close();
    answer
}

/// Sends `request` to `addr` until it is answered by a serving leader
/// (a node that has just started answers CONTROLLER_NOT_LEADER for a while).
pub async fn call_leader(addr: &str, request: RemotingCommand) -> RemotingCommand {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let answer = call(addr, request.clone()).await;
        if answer.code != i32::from(rmq_wire::ResponseCode::ControllerNotLeader)
            || tokio::time::Instant::now() >= deadline
        {
            return answer;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// CONTROLLER_GET_NEXT_BROKER_ID of `name`.
pub async fn next_id(controller: &str, name: &str) -> i64 {
    let answer = call_leader(
        controller,
        request(
            RequestCode::ControllerGetNextBrokerId,
            &[("clusterName", CLUSTER), ("brokerName", name)],
        ),
    )
    .await;
    answer.ext("nextBrokerId").unwrap().parse().unwrap()
}

/// CONTROLLER_GET_REPLICA_INFO of `name`: (master id, epoch, SSS body).
pub async fn replica_info(controller: &str, name: &str) -> RemotingCommand {
    call_leader(
        controller,
        request(
            RequestCode::ControllerGetReplicaInfo,
            &[("brokerName", name)],
        ),
    )
    .await
}
