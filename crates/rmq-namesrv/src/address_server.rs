//! The address server of RocketMQ, on the HTTP port: `GET
//! /rocketmq/{subgroup}` answers the NameServer list that Java brokers with
//! `fetchNamesrvAddrByAddressServer=true` and Java clients without a
//! `namesrvAddr` fetch and fetch again periodically (Java's
//! `DefaultTopAddressing`, at the URL `MixAll.getWSAddr()` builds from
//! `rocketmq.namesrv.domain` and `rocketmq.namesrv.domain.subgroup`).
//!
//! The answer is `host:port;host:port`, `text/plain`, with nothing after
//! the last address: Java trims the body, keeps it up to the first line
//! break and splits it on `;`. Where the list comes from is decided at
//! start-up (docs/deployment.md, "Address server"): the cluster's ready
//! members when the cluster is on, else `addressServerList`, else this
//! NameServer alone.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use rmq_cluster::core::Liveness;

use crate::cluster::NamesrvCluster;

/// Default of `addressServerSubgroup`: Java's default of
/// `rocketmq.namesrv.domain.subgroup`.
pub const DEFAULT_SUBGROUP: &str = "nsaddr";

/// Where the served list comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// The members of this node's cluster that are live and ready, this
    /// node included while it is ready.
    Cluster(Arc<NamesrvCluster>),
    /// `addressServerList`, entries trimmed, in the configured order.
    Configured(Vec<String>),
    /// This NameServer's remoting address; `None` when it is bound to a
    /// wildcard address, which names no host a client could connect to.
    ThisNode(Option<String>),
}

/// The address server: the path it answers and what it answers there.
#[derive(Debug, Clone)]
pub struct AddressServer {
    subgroup: String,
    source: Source,
}

impl AddressServer {
    /// The address server of a node: its cluster when it has one, else
    /// `list` (`addressServerList`, checked at start-up) when not empty,
    /// else its remoting address `remoting` (as bound).
    pub fn new(
        subgroup: &str,
        list: &str,
        cluster: Option<Arc<NamesrvCluster>>,
        remoting: SocketAddr,
    ) -> AddressServer {
        let configured = entries(list);
        let source = match cluster {
            Some(cluster) => Source::Cluster(cluster),
            None if !configured.is_empty() => Source::Configured(configured),
            None => {
                Source::ThisNode((!remoting.ip().is_unspecified()).then(|| remoting.to_string()))
            }
        };
        AddressServer {
            subgroup: subgroup.trim().to_owned(),
            source,
        }
    }

    /// The path Java's `DefaultTopAddressing` asks.
    pub fn path(&self) -> String {
        format!("/rocketmq/{}", self.subgroup)
    }

    /// Where the list comes from.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// What the start-up log should say about the address server: a list
    /// the cluster overrides, or no address to serve at all.
    pub fn warning(&self, list: &str) -> Option<String> {
        match &self.source {
            Source::Cluster(_) if !entries(list).is_empty() => Some(
                "addressServerList is ignored: with the cluster on, the address server lists the cluster's ready members".to_owned(),
            ),
            Source::ThisNode(None) => Some(
                "the address server has no address to list (bindAddress is a wildcard): it answers 503 until addressServerList, a non-wildcard bindAddress or the cluster is set".to_owned(),
            ),
            _ => None,
        }
    }

    /// The addresses served now; empty when there is none to serve.
    pub fn addresses(&self) -> Vec<String> {
        match &self.source {
            Source::Cluster(cluster) => {
                let me = cluster
                    .is_ready()
                    .then(|| cluster.settings().gossip.node.as_str());
                let core = cluster.core().lock();
                let members = core.members().map(|(_, member)| MemberView {
                    liveness: member.liveness,
                    ready: member.ready,
                    remoting: member.remoting.as_deref(),
                });
                ready_members(me, members)
            }
            Source::Configured(list) => list.clone(),
            Source::ThisNode(address) => address.iter().cloned().collect(),
        }
    }

    /// The route of the address server, to merge into the HTTP port's
    /// router. Any other path under `/rocketmq/` is left to the router's
    /// fallback (404).
    pub fn router<S: Clone + Send + Sync + 'static>(self) -> Router<S> {
        let path = self.path();
        let server = Arc::new(self);
        Router::new().route(
            &path,
            get(move || {
                let addresses = server.addresses();
                async move { answer(&addresses) }
            }),
        )
    }
}

/// One member as the address server needs it.
#[derive(Debug, Clone, Copy)]
pub struct MemberView<'a> {
    /// Whether this node hears from it.
    pub liveness: Liveness,
    /// Whether it reports itself ready.
    pub ready: bool,
    /// Its remoting address, once published.
    pub remoting: Option<&'a str>,
}

/// The remoting addresses of the members that are live and report
/// themselves ready, and `me` (this node's, when it is ready), sorted and
/// each once: a member restarted is two incarnations at one address, a
/// stable order keeps Java's "address changed" log quiet. A member not
/// heard from directly yet (`Unknown`) or gone (`Dead`) is left out, as is
/// one still bootstrapping: clients must not be sent where routes are not
/// served.
pub fn ready_members<'a>(
    me: Option<&'a str>,
    members: impl Iterator<Item = MemberView<'a>>,
) -> Vec<String> {
    let others = members
        .filter(|member| member.liveness == Liveness::Live && member.ready)
        .filter_map(|member| member.remoting);
    me.into_iter()
        .chain(others)
        .map(str::trim)
        .filter(|address| !address.is_empty())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// The answer to the address server's path: the list, or 503 when there is
/// nothing to list (Java keeps its current list on any answer but a 200
/// with a non-blank body).
pub fn answer(addresses: &[String]) -> Response {
    if addresses.is_empty() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "no NameServer to list yet\n",
        )
            .into_response();
    }
    (
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        addresses.join(";"),
    )
        .into_response()
}

/// The entries of an `addressServerList` value, trimmed; none when blank.
fn entries(list: &str) -> Vec<String> {
    if list.trim().is_empty() {
        return Vec::new();
    }
    list.split(';')
        .map(|entry| entry.trim().to_owned())
        .collect()
}

/// Why `addressServerSubgroup` may not be `value`: it is one path segment
/// of the URL Java builds without escaping, so it takes letters, digits
/// and `-._~` only.
pub fn check_subgroup(key: &str, value: &str) -> Result<(), String> {
    let value = value.trim();
    let segment = value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-._~".contains(c));
    if value.is_empty() || !segment || value == "." || value == ".." {
        return Err(format!(
            "invalid value for {key}: one URL path segment of letters, digits and -._~ (the subgroup of rocketmq.namesrv.domain.subgroup)"
        ));
    }
    Ok(())
}

/// Why `addressServerList` may not be `value`: blank (unset) or
/// `host:port` entries separated by `;`, as a `namesrvAddr`, each with a
/// host and a port from 1 to 65535.
pub fn check_list(key: &str, value: &str) -> Result<(), String> {
    for entry in entries(value) {
        let well_formed = entry.rsplit_once(':').is_some_and(|(host, port)| {
            let host_ok = !host.is_empty()
                && !host
                    .chars()
                    .any(|c| c.is_whitespace() || c.is_control() || c == ';');
            let port_ok = port.parse::<u16>().is_ok_and(|port| port > 0);
            host_ok && port_ok
        });
        if !well_formed {
            return Err(format!(
                "invalid value for {key}: {entry:?} is not host:port (entries host:port separated by ';', as namesrvAddr)"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
