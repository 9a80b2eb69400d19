//! Raft peer traffic over the controller's own remoting port, as Java's
//! DLedger shares its port with the controller requests: three
//! Waymark-private request codes (outside Java's tables, so a Java peer
//! that receives one answers REQUEST_CODE_NOT_SUPPORTED) whose bodies are
//! openraft's messages as JSON.
//!
//! | code | request body | response body (SUCCESS) |
//! |---|---|---|
//! | 60001 [`RAFT_VOTE`] | `VoteRequest` | `Result<VoteResponse, RaftError>` |
//! | 60002 [`RAFT_APPEND_ENTRIES`] | `AppendEntriesRequest` | `Result<AppendEntriesResponse, RaftError>` |
//! | 60003 [`RAFT_FULL_SNAPSHOT`] | [`SnapshotTransfer`] | `Result<SnapshotResponse, Fatal>` |
//!
//! One connection per peer, reused; a failed connection is dropped and
//! opened again on the next call.

use std::future::Future;
use std::io::Cursor;
use std::time::Duration;

use openraft::error::{
    Fatal, NetworkError, RPCError, RaftError, RemoteError, ReplicationClosed, StreamingError,
    Unreachable,
};
use openraft::network::{RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, VoteRequest, VoteResponse,
};
use openraft::{BasicNode, Snapshot, SnapshotMeta, Vote};
use rmq_transport::tls::TlsClient;
use rmq_transport::{ClientConfig, ClientError, RpcClient};
use rmq_wire::{RemotingCommand, ResponseCode};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::{NodeId, Raft, TypeConfig};

/// VOTE between controller nodes.
pub const RAFT_VOTE: i32 = 60_001;
/// APPEND_ENTRIES (and heartbeats) from the Raft leader.
pub const RAFT_APPEND_ENTRIES: i32 = 60_002;
/// A whole snapshot from the Raft leader to a lagging node.
pub const RAFT_FULL_SNAPSHOT: i32 = 60_003;

/// The body of [`RAFT_FULL_SNAPSHOT`].
#[derive(Debug, Serialize, Deserialize)]
pub struct SnapshotTransfer {
    /// The leader's vote.
    pub vote: Vote<NodeId>,
    /// What the snapshot covers.
    pub meta: SnapshotMeta<NodeId, BasicNode>,
    /// The snapshot's data (the state machine as JSON text).
    pub data: String,
}

/// Makes one [`PeerClient`] per peer.
#[derive(Debug, Clone, Default)]
pub struct PeerNetwork {
    /// TLS towards the peers (`None`: plain): a peer in
    /// `tls.server.mode=enforcing` takes nothing else.
    pub tls: Option<TlsClient>,
}

impl RaftNetworkFactory<TypeConfig> for PeerNetwork {
    type Network = PeerClient;

    async fn new_client(&mut self, target: NodeId, node: &BasicNode) -> PeerClient {
        PeerClient {
            target,
            addr: node.addr.clone(),
            client: None,
            tls: self.tls.clone(),
        }
    }
}

/// The connection to one peer.
#[derive(Debug)]
pub struct PeerClient {
    target: NodeId,
    addr: String,
    client: Option<RpcClient>,
    tls: Option<TlsClient>,
}

/// Why a call to a peer did not return its answer.
#[derive(Debug, thiserror::Error)]
enum CallError {
    /// Not connected, or the connection broke: back off.
    #[error("{0}")]
    Unreachable(ClientError),
    /// Connected but no answer in time.
    #[error("{0}")]
    Timeout(ClientError),
    /// The peer answered something other than SUCCESS with a decodable body.
    #[error("{0}")]
    Protocol(String),
}

impl PeerClient {
    async fn call<Req: Serialize, Resp: DeserializeOwned>(
        &mut self,
        code: i32,
        request: &Req,
        timeout: Duration,
    ) -> Result<Resp, CallError> {
        let body = serde_json::to_vec(request)
            .map_err(|e| CallError::Protocol(format!("cannot encode the request: {e}")))?;
        let client = match &self.client {
            Some(client) if !client.is_closed() => client.clone(),
            _ => {
                let config = ClientConfig {
                    connect_timeout: timeout.min(Duration::from_secs(3)),
                    tls: self.tls.clone(),
                    ..ClientConfig::default()
                };
                let client = RpcClient::connect(self.addr.as_str(), config)
                    .await
                    .map_err(CallError::Unreachable)?;
                self.client = Some(client.clone());
                client
            }
        };
        let mut command = RemotingCommand::request(code, 0);
        command.body = Some(body.into());
        let response = client.invoke(command, timeout).await.map_err(|e| {
            if e.is_timeout() {
                CallError::Timeout(e)
            } else {
                self.client = None;
                CallError::Unreachable(e)
            }
        })?;
        if response.code != i32::from(ResponseCode::Success) {
            return Err(CallError::Protocol(format!(
                "peer {} answered code {}: {}",
                self.addr,
                response.code,
                response.remark.unwrap_or_default()
            )));
        }
        let body = response.body.unwrap_or_default();
        serde_json::from_slice(&body).map_err(|e| {
            CallError::Protocol(format!("cannot decode the answer of {}: {e}", self.addr))
        })
    }

    fn rpc_error<E: std::error::Error>(&self, error: CallError) -> RPCError<NodeId, BasicNode, E> {
        match error {
            CallError::Unreachable(e) => RPCError::Unreachable(Unreachable::new(&e)),
            CallError::Timeout(e) => RPCError::Network(NetworkError::new(&e)),
            CallError::Protocol(text) => {
                RPCError::Network(NetworkError::new(&std::io::Error::other(text)))
            }
        }
    }

    async fn rpc<Req: Serialize, Resp: DeserializeOwned>(
        &mut self,
        code: i32,
        request: &Req,
        option: &RPCOption,
    ) -> Result<Resp, RPCError<NodeId, BasicNode, RaftError<NodeId>>> {
        let answer: Result<Resp, RaftError<NodeId>> = self
            .call(code, request, option.hard_ttl())
            .await
            .map_err(|e| self.rpc_error(e))?;
        answer.map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e)))
    }
}

impl RaftNetwork<TypeConfig> for PeerClient {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<NodeId>, RPCError<NodeId, BasicNode, RaftError<NodeId>>> {
        self.rpc(RAFT_APPEND_ENTRIES, &rpc, &option).await
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<NodeId>,
        option: RPCOption,
    ) -> Result<VoteResponse<NodeId>, RPCError<NodeId, BasicNode, RaftError<NodeId>>> {
        self.rpc(RAFT_VOTE, &rpc, &option).await
    }

    async fn full_snapshot(
        &mut self,
        vote: Vote<NodeId>,
        snapshot: Snapshot<TypeConfig>,
        cancel: impl Future<Output = ReplicationClosed> + Send + 'static,
        option: RPCOption,
    ) -> Result<SnapshotResponse<NodeId>, StreamingError<TypeConfig, Fatal<NodeId>>> {
        let data = String::from_utf8(snapshot.snapshot.into_inner()).map_err(|e| {
            StreamingError::Network(NetworkError::new(&std::io::Error::other(format!(
                "the snapshot is not UTF-8 JSON: {e}"
            ))))
        })?;
        let transfer = SnapshotTransfer {
            vote,
            meta: snapshot.meta,
            data,
        };
        let call = self.call::<_, Result<SnapshotResponse<NodeId>, Fatal<NodeId>>>(
            RAFT_FULL_SNAPSHOT,
            &transfer,
            option.hard_ttl(),
        );
        let answer = tokio::select! {
            closed = cancel => return Err(StreamingError::Closed(closed)),
            answer = call => answer,
        };
        match answer {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(fatal)) => Err(StreamingError::RemoteError(RemoteError::new(
                self.target,
                fatal,
            ))),
            Err(CallError::Unreachable(e)) => {
                Err(StreamingError::Unreachable(Unreachable::new(&e)))
            }
            Err(CallError::Timeout(e)) => Err(StreamingError::Network(NetworkError::new(&e))),
            Err(CallError::Protocol(text)) => Err(StreamingError::Network(NetworkError::new(
                &std::io::Error::other(text),
            ))),
        }
    }
}

/// Serves one peer request on this node: the answer's body, or an error
/// text for a request that does not decode.
pub async fn serve(raft: &Raft, code: i32, body: &[u8]) -> Result<Vec<u8>, String> {
    fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, String> {
        serde_json::from_slice(body).map_err(|e| format!("cannot decode the Raft message: {e}"))
    }
    fn encode<T: Serialize>(answer: &T) -> Result<Vec<u8>, String> {
        serde_json::to_vec(answer).map_err(|e| format!("cannot encode the Raft answer: {e}"))
    }
    match code {
        RAFT_VOTE => encode(&raft.vote(decode(body)?).await),
        RAFT_APPEND_ENTRIES => encode(&raft.append_entries(decode(body)?).await),
        RAFT_FULL_SNAPSHOT => {
            let transfer: SnapshotTransfer = decode(body)?;
            let snapshot = Snapshot {
                meta: transfer.meta,
                snapshot: Box::new(Cursor::new(transfer.data.into_bytes())),
            };
            encode(&raft.install_full_snapshot(transfer.vote, snapshot).await)
        }
        other => Err(format!("{other} is not a Raft request code")),
    }
}
