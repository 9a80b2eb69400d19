//! One controller node as `ControllerNode` runs it, over the model Raft:
//! its durable Raft state survives a crash; its applied `Replicas`, its
//! `LiveTable`, its request driver, its commit index and its leadership do
//! not, and after a restart it re-applies its log as it learns the commit
//! index.
//!
//! The node's clock is its own: milliseconds since it started, plus any
//! jump the fault schedule gave it. Every `Millis` the core sees (heartbeat
//! arrival, expiry, a decision's `now`, the serving time) comes from it.
//!
//! Requests, commits, timers and scans go to the product's driver
//! (`rmq_controller::core::driver`), stepped as `node/drive.rs` steps it:
//! [`driving`].

mod driving;

use std::collections::BTreeMap;

use rmq_controller::core::driver::{Driver, Ticket};
use rmq_controller::{LiveTable, Millis, Replicas};

use crate::simulation::ctx::Ctx;
use crate::simulation::msg::{Msg, NodeTimer};
use crate::simulation::net::Endpoint;
use crate::simulation::observe::Obs;
use crate::simulation::params::Flaw;
use crate::simulation::queue::Time;
use crate::simulation::raft::{Durable, Output, Payload, Raft};

use driving::Proposal;

/// One controller node.
pub struct Controller {
    /// Its index.
    pub id: usize,
    /// Running (false between a crash and its restart).
    pub up: bool,
    /// Counts lives; timers of an earlier life are ignored.
    pub inc: u64,
    /// Raft; `raft.durable` is what a crash leaves.
    pub raft: Raft,
    /// The state machine: every committed entry applied in order.
    pub replicas: Replicas,
    /// The last applied index.
    pub applied: u64,
    /// Who heartbeats this node.
    pub live: LiveTable,
    /// When this life started (simulated time).
    started_at: Time,
    /// How far the local clock has jumped, ms (either way).
    pub clock_jump: i64,
    /// The product's request driver: turns, commit timeouts, serving
    /// leadership, the node's own elections.
    pub driver: Driver,
    /// The brokers' requests inside the driver: who asked, under which id.
    requests: BTreeMap<Ticket, (usize, u64)>,
    /// Entries proposed for the driver whose end it has not been told.
    proposals: Vec<Proposal>,
    /// Decisions reported applied, by ticket: where their entry is (an
    /// answer of success to one is an acknowledgement).
    applied_entries: BTreeMap<Ticket, (u64, u64)>,
    /// Answers held back until their entry is applied
    /// ([`Flaw::DecideWhileCommitting`]).
    held: Vec<(Ticket, rmq_controller::Answer)>,
    /// Read barriers waiting for a round answered by a majority.
    barriers: Vec<(Ticket, u64)>,
    election_gen: u64,
}

impl Controller {
    /// Node `id` of a group of `size`, not yet started.
    pub fn new(id: usize, size: usize) -> Controller {
        Controller {
            id,
            up: false,
            inc: 0,
            raft: Raft::new(id, size, Durable::default()),
            replicas: Replicas::new(),
            applied: 0,
            live: LiveTable::new(),
            started_at: 0,
            clock_jump: 0,
            driver: Driver::new(Millis(0)),
            requests: BTreeMap::new(),
            proposals: Vec::new(),
            applied_entries: BTreeMap::new(),
            held: Vec::new(),
            barriers: Vec::new(),
            election_gen: 0,
        }
    }

    /// The local clock, as the core sees it.
    pub fn now(&self, ctx: &Ctx) -> Millis {
        let uptime = (ctx.now() - self.started_at) as i64;
        Millis(u64::try_from(uptime + self.clock_jump).unwrap_or(0))
    }

    /// Whether this node serves as leader.
    pub fn is_serving(&self) -> bool {
        self.up && self.driver.serving_since().is_some()
    }

    /// Starts a (new) life from the durable state alone.
    pub fn start(&mut self, ctx: &mut Ctx) {
        let durable = std::mem::take(&mut self.raft.durable);
        self.raft = Raft::new(self.id, ctx.params.nodes, durable);
        self.raft.check_log = ctx.params.flaw != Some(Flaw::VoteWithoutLogCheck);
        self.up = true;
        self.inc += 1;
        self.replicas = Replicas::new();
        self.applied = 0;
        self.live = LiveTable::new();
        self.started_at = ctx.now();
        self.clock_jump = 0;
        self.driver = Driver::new(self.now(ctx));
        self.requests.clear();
        self.proposals.clear();
        self.applied_entries.clear();
        self.held.clear();
        self.barriers.clear();
        ctx.obs.push(Obs::Restarted { node: self.id });
        self.reset_election_timer(ctx);
        let (id, inc, p) = (self.id, self.inc, ctx.params.clone());
        ctx.node_timer(id, inc, p.raft_tick, NodeTimer::Tick);
        ctx.node_timer(id, inc, p.scan_not_active, NodeTimer::Expiry);
        ctx.node_timer(id, inc, p.scan_inactive_master, NodeTimer::MasterScan);
    }

    /// kill -9: only the durable Raft state remains.
    pub fn crash(&mut self) {
        self.up = false;
    }

    fn reset_election_timer(&mut self, ctx: &mut Ctx) {
        self.election_gen += 1;
        let (lo, hi) = ctx.params.election_timeout;
        let after = ctx.rng.u64(lo..=hi);
        ctx.node_timer(
            self.id,
            self.inc,
            after,
            NodeTimer::Election(self.election_gen),
        );
    }

    /// A timer of this life fired.
    pub fn on_timer(&mut self, ctx: &mut Ctx, timer: NodeTimer) {
        let (id, inc) = (self.id, self.inc);
        match timer {
            NodeTimer::Election(gen) => {
                if gen == self.election_gen {
                    let mut out = Output::default();
                    self.raft.timeout(&mut out);
                    self.raft_output(ctx, out);
                    // Always armed: a leader ignores it, and a leader that
                    // is deposed later must still stand again one day.
                    self.reset_election_timer(ctx);
                }
            }
            NodeTimer::Tick => {
                let mut out = Output::default();
                self.raft.tick(&mut out);
                self.raft_output(ctx, out);
                ctx.node_timer(id, inc, ctx.params.raft_tick, NodeTimer::Tick);
            }
            NodeTimer::Expiry => {
                let every = ctx.params.scan_not_active;
                self.step(ctx, |driver, env| driver.expiry_scan(every, env));
                ctx.node_timer(id, inc, every, NodeTimer::Expiry);
            }
            NodeTimer::MasterScan => {
                let every = ctx.params.scan_inactive_master;
                self.step(ctx, |driver, env| driver.master_scan(every, env));
                ctx.node_timer(id, inc, every, NodeTimer::MasterScan);
            }
            NodeTimer::Driver(timer) => self.driver_timer(ctx, timer),
        }
    }

    /// A message arrived.
    pub fn on_message(&mut self, ctx: &mut Ctx, from: Endpoint, msg: Msg) {
        match (from, msg) {
            (Endpoint::Node(peer), Msg::Raft(message)) => {
                let mut out = Output::default();
                self.raft.receive(peer, message, &mut out);
                self.raft_output(ctx, out);
            }
            (Endpoint::Broker(broker), Msg::Request { req, cmd }) => {
                self.request(ctx, broker, req, cmd)
            }
            (Endpoint::Broker(broker), Msg::Metadata { req }) => {
                let leader = if self.raft.is_leader() {
                    Some(self.id)
                } else {
                    self.raft.leader
                };
                let reply = Msg::MetadataReply { req, leader };
                ctx.send(Endpoint::Node(self.id), Endpoint::Broker(broker), reply);
            }
            (Endpoint::Broker(_), Msg::Heartbeat { mut cmd, conn }) => {
                let now = self.now(ctx);
                let recorded = rmq_controller::core::request::heartbeat(
                    &mut self.live,
                    &mut cmd,
                    Some(conn),
                    now,
                );
                assert!(
                    recorded.is_ok(),
                    "the model's heartbeat is well formed: {recorded:?}"
                );
            }
            (Endpoint::Broker(_), Msg::Closed { conn }) => {
                self.step(ctx, |driver, env| driver.connection_closed(conn, env));
            }
            (from, msg) => panic!("n{} cannot handle {} from {from}", self.id, msg.describe()),
        }
    }

    /// Sends what Raft asked for, follows its role changes, applies
    /// whatever became committed, and tells the driver how its entries and
    /// read barriers ended.
    fn raft_output(&mut self, ctx: &mut Ctx, out: Output) {
        for (to, message) in out.send {
            ctx.send(
                Endpoint::Node(self.id),
                Endpoint::Node(to),
                Msg::Raft(message),
            );
        }
        if out.reset_timer {
            self.reset_election_timer(ctx);
        }
        if out.stepped_down {
            self.barriers.clear();
            self.step(ctx, |driver, _| driver.stop_serving());
        }
        if out.became_leader {
            ctx.obs.push(Obs::Leader {
                node: self.id,
                term: self.raft.durable.term,
                log: self.raft.durable.log.clone(),
            });
        }
        self.apply_committed(ctx);
        self.dropped_proposals(ctx);
        self.confirmed_barriers(ctx);
    }

    /// Applies every committed entry not yet applied, in order. A leader
    /// serves once the first entry of its own term is applied (it then has
    /// everything its predecessors committed); a proposal of this node is
    /// reported applied once its entry is.
    pub fn apply_committed(&mut self, ctx: &mut Ctx) {
        while self.applied < self.raft.commit {
            self.applied += 1;
            let entry = self
                .raft
                .entry(self.applied)
                .expect("committed entries are in the log")
                .clone();
            if let Payload::Decision(events) = &entry.payload {
                for event in events {
                    self.replicas.apply(event);
                }
            }
            ctx.obs.push(Obs::Applied {
                node: self.id,
                term: self.raft.durable.term,
                index: self.applied,
                entry: entry.clone(),
                replicas: self.replicas.clone(),
            });
            let current = self.raft.is_leader() && entry.term == self.raft.durable.term;
            if current && self.driver.serving_since().is_none() {
                self.step(ctx, |driver, env| driver.start_serving(env));
            }
            self.entry_applied(ctx, self.applied, entry.term);
        }
    }
}
