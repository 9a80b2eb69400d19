//! One broker replica of a broker set, modelled on the real broker's
//! `ReplicasManager`: what it keeps on disk (the identity file and the temp
//! file its id is applied from, its commit log), what a crash loses,
//! and how it calls the controller — requests to the node it believes
//! leads, answered within the 3 s invoke timeout or taken as failed.
//!
//! A paused broker (SIGSTOP) handles nothing; what arrives for it, timers
//! included, waits and is handled in order when it resumes, with whatever
//! it believed before.
//!
//! The start-up sequence is in [`join`], roles and the controller's role
//! decisions in [`role`], replication and the SSS in [`ha`].

mod ha;
mod join;
pub mod log;
mod role;

use std::collections::{BTreeMap, BTreeSet};

use rmq_controller::Answer;
use rmq_wire::{RemotingCommand, RequestCode};

use crate::simulation::ctx::Ctx;
use crate::simulation::msg::{BrokerTimer, Happening, Msg};
use crate::simulation::net::Endpoint;
use crate::simulation::queue::Time;
use log::Log;

/// The broker's invoke timeout for controller requests (`invokeSync` 3 000).
const INVOKE_TIMEOUT: Time = 3_000;

/// The cluster every broker is in.
pub const CLUSTER: &str = "DefaultCluster";

/// What survives a crash.
#[derive(Debug, Clone, Default)]
pub struct Disk {
    /// The identity file: the controller id.
    pub identity: Option<i64>,
    /// The temp file: an id applied for, with its check code.
    pub temp: Option<(i64, String)>,
    /// The commit log and its epoch file.
    pub log: Log,
}

/// Where the start-up sequence is (`ReplicasManager.State`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Looking for the leader.
    Initial,
    /// Leader known; registering.
    MetadataDone,
    /// Registered; heartbeat sent, electing if there is no master.
    Registered,
    /// Running: heartbeats, replica-info sync, SSS checks.
    Running,
}

/// The role the broker plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Neither yet.
    None,
    /// Replicates from `master_id`.
    Slave,
    /// Takes writes.
    Master,
}

/// A request waiting for its answer.
#[derive(Debug, Clone)]
pub enum Call {
    /// CONTROLLER_GET_METADATA_INFO.
    Metadata,
    /// CONTROLLER_GET_NEXT_BROKER_ID.
    NextId,
    /// CONTROLLER_APPLY_BROKER_ID of the temp file's id.
    ApplyId,
    /// CONTROLLER_REGISTER_BROKER.
    Register,
    /// CONTROLLER_ELECT_MASTER (broker trigger).
    Elect,
    /// CONTROLLER_GET_REPLICA_INFO.
    ReplicaInfo,
    /// CONTROLLER_ALTER_SYNC_STATE_SET, sent at this master epoch.
    Alter { master_epoch: i32 },
}

/// What a slave looks like to its master.
#[derive(Debug, Clone, Copy, Default)]
pub struct SlaveSeen {
    /// Its last pull.
    pub last_pull: Time,
    /// The last time it had everything the master had.
    pub caught_up: Time,
}

/// What a crash loses.
#[derive(Debug, Clone)]
pub struct Life {
    /// The start-up phase.
    pub phase: Phase,
    /// Failed register attempts in a row.
    pub register_failures: u32,
    /// The controller id, once known.
    pub id: Option<i64>,
    /// The node believed to lead.
    pub leader: Option<usize>,
    /// When the leader was last looked up.
    pub looked_up: Time,
    /// Requests waiting for answers.
    pub calls: BTreeMap<u64, Call>,
    /// The role.
    pub role: Role,
    /// The highest master epoch adopted.
    pub master_epoch: i32,
    /// The master it believes in.
    pub master_id: Option<i64>,
    /// Its address.
    pub master_addr: Option<String>,
    /// As master: the SSS and its epoch.
    pub sss: BTreeSet<i64>,
    /// As master: the SSS epoch.
    pub sss_epoch: i32,
    /// As master: its slaves.
    pub slaves: BTreeMap<i64, SlaveSeen>,
}

impl Life {
    fn new() -> Life {
        Life {
            phase: Phase::Initial,
            register_failures: 0,
            id: None,
            leader: None,
            looked_up: 0,
            calls: BTreeMap::new(),
            role: Role::None,
            master_epoch: 0,
            master_id: None,
            master_addr: None,
            sss: BTreeSet::new(),
            sss_epoch: 0,
            slaves: BTreeMap::new(),
        }
    }
}

/// Whether the process runs.
#[derive(Debug, Clone)]
pub enum Process {
    /// Crashed (or not started).
    Down,
    /// Running.
    Up,
    /// Stopped; these arrived meanwhile, in order.
    Paused(Vec<Happening>),
}

/// One broker replica.
pub struct Broker {
    /// Its index among all brokers.
    pub index: usize,
    /// Its set's name.
    pub set: String,
    /// Its address.
    pub addr: String,
    /// Survives crashes.
    pub disk: Disk,
    /// Lost on a crash.
    pub life: Life,
    /// Counts lives.
    pub inc: u64,
    /// Running, paused or down.
    pub process: Process,
}

impl Broker {
    /// Broker `index` of set `set`, at `addr`, not yet started.
    pub fn new(index: usize, set: String, addr: String) -> Broker {
        Broker {
            index,
            set,
            addr,
            disk: Disk::default(),
            life: Life::new(),
            inc: 0,
            process: Process::Down,
        }
    }

    fn me(&self) -> Endpoint {
        Endpoint::Broker(self.index)
    }

    /// Starts a life from the disk alone.
    pub fn start(&mut self, ctx: &mut Ctx) {
        self.inc += 1;
        self.life = Life::new();
        self.life.id = self.disk.identity;
        self.process = Process::Up;
        let (me, inc) = (self.index, self.inc);
        ctx.broker_timer(me, inc, 1_000, BrokerTimer::Heartbeat);
        ctx.broker_timer(me, inc, 500, BrokerTimer::Ha);
        ctx.broker_timer(me, inc, 0, BrokerTimer::Start);
    }

    /// While down: the broker will come back on another host (or IP) with
    /// its disk, so it registers a new address (UpdateBrokerAddress).
    pub fn relocate(&mut self, ctx: &mut Ctx) {
        ctx.addrs.remove(&self.addr);
        let moved = format!("10.{}.{}", ctx.unique() % 250 + 1, self.index);
        self.addr = format!("{moved}.1:30911");
        ctx.addrs.insert(self.addr.clone(), self.index);
    }

    /// kill -9. Its connections close, so every node it reaches hears of it.
    pub fn crash(&mut self, ctx: &mut Ctx) {
        if matches!(self.process, Process::Down) {
            return;
        }
        self.process = Process::Down;
        for node in 0..ctx.params.nodes {
            let conn = self.conn(node);
            ctx.send(self.me(), Endpoint::Node(node), Msg::Closed { conn });
        }
    }

    /// The id of this life's connection to `node`.
    fn conn(&self, node: usize) -> u64 {
        ((self.index as u64) << 40) | (self.inc << 8) | node as u64
    }

    /// Something for this broker: handled now, held while paused, dropped
    /// when down or of an earlier life.
    pub fn deliver(&mut self, ctx: &mut Ctx, happening: Happening) {
        match &mut self.process {
            Process::Down => {}
            Process::Paused(held) => held.push(happening),
            Process::Up => self.handle(ctx, happening),
        }
    }

    /// SIGCONT: everything held is handled, in order, now.
    pub fn resume(&mut self, ctx: &mut Ctx) {
        if let Process::Paused(held) = &mut self.process {
            let held = std::mem::take(held);
            self.process = Process::Up;
            for happening in held {
                self.handle(ctx, happening);
            }
        }
    }

    fn handle(&mut self, ctx: &mut Ctx, happening: Happening) {
        match happening {
            Happening::Broker { inc, timer, .. } if inc == self.inc => self.on_timer(ctx, timer),
            Happening::Broker { .. } => {}
            Happening::Deliver { from, msg, .. } => self.on_message(ctx, from, msg),
            other => panic!("b{} cannot handle {other:?}", self.index),
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx, timer: BrokerTimer) {
        match timer {
            BrokerTimer::Start => self.step(ctx),
            BrokerTimer::Heartbeat => self.heartbeat_tick(ctx),
            BrokerTimer::SyncReplica => self.sync_tick(ctx),
            BrokerTimer::SssCheck => self.sss_check_tick(ctx),
            BrokerTimer::Ha => self.ha_tick(ctx),
            BrokerTimer::Metadata => self.metadata_tick(ctx),
            BrokerTimer::CallTimeout(req) => {
                if let Some(call) = self.life.calls.remove(&req) {
                    ctx.note(format!(
                        "b{} gave up waiting for #{req} {call:?}",
                        self.index
                    ));
                    self.failed(ctx, call);
                }
            }
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx, from: Endpoint, msg: Msg) {
        match msg {
            Msg::Response { req, answer } => {
                if let Some(call) = self.life.calls.remove(&req) {
                    self.answered(ctx, call, answer);
                }
            }
            Msg::MetadataReply { req, leader } => {
                if self.life.calls.remove(&req).is_some() {
                    self.leader_found(ctx, leader);
                }
            }
            Msg::Notify { cmd } => self.notified(&cmd),
            Msg::HaPull { id, log } => self.ha_pulled(ctx, from, id, log),
            Msg::HaPush { log, .. } => self.ha_pushed(ctx, &log),
            other => panic!("b{} cannot handle {}", self.index, other.describe()),
        }
    }

    /// Sends `cmd` to the believed leader; without one, the call fails
    /// (after the invoke timeout, as a connection attempt to nobody would).
    fn call(&mut self, ctx: &mut Ctx, call: Call, cmd: RemotingCommand) {
        let req = ctx.unique();
        self.life.calls.insert(req, call);
        if let Some(leader) = self.life.leader {
            ctx.send(self.me(), Endpoint::Node(leader), Msg::Request { req, cmd });
        }
        ctx.broker_timer(
            self.index,
            self.inc,
            INVOKE_TIMEOUT,
            BrokerTimer::CallTimeout(req),
        );
    }

    /// CONTROLLER_GET_METADATA_INFO to a node picked at random.
    fn look_up_leader(&mut self, ctx: &mut Ctx) {
        if self
            .life
            .calls
            .values()
            .any(|c| matches!(c, Call::Metadata))
        {
            return;
        }
        let req = ctx.unique();
        self.life.calls.insert(req, Call::Metadata);
        self.life.looked_up = ctx.now();
        let node = ctx.rng.usize(0..ctx.params.nodes);
        ctx.send(self.me(), Endpoint::Node(node), Msg::Metadata { req });
        ctx.broker_timer(
            self.index,
            self.inc,
            INVOKE_TIMEOUT,
            BrokerTimer::CallTimeout(req),
        );
    }

    /// Every 10 s (`syncControllerMetadataPeriod`), once the leader was
    /// first found.
    fn metadata_tick(&mut self, ctx: &mut Ctx) {
        self.look_up_leader(ctx);
        ctx.broker_timer(self.index, self.inc, 10_000, BrokerTimer::Metadata);
    }

    fn answered(&mut self, ctx: &mut Ctx, call: Call, answer: Answer) {
        if answer.code == rmq_wire::ResponseCode::ControllerNotLeader {
            self.failed(ctx, call);
            return;
        }
        match call {
            Call::NextId | Call::ApplyId | Call::Register | Call::Elect => {
                self.join_answered(ctx, call, answer)
            }
            Call::ReplicaInfo => self.replica_info_answered(ctx, answer),
            Call::Alter { master_epoch } => self.alter_answered(master_epoch, answer),
            Call::Metadata => unreachable!("metadata answers are MetadataReply"),
        }
    }

    /// A request failed (timeout, or a node that does not lead). Java only
    /// refreshes the leader every 10 s; this broker also looks it up at
    /// once, at most once a second, so failover is not bound to that period.
    fn failed(&mut self, ctx: &mut Ctx, call: Call) {
        if ctx.now() >= self.life.looked_up + 1_000 {
            self.look_up_leader(ctx);
        }
        match call {
            Call::Metadata => self.leader_found(ctx, None),
            Call::NextId | Call::ApplyId | Call::Register | Call::Elect => {
                self.join_failed(ctx, call)
            }
            Call::ReplicaInfo | Call::Alter { .. } => {}
        }
    }

    /// A request with `header` and optional JSON `body`.
    fn command(
        code: RequestCode,
        header: &impl rmq_wire::ToExtFields,
        body: Option<Vec<u8>>,
    ) -> RemotingCommand {
        let mut cmd = RemotingCommand::request(code, 0).with_header(header);
        cmd.body = body.map(Into::into);
        cmd
    }
}
