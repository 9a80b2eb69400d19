//! The controller as a transport service: one `match` from request code to
//! where it is served — this node (heartbeats, metadata, configuration),
//! the leader (every decision), or the Raft peer protocol.

use std::collections::HashSet;
use std::net::{IpAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmq_auth::policy::requirement;
use rmq_auth::{Requirement, CONTROLLER_REQUIREMENTS};
use rmq_protocol::headers::GetMetaDataResponseHeader;
use rmq_transport::auth::{Guard, LogLimit, Verdict};
use rmq_transport::{ConnectionInfo, DisconnectReason, Reply, Service};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};

use crate::core::request::{self, Serving};
use crate::node::config_requests;
use crate::node::raft::network::{self, RAFT_APPEND_ENTRIES, RAFT_FULL_SNAPSHOT, RAFT_VOTE};
use crate::node::ControllerNode;
use crate::Answer;

/// Serves one controller node.
#[derive(Debug, Clone)]
pub struct ControllerService {
    node: Arc<ControllerNode>,
    guard: Arc<Guard>,
    /// The addresses of the group's peers (`controllerDLegerPeers`): with
    /// authentication on, Raft traffic is taken from them only.
    peer_ips: Arc<HashSet<IpAddr>>,
    refused_peers: Arc<LogLimit>,
}

impl ControllerService {
    /// Serves `node`, authentication off.
    pub fn new(node: Arc<ControllerNode>) -> ControllerService {
        let peer_ips = node
            .peers()
            .iter()
            .filter_map(|peer| peer.addr.to_socket_addrs().ok())
            .flatten()
            .map(|addr| addr.ip())
            .collect();
        ControllerService {
            node,
            guard: Arc::new(Guard::disabled(CONTROLLER_REQUIREMENTS)),
            peer_ips: Arc::new(peer_ips),
            refused_peers: Arc::new(LogLimit::new(20, Duration::from_secs(10))),
        }
    }

    /// Checks requests with `guard` (the controller's requirement table).
    pub fn with_guard(self, guard: Arc<Guard>) -> ControllerService {
        ControllerService { guard, ..self }
    }

    /// Raft traffic from a host that is not one of the group's peers, when
    /// authentication is on: the peers' protocol carries no credentials
    /// (Java's DLedger neither), so where it comes from is what is checked.
    fn foreign_raft_peer(&self, conn: &ConnectionInfo) -> bool {
        if !self.guard.is_enabled() {
            return false;
        }
        let ip = rmq_auth::address::canonical(conn.peer().ip());
        if self.peer_ips.contains(&ip) {
            return false;
        }
        if let Some(left_out) = self.refused_peers.admit(Instant::now()) {
            tracing::warn!(peer = %conn.peer(), left_out, "Raft request refused: the sender is not one of controllerDLegerPeers");
        }
        true
    }

    /// What `request` needs: the table's, except that an operator's
    /// CONTROLLER_ELECT_MASTER (`designateElect=true`) needs an admin.
    fn requirement(request: &RemotingCommand) -> Requirement {
        let designated = request.code == i32::from(RequestCode::ControllerElectMaster)
            && request
                .ext("designateElect")
                .is_some_and(|value| value.trim().eq_ignore_ascii_case("true"));
        if designated {
            Requirement::Admin
        } else {
            requirement(CONTROLLER_REQUIREMENTS, request.code)
        }
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
        let started = std::time::Instant::now();
        let code = request.request_code();
        match self.reply(conn, request) {
            Reply::Ready(response) => {
                let answered = response.as_ref().map(RemotingCommand::response_code);
                let metrics = &self.node.metrics().requests;
                metrics.observe(code, answered, started.elapsed());
                Reply::Ready(response)
            }
            Reply::Pending(future) => {
                let node = self.node.clone();
                Reply::later(async move {
                    let response = future.await;
                    let answered = response.as_ref().map(RemotingCommand::response_code);
                    let metrics = &node.metrics().requests;
                    metrics.observe(code, answered, started.elapsed());
                    response
                })
            }
        }
    }

    fn on_disconnect(&self, conn: &ConnectionInfo, reason: DisconnectReason) {
        self.disconnected(conn, reason);
    }
}

impl ControllerService {
    /// The answer to one request.
    fn reply(&self, conn: &ConnectionInfo, mut request: RemotingCommand) -> Reply {
        let code = request.code;
        if matches!(code, RAFT_VOTE | RAFT_APPEND_ENTRIES | RAFT_FULL_SNAPSHOT) {
            if self.foreign_raft_peer(conn) {
                let answer = Answer::error(
                    ResponseCode::NoPermission,
                    format!("Raft requests are taken from controllerDLegerPeers only; {} is not one (request code {code})", conn.peer().ip()),
                );
                return Reply::ready(answer.into_response(&request));
            }
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
        if let Verdict::Refuse(refusal) =
            self.guard
                .check_as(conn, &request, ControllerService::requirement(&request))
        {
            return Reply::ready(refusal);
        }
        let code = request.request_code();
        match request::serving(code) {
            Serving::AnyNode => {
                let answer = match code {
                    RequestCode::BrokerHeartbeat => {
                        let now = self.node.now();
                        let recorded = request::heartbeat(
                            &mut self.node.live(),
                            &mut request,
                            Some(conn.id().0),
                            now,
                        );
                        // Brokers send their heartbeats one-way: nobody reads
                        // an answer, so none is built.
                        if request.is_oneway() {
                            return Reply::none();
                        }
                        request::heartbeat_answer(recorded)
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
                    let answer = node.serve_leader_request(request.clone()).await;
                    Some(answer.into_response(&request))
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

    /// A connection closed: the replicas that heartbeat on it are gone.
    fn disconnected(&self, conn: &ConnectionInfo, _reason: DisconnectReason) {
        let conn = conn.id().0;
        self.node
            .step(|driver, env| driver.connection_closed(conn, env));
    }
}
