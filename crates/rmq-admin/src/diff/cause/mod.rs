//! Why two NameServers differ on a fact, from what each says of its
//! NameServer cluster (WAYMARK_GET_CLUSTER_STATUS, docs/protocol-extensions.md).
//!
//! Waymark NameServers of one cluster converge by themselves, so a
//! difference between them has a reason an operator can act on: one of
//! them is no cluster node at all (a Java NameServer, or its cluster off),
//! they are in different clusters, one is still bootstrapping, one sees
//! the node holding the broker dead, or is still pulling its registration.
//! Where none of these holds and both hold the same registration of the
//! broker, the difference was made by an admin write, which applies to one
//! NameServer only, as in Java.
//!
//! Pure: [`causes`] takes the NameServers' cluster roles and one
//! difference; it asks nothing.

mod kind;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

use rmq_protocol::cluster_status::{
    BrokerSource, BrokerStatus, ClusterStatusBody, DataVersionStatus, Liveness,
};

pub use kind::Cause;

use super::role::ClusterRole;
use super::{Difference, Snapshot};

/// One answering NameServer as the cause logic sees it.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    /// As given with `-n`.
    pub label: &'a str,
    /// What it holds.
    pub snapshot: &'a Snapshot,
}

impl View<'_> {
    fn role(&self) -> &ClusterRole {
        &self.snapshot.cluster
    }
}

/// Why the NameServers of `views` differ on `diff` (whose values follow
/// the order of `views`): every cause found for every pair that differs,
/// each once.
pub fn causes(views: &[View<'_>], diff: &Difference) -> Vec<Cause> {
    let mut found = Vec::new();
    let mut add = |cause: Cause| {
        if !found.contains(&cause) {
            found.push(cause);
        }
    };
    if diff.field == "orderConf" {
        add(Cause::KvPerNameServer);
        return found;
    }
    let names = Names::of(views);
    let components = components(views);
    let brokers = brokers_of(views, diff);
    let none_clustered = views
        .iter()
        .all(|v| matches!(v.role(), ClusterRole::NotClusterNode));
    for i in 0..views.len() {
        for j in i + 1..views.len() {
            if diff.values[i] == diff.values[j] {
                continue;
            }
            for cause in pair_causes(views, i, j, &names, &components, &brokers, none_clustered) {
                add(cause);
            }
        }
    }
    found
}

/// The causes of a difference between `views[i]` and `views[j]`.
fn pair_causes(
    views: &[View<'_>],
    i: usize,
    j: usize,
    names: &Names,
    components: &[usize],
    brokers: &BTreeSet<String>,
    none_clustered: bool,
) -> Vec<Cause> {
    let (a, b) = (&views[i], &views[j]);
    let mut causes = Vec::new();
    // Whoever is no cluster node, or cannot say, explains it all.
    for view in [a, b] {
        match view.role() {
            ClusterRole::NotClusterNode if none_clustered => causes.push(Cause::NoClusterNodes),
            ClusterRole::NotClusterNode => causes.push(Cause::NotClusterNode {
                ns: view.label.to_owned(),
            }),
            ClusterRole::Unknown(error) => causes.push(Cause::StatusUnknown {
                ns: view.label.to_owned(),
                error: error.clone(),
            }),
            ClusterRole::Node(_) => {}
        }
    }
    let (Some(a_node), Some(b_node)) = (a.role().node(), b.role().node()) else {
        return causes;
    };
    if components[i] != components[j] {
        let id = |body: &ClusterStatusBody| body.node.as_ref().map(|n| n.cluster_id.clone());
        // `b` is named as the one outside `a`'s cluster: its id first.
        let ids = match (id(b_node), id(a_node)) {
            (Some(b_id), Some(a_id)) if b_id != a_id => Some((b_id, a_id)),
            _ => None,
        };
        causes.push(Cause::OtherCluster {
            ns: b.label.to_owned(),
            other: a.label.to_owned(),
            ids,
        });
        return causes;
    }
    for view in [a, b] {
        if view
            .role()
            .node()
            .and_then(|n| n.node.as_ref())
            .is_some_and(|n| !n.ready)
        {
            causes.push(Cause::NotReady {
                ns: view.label.to_owned(),
            });
        }
    }
    for broker in brokers {
        for (view, body) in [(a, a_node), (b, b_node)] {
            broker_causes(views, view, body, broker, names, &mut causes);
        }
    }
    if causes.is_empty() {
        let same = !brokers.is_empty()
            && brokers
                .iter()
                .all(|broker| copies(a_node, broker) == copies(b_node, broker));
        causes.push(match (brokers.len(), same) {
            (0, _) => Cause::PerNameServerWrite { broker: None },
            (_, true) => Cause::PerNameServerWrite {
                broker: Some(brokers.iter().cloned().collect::<Vec<_>>().join(", ")),
            },
            (_, false) => Cause::Unexplained,
        });
    }
    causes
}

/// What `view` (a cluster node) says of the nodes holding `broker`
/// directly: dead, unknown to it, or not pulled from yet; and of its own
/// copy, relayed with another DataVersion or restored.
fn broker_causes(
    views: &[View<'_>],
    view: &View<'_>,
    body: &ClusterStatusBody,
    broker: &str,
    names: &Names,
    causes: &mut Vec<Cause>,
) {
    let me = body.node.as_ref().map_or("", |n| n.name.as_str());
    let holders = holders(views, broker);
    let held_here = holders.contains_key(me);
    if !held_here {
        for holder in holders.keys().filter(|h| h.as_str() != me) {
            let shown = names.label(holder);
            match body.member(holder) {
                None => causes.push(Cause::HolderUnknown {
                    ns: view.label.to_owned(),
                    holder: shown,
                    broker: broker.to_owned(),
                }),
                Some(member) if member.liveness == Liveness::Dead => {
                    causes.push(Cause::HolderDead {
                        ns: view.label.to_owned(),
                        holder: shown,
                        broker: broker.to_owned(),
                    });
                }
                Some(member) if member.behind > 0 => causes.push(Cause::Pulling {
                    ns: view.label.to_owned(),
                    holder: shown,
                    behind: member.behind,
                }),
                Some(_) => {}
            }
        }
    }
    for copy in body
        .brokers
        .iter()
        .filter(|b| b.broker_name.as_deref() == Some(broker))
    {
        match copy.source {
            BrokerSource::Relayed => {
                let from = copy.relayed_from.clone().unwrap_or_default();
                let direct = holders
                    .values()
                    .flatten()
                    .find(|held| held.address == copy.address && held.cluster == copy.cluster);
                // Another registration than the holder's, or relayed from
                // a NameServer compared that does not hold it (a copy from
                // one not compared cannot be checked).
                let stale = match direct {
                    Some(held) => held.data_version != copy.data_version,
                    None => names.is_compared(&from),
                };
                if stale {
                    causes.push(Cause::Relayed {
                        broker: broker.to_owned(),
                        holders: holders.keys().map(|h| names.label(h)).collect(),
                        ns: view.label.to_owned(),
                        from: names.label(&from),
                    });
                }
            }
            BrokerSource::Restored => causes.push(Cause::Restored {
                ns: view.label.to_owned(),
                broker: broker.to_owned(),
            }),
            BrokerSource::Direct | BrokerSource::Unknown => {}
        }
    }
}

/// The nodes holding `broker` directly, by name, with their copies: those
/// compared that say so, and those a relayed copy names that were not
/// compared (their copies unknown here).
fn holders<'a>(views: &[View<'a>], broker: &str) -> BTreeMap<String, Vec<&'a BrokerStatus>> {
    let mut holders: BTreeMap<String, Vec<&BrokerStatus>> = BTreeMap::new();
    let compared: BTreeSet<&str> = views
        .iter()
        .filter_map(|v| v.role().node()?.node.as_ref().map(|n| n.name.as_str()))
        .collect();
    for view in views {
        let Some(body) = view.snapshot.cluster.node() else {
            continue;
        };
        let Some(node) = &body.node else { continue };
        for copy in body
            .brokers
            .iter()
            .filter(|b| b.broker_name.as_deref() == Some(broker))
        {
            match (copy.source, &copy.relayed_from) {
                (BrokerSource::Direct, _) => {
                    holders.entry(node.name.clone()).or_default().push(copy);
                }
                (BrokerSource::Relayed, Some(from)) if !compared.contains(from.as_str()) => {
                    holders.entry(from.clone()).or_default();
                }
                _ => {}
            }
        }
    }
    holders
}

/// `broker`'s copies at a node: address → DataVersion.
fn copies<'a>(body: &'a ClusterStatusBody, broker: &str) -> BTreeMap<&'a str, DataVersionStatus> {
    body.brokers
        .iter()
        .filter(|b| b.broker_name.as_deref() == Some(broker))
        .map(|b| (b.address.as_str(), b.data_version))
        .collect()
}

/// The broker names a difference is about: named by its object or field,
/// or, for a topic listed or routed on one side only, the brokers serving
/// the topic anywhere.
fn brokers_of(views: &[View<'_>], diff: &Difference) -> BTreeSet<String> {
    let mut brokers = BTreeSet::new();
    if let Some(name) = diff.object.strip_prefix("broker ") {
        brokers.insert(name.to_owned());
    } else if let Some(name) = diff
        .field
        .strip_prefix("member ")
        .or_else(|| diff.field.strip_prefix("queues "))
        .or_else(|| diff.field.strip_prefix("perm "))
    {
        brokers.insert(name.to_owned());
    } else if diff.object.starts_with("topic ") {
        for view in views {
            for (object, field) in view.snapshot.facts.keys() {
                if *object == diff.object {
                    if let Some(name) = field.strip_prefix("queues ") {
                        brokers.insert(name.to_owned());
                    }
                }
            }
        }
    }
    brokers
}

/// Node names of the NameServers compared, to show them as given with `-n`.
struct Names(BTreeMap<String, String>);

impl Names {
    fn of(views: &[View<'_>]) -> Names {
        Names(
            views
                .iter()
                .filter_map(|v| {
                    let name = &v.role().node()?.node.as_ref()?.name;
                    Some((name.clone(), v.label.to_owned()))
                })
                .collect(),
        )
    }

    /// Whether the node is one of those compared.
    fn is_compared(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// A node as the user named it, or by its own name if not compared.
    fn label(&self, name: &str) -> String {
        self.0.get(name).cloned().unwrap_or_else(|| name.to_owned())
    }
}

/// Which cluster each NameServer is in, as a number per view: two cluster
/// nodes are in one when their cluster ids are equal and they know a
/// member in common (either one counts, as does the other itself). A view
/// that is no cluster node is alone.
fn components(views: &[View<'_>]) -> Vec<usize> {
    let known: Vec<Option<(&str, BTreeSet<&str>)>> = views
        .iter()
        .map(|v| {
            let body = v.role().node()?;
            let node = body.node.as_ref()?;
            let mut names: BTreeSet<&str> = body.members.iter().map(|m| m.name.as_str()).collect();
            names.insert(&node.name);
            Some((node.cluster_id.as_str(), names))
        })
        .collect();
    let mut component: Vec<usize> = (0..views.len()).collect();
    for i in 0..views.len() {
        for j in i + 1..views.len() {
            let joined = match (&known[i], &known[j]) {
                (Some((id_i, names_i)), Some((id_j, names_j))) => {
                    id_i == id_j && !names_i.is_disjoint(names_j)
                }
                _ => false,
            };
            if joined {
                let (from, to) = (component[j], component[i]);
                for c in component.iter_mut().filter(|c| **c == from) {
                    *c = to;
                }
            }
        }
    }
    component
}
