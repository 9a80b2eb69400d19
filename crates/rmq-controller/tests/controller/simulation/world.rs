//! The whole simulated deployment — controller nodes, brokers, network —
//! and the loop that runs it: pop the next happening, hand it to whoever
//! it is for, let every invariant look at the result, and repeat until the
//! end; then judge liveness. Everything is drawn from one seed.

use fastrand::Rng;
use rmq_controller::Event;

use crate::simulation::broker::{Broker, Process};
use crate::simulation::controller::Controller;
use crate::simulation::ctx::Ctx;
use crate::simulation::faults::Fault;
use crate::simulation::invariants;
use crate::simulation::msg::Happening;
use crate::simulation::net::Endpoint;
use crate::simulation::observe::Obs;
use crate::simulation::params::Params;
use crate::simulation::raft::Payload;
use crate::simulation::trace::Failure;

/// Counts of a finished run.
#[derive(Debug, Default, Clone, Copy)]
pub struct Outcome {
    /// Happenings handled.
    pub events: u64,
    /// Decisions committed.
    pub entries: u64,
    /// Leader elections won.
    pub leaders: u64,
    /// Master elections committed (ElectMaster with a new master).
    pub masters: u64,
    /// The digest of the run's whole trace.
    pub digest: u64,
}

/// The deployment.
pub struct World {
    /// Shared by every handler.
    pub ctx: Ctx,
    /// The controller nodes.
    pub nodes: Vec<Controller>,
    /// The broker replicas.
    pub brokers: Vec<Broker>,
    /// Identifies the current partition (a heal of an older one is void).
    pub partition_gen: u64,
    /// Identifies the current loss/delay burst.
    pub noise_gen: u64,
    outcome: Outcome,
    /// The highest index any node applied.
    committed: u64,
}

impl World {
    /// The deployment of `params`, started: every node and broker up, the
    /// fault schedule armed.
    pub fn new(params: Params, rng: Rng) -> World {
        let mut ctx = Ctx::new(params, rng);
        let nodes = (0..ctx.params.nodes)
            .map(|i| Controller::new(i, ctx.params.nodes))
            .collect();
        let mut brokers = Vec::new();
        for (set, replicas) in ctx.params.sets.clone().into_iter().enumerate() {
            for slot in 0..replicas {
                let addr = format!("10.0.{set}.{}:30911", slot + 1);
                ctx.addrs.insert(addr.clone(), brokers.len());
                brokers.push(Broker::new(brokers.len(), Params::set_name(set), addr));
            }
        }
        let mut world = World {
            ctx,
            nodes,
            brokers,
            partition_gen: 0,
            noise_gen: 0,
            outcome: Outcome::default(),
            committed: 0,
        };
        for node in &mut world.nodes {
            node.start(&mut world.ctx);
        }
        for i in 0..world.brokers.len() {
            // Brokers come up over the first seconds, not all at once.
            let after = world.ctx.rng.u64(0..3_000);
            world
                .ctx
                .queue
                .after(after, Happening::Fault(Fault::RestartBroker(i)));
        }
        let (from, until) = (world.ctx.params.faults_from, world.ctx.params.faults_until);
        world.ctx.queue.after(from, Happening::Fault(Fault::Next));
        world
            .ctx
            .queue
            .after(until, Happening::Fault(Fault::HealAll));
        world.ctx.obs.clear();
        world
    }

    /// Runs to the end, checking every invariant after every happening and
    /// liveness at the end.
    pub fn run(mut self) -> Result<Outcome, Failure> {
        let mut invariants = invariants::all();
        let p = &self.ctx.params;
        let line = format!(
            "{} nodes, sets {:?}, heartbeat timeout {} ms, unclean {}, read barrier {}",
            p.nodes, p.sets, p.heartbeat_timeout, p.elect_unclean, p.process_read_event
        );
        self.ctx.note(line);
        let end = self.ctx.params.end;
        while let Some(happening) = self.ctx.queue.pop_until(end) {
            self.outcome.events += 1;
            self.step(happening);
            let obs = std::mem::take(&mut self.ctx.obs);
            self.record(&obs);
            for invariant in &mut invariants {
                if let Err(problem) = invariant.check(&self, &obs) {
                    return Err(self.failure(invariant.name(), problem));
                }
            }
        }
        self.ctx.queue.advance_to(end);
        if let Err(problem) = invariants::liveness::check(&self) {
            return Err(self.failure("liveness", problem));
        }
        self.outcome.digest = self.ctx.trace.digest;
        Ok(self.outcome)
    }

    fn failure(&self, invariant: &'static str, problem: String) -> Failure {
        Failure {
            seed: self.ctx.params.seed,
            flaw: self.ctx.params.flaw,
            at: self.ctx.now(),
            invariant,
            problem,
            trace: self.ctx.trace.to_string(),
        }
    }

    fn step(&mut self, happening: Happening) {
        let now = self.ctx.now();
        match happening {
            Happening::Deliver { from, to, msg } => {
                if !msg.is_routine() {
                    let line = format!("{from} -> {to} {}", msg.describe());
                    self.ctx.trace.push(now, line);
                }
                match to {
                    Endpoint::Node(n) if self.nodes[n].up => {
                        self.nodes[n].on_message(&mut self.ctx, from, msg)
                    }
                    Endpoint::Node(_) => {}
                    Endpoint::Broker(b) => {
                        let happening = Happening::Deliver { from, to, msg };
                        self.brokers[b].deliver(&mut self.ctx, happening);
                    }
                }
            }
            Happening::Node { node, inc, timer } => {
                let n = &mut self.nodes[node];
                if n.up && n.inc == inc {
                    n.on_timer(&mut self.ctx, timer);
                }
            }
            Happening::Broker { broker, inc, timer } => {
                let happening = Happening::Broker { broker, inc, timer };
                self.brokers[broker].deliver(&mut self.ctx, happening);
            }
            Happening::Fault(fault) => {
                if !matches!(fault, Fault::Next) {
                    self.ctx.trace.push(now, format!("fault {fault:?}"));
                }
                self.fault(fault);
            }
        }
    }

    /// Traces and counts what the invariants will see.
    fn record(&mut self, obs: &[Obs]) {
        let now = self.ctx.now();
        for o in obs {
            let line = match o {
                Obs::Applied {
                    node, index, entry, ..
                } => {
                    // Only the first application of an index (by the leader
                    // that committed it) is traced; catching up is not news.
                    if *index <= self.committed {
                        continue;
                    }
                    self.committed = *index;
                    let Payload::Decision(events) = &entry.payload else {
                        continue;
                    };
                    self.outcome.entries += 1;
                    self.outcome.masters += events
                        .iter()
                        .filter(|e| {
                            matches!(
                                e,
                                Event::ElectMaster {
                                    new_master: Some(_),
                                    ..
                                }
                            )
                        })
                        .count() as u64;
                    format!("n{node} committed {index} (t{}) {events:?}", entry.term)
                }
                Obs::Leader { node, term, .. } => {
                    self.outcome.leaders += 1;
                    format!("n{node} leads term {term}")
                }
                Obs::Decided {
                    node, term, index, ..
                } => format!("n{node} decided into {index} (t{term})"),
                Obs::Acked { node, term, index } => {
                    format!("n{node} acknowledged {index} (t{term})")
                }
                Obs::Restarted { node } => format!("n{node} started"),
                Obs::Identity { broker, set, id } => {
                    format!("b{broker} wrote identity {set}/{id}")
                }
            };
            self.ctx.trace.push(now, line);
        }
    }

    /// Whether node `n` is up and a serving leader.
    pub fn is_serving(&self, n: usize) -> bool {
        self.nodes[n].is_serving()
    }

    /// The serving leader of the highest term, if any.
    pub fn leader(&self) -> Option<usize> {
        (0..self.nodes.len())
            .filter(|n| self.is_serving(*n))
            .max_by_key(|n| self.nodes[*n].raft.durable.term)
    }

    /// Whether broker `b` runs (neither down nor paused).
    pub fn broker_running(&self, b: usize) -> bool {
        matches!(self.brokers[b].process, Process::Up)
    }
}
