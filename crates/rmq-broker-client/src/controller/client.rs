//! The broker's requests to the controller:
//! finding the leader with CONTROLLER_GET_METADATA_INFO, the typed requests
//! the leader serves, and the one-way heartbeat to every node.
//!
//! One connection per controller address, kept open: the controller ties a
//! replica's liveness to the connection its heartbeats arrive on, and takes
//! the replica for dead when it closes. Every request carries version
//! [`CONTROLLER_REQUEST_VERSION`] (5.5.1). What the answers mean for the
//! broker is [`ReplicaState`](super::ReplicaState)'s business.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use rmq_protocol::headers::{
    AlterSyncStateSetRequestHeader, AlterSyncStateSetResponseHeader, ApplyBrokerIdRequestHeader,
    BrokerHeartbeatRequestHeader, ElectMasterRequestHeader, ElectMasterResponseHeader,
    GetMetaDataResponseHeader, GetNextBrokerIdRequestHeader, GetNextBrokerIdResponseHeader,
    GetReplicaInfoRequestHeader, GetReplicaInfoResponseHeader,
    RegisterBrokerToControllerRequestHeader, RegisterBrokerToControllerResponseHeader,
};
use rmq_protocol::{
    BrokerNames, BrokerReplicasInfo, Dialect, ElectMasterResponseBody, JavaJson, ReplicasInfo,
    SyncStateSet,
};
use rmq_transport::RpcClient;
use rmq_wire::{FromExtFields, RemotingCommand, RequestCode, ResponseCode};

use super::config::{ControllerModeConfig, CONTROLLER_REQUEST_VERSION};
use super::state::RoleDecision;
use crate::error::ControllerError;
use crate::pool::Pool;
use crate::registrar::wall_ms;
use crate::security;

/// Talks to the controller nodes of one broker.
#[derive(Debug)]
pub struct ControllerClient {
    addrs: Vec<String>,
    timeout: Duration,
    pool: Pool,
    leader: Mutex<Option<String>>,
    closed: AtomicBool,
}

impl ControllerClient {
    /// A client of `config.controller_addrs`; connects on first use.
    pub fn new(config: &ControllerModeConfig) -> ControllerClient {
        // Controllers send brokers nothing on these connections (NOTIFY
        // arrives on the broker's own listener): the client config drops
        // anything that comes.
        let client = security::client_config(
            config.request_timeout,
            config.inner_client_authentication_credentials.as_ref(),
            config.tls.as_ref(),
        );
        ControllerClient {
            addrs: config.controller_addrs.clone(),
            timeout: config.request_timeout,
            pool: Pool::new(client),
            leader: Mutex::new(None),
            closed: AtomicBool::new(false),
        }
    }

    /// The configured controller addresses.
    pub fn addrs(&self) -> &[String] {
        &self.addrs
    }

    /// The leader's address as last learnt.
    pub fn leader(&self) -> Option<String> {
        self.leader.lock().clone()
    }

    /// Asks each controller in turn for the leader (CONTROLLER_GET_METADATA_INFO,
    /// which every node answers) until one names it, and remembers it.
    ///
    /// # Errors
    /// [`ControllerError::NoLeader`] when no node named a leader.
    pub async fn refresh_leader(&self) -> Result<String, ControllerError> {
        let mut failures = Vec::new();
        for addr in &self.addrs {
            let request = request(RequestCode::ControllerGetMetadataInfo);
            match self.call(addr, request).await {
                Ok(response) => match response.header::<GetMetaDataResponseHeader>() {
                    Ok(GetMetaDataResponseHeader {
                        controller_leader_address: Some(leader),
                        ..
                    }) if !leader.is_empty() => {
                        *self.leader.lock() = Some(leader.clone());
                        return Ok(leader);
                    }
                    Ok(_) => failures.push(format!("{addr}: no leader")),
                    Err(error) => failures.push(format!("{addr}: {error}")),
                },
                Err(error) => failures.push(format!("{addr}: {error}")),
            }
        }
        *self.leader.lock() = None;
        Err(ControllerError::NoLeader(failures.join("; ")))
    }

    async fn call(
        &self,
        addr: &str,
        request: RemotingCommand,
    ) -> Result<RemotingCommand, ControllerError> {
        let work = async {
            let client = self.connection(addr).await?;
            Ok::<_, ControllerError>(client.invoke(request, self.timeout).await?)
        };
        // Bounds connect plus answer, which the invoke timeout alone does not.
        let limit = self.timeout + self.timeout;
        tokio::time::timeout(limit, work)
            .await
            .unwrap_or_else(|_| Err(ControllerError::Timeout(addr.to_owned(), limit)))
    }

    /// Sends `request` to the leader. A leader that is unreachable or says
    /// CONTROLLER_NOT_LEADER is looked up again and the request sent once
    /// more (Java waits for its 10 s metadata refresh instead).
    async fn call_leader(
        &self,
        request: RemotingCommand,
    ) -> Result<RemotingCommand, ControllerError> {
        let cached = self.leader();
        let leader = match &cached {
            Some(leader) => leader.clone(),
            None => self.refresh_leader().await?,
        };
        let outcome = self.call(&leader, request.clone()).await;
        let stale = match &outcome {
            Ok(response) => response.response_code() == ResponseCode::ControllerNotLeader,
            Err(_) => true,
        };
        if !stale {
            return outcome;
        }
        // Forget it, so that the next request looks again in any case.
        *self.leader.lock() = None;
        if cached.is_none() {
            // Just looked up: asking again at once would get the same answer.
            return outcome;
        }
        let fresh = self.refresh_leader().await?;
        self.call(&fresh, request).await
    }

    /// Sends `request` to the leader and requires one of `accept`.
    async fn expect(
        &self,
        request: RemotingCommand,
        accept: &[ResponseCode],
    ) -> Result<RemotingCommand, ControllerError> {
        let response = self.call_leader(request).await?;
        if accept.contains(&response.response_code()) {
            Ok(response)
        } else {
            Err(ControllerError::Rejected {
                code: response.code,
                remark: response.remark,
            })
        }
    }

    /// CONTROLLER_GET_NEXT_BROKER_ID: the id a new replica should apply for.
    ///
    /// # Errors
    /// Transport failures, a refusal, an answer without the id.
    pub async fn next_broker_id(
        &self,
        cluster: &str,
        broker_name: &str,
    ) -> Result<i64, ControllerError> {
        let request = request(RequestCode::ControllerGetNextBrokerId).with_header(
            &GetNextBrokerIdRequestHeader {
                cluster_name: cluster.to_owned(),
                broker_name: broker_name.to_owned(),
            },
        );
        let response = self.expect(request, &[ResponseCode::Success]).await?;
        header::<GetNextBrokerIdResponseHeader>(&response)?
            .next_broker_id
            .ok_or_else(|| ControllerError::BadResponse("no nextBrokerId".into()))
    }

    /// CONTROLLER_APPLY_BROKER_ID: claims `broker_id` with `check_code`.
    ///
    /// # Errors
    /// Transport failures; [`ControllerError::Rejected`] (2014) when the id
    /// is taken by another check code.
    pub async fn apply_broker_id(
        &self,
        cluster: &str,
        broker_name: &str,
        broker_id: i64,
        check_code: &str,
    ) -> Result<(), ControllerError> {
        let request = request(RequestCode::ControllerApplyBrokerId).with_header(
            &ApplyBrokerIdRequestHeader {
                cluster_name: cluster.to_owned(),
                broker_name: broker_name.to_owned(),
                applied_broker_id: broker_id,
                register_check_code: check_code.to_owned(),
            },
        );
        self.expect(request, &[ResponseCode::Success])
            .await
            .map(drop)
    }

    /// CONTROLLER_REGISTER_BROKER: the set's alive master, if any.
    ///
    /// # Errors
    /// Transport failures, a refusal (2010: unknown id), an unreadable answer.
    pub async fn register(
        &self,
        cluster: &str,
        broker_name: &str,
        broker_id: i64,
        broker_addr: &str,
    ) -> Result<RoleDecision, ControllerError> {
        let request = request(RequestCode::ControllerRegisterBroker).with_header(
            &RegisterBrokerToControllerRequestHeader {
                cluster_name: cluster.to_owned(),
                broker_name: broker_name.to_owned(),
                broker_id,
                broker_address: broker_addr.to_owned(),
                invoke_time: wall_ms(),
            },
        );
        let response = self.expect(request, &[ResponseCode::Success]).await?;
        let h: RegisterBrokerToControllerResponseHeader = header(&response)?;
        let mut set: SyncStateSet = body(&response)?;
        if let Some(epoch) = h.sync_state_set_epoch {
            set.sync_state_set_epoch = epoch;
        }
        Ok(RoleDecision {
            master_id: h.master_broker_id,
            master_addr: h.master_address,
            master_epoch: h.master_epoch.unwrap_or(0),
            sync_state_set: set,
        })
    }

    /// CONTROLLER_ELECT_MASTER, broker trigger: SUCCESS (a new master) and
    /// MASTER_STILL_EXIST (the current one) both name the master.
    ///
    /// # Errors
    /// Transport failures, any other code (2012: this replica cannot be elected).
    pub async fn elect(
        &self,
        cluster: &str,
        broker_name: &str,
        broker_id: i64,
    ) -> Result<RoleDecision, ControllerError> {
        let request =
            request(RequestCode::ControllerElectMaster).with_header(&ElectMasterRequestHeader {
                cluster_name: Some(cluster.to_owned()),
                broker_name: Some(broker_name.to_owned()),
                broker_id: Some(broker_id),
                designate_elect: Some(false),
                invoke_time: Some(wall_ms()),
            });
        let accept = [
            ResponseCode::Success,
            ResponseCode::ControllerMasterStillExist,
        ];
        let response = self.expect(request, &accept).await?;
        let h: ElectMasterResponseHeader = header(&response)?;
        let b: ElectMasterResponseBody = body(&response)?;
        Ok(RoleDecision {
            master_id: h.master_broker_id,
            master_addr: h.master_address,
            master_epoch: h.master_epoch.unwrap_or(0),
            sync_state_set: SyncStateSet {
                sync_state_set: b.sync_state_set,
                sync_state_set_epoch: h.sync_state_set_epoch.unwrap_or(0),
            },
        })
    }

    /// CONTROLLER_GET_REPLICA_INFO: the set's master (alive or not) and SSS.
    ///
    /// # Errors
    /// Transport failures, a refusal (2008: unknown set), an unreadable answer.
    pub async fn replica_info(&self, broker_name: &str) -> Result<RoleDecision, ControllerError> {
        let request = request(RequestCode::ControllerGetReplicaInfo).with_header(
            &GetReplicaInfoRequestHeader {
                broker_name: broker_name.to_owned(),
            },
        );
        let response = self.expect(request, &[ResponseCode::Success]).await?;
        let h: GetReplicaInfoResponseHeader = header(&response)?;
        Ok(RoleDecision {
            master_id: h.master_broker_id,
            master_addr: h.master_address,
            master_epoch: h.master_epoch.unwrap_or(0),
            sync_state_set: body(&response)?,
        })
    }

    /// CONTROLLER_ALTER_SYNC_STATE_SET from the master: `proposal` carries
    /// the set the master wants and the SSS epoch it holds; the answer is
    /// the set with its new epoch.
    ///
    /// # Errors
    /// Transport failures; refusals (2000 stale master epoch, 2001 stale SSS
    /// epoch, 2002 not the master, 2006 a replica not alive, …).
    pub async fn alter_sync_state_set(
        &self,
        broker_name: &str,
        master_id: i64,
        master_epoch: i32,
        proposal: &SyncStateSet,
    ) -> Result<SyncStateSet, ControllerError> {
        let request = request(RequestCode::ControllerAlterSyncStateSet)
            .with_header(&AlterSyncStateSetRequestHeader {
                broker_name: broker_name.to_owned(),
                master_broker_id: master_id,
                master_epoch,
                invoke_time: wall_ms(),
            })
            .with_body(proposal.to_json(Dialect::Default));
        let response = self.expect(request, &[ResponseCode::Success]).await?;
        let mut set: SyncStateSet = body(&response)?;
        let h: AlterSyncStateSetResponseHeader = header(&response)?;
        set.sync_state_set_epoch = set.sync_state_set_epoch.max(h.new_sync_state_set_epoch);
        Ok(set)
    }

    /// CONTROLLER_GET_SYNC_STATE_DATA for one set: its replicas with the
    /// leader's view of their liveness; `None` for a set it does not know.
    ///
    /// # Errors
    /// Transport failures, a refusal, an unreadable answer.
    pub async fn sync_state_data(
        &self,
        broker_name: &str,
    ) -> Result<Option<ReplicasInfo>, ControllerError> {
        let request = request(RequestCode::ControllerGetSyncStateData)
            .with_body(BrokerNames(vec![broker_name.to_owned()]).to_json(Dialect::Default));
        let response = self.expect(request, &[ResponseCode::Success]).await?;
        let mut info: BrokerReplicasInfo = body(&response)?;
        Ok(info.replicas_info_table.remove(broker_name))
    }

    /// One-way BROKER_HEARTBEAT to every controller node (each bounded by
    /// `timeout`, connect included), so that whichever node leads knows this
    /// replica is alive. One entry per address.
    pub async fn heartbeat(
        &self,
        header: &BrokerHeartbeatRequestHeader,
        timeout: Duration,
    ) -> Vec<(String, Result<(), ControllerError>)> {
        let request = request(RequestCode::BrokerHeartbeat).with_header(header);
        let sends = self.addrs.iter().map(|addr| {
            let request = request.clone();
            async move {
                let send = async {
                    self.connection(addr).await?.invoke_oneway(request)?;
                    Ok::<_, ControllerError>(())
                };
                let outcome = tokio::time::timeout(timeout, send)
                    .await
                    .unwrap_or_else(|_| Err(ControllerError::Timeout(addr.clone(), timeout)));
                (addr.clone(), outcome)
            }
        });
        futures::future::join_all(sends).await
    }

    async fn connection(&self, addr: &str) -> Result<RpcClient, ControllerError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(ControllerError::Stopped);
        }
        Ok(self.pool.get(addr).await?)
    }

    /// Closes every controller connection for good: the controller takes
    /// this replica for dead at once (a crash looks the same).
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.pool.close_all();
    }
}

/// A request with the 5.5.1 version stamp.
fn request(code: RequestCode) -> RemotingCommand {
    let mut command = RemotingCommand::request(code, 0);
    command.version = CONTROLLER_REQUEST_VERSION;
    command
}

fn header<H: FromExtFields>(response: &RemotingCommand) -> Result<H, ControllerError> {
    response
        .header()
        .map_err(|e| ControllerError::BadResponse(e.to_string()))
}

/// Decodes the JSON body; an absent one reads as the type's default.
fn body<T: JavaJson + Default>(response: &RemotingCommand) -> Result<T, ControllerError> {
    match response.body.as_deref() {
        None | Some([]) => Ok(T::default()),
        Some(bytes) => T::from_json(bytes).map_err(|e| ControllerError::BadResponse(e.to_string())),
    }
}
