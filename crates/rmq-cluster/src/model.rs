//! A deterministic model of what the gossip library gives the core, for
//! unit tests and the cluster simulation: every node's published keys with
//! a version per write, reconciled between two nodes per exchange (the
//! newer view of each node wins, as scuttlebutt's), and liveness judged
//! from heartbeats an observer has heard of, directly or through others.
//!
//! It models the guarantees the core relies on, not chitchat's code: one
//! node's keys arrive in the order they were written and never older than
//! already seen; a deleted key travels as a deletion; a node whose
//! heartbeat an observer has not seen advance for `dead_after_ms` is dead
//! to it. It keeps deletions forever (chitchat forgets them after a grace
//! period and resets laggards instead, which reads the same to the core).

use std::collections::BTreeMap;

use crate::core::{Effect, Liveness, MemberId, MemberUpdate, Millis};

/// One key of a node's state.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key {
    value: Option<String>,
    version: u64,
}

/// A node's state as some node knows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct NodeView {
    keys: BTreeMap<String, Key>,
    max_version: u64,
    heartbeat: u64,
}

/// What one observer knows of every node, itself included.
#[derive(Debug, Clone, Default)]
struct Observer {
    views: BTreeMap<MemberId, NodeView>,
    /// When each node's heartbeat was last seen to advance.
    heard: BTreeMap<MemberId, Millis>,
    /// The version of each node's view last handed to the core.
    read: BTreeMap<MemberId, (u64, Liveness)>,
}

/// The model: one observer per node.
#[derive(Debug, Clone, Default)]
pub struct GossipModel {
    observers: BTreeMap<MemberId, Observer>,
    /// A node not heard from for this long is dead to an observer.
    pub dead_after_ms: u64,
}

impl GossipModel {
    /// An empty model judging nodes dead after `dead_after_ms`.
    pub fn new(dead_after_ms: u64) -> Self {
        GossipModel {
            observers: BTreeMap::new(),
            dead_after_ms,
        }
    }

    /// Adds a node (a new incarnation); it knows only itself.
    pub fn join(&mut self, id: &MemberId, now: Millis) {
        let mut observer = Observer::default();
        observer.views.insert(id.clone(), NodeView::default());
        observer.heard.insert(id.clone(), now);
        self.observers.insert(id.clone(), observer);
    }

    /// Removes a node's observer (it crashed: what it knew is gone; what
    /// others know of it stays until they judge it dead).
    pub fn leave(&mut self, id: &MemberId) {
        self.observers.remove(id);
    }

    /// Carries out a core's gossip effects on its own state.
    pub fn publish(&mut self, id: &MemberId, effects: &[Effect]) {
        let Some(observer) = self.observers.get_mut(id) else {
            return;
        };
        let own = observer.views.entry(id.clone()).or_default();
        for effect in effects {
            let (key, value) = match effect {
                Effect::Publish { key, value } => (key, Some(value.clone())),
                Effect::Delete { key } => (key, None),
                _ => continue,
            };
            if own.keys.get(key).is_some_and(|k| k.value == value) {
                continue;
            }
            own.max_version += 1;
            let version = own.max_version;
            own.keys.insert(key.clone(), Key { value, version });
        }
    }

    /// A gossip round of `id`: its heartbeat advances.
    pub fn beat(&mut self, id: &MemberId, now: Millis) {
        if let Some(observer) = self.observers.get_mut(id) {
            observer.views.entry(id.clone()).or_default().heartbeat += 1;
            observer.heard.insert(id.clone(), now);
        }
    }

    /// `a` and `b` reconcile: each takes, for every node, whichever view is
    /// newer, and notes whose heartbeats advanced.
    pub fn exchange(&mut self, a: &MemberId, b: &MemberId, now: Millis) {
        if a == b {
            return;
        }
        let (Some(from_a), Some(from_b)) = (
            self.observers.get(a).cloned(),
            self.observers.get(b).cloned(),
        ) else {
            return;
        };
        for (target, source) in [(a, &from_b), (b, &from_a)] {
            let observer = self.observers.get_mut(target).expect("checked above");
            for (node, theirs) in &source.views {
                if node == target {
                    continue;
                }
                let ours = observer.views.entry(node.clone()).or_default();
                if theirs.heartbeat > ours.heartbeat {
                    // As the library's failure detector: the first
                    // heartbeat of a node learnt secondhand is no sign of
                    // life, only a later one that advanced.
                    if ours.heartbeat > 0 {
                        observer.heard.insert(node.clone(), now);
                    }
                    ours.heartbeat = theirs.heartbeat;
                }
                if theirs.max_version > ours.max_version {
                    for (key, value) in &theirs.keys {
                        if value.version > ours.max_version {
                            ours.keys.insert(key.clone(), value.clone());
                        }
                    }
                    ours.max_version = theirs.max_version;
                }
            }
        }
    }

    /// What the gossip driver would hand `id`'s core now: every other
    /// node whose state or liveness changed since the last call.
    pub fn changes(&mut self, id: &MemberId, now: Millis) -> Vec<MemberUpdate> {
        let dead_after = self.dead_after_ms;
        let Some(observer) = self.observers.get_mut(id) else {
            return Vec::new();
        };
        let mut updates = Vec::new();
        for (node, view) in &observer.views {
            if node == id {
                continue;
            }
            let liveness = match observer.heard.get(node) {
                Some(heard) if now.saturating_sub(*heard) <= dead_after => Liveness::Live,
                _ => Liveness::Dead,
            };
            let (read_version, read_liveness) = observer
                .read
                .get(node)
                .copied()
                .unwrap_or((0, Liveness::Unknown));
            if read_version == view.max_version && read_liveness == liveness {
                continue;
            }
            let changes = view
                .keys
                .iter()
                .filter(|(_, key)| key.version > read_version)
                .map(|(key, value)| (key.clone(), value.value.clone()))
                .collect();
            updates.push(MemberUpdate {
                id: node.clone(),
                liveness,
                gossip_addr: node.node.clone(),
                changes,
                full: false,
            });
            observer
                .read
                .insert(node.clone(), (view.max_version, liveness));
        }
        updates
    }
}
