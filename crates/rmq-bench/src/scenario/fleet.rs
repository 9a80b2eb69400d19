//! What the NameServer scenarios share: starting a peer, a fleet of registered brokers that stays
//! registered, route queries, and checking that a peer routes what the fleet registered.

use super::success;
use crate::load::{self, Worker};
use crate::peer::{self, PeerKind, PeerOptions, PeerSetup, RunningPeer};
use crate::workload::{self, Layout, Registration};
use anyhow::{ensure, Context};
use futures::future::join_all;
use rmq_broker_client::wall_ms;
use rmq_protocol::{JavaJson, TopicRouteData};
use rmq_transport::RpcClient;
use rmq_wire::{RemotingCommand, ResponseCode};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinSet;
use tokio::time::Instant;

/// How long a peer may take to answer its first request.
pub const START_LIMIT: Duration = Duration::from_secs(120);
/// Timeout of one registration (a Java broker's `registerBrokerTimeoutMills` is 24 s).
pub const REGISTER_TIMEOUT: Duration = Duration::from_secs(30);
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(5);
/// One broker with two topics, for scenarios that need a NameServer but no fleet.
pub const TINY: Layout = Layout::new(1, 2, 1);

/// Starts `kind` for a scenario over `layout` with `options`, probing every 20 ms.
pub async fn start_peer(
    setup: &PeerSetup,
    kind: PeerKind,
    layout: &Layout,
    options: &PeerOptions,
) -> anyhow::Result<RunningPeer> {
    let probe_every = Duration::from_millis(20);
    peer::start(setup, kind, layout, options, probe_every, START_LIMIT).await
}

/// A fresh `kind` holding every broker of `layout`, kept registered, and `connections` query
/// connections to it, the routes checked on the first.
pub async fn serving(
    setup: &PeerSetup,
    kind: PeerKind,
    layout: &Layout,
    connections: usize,
) -> anyhow::Result<(RunningPeer, KeepRegistered, Vec<RpcClient>)> {
    layout.validate()?;
    let peer = start_peer(setup, kind, layout, &PeerOptions::default()).await?;
    let fleet = Fleet::registered(peer.addr, layout).await?;
    let clients = load::connect(peer.addr, connections.max(1)).await?;
    verify_routes(&clients[0], layout, kind).await?;
    Ok((peer, fleet.keep_registered(), clients))
}

/// Brokers that registered with a peer, each on its own connection, which stays open (a closed
/// connection unregisters its broker).
pub struct Fleet {
    pub clients: Vec<RpcClient>,
    pub registrations: Vec<Registration>,
}

/// One round of registrations: from the first send to the last answer, and each one's latency.
#[derive(Debug, Clone)]
pub struct Round {
    pub elapsed: Duration,
    pub latencies: Vec<Duration>,
}

impl Fleet {
    /// Connects one connection per registration.
    pub async fn connect(
        addr: SocketAddr,
        registrations: Vec<Registration>,
    ) -> anyhow::Result<Fleet> {
        let clients = load::connect(addr, registrations.len()).await?;
        Ok(Fleet {
            clients,
            registrations,
        })
    }
    /// Connects and registers every broker of `layout` once.
    pub async fn registered(addr: SocketAddr, layout: &Layout) -> anyhow::Result<Fleet> {
        let mut fleet = Fleet::connect(addr, registrations(layout)?).await?;
        fleet.register_all().await?;
        Ok(fleet)
    }
    /// Every broker registers once (new DataVersion), all at the same time.
    pub async fn register_all(&mut self) -> anyhow::Result<Round> {
        let now = wall_ms();
        let registrations = self.registrations.iter_mut();
        let requests: Vec<_> = registrations.map(|r| r.next_request(now)).collect();
        let invoke = async |(client, request): (&RpcClient, RemotingCommand)| {
            let sent = Instant::now();
            let response = client.invoke(request, REGISTER_TIMEOUT).await;
            (sent.elapsed(), response)
        };
        let started = Instant::now();
        let answers = join_all(self.clients.iter().zip(requests).map(invoke)).await;
        let elapsed = started.elapsed();
        let answers = answers.into_iter().zip(&self.registrations);
        let latencies = answers.map(|((latency, response), registration)| {
            let name = registration.broker_name();
            let response = response.with_context(|| format!("registration of {name} failed"))?;
            success(response, format_args!("registration of {name} refused"))?;
            Ok(latency)
        });
        let latencies = latencies.collect::<anyhow::Result<_>>()?;
        Ok(Round { elapsed, latencies })
    }
    /// Closed-loop workers that re-register every broker, each time with a new DataVersion, as
    /// fast as the server answers.
    pub fn re_registering(&mut self) -> Vec<Worker> {
        let registrations = std::mem::take(&mut self.registrations);
        let clients = self.clients.iter().cloned().zip(registrations);
        let worker = |(client, mut registration): (RpcClient, Registration)| Worker {
            client,
            make: Box::new(move || registration.next_request(wall_ms())),
        };
        clients.map(worker).collect()
    }
    /// Re-registers every broker every 30 s (Java's `registerNameServerPeriod` default) until the
    /// guard is dropped, so that no server expires them (120 s) during a long part.
    pub fn keep_registered(mut self) -> KeepRegistered {
        let mut task = JoinSet::new();
        task.spawn(async move {
            let mut ticker = tokio::time::interval(Duration::from_secs(30));
            ticker.tick().await;
            loop {
                ticker.tick().await;
                if let Err(error) = self.register_all().await {
                    eprintln!("[keep registered] {error:#}");
                }
            }
        });
        task
    }
}

/// Stops [`Fleet::keep_registered`]'s re-registrations (and closes the fleet's connections, which
/// unregisters the brokers) when dropped.
pub type KeepRegistered = JoinSet<()>;

/// Registrations of every broker of `layout`.
pub fn registrations(layout: &Layout) -> anyhow::Result<Vec<Registration>> {
    let now = wall_ms();
    (0..layout.brokers)
        .map(|b| Registration::of_layout(layout, b, now))
        .collect()
}

/// `depth` closed-loop workers on each of `clients`, each sending route queries for every topic
/// of `layout` in turn, from its own offset.
pub fn route_workers(clients: &[RpcClient], depth: usize, layout: &Layout) -> Vec<Worker> {
    let topics = layout.all_topics();
    let requests: Vec<_> = topics.iter().map(|t| workload::route_request(t)).collect();
    let (requests, depth) = (Arc::new(requests), depth.max(1));
    let each = clients
        .iter()
        .flat_map(|client| std::iter::repeat_n(client, depth));
    let worker = |(i, client): (usize, &RpcClient)| {
        let (requests, mut next) = (requests.clone(), i * 7 % requests.len());
        let make = Box::new(move || {
            next = (next + 1) % requests.len();
            requests[next].clone()
        });
        let client = client.clone();
        Worker { client, make }
    };
    each.enumerate().map(worker).collect()
}

/// The route of `topic`, `None` for TOPIC_NOT_EXIST.
pub async fn route(client: &RpcClient, topic: &str) -> anyhow::Result<Option<TopicRouteData>> {
    let request = workload::route_request(topic);
    let response = client.invoke(request, QUERY_TIMEOUT).await?;
    if response.response_code() == ResponseCode::TopicNotExist {
        return Ok(None);
    }
    let body = response.body.clone().unwrap_or_default();
    success(response, format_args!("route of {topic}"))?;
    let shown = || String::from_utf8_lossy(&body).into_owned();
    let why = || format!("route of {topic} does not parse: {}", shown());
    Ok(Some(TopicRouteData::from_json(&body).with_context(why)?))
}

/// Checks that every topic set's first topic routes to exactly its brokers (for the ceiling: as
/// many).
pub async fn verify_routes(
    client: &RpcClient,
    layout: &Layout,
    kind: PeerKind,
) -> anyhow::Result<()> {
    for set in 0..layout.topic_sets() {
        let topic = workload::topic_name(set, 0);
        let route = route(client, &topic).await?;
        let route = route.with_context(|| format!("{topic} is not routed after registration"))?;
        let mut names = Vec::from_iter(route.broker_datas.into_iter().map(|b| b.broker_name));
        let mut expected = Vec::from_iter(layout.brokers_of_set(set).map(workload::broker_name));
        names.sort();
        expected.sort();
        let same = match kind.is_real() {
            true => names == expected,
            false => names.len() == layout.brokers_of_set(0).len(),
        };
        ensure!(same, "{topic} routes to {names:?}, expected {expected:?}");
    }
    Ok(())
}

pub fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}

/// `to - from` in ms, negative when `to` is earlier.
pub fn signed_millis(from: Instant, to: Instant) -> f64 {
    match to.checked_duration_since(from) {
        Some(after) => millis(after),
        None => -millis(from - to),
    }
}

/// Ms from `since` until `done` holds, checked every `poll` while less than `give_up` has passed
/// (`None`: it never did).
pub async fn ms_until(
    since: Instant,
    poll: Duration,
    give_up: Duration,
    mut done: impl AsyncFnMut() -> anyhow::Result<bool>,
) -> anyhow::Result<Option<f64>> {
    while since.elapsed() < give_up {
        if done().await? {
            return Ok(Some(millis(since.elapsed())));
        }
        tokio::time::sleep(poll).await;
    }
    Ok(None)
}
