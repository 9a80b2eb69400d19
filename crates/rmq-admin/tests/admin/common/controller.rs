//! Broker sets in real `rmq-controller` processes, built by speaking the
//! broker side of the controller protocol from the test, as a 5.5 broker
//! does: GET_NEXT_BROKER_ID, APPLY_BROKER_ID and REGISTER on the leader,
//! BROKER_HEARTBEAT to every node over a connection of its own, ELECT and
//! ALTER_SYNC_STATE_SET as the master would.

use std::time::{Duration, Instant};

use rmq_protocol::headers::{
    AlterSyncStateSetRequestHeader, ApplyBrokerIdRequestHeader, BrokerHeartbeatRequestHeader,
    ElectMasterRequestHeader, GetMetaDataResponseHeader, GetNextBrokerIdRequestHeader,
    GetNextBrokerIdResponseHeader, RegisterBrokerToControllerRequestHeader,
};
use rmq_protocol::{BrokerNames, BrokerReplicasInfo, Dialect, JavaJson, SyncStateSet};
use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode, ToExtFields};

const CLUSTER: &str = "DefaultCluster";

/// How long a heartbeat keeps a replica alive: longer than any test, so a
/// replica dies only when its connections close.
const HEARTBEAT_TIMEOUT_MS: i64 = 120_000;

/// One replica: its controller id, its (refusing) address, and its
/// heartbeat connections, one per controller node; the controller takes it
/// for dead once they close.
pub struct Replica {
    pub name: String,
    pub id: i64,
    pub addr: String,
    heartbeats: Vec<RpcClient>,
}

/// The broker sets of one controller group.
pub struct BrokerSets {
    runtime: tokio::runtime::Runtime,
    nodes: Vec<String>,
    pub replicas: Vec<Replica>,
}

impl BrokerSets {
    /// For the group whose nodes listen on `nodes`.
    pub fn new(nodes: &[&str]) -> BrokerSets {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        BrokerSets {
            runtime,
            nodes: nodes.iter().map(|n| n.to_string()).collect(),
            replicas: Vec::new(),
        }
    }

    /// The node that says it is the serving leader, once one does.
    pub fn leader(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            for node in &self.nodes {
                let request = RemotingCommand::request(RequestCode::ControllerGetMetadataInfo, 0);
                let Ok(response) = self.try_call(node, request) else {
                    continue;
                };
                let header: GetMetaDataResponseHeader = response.header().expect("metadata");
                if header.is_leader {
                    return node.clone();
                }
            }
            assert!(
                Instant::now() < deadline,
                "no serving leader among {:?}",
                self.nodes
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A replica of `name` joins: an id from the leader, applied and
    /// registered, then one heartbeat to every node. Returns its id.
    pub fn join(&mut self, name: &str, addr: &str) -> i64 {
        let leader = self.leader();
        let next = self.call(
            &leader,
            request(
                RequestCode::ControllerGetNextBrokerId,
                &GetNextBrokerIdRequestHeader {
                    cluster_name: CLUSTER.into(),
                    broker_name: name.into(),
                },
            ),
        );
        let next: GetNextBrokerIdResponseHeader = next.header().expect("next id header");
        let id = next.next_broker_id.expect("nextBrokerId");
        let applied = self.call(
            &leader,
            request(
                RequestCode::ControllerApplyBrokerId,
                &ApplyBrokerIdRequestHeader {
                    cluster_name: CLUSTER.into(),
                    broker_name: name.into(),
                    applied_broker_id: id,
                    register_check_code: format!("{addr};1700000000000"),
                },
            ),
        );
        assert_success(&applied, "APPLY_BROKER_ID");
        let registered = self.call(
            &leader,
            request(
                RequestCode::ControllerRegisterBroker,
                &RegisterBrokerToControllerRequestHeader {
                    cluster_name: CLUSTER.into(),
                    broker_name: name.into(),
                    broker_id: id,
                    broker_address: addr.into(),
                    invoke_time: 0,
                },
            ),
        );
        assert_success(&registered, "CONTROLLER_REGISTER_BROKER");
        let heartbeat = request(
            RequestCode::BrokerHeartbeat,
            &BrokerHeartbeatRequestHeader {
                cluster_name: CLUSTER.into(),
                broker_addr: addr.into(),
                broker_name: name.into(),
                broker_id: Some(id),
                epoch: Some(0),
                max_offset: Some(0),
                confirm_offset: Some(0),
                heartbeat_timeout_mills: Some(HEARTBEAT_TIMEOUT_MS),
                election_priority: None,
            },
        );
        let heartbeats = self
            .nodes
            .iter()
            .map(|node| {
                let node = node.clone();
                let heartbeat = heartbeat.clone();
                self.runtime.block_on(async move {
                    let client = RpcClient::connect(node.as_str(), ClientConfig::default())
                        .await
                        .expect("connect to rmq-controller");
                    let response = client
                        .invoke(heartbeat, Duration::from_secs(5))
                        .await
                        .expect("BROKER_HEARTBEAT response");
                    assert_success(&response, "BROKER_HEARTBEAT");
                    client
                })
            })
            .collect();
        self.replicas.push(Replica {
            name: name.to_owned(),
            id,
            addr: addr.to_owned(),
            heartbeats,
        });
        id
    }

    /// The replica's own election request (first master of a set).
    pub fn elect_as_broker(&self, name: &str, id: i64) -> RemotingCommand {
        let leader = self.leader();
        self.call(
            &leader,
            request(
                RequestCode::ControllerElectMaster,
                &ElectMasterRequestHeader {
                    cluster_name: Some(CLUSTER.into()),
                    broker_name: Some(name.into()),
                    broker_id: Some(id),
                    designate_elect: Some(false),
                    invoke_time: None,
                },
            ),
        )
    }

    /// The master widens (or shrinks) the SSS, as after a slave caught up.
    pub fn alter_sync_state_set(
        &self,
        name: &str,
        master: i64,
        master_epoch: i32,
        set: &[i64],
        set_epoch: i32,
    ) {
        let leader = self.leader();
        let body = SyncStateSet {
            sync_state_set: set.iter().copied().collect(),
            sync_state_set_epoch: set_epoch,
        };
        let response = self.call(
            &leader,
            request(
                RequestCode::ControllerAlterSyncStateSet,
                &AlterSyncStateSetRequestHeader {
                    broker_name: name.into(),
                    master_broker_id: master,
                    master_epoch,
                    invoke_time: 0,
                },
            )
            .with_body(body.to_json(Dialect::Default)),
        );
        assert_success(&response, "CONTROLLER_ALTER_SYNC_STATE_SET");
    }

    /// Closes the replica's heartbeat connections and waits until the
    /// leader reports it dead.
    pub fn kill(&mut self, name: &str, id: i64) {
        let replica = self
            .replicas
            .iter_mut()
            .find(|r| r.name == name && r.id == id)
            .expect("a replica that joined");
        for client in replica.heartbeats.drain(..) {
            client.close();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.alive(name, id) != Some(false) {
            assert!(Instant::now() < deadline, "{name} {id} still alive");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Whether the leader takes the replica for alive (`None`: unknown).
    pub fn alive(&self, name: &str, id: i64) -> Option<bool> {
        let leader = self.leader();
        let body = BrokerNames(vec![name.to_owned()]).to_json(Dialect::Default);
        let mut command =
            RemotingCommand::request(RequestCode::ControllerGetSyncStateData, 0).with_body(body);
        command.version = BROKER_VERSION;
        let response = self.call(&leader, command);
        assert_success(&response, "CONTROLLER_GET_SYNC_STATE_DATA");
        let info = BrokerReplicasInfo::from_json(response.body.as_deref().unwrap_or_default())
            .expect("BrokerReplicasInfo");
        let set = info.replicas_info_table.get(name)?;
        set.in_sync_replicas
            .iter()
            .chain(&set.not_in_sync_replicas)
            .find(|r| r.broker_id == id)
            .map(|r| r.alive)
    }

    fn call(&self, node: &str, request: RemotingCommand) -> RemotingCommand {
        self.try_call(node, request)
            .unwrap_or_else(|e| panic!("no answer from {node}: {e}"))
    }

    fn try_call(&self, node: &str, request: RemotingCommand) -> Result<RemotingCommand, String> {
        let node = node.to_owned();
        self.runtime.block_on(async move {
            let client = RpcClient::connect(node.as_str(), ClientConfig::default())
                .await
                .map_err(|e| e.to_string())?;
            let response = client
                .invoke(request, Duration::from_secs(5))
                .await
                .map_err(|e| e.to_string());
            client.close();
            response
        })
    }
}

/// The request version of a 5.5.1 broker (the controller refuses brokers
/// before 5.1.1).
const BROKER_VERSION: i32 = 515;

fn request(code: RequestCode, header: &dyn ToExtFields) -> RemotingCommand {
    let mut command = RemotingCommand::request(code, 0);
    command.version = BROKER_VERSION;
    header.to_ext_fields(command.ext_fields.get_or_insert_with(Default::default));
    command
}

fn assert_success(response: &RemotingCommand, what: &str) {
    assert_eq!(
        response.response_code(),
        ResponseCode::Success,
        "{what} failed: {} {:?}",
        response.code,
        response.remark
    );
}
