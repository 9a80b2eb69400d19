//! The broker's start-up sequence (`ReplicasManager.startBasicService`,
//! `register` and `brokerElect` of the Java broker): find the
//! leader, obtain a controller id through the temp file and the identity
//! file (GET_NEXT_BROKER_ID → temp file → APPLY_BROKER_ID → identity file),
//! REGISTER, one heartbeat, and ELECT when the set has no master; then run.
//! Each step resumes where the last attempt stopped, as `startBasicService`
//! does, and the files make a crash between APPLY and the identity file
//! harmless: the same id is applied again with the same check code.

use rmq_controller::Answer;
use rmq_protocol::headers::{
    ApplyBrokerIdRequestHeader, ElectMasterRequestHeader, ElectMasterResponseHeader,
    GetNextBrokerIdRequestHeader, GetNextBrokerIdResponseHeader,
    RegisterBrokerToControllerRequestHeader, RegisterBrokerToControllerResponseHeader,
};
use rmq_protocol::{ElectMasterResponseBody, JavaJson, SyncStateSet};
use rmq_wire::{FromExtFields, RequestCode, ResponseCode};

use super::{Broker, Call, Phase, CLUSTER};
use crate::simulation::ctx::Ctx;
use crate::simulation::msg::BrokerTimer;
use crate::simulation::observe::Obs;

/// The broker's wall clock at simulated time 0 (check codes carry it).
const WALL_ORIGIN: u64 = 1_700_000_000_000;

impl Broker {
    /// Whether a start-up request is waiting for its answer: its answer
    /// (or its failure) takes the sequence on.
    fn joining(&self) -> bool {
        let initial = self.life.phase == Phase::Initial;
        self.life.calls.values().any(|c| match c {
            Call::Metadata => initial,
            Call::NextId | Call::ApplyId | Call::Register | Call::Elect => true,
            Call::ReplicaInfo | Call::Alter { .. } => false,
        })
    }

    /// The next step of the start-up sequence, unless one is under way.
    pub(super) fn step(&mut self, ctx: &mut Ctx) {
        if self.joining() {
            return;
        }
        match self.life.phase {
            Phase::Initial => self.look_up_leader(ctx),
            Phase::MetadataDone => self.register(ctx),
            Phase::Registered => {
                // Once by hand: the periodic heartbeat skips a fenced broker.
                self.send_heartbeats(ctx);
                if self.life.master_id.is_none() {
                    self.elect(ctx);
                } else {
                    self.run(ctx);
                }
            }
            Phase::Running => {}
        }
    }

    /// `ReplicasManager.register`, from whichever file exists.
    fn register(&mut self, ctx: &mut Ctx) {
        let name = self.set.clone();
        if let Some(id) = self.disk.identity {
            let header = RegisterBrokerToControllerRequestHeader {
                cluster_name: CLUSTER.into(),
                broker_name: name,
                broker_id: id,
                broker_address: self.addr.clone(),
                invoke_time: 0,
            };
            let cmd = Self::command(RequestCode::ControllerRegisterBroker, &header, None);
            self.call(ctx, Call::Register, cmd);
        } else if let Some((id, code)) = self.disk.temp.clone() {
            let header = ApplyBrokerIdRequestHeader {
                cluster_name: CLUSTER.into(),
                broker_name: name,
                applied_broker_id: id,
                register_check_code: code,
            };
            let cmd = Self::command(RequestCode::ControllerApplyBrokerId, &header, None);
            self.call(ctx, Call::ApplyId, cmd);
        } else {
            let header = GetNextBrokerIdRequestHeader {
                cluster_name: CLUSTER.into(),
                broker_name: name,
            };
            let cmd = Self::command(RequestCode::ControllerGetNextBrokerId, &header, None);
            self.call(ctx, Call::NextId, cmd);
        }
    }

    /// CONTROLLER_ELECT_MASTER naming itself (`brokerElect`).
    pub(super) fn elect(&mut self, ctx: &mut Ctx) {
        let Some(id) = self.life.id else { return };
        if self.life.calls.values().any(|c| matches!(c, Call::Elect)) {
            return;
        }
        let header = ElectMasterRequestHeader {
            cluster_name: Some(CLUSTER.into()),
            broker_name: Some(self.set.clone()),
            broker_id: Some(id),
            designate_elect: Some(false),
            invoke_time: None,
        };
        let cmd = Self::command(RequestCode::ControllerElectMaster, &header, None);
        self.call(ctx, Call::Elect, cmd);
    }

    /// The leader lookup answered (`None`: no leader known, or no answer).
    pub(super) fn leader_found(&mut self, ctx: &mut Ctx, leader: Option<usize>) {
        if leader.is_some() {
            self.life.leader = leader;
        }
        if self.life.phase != Phase::Initial {
            return;
        }
        if leader.is_some() {
            self.life.phase = Phase::MetadataDone;
            ctx.broker_timer(self.index, self.inc, 3_000, BrokerTimer::Metadata);
            self.step(ctx);
        } else {
            ctx.broker_timer(self.index, self.inc, 1_000, BrokerTimer::Start);
        }
    }

    /// A start-up request was answered (CONTROLLER_NOT_LEADER is a failure
    /// and goes to [`Broker::join_failed`]).
    pub(super) fn join_answered(&mut self, ctx: &mut Ctx, call: Call, answer: Answer) {
        let ext = answer.ext.clone().unwrap_or_default();
        match call {
            Call::NextId if answer.is_success() => {
                let header = GetNextBrokerIdResponseHeader::from_ext_fields(&ext).unwrap();
                let next = header.next_broker_id.expect("nextBrokerId");
                let wall = WALL_ORIGIN + ctx.now();
                self.disk.temp = Some((next, format!("{};{wall}", self.addr)));
                self.step(ctx);
            }
            Call::ApplyId if answer.is_success() => {
                let (id, _) = self.disk.temp.take().expect("applied from the temp file");
                self.disk.identity = Some(id);
                self.life.id = Some(id);
                ctx.obs.push(Obs::Identity {
                    broker: self.index,
                    set: self.set.clone(),
                    id,
                });
                self.step(ctx);
            }
            Call::Register if answer.is_success() => {
                let header = RegisterBrokerToControllerResponseHeader::from_ext_fields(&ext)
                    .expect("register header");
                let body = answer.body.as_deref().map(SyncStateSet::from_json);
                let sss = body.and_then(Result::ok).unwrap_or_default();
                if let (Some(master), Some(epoch)) = (header.master_broker_id, header.master_epoch)
                {
                    let addr = header.master_address.unwrap_or_default();
                    let sss_epoch = header.sync_state_set_epoch.unwrap_or_default();
                    self.change_role(master, addr, epoch, sss_epoch, sss.sync_state_set);
                }
                self.life.register_failures = 0;
                if self.life.phase == Phase::MetadataDone {
                    self.life.phase = Phase::Registered;
                    self.step(ctx);
                }
            }
            Call::Elect
                if matches!(
                    answer.code,
                    ResponseCode::Success | ResponseCode::ControllerMasterStillExist
                ) =>
            {
                let header = ElectMasterResponseHeader::from_ext_fields(&ext).expect("header");
                let body = answer
                    .body
                    .as_deref()
                    .map(ElectMasterResponseBody::from_json);
                let sss = body.and_then(Result::ok).unwrap_or_default().sync_state_set;
                match (
                    header.master_broker_id,
                    header.master_address,
                    header.master_epoch,
                ) {
                    (Some(master), Some(addr), Some(epoch)) if !addr.is_empty() => {
                        let sss_epoch = header.sync_state_set_epoch.unwrap_or_default();
                        self.change_role(master, addr, epoch, sss_epoch, sss);
                        if self.life.phase == Phase::Registered {
                            self.run(ctx);
                        }
                    }
                    _ => self.join_failed(ctx, Call::Elect),
                }
            }
            call => self.join_failed(ctx, call),
        }
    }

    /// A start-up request failed or was refused.
    pub(super) fn join_failed(&mut self, ctx: &mut Ctx, call: Call) {
        if self.life.phase == Phase::Running {
            return;
        }
        if matches!(call, Call::ApplyId) {
            // Java deletes the temp file; the next try asks for a new id.
            self.disk.temp = None;
        }
        let after = match call {
            Call::NextId | Call::ApplyId | Call::Register => {
                self.life.register_failures += 1;
                if self.life.register_failures < 5 {
                    ctx.rng.u64(0..1_000)
                } else {
                    self.life.register_failures = 0;
                    5_000
                }
            }
            _ => 5_000,
        };
        ctx.broker_timer(self.index, self.inc, after, BrokerTimer::Start);
    }

    /// Unfenced: the periodic tasks start.
    fn run(&mut self, ctx: &mut Ctx) {
        self.life.phase = Phase::Running;
        ctx.broker_timer(self.index, self.inc, 3_000, BrokerTimer::SyncReplica);
        ctx.broker_timer(self.index, self.inc, 3_000, BrokerTimer::SssCheck);
    }
}
