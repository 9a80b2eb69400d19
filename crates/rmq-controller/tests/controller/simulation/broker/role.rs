//! Roles (`ReplicasManager.changeBrokerRole`, `changeToMaster`,
//! `changeToSlave`, its heartbeats and its replica-info sync): a role
//! decision from the
//! controller — a REGISTER or ELECT answer, NOTIFY_BROKER_ROLE_CHANGED, the
//! periodic GET_REPLICA_INFO — is adopted only with a master epoch newer
//! than the one the broker holds. Heartbeats go to every node each second
//! while the broker runs.

use std::collections::BTreeSet;

use rmq_controller::Answer;
use rmq_protocol::headers::{
    BrokerHeartbeatRequestHeader, GetReplicaInfoRequestHeader, GetReplicaInfoResponseHeader,
    NotifyBrokerRoleChangedRequestHeader,
};
use rmq_protocol::{JavaJson, SyncStateSet};
use rmq_wire::{FromExtFields, RemotingCommand, RequestCode, ResponseCode};

use super::{Broker, Call, Phase, Role, CLUSTER};
use crate::simulation::ctx::Ctx;
use crate::simulation::msg::{BrokerTimer, Msg};
use crate::simulation::net::Endpoint;

impl Broker {
    /// `changeToMaster` / `changeToSlave`, by who the master is.
    pub(super) fn change_role(
        &mut self,
        master: i64,
        addr: String,
        epoch: i32,
        sss_epoch: i32,
        sss: BTreeSet<i64>,
    ) {
        if epoch <= self.life.master_epoch {
            return;
        }
        let life = &mut self.life;
        life.master_epoch = epoch;
        life.master_id = Some(master);
        life.slaves.clear();
        if Some(master) == life.id {
            life.role = Role::Master;
            life.master_addr = Some(self.addr.clone());
            life.sss = sss;
            life.sss_epoch = sss_epoch;
            self.disk.log.begin_epoch(epoch);
        } else {
            life.role = Role::Slave;
            life.master_addr = Some(addr);
            life.sss.clear();
        }
    }

    /// NOTIFY_BROKER_ROLE_CHANGED (`changeBrokerRole`).
    pub(super) fn notified(&mut self, cmd: &RemotingCommand) {
        if self.life.id.is_none() {
            return;
        }
        let header: NotifyBrokerRoleChangedRequestHeader = cmd.header().expect("notify header");
        let sss = cmd
            .body
            .as_deref()
            .and_then(|b| SyncStateSet::from_json(b).ok())
            .unwrap_or_default();
        if let (Some(master), Some(epoch)) = (header.master_broker_id, header.master_epoch) {
            let addr = header.master_address.unwrap_or_default();
            let sss_epoch = header.sync_state_set_epoch.unwrap_or_default();
            self.change_role(master, addr, epoch, sss_epoch, sss.sync_state_set);
        }
    }

    /// Every second: BROKER_HEARTBEAT to every node, unless fenced.
    pub(super) fn heartbeat_tick(&mut self, ctx: &mut Ctx) {
        if self.life.phase == Phase::Running {
            self.send_heartbeats(ctx);
        }
        ctx.broker_timer(self.index, self.inc, 1_000, BrokerTimer::Heartbeat);
    }

    /// One BROKER_HEARTBEAT to each node (the network decides which get it).
    pub(super) fn send_heartbeats(&mut self, ctx: &mut Ctx) {
        let Some(id) = self.life.id else { return };
        let header = BrokerHeartbeatRequestHeader {
            cluster_name: CLUSTER.into(),
            broker_addr: self.addr.clone(),
            broker_name: self.set.clone(),
            broker_id: Some(id),
            epoch: Some(self.disk.log.last_epoch()),
            max_offset: Some(self.disk.log.end),
            confirm_offset: Some(self.disk.log.end),
            heartbeat_timeout_mills: Some(ctx.params.heartbeat_timeout as i64),
            election_priority: None,
        };
        let cmd = Self::command(RequestCode::BrokerHeartbeat, &header, None).oneway();
        for node in 0..ctx.params.nodes {
            let msg = Msg::Heartbeat {
                cmd: cmd.clone(),
                conn: self.conn(node),
            };
            ctx.send(self.me(), Endpoint::Node(node), msg);
        }
    }

    /// Every 5 s while running: GET_REPLICA_INFO (`syncReplicaInfo`).
    pub(super) fn sync_tick(&mut self, ctx: &mut Ctx) {
        let waiting = self
            .life
            .calls
            .values()
            .any(|c| matches!(c, Call::ReplicaInfo));
        if !waiting {
            let header = GetReplicaInfoRequestHeader {
                broker_name: self.set.clone(),
            };
            let cmd = Self::command(RequestCode::ControllerGetReplicaInfo, &header, None);
            self.call(ctx, Call::ReplicaInfo, cmd);
        }
        ctx.broker_timer(self.index, self.inc, 5_000, BrokerTimer::SyncReplica);
    }

    /// GET_REPLICA_INFO answered (the periodic replica-info sync).
    pub(super) fn replica_info_answered(&mut self, ctx: &mut Ctx, answer: Answer) {
        if answer.code == ResponseCode::ControllerBrokerMetadataNotExist {
            self.register_again(ctx);
            return;
        }
        if !answer.is_success() {
            return;
        }
        let header = GetReplicaInfoResponseHeader::from_ext_fields(&answer.ext.unwrap_or_default())
            .expect("replica info header");
        let body = answer
            .body
            .as_deref()
            .and_then(|b| SyncStateSet::from_json(b).ok())
            .unwrap_or_default();
        let epoch = header.master_epoch.unwrap_or_default();
        if epoch > self.life.master_epoch {
            match (header.master_broker_id, header.master_address) {
                (Some(master), Some(addr)) if !addr.is_empty() => {
                    let sss_epoch = body.sync_state_set_epoch;
                    self.change_role(master, addr, epoch, sss_epoch, body.sync_state_set);
                }
                _ => self.elect(ctx),
            }
        } else if epoch == self.life.master_epoch
            && self.life.role == Role::Master
            && body.sync_state_set_epoch > self.life.sss_epoch
        {
            self.life.sss = body.sync_state_set;
            self.life.sss_epoch = body.sync_state_set_epoch;
        }
    }

    /// REGISTER again while running (the controller lost the set).
    fn register_again(&mut self, ctx: &mut Ctx) {
        let Some(id) = self.life.id else { return };
        let header = rmq_protocol::headers::RegisterBrokerToControllerRequestHeader {
            cluster_name: CLUSTER.into(),
            broker_name: self.set.clone(),
            broker_id: id,
            broker_address: self.addr.clone(),
            invoke_time: 0,
        };
        let cmd = Self::command(RequestCode::ControllerRegisterBroker, &header, None);
        self.call(ctx, Call::Register, cmd);
    }
}
