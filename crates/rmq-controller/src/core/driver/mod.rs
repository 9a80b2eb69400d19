//! The leader's request driver, without I/O: how decisions take turns,
//! wait for their commit and are answered, and what a node does on its own
//! (expiring silent replicas, electing for a dead master, telling a set's
//! members of a new master).
//!
//! A [`Driver`] is fed what happened — a request, a commit result, a read
//! barrier's result, a timer's expiry, a closed connection, a scan's tick,
//! leadership gained or lost — and returns [`Action`]s: answers to send,
//! events to commit, read barriers to pass, timers to start, notices to
//! send. It reads the applied state, this node's liveness table and the
//! time from an [`Env`] lent for each step. `ControllerNode` runs it over
//! openraft and tokio; the simulation (`tests/controller/simulation`) steps
//! the same driver over its model Raft and simulated time.
//!
//! The rules it keeps:
//! * decisions run one at a time, each on a state where the previous one
//!   is applied: the turn is held from deciding until the decision's entry
//!   is applied or has failed, even past [`COMMIT_TIMEOUT_MS`];
//! * nothing is acknowledged that is not committed: after
//!   [`COMMIT_TIMEOUT_MS`] without a commit the requester is told
//!   SYSTEM_ERROR, and so is a request that waited that long for its turn;
//! * a node that is not the serving leader answers CONTROLLER_NOT_LEADER;
//! * with `processReadEvent` every decision waits for a read barrier first.

mod duties;
mod turn;

#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use rmq_wire::{RemotingCommand, ResponseCode};

use crate::{Answer, Event, LiveTable, Millis, Replicas};

/// How long a decision may wait for its commit, and a request for its
/// turn, before the requester is told it failed (Java's event scheduler
/// waits 5 s; brokers give up after 3 s).
pub const COMMIT_TIMEOUT_MS: u64 = 5_000;

/// How much later than planned a scan may run before the process counts as
/// having been stalled (a paused VM, SIGSTOP).
pub const STALL_MS: u64 = 2_000;

/// The remark of CONTROLLER_NOT_LEADER, as Java words it.
pub const NOT_LEADER: &str = "The controller is not in leader state";

/// Names one piece of work (a request, or an attempt of the controller's
/// own election) from the moment the driver takes it until it is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticket(u64);

/// A timer the driver asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timer {
    /// The work has waited [`COMMIT_TIMEOUT_MS`] for its turn.
    Turn(Ticket),
    /// The decision has waited [`COMMIT_TIMEOUT_MS`] for its commit.
    Commit(Ticket),
}

/// What the driver asks its runner to do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Send `answer` to the requester of `ticket`.
    Answer {
        /// The request.
        ticket: Ticket,
        /// Its answer.
        answer: Answer,
    },
    /// Confirm that this node still leads and has applied everything
    /// committed (`processReadEvent`), then call [`Driver::barrier_passed`].
    ReadBarrier {
        /// The work waiting for it.
        ticket: Ticket,
    },
    /// Append `events` as one log entry and commit it, then call
    /// [`Driver::committed`] once it is applied or has failed.
    Propose {
        /// The decision.
        ticket: Ticket,
        /// Its events, in order.
        events: Vec<Event>,
    },
    /// Call [`Driver::timer_expired`] with `timer` in `after_ms`.
    StartTimer {
        /// Which.
        timer: Timer,
        /// From now, in the node's clock.
        after_ms: u64,
    },
    /// Send `notice` (NOTIFY_BROKER_ROLE_CHANGED, one-way) to each broker
    /// address.
    Notify {
        /// The alive members of the set.
        brokers: Vec<String>,
        /// The notice.
        notice: RemotingCommand,
    },
}

/// How a proposed entry ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Commit {
    /// Committed and applied on this node.
    Applied,
    /// This node does not lead (any more); the entry was dropped.
    NotLeader,
    /// It could not be committed, for the reason given.
    Failed(String),
}

/// The configuration the driver reads (taken afresh for every step, so an
/// UPDATE_CONTROLLER_CONFIG takes effect at once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// `processReadEvent`: a read barrier before every decision.
    pub process_read_event: bool,
    /// `enableElectUncleanMaster`.
    pub elect_unclean: bool,
    /// `electMasterMaxRetryCount`, at least 1: attempts of a
    /// controller-triggered election.
    pub elect_attempts: u32,
    /// `notifyBrokerRoleChanged`.
    pub notify_role_changed: bool,
}

/// What one step reads (and the liveness table, which scans change).
#[derive(Debug)]
pub struct Env<'a> {
    /// The applied state.
    pub replicas: &'a Replicas,
    /// This node's liveness table.
    pub live: &'a mut LiveTable,
    /// The node's clock.
    pub now: Millis,
    /// The configuration.
    pub settings: Settings,
}

/// Something waiting to be decided.
#[derive(Debug, Clone)]
enum Work {
    /// A broker's or an operator's leader-only request.
    Request(RemotingCommand),
    /// Attempt `attempt` of the controller's own election for `set`.
    Elect { set: String, attempt: u32 },
}

/// The work holding the turn.
#[derive(Debug)]
struct Turn {
    ticket: Ticket,
    work: Work,
    stage: Stage,
}

#[derive(Debug)]
enum Stage {
    /// Waiting for the read barrier; nothing decided yet.
    Barrier,
    /// Decided; its entry is being committed.
    Commit {
        /// Sent once the entry is applied.
        answer: Answer,
        /// Already answered SYSTEM_ERROR by the commit timeout.
        answered: bool,
    },
}

/// One node's driver. Every node has one; only a serving leader decides.
#[derive(Debug)]
pub struct Driver {
    /// When this node became a leader that may serve (its first entry of
    /// the term applied); `None` while it is not one.
    serving_since: Option<Millis>,
    next_ticket: u64,
    /// Work waiting for the turn, in arrival order.
    waiting: VecDeque<(Ticket, Work)>,
    turn: Option<Turn>,
    /// When each scan last ran (stall detection).
    last_expiry_scan: Millis,
    last_master_scan: Millis,
}

impl Driver {
    /// A node's driver, started at `now`: not serving, nothing waiting.
    pub fn new(now: Millis) -> Driver {
        Driver {
            serving_since: None,
            next_ticket: 0,
            waiting: VecDeque::new(),
            turn: None,
            last_expiry_scan: now,
            last_master_scan: now,
        }
    }

    /// When this node became a serving leader; `None` while it is not one.
    pub fn serving_since(&self) -> Option<Millis> {
        self.serving_since
    }

    /// This node now leads and has applied the first entry of its term (so
    /// everything its predecessors committed): it serves from `env.now`.
    pub fn start_serving(&mut self, env: &mut Env<'_>) -> Vec<Action> {
        let mut out = Vec::new();
        if self.serving_since.is_none() {
            self.serving_since = Some(env.now);
            self.pump(env, &mut out);
        }
        out
    }

    /// This node no longer leads (or shuts down): waiting requests are told
    /// CONTROLLER_NOT_LEADER and waiting elections dropped. A decision being
    /// committed keeps the turn until [`Driver::committed`] or its timeout
    /// says how it ended: its entry may still commit.
    pub fn stop_serving(&mut self) -> Vec<Action> {
        let mut out = Vec::new();
        self.serving_since = None;
        for (ticket, work) in std::mem::take(&mut self.waiting) {
            refuse(ticket, &work, &mut out);
        }
        if let Some(turn) = self.turn.take_if(|t| matches!(t.stage, Stage::Barrier)) {
            refuse(turn.ticket, &turn.work, &mut out);
        }
        out
    }

    /// A leader-only request: decided in its turn (an answer follows in
    /// this step's or a later step's actions, under the returned ticket),
    /// or refused at once when this node is not the serving leader.
    pub fn request(
        &mut self,
        request: RemotingCommand,
        env: &mut Env<'_>,
    ) -> (Ticket, Vec<Action>) {
        let mut out = Vec::new();
        let work = Work::Request(request);
        let ticket = if self.serving_since.is_none() {
            let ticket = self.ticket();
            refuse(ticket, &work, &mut out);
            ticket
        } else {
            let ticket = self.enqueue(work, &mut out);
            self.pump(env, &mut out);
            ticket
        };
        (ticket, out)
    }

    fn ticket(&mut self) -> Ticket {
        self.next_ticket += 1;
        Ticket(self.next_ticket)
    }

    /// Queues `work` behind whatever waits; it gets a turn timer when it
    /// cannot be taken at once.
    fn enqueue(&mut self, work: Work, out: &mut Vec<Action>) -> Ticket {
        let ticket = self.ticket();
        if self.turn.is_some() || !self.waiting.is_empty() {
            out.push(Action::StartTimer {
                timer: Timer::Turn(ticket),
                after_ms: COMMIT_TIMEOUT_MS,
            });
        }
        self.waiting.push_back((ticket, work));
        ticket
    }
}

/// CONTROLLER_NOT_LEADER to a request; an election is dropped.
fn refuse(ticket: Ticket, work: &Work, out: &mut Vec<Action>) {
    if let Work::Request(_) = work {
        out.push(Action::Answer {
            ticket,
            answer: not_leader(),
        });
    }
}

fn not_leader() -> Answer {
    Answer::error(ResponseCode::ControllerNotLeader, NOT_LEADER)
}
