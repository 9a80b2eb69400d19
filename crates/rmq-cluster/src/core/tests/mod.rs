//! Unit tests of the core: cores of a few members over the gossip model,
//! driven call by call; each test checks what the cores return and
//! publish.

mod holders;
mod incarnations;
mod peers_input;
mod readiness;
mod tombstones;

use std::collections::BTreeMap;

use super::*;
use crate::model::GossipModel;

/// Members judged dead after this long without a heartbeat.
const DEAD_AFTER: u64 = 3_000;
/// The brokers' heartbeat timeout in these tests.
const TIMEOUT: u64 = 120_000;

/// A few cores over the gossip model, with one clock.
struct Net {
    model: GossipModel,
    cores: BTreeMap<String, ClusterCore>,
    /// The incarnation each name runs now.
    generations: BTreeMap<String, u64>,
    now: Millis,
}

fn id(name: &str) -> MemberId {
    MemberId::new(name, 1)
}

fn broker(addr: &str) -> BrokerRef {
    BrokerRef::new("DefaultCluster", addr)
}

fn digest(name: &str, counter: i64) -> BrokerDigest {
    BrokerDigest {
        name: name.to_owned(),
        id: 0,
        version: Version {
            state_version: 0,
            counter,
            timestamp: 1_700_000_000_000 + counter,
        },
        topics: 7,
        topic_count: 3,
        changed_at: 1_700_000_000_000,
        timeout_ms: TIMEOUT,
        silent_ms: None,
    }
}

impl Net {
    fn new(names: &[&str], has_seeds: bool) -> Net {
        let mut net = Net {
            model: GossipModel::new(DEAD_AFTER),
            cores: BTreeMap::new(),
            generations: BTreeMap::new(),
            now: 1_000,
        };
        for name in names {
            net.start(name, has_seeds);
        }
        net
    }

    /// Nodes without seeds that have heard each other's heartbeats advance
    /// (the failure detector takes a node learnt secondhand for live only
    /// then).
    fn joined(names: &[&str]) -> Net {
        let mut net = Net::new(names, false);
        net.step(names, 100);
        net.step(names, 100);
        net
    }

    fn start(&mut self, name: &str, has_seeds: bool) {
        self.start_incarnation(name, 1, has_seeds);
    }

    /// `name` crashed and starts again as incarnation `generation`, with
    /// seeds and an empty table.
    fn restart(&mut self, name: &str, generation: u64) {
        self.model.leave(&self.member(name));
        self.start_incarnation(name, generation, true);
    }

    fn start_incarnation(&mut self, name: &str, generation: u64, has_seeds: bool) {
        let config = CoreConfig {
            has_seeds,
            ..CoreConfig::default()
        };
        let member = MemberId::new(name, generation);
        let core = ClusterCore::new(member.clone(), &format!("{name}:9876"), config, self.now);
        self.model.join(&member, self.now);
        self.cores.insert(name.to_owned(), core);
        self.generations.insert(name.to_owned(), generation);
        self.flush(name);
    }

    /// The member `name` runs as now.
    fn member(&self, name: &str) -> MemberId {
        MemberId::new(name, self.generations.get(name).copied().unwrap_or(1))
    }

    /// A registration of the broker at `addr` with `name` directly, now.
    fn register(&mut self, name: &str, addr: &str, digest: BrokerDigest) {
        let now = self.now;
        self.core(name).direct_registered(broker(addr), digest, now);
    }

    fn core(&mut self, name: &str) -> &mut ClusterCore {
        self.cores.get_mut(name).expect("a started core")
    }

    /// Hands a core's publications to the model.
    fn flush(&mut self, name: &str) {
        let publications = self.core(name).take_publications();
        self.model.publish(&self.member(name), &publications);
    }

    /// Every core's publications out, a heartbeat each, every pair of
    /// `up` exchanges.
    fn gossip(&mut self, up: &[&str]) {
        for name in up {
            self.flush(name);
            self.model.beat(&self.member(name), self.now);
        }
        for a in up {
            for b in up {
                self.model
                    .exchange(&self.member(a), &self.member(b), self.now);
            }
        }
    }

    /// One core reads its changes and ticks: the effects it returns.
    fn feed(&mut self, name: &str) -> Vec<Effect> {
        let now = self.now;
        let updates = self.model.changes(&self.member(name), now);
        let core = self.cores.get_mut(name).expect("a started core");
        let mut effects = Vec::new();
        for update in updates {
            effects.extend(core.member_changed(update, now));
        }
        effects.extend(core.tick(now));
        self.flush(name);
        effects
    }

    /// `ms` pass, then gossip among `up` and every one of them feeds.
    fn step(&mut self, up: &[&str], ms: u64) -> BTreeMap<String, Vec<Effect>> {
        self.now += ms;
        self.gossip(up);
        up.iter()
            .map(|name| (name.to_string(), self.feed(name)))
            .collect()
    }
}

/// The pulls among `effects`.
fn pulls(effects: &[Effect]) -> Vec<PullRequest> {
    effects
        .iter()
        .filter_map(|effect| match effect {
            Effect::Pull(request) => Some(request.clone()),
            _ => None,
        })
        .collect()
}

fn applied(effects: &[Effect]) -> Vec<BrokerRef> {
    effects
        .iter()
        .filter_map(|effect| match effect {
            Effect::ApplyPulled { broker, .. } => Some(broker.clone()),
            _ => None,
        })
        .collect()
}

fn removed(effects: &[Effect]) -> Vec<(BrokerRef, RelayedGone)> {
    effects
        .iter()
        .filter_map(|effect| match effect {
            Effect::RemoveRelayed { broker, why } => Some((broker.clone(), why.clone())),
            _ => None,
        })
        .collect()
}

fn refusals(effects: &[Effect]) -> Vec<RefusalKind> {
    effects
        .iter()
        .filter_map(|effect| match effect {
            Effect::Refused { kind, .. } => Some(*kind),
            _ => None,
        })
        .collect()
}

/// `b` learns the broker `a` holds directly, pulls it and applies it.
fn relay(net: &mut Net, a: &str, b: &str, addr: &str, d: &BrokerDigest) {
    let effects = net.step(&[a, b], 100);
    let requests = pulls(&effects[b]);
    assert_eq!(requests.len(), 1, "{b} pulls {addr}: {effects:?}");
    assert_eq!(requests[0].from, id(a));
    assert_eq!(requests[0].remoting, format!("{a}:9876"));
    let now = net.now;
    let done = net.core(b).pull_done(requests[0].id, Ok(d.clone()), now);
    assert_eq!(applied(&done), vec![broker(addr)], "{done:?}");
    assert_eq!(net.core(b).relayed_from(&broker(addr)), Some(&id(a)));
}

/// Two groups that do not hear each other: `ms` pass, each group gossips
/// within itself, and every core feeds.
fn step_apart(net: &mut Net, groups: &[&[&str]], ms: u64) -> BTreeMap<String, Vec<Effect>> {
    net.now += ms;
    for group in groups {
        net.gossip(group);
    }
    groups
        .iter()
        .flat_map(|group| group.iter())
        .map(|name| (name.to_string(), net.feed(name)))
        .collect()
}

/// Answers `name`'s pulls of `b` as the members asked would: with `d`
/// from one that holds it (directly or relayed), not held otherwise.
fn answer_pulls(net: &mut Net, name: &str, effects: &[Effect], b: &BrokerRef, d: &BrokerDigest) {
    for request in pulls(effects) {
        let holds = net.cores[&request.from.node].is_direct(b)
            || net.cores[&request.from.node].relayed_from(b).is_some();
        let answer = if holds {
            Ok(d.clone())
        } else {
            Err(PullFailure::NotHeld)
        };
        let now = net.now;
        net.core(name).pull_done(request.id, answer, now);
    }
}

/// Members a, p1 and p2, where a holds the broker 10.0.0.1:10911 alone
/// (10 s heartbeat timeout) and p1 and p2 relay it from a.
fn held_by_a_relayed_by_p1_and_p2() -> (Net, BrokerRef, BrokerDigest) {
    let mut net = Net::joined(&["a", "p1", "p2"]);
    let b = broker("10.0.0.1:10911");
    let d = BrokerDigest {
        timeout_ms: 10_000,
        ..digest("broker-a", 1)
    };
    net.register("a", "10.0.0.1:10911", d.clone());
    for _ in 0..10 {
        let effects = net.step(&["a", "p1", "p2"], 100);
        for name in ["p1", "p2"] {
            answer_pulls(&mut net, name, &effects[name], &b, &d);
        }
    }
    assert_eq!(net.cores["p1"].relayed_from(&b), Some(&id("a")));
    assert_eq!(net.cores["p2"].relayed_from(&b), Some(&id("a")));
    (net, b, d)
}
