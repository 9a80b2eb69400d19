//! What every handler shares: the clock and event queue, the network, the
//! seeded generator, the run's parameters, the observations of the event
//! being handled, and the address book of brokers (the controller knows
//! brokers only by address, as NOTIFY_BROKER_ROLE_CHANGED does).

use std::collections::BTreeMap;

use fastrand::Rng;

use crate::simulation::msg::{BrokerTimer, Happening, Msg, NodeTimer};
use crate::simulation::net::{Endpoint, Net};
use crate::simulation::observe::Obs;
use crate::simulation::params::Params;
use crate::simulation::queue::{Queue, Time};
use crate::simulation::trace::Trace;

/// Shared by every handler.
pub struct Ctx {
    /// The event queue; its time is the simulated time.
    pub queue: Queue<Happening>,
    /// The network.
    pub net: Net,
    /// The only source of randomness.
    pub rng: Rng,
    /// The run's parameters.
    pub params: Params,
    /// Observations of the event being handled.
    pub obs: Vec<Obs>,
    /// Broker address → broker index.
    pub addrs: BTreeMap<String, usize>,
    /// Recent happenings, for failure reports.
    pub trace: Trace,
    next_id: u64,
}

impl Ctx {
    /// A context for `params`, drawing from `rng`.
    pub fn new(params: Params, rng: Rng) -> Ctx {
        Ctx {
            queue: Queue::new(),
            net: Net::new(),
            rng,
            params,
            obs: Vec::new(),
            addrs: BTreeMap::new(),
            trace: Trace::default(),
            next_id: 0,
        }
    }

    /// The simulated time.
    pub fn now(&self) -> Time {
        self.queue.now()
    }

    /// A number never handed out before in this run (request ids,
    /// connection ids).
    pub fn unique(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Sends `msg`; the network decides whether and when it arrives.
    pub fn send(&mut self, from: Endpoint, to: Endpoint, msg: Msg) {
        if let Some(delay) = self.net.transit(from, to, &mut self.rng) {
            self.queue
                .after(delay, Happening::Deliver { from, to, msg });
        }
    }

    /// Sets a node timer.
    pub fn node_timer(&mut self, node: usize, inc: u64, after: Time, timer: NodeTimer) {
        self.queue
            .after(after, Happening::Node { node, inc, timer });
    }

    /// Sets a broker timer.
    pub fn broker_timer(&mut self, broker: usize, inc: u64, after: Time, timer: BrokerTimer) {
        self.queue
            .after(after, Happening::Broker { broker, inc, timer });
    }

    /// Adds `line` to the trace, at the current time.
    pub fn note(&mut self, line: String) {
        let now = self.now();
        self.trace.push(now, line);
    }

    /// Whether faults are still being injected.
    pub fn faulty(&self) -> bool {
        self.now() < self.params.faults_until
    }
}
