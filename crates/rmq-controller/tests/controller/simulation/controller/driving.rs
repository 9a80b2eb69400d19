//! The product's request driver stepped over the model: each input is fed
//! with the node's applied state, liveness table and clock, and each action
//! is carried out as `node/drive.rs` carries it out over openraft and
//! tokio — answers sent to the broker that asked, proposals appended to the
//! model Raft log, read barriers confirmed by a round of AppendEntries,
//! timers set on the simulated clock, notices sent to the alive members —
//! and each outcome is fed back: an entry applied, an entry dropped from
//! the log, a barrier confirmed, a timer expired.
//!
//! The deliberate flaws that concern decisions ([`Flaw`]) live here, as
//! lies about commits: the driver itself is the product's, unchanged.

use rmq_controller::core::driver::{Action, Commit, Driver, Env, Ticket, Timer};
use rmq_controller::{Answer, Event};
use rmq_wire::RemotingCommand;

use super::Controller;
use crate::simulation::ctx::Ctx;
use crate::simulation::msg::{Msg, NodeTimer};
use crate::simulation::net::Endpoint;
use crate::simulation::observe::{ElectFact, Obs};
use crate::simulation::params::Flaw;
use crate::simulation::raft::{Index, Payload, Term};

/// An entry proposed for the driver, until the driver hears how it ended.
#[derive(Debug, Clone, Copy)]
pub(super) struct Proposal {
    /// The decision.
    pub ticket: Ticket,
    /// Where its entry is.
    pub term: Term,
    /// Where its entry is.
    pub index: Index,
}

impl Controller {
    /// Feeds the driver one input and carries out what it asks.
    pub(super) fn step(
        &mut self,
        ctx: &mut Ctx,
        input: impl FnOnce(&mut Driver, &mut Env<'_>) -> Vec<Action>,
    ) {
        let actions = self.with_env(ctx, input);
        self.execute(ctx, actions);
    }

    fn with_env<R>(&mut self, ctx: &Ctx, input: impl FnOnce(&mut Driver, &mut Env<'_>) -> R) -> R {
        let now = self.now(ctx);
        let mut env = Env {
            replicas: &self.replicas,
            live: &mut self.live,
            now,
            settings: ctx.params.settings(),
        };
        input(&mut self.driver, &mut env)
    }

    /// A broker's leader-only request.
    pub(super) fn request(&mut self, ctx: &mut Ctx, broker: usize, req: u64, cmd: RemotingCommand) {
        let (ticket, actions) = self.with_env(ctx, |driver, env| driver.request(cmd, env));
        self.requests.insert(ticket, (broker, req));
        self.execute(ctx, actions);
    }

    /// A timer the driver asked for expired.
    pub(super) fn driver_timer(&mut self, ctx: &mut Ctx, timer: Timer) {
        if let Timer::Commit(ticket) = timer {
            if let Some(p) = self.proposals.iter().find(|p| p.ticket == ticket) {
                let line = format!(
                    "n{} gave up waiting for the commit of {} (t{})",
                    self.id, p.index, p.term
                );
                ctx.note(line);
            }
        }
        self.step(ctx, |driver, env| driver.timer_expired(timer, env));
        let flaw = ctx.params.flaw == Some(Flaw::DecideAfterCommitTimeout);
        if let (Timer::Commit(ticket), true) = (timer, flaw) {
            if let Some(at) = self.proposals.iter().position(|p| p.ticket == ticket) {
                self.proposals.remove(at);
                let failed = Commit::Failed("given up".into());
                self.step(ctx, |driver, env| driver.committed(ticket, failed, env));
            }
        }
    }

    fn execute(&mut self, ctx: &mut Ctx, actions: Vec<Action>) {
        for action in actions {
            match action {
                Action::Answer { ticket, answer } => self.answer(ctx, ticket, answer),
                Action::Propose { ticket, events } => self.propose(ctx, ticket, events),
                Action::ReadBarrier { ticket } => {
                    let round = self
                        .raft
                        .next_round()
                        .expect("the driver asks for barriers only while serving");
                    self.barriers.push((ticket, round));
                }
                Action::StartTimer { timer, after_ms } => {
                    let (id, inc) = (self.id, self.inc);
                    ctx.node_timer(id, inc, after_ms, NodeTimer::Driver(timer));
                }
                Action::Notify { brokers, notice } => {
                    for addr in &brokers {
                        if let Some(broker) = ctx.addrs.get(addr).copied() {
                            let msg = Msg::Notify {
                                cmd: notice.clone(),
                            };
                            ctx.send(Endpoint::Node(self.id), Endpoint::Broker(broker), msg);
                        }
                    }
                }
            }
        }
    }

    /// Sends a broker its answer; a success for a decision whose entry was
    /// applied is an acknowledgement the invariants check.
    fn answer(&mut self, ctx: &mut Ctx, ticket: Ticket, answer: Answer) {
        let Some((broker, req)) = self.requests.remove(&ticket) else {
            return;
        };
        let applied = self.applied_entries.remove(&ticket);
        if ctx.params.flaw == Some(Flaw::DecideWhileCommitting)
            && self.proposals.iter().any(|p| p.ticket == ticket)
        {
            // Reported applied too early: the answer waits for the entry.
            self.requests.insert(ticket, (broker, req));
            if let Some(entry) = applied {
                self.applied_entries.insert(ticket, entry);
            }
            self.held.push((ticket, answer));
            return;
        }
        if let (true, Some((term, index))) = (answer.is_success(), applied) {
            ctx.obs.push(Obs::Acked {
                node: self.id,
                term,
                index,
            });
        }
        let to = Endpoint::Broker(broker);
        ctx.send(Endpoint::Node(self.id), to, Msg::Response { req, answer });
    }

    /// Appends a decision's entry (the driver proposes only while this node
    /// serves, so leads).
    fn propose(&mut self, ctx: &mut Ctx, ticket: Ticket, events: Vec<Event>) {
        let elected = self.elect_facts(ctx, &events);
        let index = self.raft.propose(Payload::Decision(events));
        let term = self.raft.durable.term;
        ctx.obs.push(Obs::Decided {
            node: self.id,
            term,
            index,
            elected,
        });
        self.proposals.push(Proposal {
            ticket,
            term,
            index,
        });
        if matches!(
            ctx.params.flaw,
            Some(Flaw::AnswerBeforeCommit | Flaw::DecideWhileCommitting)
        ) {
            self.applied_entries.insert(ticket, (term, index));
            self.step(ctx, |driver, env| {
                driver.committed(ticket, Commit::Applied, env)
            });
            if !self.held.iter().any(|(t, _)| *t == ticket) {
                self.applied_entries.remove(&ticket);
            }
        }
    }

    /// The entry at `index` (of `term`) was applied: a proposal there
    /// ended, applied if it is the same entry, dropped if another took its
    /// place.
    pub(super) fn entry_applied(&mut self, ctx: &mut Ctx, index: Index, term: Term) {
        let Some(at) = self.proposals.iter().position(|p| p.index == index) else {
            return;
        };
        let proposal = self.proposals.remove(at);
        let ticket = proposal.ticket;
        if let Some(held) = self.held.iter().position(|(t, _)| *t == ticket) {
            let (_, answer) = self.held.remove(held);
            self.answer(ctx, ticket, answer);
            return;
        }
        if ctx.params.flaw == Some(Flaw::AnswerBeforeCommit) {
            return;
        }
        let result = if proposal.term == term {
            self.applied_entries.insert(ticket, (term, index));
            Commit::Applied
        } else {
            Commit::NotLeader
        };
        self.step(ctx, |driver, env| driver.committed(ticket, result, env));
        // Answered by now, or not to be (an election, or a request the
        // commit timeout answered).
        self.applied_entries.remove(&ticket);
    }

    /// Proposals whose entry a new leader's log replaced: dropped, as
    /// openraft reports ForwardToLeader for them.
    pub(super) fn dropped_proposals(&mut self, ctx: &mut Ctx) {
        loop {
            let Some(at) = self
                .proposals
                .iter()
                .position(|p| self.raft.term_at(p.index) != p.term)
            else {
                return;
            };
            let proposal = self.proposals.remove(at);
            self.held.retain(|(t, _)| *t != proposal.ticket);
            let ticket = proposal.ticket;
            self.step(ctx, |driver, env| {
                driver.committed(ticket, Commit::NotLeader, env)
            });
        }
    }

    /// Read barriers whose round a majority answered: this node still led
    /// when it asked, and has applied everything committed.
    pub(super) fn confirmed_barriers(&mut self, ctx: &mut Ctx) {
        let Some(confirmed) = self.raft.confirmed_round() else {
            return;
        };
        while let Some(at) = self.barriers.iter().position(|(_, r)| *r <= confirmed) {
            let (ticket, _) = self.barriers.remove(at);
            self.step(ctx, |driver, env| driver.barrier_passed(ticket, true, env));
        }
    }

    /// What this node saw of every replica the decision elects.
    fn elect_facts(&self, ctx: &Ctx, events: &[Event]) -> Vec<ElectFact> {
        let now = self.now(ctx);
        let mut facts = Vec::new();
        for event in events {
            let Event::ElectMaster {
                broker_name,
                new_master: Some(id),
            } = event
            else {
                continue;
            };
            let set = self.replicas.get(broker_name);
            facts.push(ElectFact {
                set: broker_name.clone(),
                id: *id,
                registered: set.is_some_and(|s| s.replicas.contains_key(id)),
                alive: set.is_some_and(|s| self.live.is_alive(&s.cluster, broker_name, *id, now)),
                in_sync_state_set: set.is_some_and(|s| s.sync_state_set.contains(id)),
                first_election: set.is_none_or(|s| s.master_epoch == 0),
            });
        }
        facts
    }
}
