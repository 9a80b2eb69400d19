//! The controller as a transport service: one `match` from request code to
//! where it is served — this node (heartbeats, metadata, configuration),
//! the leader (every decision), or the Raft peer protocol.

use std::sync::Arc;

use rmq_protocol::headers::{ElectMasterRequestHeader, GetMetaDataResponseHeader};
use rmq_transport::{ConnectionInfo, DisconnectReason, Reply, Service};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};

use crate::node::ControllerNode;
use crate::raft::network::{self, RAFT_APPEND_ENTRIES, RAFT_FULL_SNAPSHOT, RAFT_VOTE};
use crate::request::{self, Serving};
use crate::{config_requests, tasks, Answer};

/// Serves one controller node.
#[derive(Debug, Clone)]
pub struct ControllerService {
    node: Arc<ControllerNode>,
}

impl ControllerService {
    /// Serves `node`.
    pub fn new(node: Arc<ControllerNode>) -> ControllerService {
        ControllerService { node }
    }

    fn metadata(&self) -> Answer {
        let node = &self.node;
        let leader = node.leader();
        let peers: String = node
            .peers()
            .iter()
            .map(|p| format!("{}:{};", p.id, p.addr))
            .collect();
        Answer::ok().with_header(&GetMetaDataResponseHeader {
            group: Some(node.group().to_owned()),
            controller_leader_id: leader.map(|p| p.id.clone()),
            controller_leader_address: leader.map(|p| p.addr.clone()),
            is_leader: node.serving_since().is_some(),
            peers: Some(peers),
        })
    }
}

impl Service for ControllerService {
    fn call(&self, conn: &ConnectionInfo, request: RemotingCommand) -> Reply {
        let code = request.code;
        if matches!(code, RAFT_VOTE | RAFT_APPEND_ENTRIES | RAFT_FULL_SNAPSHOT) {
            let node = self.node.clone();
            return Reply::later(async move {
                let body = request.body.as_deref().unwrap_or_default();
                let answer = match network::serve(node.raft(), code, body).await {
                    Ok(body) => Answer {
                        body: Some(body),
                        ..Answer::ok()
                    },
                    Err(problem) => Answer::error(ResponseCode::ControllerInvalidRequest, problem),
                };
                Some(answer.into_response(&request))
            });
        }
        let code = request.request_code();
        match request::serving(code) {
            Serving::AnyNode => {
                let answer = match code {
                    RequestCode::BrokerHeartbeat => {
                        let now = self.node.now();
                        let answer = request::heartbeat(
                            &mut self.node.live(),
                            &request,
                            Some(conn.id().0),
                            now,
                        );
                        // Brokers send their heartbeats one-way: nobody reads
                        // an answer, so none is built.
                        if request.is_oneway() {
                            return Reply::none();
                        }
                        answer
                    }
                    RequestCode::ControllerGetMetadataInfo => self.metadata(),
                    RequestCode::GetControllerConfig => config_requests::get(&self.node),
                    _ => config_requests::update(&self.node, &request),
                };
                Reply::ready(answer.into_response(&request))
            }
            Serving::Leader => {
                let node = self.node.clone();
                Reply::later(async move {
                    let decision = node.serve_leader_request(&request).await;
                    if code == RequestCode::ControllerElectMaster && decision.answer.is_success() {
                        // Java notifies after every successful election: a
                        // broker's own, an operator's and its own.
                        tasks::notify_members(&node, &decision.answer);
                        if let Ok(header) = request.header::<ElectMasterRequestHeader>() {
                            tracing::info!(broker = ?header.broker_name, requested_by = ?header.broker_id, "new master elected");
                        }
                    }
                    Some(decision.answer.into_response(&request))
                })
            }
            Serving::Unsupported => Reply::ready(
                Answer::error(
                    ResponseCode::RequestCodeNotSupported,
                    format!(" request type {} not supported", request.code),
                )
                .into_response(&request),
            ),
        }
    }

    fn on_disconnect(&self, conn: &ConnectionInfo, _reason: DisconnectReason) {
        let gone = self.node.live().disconnected(conn.id().0);
        if gone.is_empty() {
            return;
        }
        let node = self.node.clone();
        tokio::spawn(async move {
            for key in gone {
                tracing::info!(cluster = %key.cluster, broker = %key.broker_name, id = key.broker_id, "broker replica's connection closed");
                tasks::replica_gone(&node, &key).await;
            }
        });
    }
}
