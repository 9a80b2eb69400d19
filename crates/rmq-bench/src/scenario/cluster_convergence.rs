//! `cluster-convergence`: Waymark NameServers gossiping as one cluster. How soon a broker
//! registered with one node is routed by every node, and a removed one by none; what gossip sends
//! when nothing changes; the CPU a node spends per registration it pulls from a peer; and route
//! latency on every node while a fleet re-registers, each broker with one node only.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{ensure, Context};
use clap::Args;
use futures::future::{join_all, try_join_all};
use rmq_broker_client::wall_ms;
use rmq_protocol::cluster_status::{ClusterStatusBody, Liveness, MemberStatus, NodeStatus};
use rmq_protocol::TopicRouteData;
use rmq_transport::RpcClient;
use rmq_wire::{RemotingCommand, RequestCode};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::fleet::{ms_until, route, start_peer, Fleet, QUERY_TIMEOUT, REGISTER_TIMEOUT, TINY};
use super::route_change::broker;
use super::storm::route_queries;
use super::{lock, settings, success};
use super::{Ctx, Record, Scenario};
use crate::cli::{millis as ms_arg, secs};
use crate::load::{self, Window};
use crate::peer::{PeerKind, PeerOptions, PeerSetup, RunningPeer};
use crate::pin::CpuSnapshot;
use crate::report::format::{mib, ms, num, or_na, seconds, us};
use crate::report::{Col, Row, Section};
use crate::sample::{ServerCpu, ServerSample};
use crate::stats::{Latency, Summary};
use crate::workload::{Layout, Registration};

pub struct ClusterConvergence;

/// The topic every timed broker registers, beside the anchor that keeps it routed.
const TOPIC: &str = "ClusterConvergenceTopic";
const SECOND_TOPIC: &str = "ClusterConvergenceTopic-1";
/// The `clusterId` of every node.
const CLUSTER_ID: &str = "rmq-bench";
/// How often the harness asks for a node's status or metrics while it waits.
const STATUS_POLL: Duration = Duration::from_millis(50);
/// How long the cluster may take to form, and a fleet wave or pull round to spread.
const SPREAD_LIMIT: Duration = Duration::from_secs(120);
/// Route query connections per node during the fleet's re-registrations.
const QUERY_CONNECTIONS: usize = 4;
/// The idle-gossip target holds for a fleet of this many brokers or more.
const TARGET_BROKERS: usize = 1_000;
const PULLS_OK: &str = r#"waymark_cluster_pulls_total{result="ok"}"#;
const GOSSIP_SENT: &str = r#"waymark_cluster_gossip_bytes_total{direction="sent"}"#;
const GOSSIP_RECEIVED: &str = r#"waymark_cluster_gossip_bytes_total{direction="received"}"#;

#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
pub struct Params {
    /// Cluster sizes, each measured on a cluster of its own.
    #[arg(long, value_delimiter = ',', default_values_t = [3usize, 5])]
    pub nodes: Vec<usize>,
    /// Changes timed per direction and cluster size, their origins taking turns.
    #[arg(long, default_value_t = 60)]
    pub samples: usize,
    /// How often every node's route is read while a change travels.
    #[arg(long = "poll", default_value = "5ms", value_parser = ms_arg)]
    pub poll_ms: u64,
    /// A change not seen by every node within this long is missed.
    #[arg(long = "give-up", default_value_t = 10.0, value_parser = secs)]
    pub give_up_s: f64,
    /// Brokers of the fleet, broker b registered with node b mod nodes only.
    #[arg(long, default_value_t = 1_000)]
    pub brokers: usize,
    /// Topics per broker of the fleet.
    #[arg(long = "topics", default_value_t = 100)]
    pub topics_per_broker: usize,
    /// Brokers per topic of the fleet.
    #[arg(long, default_value_t = 10)]
    pub spread: usize,
    /// Rounds in which the first node's brokers re-register once each and
    /// every other node pulls them (CPU per pulled registration).
    #[arg(long, default_value_t = 5)]
    pub pull_rounds: usize,
    /// Time without registrations over which gossip bytes are counted.
    #[arg(long = "idle", default_value_t = 10.0, value_parser = secs)]
    pub idle_s: f64,
    /// Every broker re-registers once per period during the route load
    /// (Java's registerNameServerPeriod: 30 s).
    #[arg(long = "period", default_value_t = 30.0, value_parser = secs)]
    pub period_s: f64,
    /// Route queries per second on each node during the re-registrations.
    #[arg(long, default_value_t = 500.0)]
    pub query_rate: f64,
    /// Unmeasured lead-in of the route load.
    #[arg(long = "warmup", default_value_t = 2.0, value_parser = secs)]
    pub warmup_s: f64,
    /// Measured time of the route load.
    #[arg(long = "duration", default_value_t = 30.0, value_parser = secs)]
    pub duration_s: f64,
}

/// One cluster size's measurements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub params: Params,
    pub nodes: usize,
    /// From sending a registration to one node until every node routes the broker, ms per sample
    /// (`None`: missed).
    pub added_ms: Vec<Option<f64>>,
    pub added: Option<Summary>,
    /// From closing the broker's connection to its node until no node routes it, ms per sample.
    pub removed_ms: Vec<Option<f64>>,
    pub removed: Option<Summary>,
    /// From the fleet's first registration until every node holds every broker.
    pub fleet_spread_s: f64,
    /// Registrations the nodes other than the first pulled in the pull rounds, and those nodes'
    /// CPU over the rounds (summed over the nodes).
    pub pulls: u64,
    pub pull_cpu: Option<ServerCpu>,
    pub cpu_us_per_pull: Option<f64>,
    /// Gossip bytes each node sent and received per second while nothing changed.
    pub idle_sent_bytes_per_s: Vec<f64>,
    pub idle_received_bytes_per_s: Vec<f64>,
    /// Route queries on each node while the fleet re-registered.
    pub routes: Vec<Latency>,
    pub route_errors: u64,
    pub route_first_error: Option<String>,
    pub registrations_per_s: f64,
    pub registration_errors: u64,
    pub registration_first_error: Option<String>,
    /// The largest node's resident memory at the end.
    #[serde(flatten)]
    pub server: ServerSample,
}

impl Scenario for ClusterConvergence {
    const ID: &'static str = "cluster-convergence";
    const ABOUT: &'static str = "Waymark NameServers as one cluster: a registration with one node \
                                 routed by all, a removal by none; idle gossip; CPU per pulled \
                                 registration; route latency on every node while a fleet \
                                 re-registers";
    type Params = Params;
    fn quick(p: &mut Params) {
        (p.samples, p.give_up_s) = (4, 5.0);
        (p.brokers, p.topics_per_broker, p.spread) = (30, 10, 3);
        p.pull_rounds = 1;
        (p.idle_s, p.period_s, p.warmup_s, p.duration_s) = (2.0, 2.0, 0.5, 2.0);
    }
    /// Java's and the Rust port's NameServers exchange nothing: there is no cluster of theirs to
    /// measure.
    fn runs(kind: PeerKind) -> bool {
        kind == PeerKind::Waymark
    }
    async fn run(ctx: &Ctx<'_>, p: &Params, record: &mut Record) -> anyhow::Result<()> {
        for kind in ctx.peers::<Self>() {
            for &nodes in &p.nodes {
                let outcome = convergence(ctx.setup, nodes, p).await;
                record.add(kind, &format!("{nodes} nodes"), outcome);
            }
        }
        Ok(())
    }
    fn report(s: &mut Section<'_>) {
        let sizes = s.params::<Params>().map_or_else(|| vec![3, 5], |p| p.nodes);
        let mut rows: Vec<Row<Outcome>> = Vec::new();
        for nodes in sizes {
            for mut row in s.rows::<Outcome>(&format!("{nodes} nodes")) {
                row.label = format!("{}, {nodes} nodes", row.label);
                rows.push(row);
            }
        }
        for x in rows.iter().filter_map(Row::ok) {
            let (n, brokers) = (x.nodes, x.params.brokers);
            let added = ("registered with one, routed by all", &x.added, &x.added_ms);
            let removed = (
                "removed from one, routed by none",
                &x.removed,
                &x.removed_ms,
            );
            for (what, summary, samples) in [added, removed] {
                let (p99, missed) = (summary.as_ref().map(|s| s.p99), missed(samples));
                let measured = p99.map(|v| with_missed(ms(v * 1e3), missed));
                let met = p99.map(|v| v <= 1_000.0 && missed == 0);
                s.target(format!("{n} nodes: {what}, p99 ≤ 1 s"), measured, met);
            }
            let (idle, judged) = (most(&x.idle_sent_bytes_per_s), brokers >= TARGET_BROKERS);
            s.target(
                format!("{n} nodes: idle gossip ≤ 2 KiB/s per node with 1,000 brokers"),
                idle.map(|v| format!("{} B/s ({brokers} brokers)", num(v))),
                idle.filter(|_| judged).map(|v| v <= 2_048.0),
            );
            let (route, judged) = (worst_route_p99(x), judged && x.route_errors == 0);
            s.target(
                format!(
                    "{n} nodes: route p99 ≤ 2 ms on every node while 1,000 brokers re-register"
                ),
                route.map(|v| format!("{} (worst node, {brokers} brokers)", ms(v))),
                route.filter(|_| judged).map(|v| v <= 2_000.0),
            );
        }
        s.table(&rows, COLUMNS);
    }
}

fn worst_route_p99(x: &Outcome) -> Option<f64> {
    most(&x.routes.iter().map(|l| l.p99_us).collect::<Vec<_>>())
}

fn missed(samples: &[Option<f64>]) -> usize {
    samples.iter().filter(|s| s.is_none()).count()
}

fn with_missed(text: String, missed: usize) -> String {
    match missed {
        0 => text,
        n => format!("{text}, {n} missed"),
    }
}

fn most(values: &[f64]) -> Option<f64> {
    values.iter().copied().reduce(f64::max)
}

/// A change summary's figure `at` in ms, with how many of `samples` were missed.
fn ms_of(s: &Option<Summary>, at: fn(&Summary) -> f64, samples: &[Option<f64>]) -> String {
    with_missed(or_na(s.as_ref(), |s| ms(at(s) * 1e3)), missed(samples))
}

fn byte_rate(values: &[f64]) -> String {
    or_na(most(values), |v| format!("{} B/s", num(v)))
}

const COLUMNS: &[Col<Outcome>] = &[
    ("registered → all p50", |x| {
        ms_of(&x.added, |s| s.p50, &[])
    }),
    ("p99", |x| ms_of(&x.added, |s| s.p99, &[])),
    ("max", |x| ms_of(&x.added, |s| s.max, &x.added_ms)),
    ("removed → none p50", |x| {
        ms_of(&x.removed, |s| s.p50, &[])
    }),
    ("p99", |x| ms_of(&x.removed, |s| s.p99, &[])),
    ("max", |x| ms_of(&x.removed, |s| s.max, &x.removed_ms)),
    ("fleet spread", |x| seconds(x.fleet_spread_s)),
    ("CPU per pull", |x| us(x.cpu_us_per_pull)),
    ("pulls", |x| x.pulls.to_string()),
    ("idle gossip sent", |x| byte_rate(&x.idle_sent_bytes_per_s)),
    ("received", |x| byte_rate(&x.idle_received_bytes_per_s)),
    ("route p99 (worst node)", |x| or_na(worst_route_p99(x), ms)),
    ("route errors", |x| x.route_errors.to_string()),
    ("registrations/s", |x| num(x.registrations_per_s)),
    ("largest RSS", |x| mib(x.server.rss_kib)),
];

/// One running node: the process, its HTTP address and a connection for status reads.
struct Node {
    peer: RunningPeer,
    http: SocketAddr,
    client: RpcClient,
}

impl Node {
    /// Its own status (an error with the cluster off) and the members it knows.
    async fn status(&self) -> anyhow::Result<(NodeStatus, Vec<MemberStatus>)> {
        let request = RemotingCommand::request(RequestCode::WaymarkGetClusterStatus, 0);
        let response = self.client.invoke(request, QUERY_TIMEOUT).await?;
        let body = response.body.clone().unwrap_or_default();
        success(response, format!("cluster status of {}", self.peer.addr))?;
        let status =
            ClusterStatusBody::from_json(&body).context("cluster status does not parse")?;
        Ok((status.node.context("the cluster is off")?, status.members))
    }

    /// The values of `series` in its `/metrics`: one plain-text page read by the harness, so a
    /// few lines of HTTP/1.0 rather than an HTTP client crate.
    async fn metrics(&self, series: &[&str]) -> anyhow::Result<Vec<f64>> {
        let (http, addr) = (self.http, self.peer.addr);
        let get = async || {
            let mut stream = TcpStream::connect(http).await?;
            let request =
                format!("GET /metrics HTTP/1.0\r\nHost: {http}\r\nConnection: close\r\n\r\n");
            stream.write_all(request.as_bytes()).await?;
            let mut text = String::new();
            stream.read_to_string(&mut text).await?;
            anyhow::Ok(text)
        };
        let text = tokio::time::timeout(QUERY_TIMEOUT, get()).await;
        let text = text.context("GET /metrics timed out")??;
        let (head, body) = text.split_once("\r\n\r\n").context("no HTTP header end")?;
        let ok = head.starts_with("HTTP/1.") && head.contains(" 200 ");
        ensure!(ok, "GET /metrics: {head}");
        let value = |s: &str| {
            let parse = |line: &str| line.strip_prefix(s)?.strip_prefix(' ')?.parse().ok();
            let found = body.lines().find_map(parse);
            found.with_context(|| format!("no {s} in {addr}'s metrics"))
        };
        series.iter().map(|s| value(s)).collect()
    }
}

/// Each of `nodes`' values of `series`.
async fn metrics(nodes: &[Node], series: &[&str]) -> anyhow::Result<Vec<Vec<f64>>> {
    try_join_all(nodes.iter().map(|n| n.metrics(series))).await
}

/// A node of the cluster, seeded with `seed` (none for the first), once its log names the HTTP
/// address it bound (`httpListenAddr` port 0).
async fn start_node(setup: &PeerSetup, seed: Option<&str>) -> anyhow::Result<Node> {
    const SAYS: &str = "Waymark HTTP listening on http://";
    let mut pairs = vec![
        ("clusterGossipAddr", "127.0.0.1:0"),
        ("clusterId", CLUSTER_ID),
        ("httpListenAddr", "127.0.0.1:0"),
    ];
    pairs.extend(seed.map(|seed| ("clusterSeeds", seed)));
    let options = PeerOptions {
        settings: settings(&pairs),
        ..PeerOptions::default()
    };
    let peer = start_peer(setup, PeerKind::Waymark, &TINY, &options).await?;
    let (log, mut http) = (peer.process.dir().join("server.log"), None);
    let named = async || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let named = text
            .split_once(SAYS)
            .map(|(_, rest)| rest.split_whitespace().next());
        http = named.map(|addr| addr.unwrap_or_default().to_owned());
        Ok(http.is_some())
    };
    ms_until(Instant::now(), STATUS_POLL, Duration::from_secs(10), named).await?;
    let tail = || format!("the log names no HTTP port: {}", peer.process.log_tail());
    let http = http.with_context(tail)?;
    let why = || format!("HTTP address {http:?}");
    let http = http.parse().with_context(why)?;
    let client = load::connect(peer.addr, 1).await?.remove(0);
    Ok(Node { peer, http, client })
}

/// `nodes` nodes, each seeded with the first, once every one is ready and sees every other live
/// and ready.
async fn start_cluster(setup: &PeerSetup, nodes: usize) -> anyhow::Result<Vec<Node>> {
    ensure!(nodes >= 2, "a cluster needs two nodes or more, not {nodes}");
    let first = start_node(setup, None).await?;
    let seed = first.status().await?.0.gossip_addr;
    let mut all = vec![first];
    for _ in 1..nodes {
        all.push(start_node(setup, Some(&seed)).await?);
    }
    let formed = async || {
        for (me, members) in try_join_all(all.iter().map(Node::status)).await? {
            let others = members.iter().filter(|m| m.name != me.name);
            let live = others.filter(|m| m.liveness == Liveness::Live && m.ready);
            if !me.ready || live.count() < nodes - 1 {
                return Ok(false);
            }
        }
        Ok(true)
    };
    let took = ms_until(Instant::now(), STATUS_POLL, SPREAD_LIMIT, formed).await?;
    let why = || format!("{nodes} nodes did not form one cluster within {SPREAD_LIMIT:?}");
    let took_s = took.with_context(why)? / 1e3;
    eprintln!("[cluster-convergence] {nodes} nodes formed one cluster in {took_s:.2} s");
    Ok(all)
}

/// Waits until every node holds `brokers` brokers, direct and relayed.
async fn until_every_node_holds(nodes: &[Node], brokers: usize) -> anyhow::Result<()> {
    let mut held = Vec::new();
    let all_hold = async || {
        let statuses = try_join_all(nodes.iter().map(Node::status)).await?;
        let brokers_of = |(me, _): &(NodeStatus, _)| me.direct_brokers + me.relayed_brokers;
        held = Vec::from_iter(statuses.iter().map(brokers_of));
        Ok(held.iter().all(|&h| h == brokers))
    };
    let done = ms_until(Instant::now(), STATUS_POLL, SPREAD_LIMIT, all_hold).await?;
    let why =
        || format!("after {SPREAD_LIMIT:?} the nodes hold {held:?} brokers, not {brokers} each");
    done.map(drop).with_context(why)
}

/// Broker `index` of the timed changes (0: the anchor) on an address of its own: `TOPIC` and one
/// more (a single topic reads as an incremental registration, refused before a full one).
fn timed_broker(name: &str, index: usize) -> anyhow::Result<Vec<Registration>> {
    Ok(vec![broker(name, 50_000 + index, [TOPIC, SECOND_TOPIC])?.1])
}

type Samples = Vec<Option<f64>>;

/// The timed changes: a broker registers with one node (the nodes taking turns) until all route
/// it, then its connection closes until none does.
async fn changes(nodes: &[Node], p: &Params) -> anyhow::Result<(Samples, Samples)> {
    let (n, poll) = (nodes.len(), Duration::from_millis(p.poll_ms.max(1)));
    let give_up = Duration::from_secs_f64(p.give_up_s);
    let mut samples = Vec::with_capacity(p.samples);
    for k in 0..p.samples {
        let name = format!("cluster-convergence-{k}");
        let origin = nodes[k % n].peer.addr;
        let mut fleet = Fleet::connect(origin, timed_broker(&name, k + 1)?).await?;
        let routed_by = async |want: usize| {
            let routes = try_join_all(nodes.iter().map(|n| route(&n.client, TOPIC))).await?;
            let names = |r: &&TopicRouteData| r.broker_datas.iter().any(|b| b.broker_name == name);
            Ok(routes.iter().flatten().filter(names).count() == want)
        };
        let sent = Instant::now();
        fleet.register_all().await?;
        let add = ms_until(sent, poll, give_up, async || routed_by(n).await).await?;
        let closed = Instant::now();
        fleet.clients[0].close();
        let remove = ms_until(closed, poll, give_up, async || routed_by(0).await).await?;
        samples.push((add, remove));
        eprintln!(
            "[cluster-convergence {n} nodes] change {k}: added {add:?} ms, removed {remove:?} ms"
        );
        // A broker still routed somewhere would make later samples wait on it.
        let give_up = p.give_up_s;
        ensure!(
            remove.is_some(),
            "{name} is still routed {give_up:?} s after its connection closed"
        );
        // Spread the changes over the gossip round, not locked to it.
        tokio::time::sleep(Duration::from_millis(50 + (k as u64 * 137) % 450)).await;
    }
    Ok(samples.into_iter().unzip())
}

/// Pull rounds: the first node's brokers re-register once each, and every other node pulls them.
/// The pulls and those nodes' CPU over the rounds.
async fn pull_rounds(
    nodes: &[Node],
    first: &mut Fleet,
    rounds: usize,
) -> anyhow::Result<(u64, Option<ServerCpu>)> {
    let pullers = &nodes[1..];
    let counts = async || anyhow::Ok(metrics(pullers, &[PULLS_OK]).await?.concat());
    let before_counts = counts().await?;
    // The first node's CPU is neither theirs nor another process's.
    let every: Vec<u32> = nodes.iter().map(|n| n.peer.pid()).collect();
    let snapshot = || CpuSnapshot::take_all(&every[1..]).zip(CpuSnapshot::take_all(&every));
    let before = snapshot();
    let each = first.registrations.len() as f64;
    let mut now = Vec::new();
    for round in 1..=rounds {
        first.register_all().await?;
        let pulled = async || {
            now = counts().await?;
            let behind = |(n, b): (&f64, &f64)| n - b < each * round as f64;
            Ok(!now.iter().zip(&before_counts).any(behind))
        };
        let done = ms_until(Instant::now(), STATUS_POLL, SPREAD_LIMIT, pulled).await?;
        let from = &before_counts;
        let why = || {
            format!(
                "pull round {round}: the nodes pulled {now:?} (from {from:?}), {each} each \
                 expected"
            )
        };
        done.with_context(why)?;
    }
    let after = snapshot();
    let pulled = counts().await?.iter().sum::<f64>() - before_counts.iter().sum::<f64>();
    let cpu = before
        .zip(after)
        .map(|((pullers, all), (pullers_after, all_after))| {
            let ticks = pullers_after.server_ticks_since(&pullers);
            let others = all_after.others_percent_since(&all);
            ServerCpu::of_ticks(ticks, pullers_after.seconds_since(&pullers), others)
        });
    Ok((pulled as u64, cpu))
}

/// Gossip bytes each node sent and received per second over `idle` without registrations.
async fn idle_gossip(nodes: &[Node], idle: Duration) -> anyhow::Result<(Vec<f64>, Vec<f64>)> {
    let series = [GOSSIP_SENT, GOSSIP_RECEIVED];
    // Let the last changes' gossip die down before counting.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (before, started) = (metrics(nodes, &series).await?, Instant::now());
    tokio::time::sleep(idle).await;
    let after = metrics(nodes, &series).await?;
    let window = started.elapsed().as_secs_f64();
    let rate = |i: usize| -> Vec<f64> {
        let pairs = after.iter().zip(&before);
        pairs.map(|(a, b)| (a[i] - b[i]) / window).collect()
    };
    Ok((rate(0), rate(1)))
}

/// Route queries on every node at `query_rate` while every broker of `fleets` re-registers once
/// per period. Each node's latency, and the registrations' outcome.
async fn routes_while_re_registering(
    nodes: &[Node],
    fleets: Vec<Fleet>,
    layout: &Layout,
    p: &Params,
) -> anyhow::Result<(Vec<load::Outcome>, load::Outcome)> {
    let window = Window::secs(p.warmup_s, p.duration_s, QUERY_TIMEOUT);
    let query = route_queries(layout.all_topics());
    let connect = |n: &Node| load::connect(n.peer.addr, QUERY_CONNECTIONS);
    let query_clients = try_join_all(nodes.iter().map(connect)).await?;
    let brokers = |f: Fleet| {
        f.clients
            .into_iter()
            .zip(f.registrations.into_iter().map(Mutex::new))
    };
    let (clients, registrations): (Vec<RpcClient>, Vec<_>) =
        fleets.into_iter().flat_map(brokers).unzip();
    let register: load::Numbered = Arc::new(move |i| {
        lock(&registrations[i as usize % registrations.len()]).next_request(wall_ms())
    });
    let mut register_window = window;
    register_window.timeout = REGISTER_TIMEOUT;
    let rate = clients.len() as f64 / p.period_s.max(1e-3);
    let label = format!("cluster-convergence {} nodes: routes", nodes.len());
    let outcomes = load::shown(label, async |progress| {
        let queries = query_clients.iter().map(|clients| {
            load::fixed_rate(clients, p.query_rate, window, query.clone(), progress, None)
        });
        let registering =
            load::fixed_rate(&clients, rate, register_window, register, progress, None);
        tokio::join!(join_all(queries), registering)
    });
    Ok(outcomes.await)
}

/// The scenario on a fresh cluster of `nodes` Waymark NameServers.
async fn convergence(setup: &PeerSetup, nodes: usize, p: &Params) -> anyhow::Result<Outcome> {
    let layout = Layout::new(p.brokers, p.topics_per_broker, p.spread);
    layout.validate()?;
    let cluster = start_cluster(setup, nodes).await?;

    // An anchor keeps the timed topic routed everywhere between changes.
    let anchor = timed_broker("cluster-anchor", 0)?;
    let mut anchor = Fleet::connect(cluster[0].peer.addr, anchor).await?;
    anchor.register_all().await?;
    until_every_node_holds(&cluster, 1).await?;
    let (added_ms, removed_ms) = changes(&cluster, p).await?;

    // The fleet, broker b with node b mod nodes.
    let mut fleets = Vec::with_capacity(nodes);
    for (i, node) in cluster.iter().enumerate() {
        let mine = (i..layout.brokers).step_by(nodes);
        let mine = mine.map(|b| Registration::of_layout(&layout, b, wall_ms()));
        fleets.push(Fleet::connect(node.peer.addr, mine.collect::<anyhow::Result<_>>()?).await?);
    }
    let started = Instant::now();
    try_join_all(fleets.iter_mut().map(Fleet::register_all)).await?;
    until_every_node_holds(&cluster, layout.brokers + 1).await?;
    let (fleet_spread_s, brokers) = (started.elapsed().as_secs_f64(), layout.brokers);
    eprintln!(
        "[cluster-convergence {nodes} nodes] {brokers} brokers on every node after \
         {fleet_spread_s:.2} s"
    );

    let (pulls, pull_cpu) = pull_rounds(&cluster, &mut fleets[0], p.pull_rounds).await?;
    let idle = Duration::from_secs_f64(p.idle_s);
    let (idle_sent_bytes_per_s, idle_received_bytes_per_s) = idle_gossip(&cluster, idle).await?;
    let (queried, registered) = routes_while_re_registering(&cluster, fleets, &layout, p).await?;
    let present = |samples: &[Option<f64>]| samples.iter().flatten().copied().collect::<Vec<_>>();
    Ok(Outcome {
        params: p.clone(),
        nodes,
        added: Summary::of(&present(&added_ms)),
        added_ms,
        removed: Summary::of(&present(&removed_ms)),
        removed_ms,
        fleet_spread_s,
        pulls,
        cpu_us_per_pull: pull_cpu.as_ref().and_then(|c| c.us_per(pulls)),
        pull_cpu,
        idle_sent_bytes_per_s,
        idle_received_bytes_per_s,
        routes: queried.iter().map(|q| Latency::of(&q.latency)).collect(),
        route_errors: queried.iter().map(|q| q.errors).sum(),
        route_first_error: queried.iter().find_map(|q| q.first_error.clone()),
        registrations_per_s: registered.rate(),
        registration_errors: registered.errors,
        registration_first_error: registered.first_error,
        server: ServerSample {
            rss_kib: cluster.iter().filter_map(|n| n.peer.rss_kib()).max(),
            ..ServerSample::of(&cluster[0].peer, None)
        },
    })
}
