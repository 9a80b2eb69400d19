//! The network between controller nodes and brokers: who can reach whom
//! (partitions, one-way cuts), and what happens to each message on its way
//! (loss, delay). Every message is independent, as separate TCP connections
//! and retransmission timeouts make them: two messages on one link can
//! arrive out of order, and a delay spike can hold one back for seconds.

use std::collections::{BTreeMap, BTreeSet};

use fastrand::Rng;

use crate::simulation::queue::Time;

/// Something with an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Endpoint {
    /// Controller node `i`.
    Node(usize),
    /// Broker replica `i` (its index among all brokers of the run).
    Broker(usize),
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Node(i) => write!(f, "n{i}"),
            Endpoint::Broker(i) => write!(f, "b{i}"),
        }
    }
}

/// Reachability and message fate.
#[derive(Debug, Clone)]
pub struct Net {
    /// The side of the current partition each endpoint is on; absent = 0.
    /// Endpoints on different sides cannot talk at all.
    side: BTreeMap<Endpoint, u8>,
    /// Links that drop everything in one direction `(from, to)`: an
    /// asymmetric fault, such as a firewall rule or a half-broken NIC.
    cut: BTreeSet<(Endpoint, Endpoint)>,
    /// Probability that a message is lost.
    pub loss: f64,
    /// Probability that a message is held back by a delay spike.
    pub spike: f64,
    /// The longest delay spike, ms.
    pub spike_max: Time,
}

/// The usual one-way latency, ms.
const BASE_DELAY: (Time, Time) = (1, 8);

impl Net {
    /// A healthy network.
    pub fn new() -> Net {
        Net {
            side: BTreeMap::new(),
            cut: BTreeSet::new(),
            loss: 0.0,
            spike: 0.0,
            spike_max: 0,
        }
    }

    /// Whether `from` can send to `to` at all.
    pub fn connected(&self, from: Endpoint, to: Endpoint) -> bool {
        let side = |e: Endpoint| self.side.get(&e).copied().unwrap_or(0);
        side(from) == side(to) && !self.cut.contains(&(from, to))
    }

    /// The delay of one message from `from` to `to`, or `None` when it is
    /// lost (or cannot get there).
    pub fn transit(&self, from: Endpoint, to: Endpoint, rng: &mut Rng) -> Option<Time> {
        if from == to {
            return Some(0);
        }
        if !self.connected(from, to) {
            return None;
        }
        if self.loss > 0.0 && rng.f64() < self.loss {
            return None;
        }
        let mut delay = rng.u64(BASE_DELAY.0..=BASE_DELAY.1);
        if self.spike > 0.0 && rng.f64() < self.spike {
            delay += rng.u64(0..=self.spike_max);
        }
        Some(delay)
    }

    /// Splits the endpoints: each of `sides` goes to its side, everything
    /// else stays on side 0. Replaces any earlier partition.
    pub fn partition(&mut self, sides: BTreeMap<Endpoint, u8>) {
        self.side = sides;
    }

    /// Ends the partition (one-way cuts stay).
    pub fn end_partition(&mut self) {
        self.side.clear();
    }

    /// Drops everything from `from` to `to` until [`Net::mend`].
    pub fn cut(&mut self, from: Endpoint, to: Endpoint) {
        self.cut.insert((from, to));
    }

    /// Mends one cut.
    pub fn mend(&mut self, from: Endpoint, to: Endpoint) {
        self.cut.remove(&(from, to));
    }

    /// Every fault gone.
    pub fn heal(&mut self) {
        *self = Net::new();
    }

    /// A short description of the current faults, for traces.
    pub fn describe(&self) -> String {
        let sides: Vec<String> = self.side.iter().map(|(e, s)| format!("{e}:{s}")).collect();
        let cuts: Vec<String> = self.cut.iter().map(|(a, b)| format!("{a}->{b}")).collect();
        format!(
            "partition [{}] cuts [{}] loss {:.2} spikes {:.2}/{}ms",
            sides.join(" "),
            cuts.join(" "),
            self.loss,
            self.spike,
            self.spike_max
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_and_cuts_block_only_what_they_name() {
        let mut net = Net::new();
        let (a, b, c) = (Endpoint::Node(0), Endpoint::Node(1), Endpoint::Broker(0));
        net.partition([(a, 1)].into());
        assert!(!net.connected(a, b) && !net.connected(c, a));
        assert!(net.connected(b, c));
        net.end_partition();
        net.cut(a, b);
        assert!(!net.connected(a, b) && net.connected(b, a));
        let mut rng = Rng::with_seed(1);
        assert!(net.transit(b, a, &mut rng).is_some());
        net.heal();
        assert!(net.connected(a, b));
    }
}
