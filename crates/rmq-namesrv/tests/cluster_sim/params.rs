//! Everything one seed decides before the run: the cluster's size, the
//! brokers and which nodes each registers with, timings, fault rates.

use fastrand::Rng;

/// One run's settings.
#[derive(Debug, Clone)]
pub struct Params {
    /// NameServers (3–7).
    pub nodes: usize,
    /// Brokers.
    pub brokers: usize,
    /// Which nodes each broker registers with (at least one).
    pub registers_with: Vec<Vec<usize>>,
    /// The brokers' heartbeat timeout.
    pub timeout_ms: u64,
    /// The brokers' registration period.
    pub period_ms: u64,
    /// Time between two gossip rounds of a node.
    pub gossip_ms: u64,
    /// A node not heard from this long is dead to another.
    pub dead_after_ms: u64,
    /// The expiry scan's interval.
    pub scan_ms: u64,
    /// How long a closed broker connection takes to be noticed.
    pub close_after_ms: u64,
    /// A message (gossip exchange, pull, answer) is lost with this
    /// probability while faults run (percent).
    pub loss_percent: u32,
    /// Per second of faults: chance (in thousandths) of each kind.
    pub partition_rate: u32,
    /// Node crash rate.
    pub crash_rate: u32,
    /// Broker kill rate (connections close).
    pub kill_rate: u32,
    /// Broker vanish rate (nothing closes).
    pub vanish_rate: u32,
    /// Broker–node link cut rate.
    pub cut_rate: u32,
    /// Topic change rate.
    pub change_rate: u32,
    /// How long faults run.
    pub faults_ms: u64,
    /// A restarted node keeps its route snapshot (warm) or starts empty.
    pub warm_restarts: bool,
    /// A deliberate defect, to show the invariants catch it.
    pub flaw: Option<Flaw>,
}

/// Deliberate defects of the code between core and table, each of which
/// some invariant must catch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flaw {
    /// A warm restart keeps the relayed brokers of the route snapshot,
    /// which the new incarnation's core knows nothing of.
    RestoreRelayed,
    /// Relayed brokers are never dropped.
    KeepRelayed,
    /// A node that tells its core nothing of its direct registrations (so
    /// the core pulls the broker from peers) and writes a relayed
    /// registration over a direct one.
    RelayOverDirect,
}

impl Params {
    /// The settings of `seed`.
    pub fn draw(rng: &mut Rng) -> Params {
        let nodes = rng.usize(3..=7);
        let brokers = rng.usize(3..=10);
        let registers_with = (0..brokers)
            .map(|_| {
                let mut with: Vec<usize> = (0..nodes).filter(|_| rng.u32(0..3) == 0).collect();
                if with.is_empty() {
                    with.push(rng.usize(0..nodes));
                }
                with
            })
            .collect();
        let timeout_ms = rng.u64(6..=15) * 1_000;
        let gossip_ms = rng.u64(2..=10) * 100;
        Params {
            nodes,
            brokers,
            registers_with,
            timeout_ms,
            period_ms: rng.u64(10..=30) * 100,
            gossip_ms,
            dead_after_ms: gossip_ms * 8,
            scan_ms: 1_000,
            close_after_ms: rng.u64(1..=20) * 100,
            loss_percent: rng.u32(0..=30),
            partition_rate: rng.u32(0..=150),
            crash_rate: rng.u32(0..=40),
            kill_rate: rng.u32(0..=40),
            vanish_rate: rng.u32(0..=20),
            cut_rate: rng.u32(0..=60),
            change_rate: rng.u32(0..=100),
            faults_ms: rng.u64(20..=60) * 1_000,
            warm_restarts: rng.bool(),
            flaw: None,
        }
    }
}
