//! The leader's desk: requests and controller-triggered elections decided
//! one at a time with the real `request::decide` / `decide::elect_master`
//! against the applied state and this node's `LiveTable`, each one's events
//! appended to the log, and its answer sent only once the entry is applied
//! — as `ControllerNode::decide_and_commit` does under its `decisions`
//! lock. Also the node's own duties (`tasks.rs`): expiry, the dead-master
//! scan, elections with retries, and role-change notices.

use std::collections::BTreeSet;

use rmq_controller::decide::{self, View};
use rmq_controller::{Answer, Decision, Event, LiveKey};
use rmq_protocol::headers::{
    ElectMasterRequestHeader, ElectMasterResponseHeader, NotifyBrokerRoleChangedRequestHeader,
};
use rmq_protocol::{Dialect, ElectMasterResponseBody, JavaJson, SyncStateSet};
use rmq_wire::{FromExtFields, RemotingCommand, RequestCode, ResponseCode};

use super::Controller;
use crate::ctx::Ctx;
use crate::msg::{Msg, NodeTimer};
use crate::net::Endpoint;
use crate::observe::{ElectFact, Obs};
use crate::params::{CommitWait, Flaw};
use crate::raft::{Index, Payload, Term};

/// `node::NOT_LEADER`.
const NOT_LEADER: &str = "The controller is not in leader state";

/// Something waiting to be decided.
#[derive(Debug, Clone)]
pub enum Work {
    /// Request `req` of broker `broker`.
    Broker {
        broker: usize,
        req: u64,
        cmd: RemotingCommand,
    },
    /// Attempt `attempt` of a controller-triggered election.
    Elect { set: String, attempt: u32 },
}

/// A decision whose entry is being committed.
#[derive(Debug, Clone)]
pub struct InFlight {
    /// Where its entry is.
    pub term: Term,
    /// Where its entry is.
    pub index: Index,
    /// What was decided.
    pub work: Work,
    /// The answer, sent once the entry is applied.
    pub answer: Answer,
    /// Already answered SYSTEM_ERROR by the commit timeout: when the entry is
    /// applied, nobody is told again.
    pub answered: bool,
}

impl Controller {
    /// A leader-only request arrived: decided in turn, or refused at once
    /// when this node is not a serving leader.
    pub(super) fn request(&mut self, ctx: &mut Ctx, broker: usize, req: u64, cmd: RemotingCommand) {
        if self.serving_since.is_none() {
            let answer = Answer::error(ResponseCode::ControllerNotLeader, NOT_LEADER);
            let to = Endpoint::Broker(broker);
            ctx.send(Endpoint::Node(self.id), to, Msg::Response { req, answer });
            return;
        }
        self.queue.push_back(Work::Broker { broker, req, cmd });
        self.pump(ctx);
    }

    /// Decides waiting work while this node serves and no decision is
    /// being committed.
    pub(super) fn pump(&mut self, ctx: &mut Ctx) {
        let concurrent = ctx.params.flaw == Some(Flaw::DecideWhileCommitting);
        while (self.in_flight.is_empty() || concurrent) && self.serving_since.is_some() {
            let Some(work) = self.queue.pop_front() else {
                return;
            };
            let view = View {
                replicas: &self.replicas,
                live: &self.live,
                now: self.now(ctx),
                elect_unclean: ctx.params.elect_unclean,
            };
            let decision = match &work {
                Work::Broker { cmd, .. } => rmq_controller::request::decide(view, cmd),
                Work::Elect { set, .. } => decide::elect_master(view, &controller_trigger(set)),
            };
            let elected = elect_facts(view, &decision);
            let Decision { answer, events } = decision;
            if events.is_empty() {
                self.finish(ctx, work, answer);
                continue;
            }
            let index = self.raft.propose(Payload::Decision(events));
            let term = self.raft.durable.term;
            ctx.obs.push(Obs::Decided {
                node: self.id,
                term,
                index,
                elected,
            });
            if ctx.params.flaw == Some(Flaw::AnswerBeforeCommit) {
                self.finish(ctx, work, answer);
                continue;
            }
            if let CommitWait::Timeout(after) = ctx.params.commit_wait {
                ctx.node_timer(
                    self.id,
                    self.inc,
                    after,
                    NodeTimer::CommitTimeout(term, index),
                );
            }
            self.in_flight.push(InFlight {
                term,
                index,
                work,
                answer,
                answered: false,
            });
        }
    }

    /// The in-flight decision's entry was applied: answer it (unless the
    /// commit timeout already did).
    pub(super) fn committed(&mut self, ctx: &mut Ctx, done: InFlight) {
        if done.answered {
            return;
        }
        if done.answer.is_success() && matches!(done.work, Work::Broker { .. }) {
            ctx.obs.push(Obs::Acked {
                node: self.id,
                term: done.term,
                index: done.index,
            });
        }
        self.finish(ctx, done.work, done.answer);
    }

    /// `COMMIT_TIMEOUT` passed: the requester is told SYSTEM_ERROR (the
    /// controller's own election schedules its next attempt), and the desk
    /// keeps waiting for the entry, which may still commit.
    pub(super) fn commit_timed_out(&mut self, ctx: &mut Ctx, term: Term, index: Index) {
        let Some(i) = self
            .in_flight
            .iter()
            .position(|f| (f.term, f.index) == (term, index) && !f.answered)
        else {
            return;
        };
        ctx.note(format!(
            "n{} gave up waiting for the commit of {index} (t{term})",
            self.id
        ));
        let answer = Answer::error(
            ResponseCode::SystemError,
            "the decision was not committed within 5 s",
        );
        if ctx.params.flaw == Some(Flaw::DecideAfterCommitTimeout) {
            let done = self.in_flight.remove(i);
            self.finish(ctx, done.work, answer);
            self.pump(ctx);
            return;
        }
        self.in_flight[i].answered = true;
        let work = self.in_flight[i].work.clone();
        self.finish(ctx, work, answer);
    }

    /// Sends the answer (or, for the controller's own election, retries or
    /// notifies).
    fn finish(&mut self, ctx: &mut Ctx, work: Work, answer: Answer) {
        match work {
            Work::Broker { broker, req, cmd } => {
                let elected =
                    cmd.request_code() == RequestCode::ControllerElectMaster && answer.is_success();
                if elected {
                    self.notify_members(ctx, &answer);
                }
                let to = Endpoint::Broker(broker);
                ctx.send(Endpoint::Node(self.id), to, Msg::Response { req, answer });
            }
            Work::Elect { set, attempt } => match answer.code {
                ResponseCode::Success => self.notify_members(ctx, &answer),
                ResponseCode::ControllerMasterStillExist | ResponseCode::ControllerNotLeader => {}
                _ if attempt < ctx.params.elect_retries => {
                    let attempt = attempt + 1;
                    self.queue.push_back(Work::Elect { set, attempt });
                }
                _ => {}
            },
        }
    }

    /// Leadership lost: nothing more is decided; waiting requests are told
    /// CONTROLLER_NOT_LEADER, and the in-flight answer is lost (its entry
    /// may or may not commit under the next leader).
    pub(super) fn stop_serving(&mut self, ctx: &mut Ctx) {
        self.serving_since = None;
        self.in_flight.clear();
        for work in std::mem::take(&mut self.queue) {
            if let Work::Broker { broker, req, .. } = work {
                let answer = Answer::error(ResponseCode::ControllerNotLeader, NOT_LEADER);
                let to = Endpoint::Broker(broker);
                ctx.send(Endpoint::Node(self.id), to, Msg::Response { req, answer });
            }
        }
    }

    /// A replica left the LiveTable: if this node serves and it was its
    /// set's master, elect (`tasks::replica_gone`).
    pub(super) fn replica_gone(&mut self, key: &LiveKey) {
        if self.serving_since.is_none() {
            return;
        }
        let was_master = self
            .replicas
            .get(&key.broker_name)
            .is_some_and(|set| set.master == Some(key.broker_id));
        if was_master {
            self.queue_election(&key.broker_name);
        }
    }

    fn queue_election(&mut self, set: &str) {
        // tasks.rs awaits one election per scan; one waiting per set is as many.
        let waiting = self
            .queue
            .iter()
            .any(|w| matches!(w, Work::Elect { set: s, .. } if s == set));
        if !waiting {
            let set = set.to_owned();
            self.queue.push_back(Work::Elect { set, attempt: 1 });
        }
    }

    /// `tasks::expiry_scan`.
    pub(super) fn expiry_scan(&mut self, ctx: &mut Ctx) {
        let now = self.now(ctx);
        for key in self.live.expire(now) {
            self.replica_gone(&key);
        }
        self.pump(ctx);
    }

    /// `tasks::inactive_master_scan`.
    pub(super) fn inactive_master_scan(&mut self, ctx: &mut Ctx) {
        let Some(since) = self.serving_since else {
            return;
        };
        let view = View {
            replicas: &self.replicas,
            live: &self.live,
            now: self.now(ctx),
            elect_unclean: false,
        };
        for set in decide::sets_to_reelect(view, since) {
            self.queue_election(&set);
        }
        self.pump(ctx);
    }

    /// `tasks::notify_members`: NOTIFY_BROKER_ROLE_CHANGED to every member
    /// of the new master's set that is alive here.
    fn notify_members(&mut self, ctx: &mut Ctx, answer: &Answer) {
        let header = answer
            .ext
            .as_ref()
            .and_then(|ext| ElectMasterResponseHeader::from_ext_fields(ext).ok())
            .expect("a successful election answers the master fields");
        let body = answer
            .body
            .as_deref()
            .and_then(|b| ElectMasterResponseBody::from_json(b).ok())
            .expect("a successful election has a body");
        let group = body.broker_member_group.expect("and the member group");
        let now = self.now(ctx);
        let mut notice = RemotingCommand::request(RequestCode::NotifyBrokerRoleChanged, 0)
            .with_header(&NotifyBrokerRoleChangedRequestHeader {
                master_address: header.master_address.clone(),
                master_epoch: header.master_epoch,
                sync_state_set_epoch: header.sync_state_set_epoch,
                master_broker_id: header.master_broker_id,
            });
        let sss = SyncStateSet {
            sync_state_set: header.master_broker_id.into_iter().collect::<BTreeSet<_>>(),
            sync_state_set_epoch: header.sync_state_set_epoch.unwrap_or_default(),
        };
        notice.body = Some(sss.to_json(Dialect::Default).into());
        for (id, addr) in &group.broker_addrs {
            if !self
                .live
                .is_alive(&group.cluster, &group.broker_name, *id, now)
            {
                continue;
            }
            if let Some(broker) = ctx.addrs.get(addr).copied() {
                let msg = Msg::Notify {
                    cmd: notice.clone(),
                };
                ctx.send(Endpoint::Node(self.id), Endpoint::Broker(broker), msg);
            }
        }
    }
}

/// The controller's own ELECT_MASTER (`tasks::elect`).
fn controller_trigger(set: &str) -> ElectMasterRequestHeader {
    ElectMasterRequestHeader {
        cluster_name: Some(String::new()),
        broker_name: Some(set.to_owned()),
        broker_id: None,
        designate_elect: Some(false),
        invoke_time: None,
    }
}

/// What the deciding leader saw of every replica its decision elects.
fn elect_facts(view: View<'_>, decision: &Decision) -> Vec<ElectFact> {
    let mut facts = Vec::new();
    for event in &decision.events {
        let Event::ElectMaster {
            broker_name,
            new_master: Some(id),
        } = event
        else {
            continue;
        };
        let set = view.replicas.get(broker_name);
        facts.push(ElectFact {
            set: broker_name.clone(),
            id: *id,
            registered: set.is_some_and(|s| s.replicas.contains_key(id)),
            alive: set.is_some_and(|s| view.live.is_alive(&s.cluster, broker_name, *id, view.now)),
            in_sync_state_set: set.is_some_and(|s| s.sync_state_set.contains(id)),
            first_election: set.is_none_or(|s| s.master_epoch == 0),
        });
    }
    facts
}
