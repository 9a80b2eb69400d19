//! `controller`: Waymark's controller against Java's, three nodes each: CPU
//! and RSS under broker heartbeats, and failover.

use std::collections::BTreeMap;
use std::future::pending;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use clap::Args;
use futures::stream::{self, StreamExt, TryStreamExt};
use rmq_broker_client::controller::{serve_notices, ControllerClient};
use rmq_broker_client::{
    numbered_topics, wall_ms, BrokerConfig, ControllerAgent, ControllerModeConfig, NameServerList,
    Registrar, ReplicaRole, Running, Schedule, TopicTable,
};
use rmq_protocol::headers::BrokerHeartbeatRequestHeader;
use rmq_transport::RpcClient;
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio::time::{Instant, MissedTickBehavior};

use super::fleet::{ms_until, route, start_peer, TINY};
use super::{lock, settle, Ctx, Record, Scenario, Starts};
use crate::cli::{millis as ms_arg, secs};
use crate::peer::{self, PeerKind, PeerOptions, PeerSetup, RunningPeer};
use crate::pin::CpuSnapshot;
use crate::report::format::{mib, ms_list, noise, num, or_na};
use crate::report::{of, over, Col, Ratio, Section};
use crate::results::PeerInfo;
use crate::sample::ServerCpu;
use crate::stats::median;
use crate::{group, load, setup};

pub struct Controller;

/// How long a group may take to have a serving leader (three JVMs on one CPU).
const GROUP_LIMIT: Duration = Duration::from_secs(180);
/// The cluster of every broker set here.
const CLUSTER: &str = "BenchControllerCluster";
const HEARTBEATS: &str = "heartbeats";
const FAILOVER: &str = "failover";

#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
pub struct Params {
    /// Nodes of each controller group.
    #[arg(long, default_value_t = 3)]
    pub nodes: usize,
    /// Broker sets heartbeating the group.
    #[arg(long, default_value_t = 1_000)]
    pub broker_sets: usize,
    /// Replicas per broker set.
    #[arg(long, default_value_t = 3)]
    pub replicas: usize,
    /// Every replica heartbeats every node this often (a broker's `brokerHeartbeatInterval`).
    #[arg(long = "heartbeat-interval", default_value = "1s", value_parser = ms_arg)]
    pub heartbeat_interval_ms: u64,
    /// `heartbeatTimeoutMills` the heartbeat replicas send.
    #[arg(long = "heartbeat-timeout", default_value = "10s", value_parser = ms_arg)]
    pub heartbeat_timeout_ms: u64,
    /// Broker sets joining at the same time.
    #[arg(long, default_value_t = 32)]
    pub join_concurrency: usize,
    /// Wait after the group is ready before its idle time is measured (a
    /// JVM is still compiling its start-up).
    #[arg(long = "idle-settle", default_value_t = 10.0, value_parser = secs)]
    pub idle_settle_s: f64,
    /// Idle time measured.
    #[arg(long = "idle", default_value_t = 5.0, value_parser = secs)]
    pub idle_s: f64,
    /// Heartbeats before the measured window.
    #[arg(long = "warmup", default_value_t = 20.0, value_parser = secs)]
    pub warmup_s: f64,
    /// The measured heartbeat window.
    #[arg(long = "duration", default_value_t = 30.0, value_parser = secs)]
    pub duration_s: f64,
    /// Failover samples (one broker set each).
    #[arg(long = "samples", default_value_t = 3)]
    pub failover_samples: usize,
    /// `controllerHeartBeatTimeoutMills` of the failover replicas (the same for every peer).
    #[arg(long = "agent-heartbeat-timeout", default_value = "10s", value_parser = ms_arg)]
    pub agent_heartbeat_timeout_ms: u64,
    /// Route polling interval of the failover samples.
    #[arg(long = "poll", default_value = "2ms", value_parser = ms_arg)]
    pub poll_ms: u64,
    /// Pause before each failover sample.
    #[arg(long = "pause", default_value_t = 2.0, value_parser = secs)]
    pub pause_s: f64,
    /// Give up on a failover sample after this long.
    #[arg(long = "give-up", default_value_t = 30.0, value_parser = secs)]
    pub give_up_s: f64,
}

impl Params {
    pub fn replica_count(&self) -> usize {
        self.broker_sets * self.replicas
    }

    /// Heartbeats the schedule sends per second (every replica to every node).
    pub fn scheduled_per_s(&self) -> f64 {
        (self.replica_count() * self.nodes) as f64 * 1_000.0
            / self.heartbeat_interval_ms.max(1) as f64
    }
}

/// What one peer's group did under heartbeats (CPU summed over the nodes, RSS per node).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Heartbeats {
    pub params: Params,
    pub group_ready_s: f64,
    pub idle_cpu_percent: Option<f64>,
    pub idle_rss_kib: Vec<Option<u64>>,
    pub join_s: f64,
    pub join_requests: u64,
    pub heartbeats: u64,
    pub heartbeat_errors: u64,
    pub first_error: Option<String>,
    pub window_s: f64,
    pub heartbeats_per_s: f64,
    pub schedule_lag_max_ms: f64,
    pub server_cpu_s: f64,
    pub cpu_us_per_heartbeat: Option<f64>,
    pub cpu_us_per_heartbeat_above_idle: Option<f64>,
    pub server_cpu_percent: f64,
    pub rss_kib: Vec<Option<u64>>,
    pub rss_max_kib: Option<u64>,
    pub rss_sum_kib: Option<u64>,
    pub alive_replicas: usize,
    pub others_cpu_percent: Option<f64>,
    pub windows: usize,
    pub server_cpus: Vec<Option<String>>,
}

/// What one peer's group did when masters crashed: kill → new master routed as id 0, ms per
/// sample (`None`: given up).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failover {
    pub params: Params,
    pub samples_ms: Vec<Option<f64>>,
    pub median_ms: Option<f64>,
    pub others_cpu_percent: Option<f64>,
    pub server_cpus: Vec<Option<String>>,
}

impl Scenario for Controller {
    const ID: &'static str = "controller";
    const ABOUT: &'static str =
        "Controller groups of three nodes: CPU and RSS under broker heartbeats, and failover";
    const STARTS: Starts = Starts::Controller;
    type Params = Params;
    fn quick(p: &mut Params) {
        (p.broker_sets, p.failover_samples, p.pause_s) = (10, 1, 0.5);
        (p.idle_settle_s, p.idle_s, p.warmup_s, p.duration_s) = (0.5, 1.0, 1.0, 2.0);
    }
    fn runs(kind: PeerKind) -> bool {
        kind.has_controller()
    }
    async fn run(ctx: &Ctx<'_>, p: &Params, record: &mut Record) -> anyhow::Result<()> {
        let kinds = ctx.peers::<Self>();
        let peers = kinds.iter().map(|&peer| {
            anyhow::Ok(PeerInfo {
                peer,
                command: group::command_line(ctx.setup, peer, p.nodes)?,
                version: setup::version(ctx.setup, peer, true),
            })
        });
        record.note("peers", &peers.collect::<anyhow::Result<Vec<_>>>()?);
        // Addresses that refuse connections: the controllers' role-change notices fail at once.
        let addrs: Vec<String> = (0..p.replica_count())
            .map(|_| rmq_testkit::ports::refused_addr().to_string())
            .collect();
        for &kind in &kinds {
            let outcome = run_heartbeats(ctx.setup, kind, p, &addrs).await;
            record.add(kind, HEARTBEATS, outcome);
        }
        let options = PeerOptions::default();
        let namesrv = start_peer(ctx.setup, PeerKind::Waymark, &TINY, &options).await;
        if namesrv.is_ok() {
            let command = peer::command_line(ctx.setup, PeerKind::Waymark, &TINY, &options)?;
            record.note("namesrv", &command);
        }
        let why = "the NameServer of the failover part did not start";
        for &kind in &kinds {
            let outcome = match &namesrv {
                Ok(namesrv) => run_failover(ctx.setup, kind, p, namesrv).await,
                Err(error) => Err(anyhow!("{why}: {error:#}")),
            };
            record.add(kind, FAILOVER, outcome);
        }
        Ok(())
    }
    fn report(s: &mut Section<'_>) {
        s.peers = s.runs.info("peers").unwrap_or_default();
        let beats = s.rows::<Heartbeats>(HEARTBEATS);
        let failover = s.rows::<Failover>(FAILOVER);
        let (w, j) = (PeerKind::Waymark, PeerKind::Java);
        let what = "CPU per heartbeat ≤ 1/5 of Java's (Java ÷ Waymark ≥ 5)";
        s.at_least(what, over(&beats, |x| x.cpu_us_per_heartbeat, j, w), 5.0);
        let what = "RSS of the three nodes under heartbeats ≤ 1/5 of Java's (Java ÷ Waymark ≥ 5)";
        s.at_least(what, over(&beats, rss_sum, j, w), 5.0);
        let median = |p| of(&failover, p).and_then(|x| x.median_ms);
        let medians = median(w).zip(median(j));
        let what = "failover no slower than Java's (median, Waymark ≤ Java)";
        let shown = medians.map(|(a, b)| format!("{a:.0} ms vs {b:.0} ms"));
        s.target(what, shown, medians.map(|(a, b)| a <= b));
        s.heading("Heartbeats");
        if let Some(p) = s.params::<Params>() {
            let per_s = num(p.scheduled_per_s());
            s.text(format!("{per_s} heartbeats/s once every set has joined."));
        }
        s.table(&beats, HEARTBEAT_COLUMNS);
        s.ratios(&beats, &[j], HEARTBEAT_RATIOS);
        s.heading("Failover");
        if let Some(namesrv) = s.runs.info::<String>("namesrv") {
            let what = "The NameServer every peer's brokers register with";
            s.text(format!("{what}: `{namesrv}`."));
        }
        s.table(&failover, FAILOVER_COLUMNS);
        let ratio = Ratio::cost("failover, median (Java ÷ Waymark)", |x: &Failover| {
            x.median_ms
        });
        s.ratios(&failover, &[j], &[ratio]);
    }
}

fn rss_sum(x: &Heartbeats) -> Option<f64> {
    x.rss_sum_kib.map(|k| k as f64)
}

const HEARTBEAT_RATIOS: &[Ratio<Heartbeats>] = &[
    Ratio::cost("CPU per heartbeat (Java ÷ Waymark)", |x| {
        x.cpu_us_per_heartbeat
    }),
    Ratio::cost("RSS of the nodes, sum (Java ÷ Waymark)", rss_sum),
    Ratio::cost("RSS per node, max (Java ÷ Waymark)", |x| {
        x.rss_max_kib.map(|k| k as f64)
    }),
    Ratio::cost("join time (Java ÷ Waymark)", |x| Some(x.join_s)),
];

fn us(value: Option<f64>) -> String {
    or_na(value, |v| format!("{v:.2} µs"))
}

const HEARTBEAT_COLUMNS: &[Col<Heartbeats>] = &[
    ("CPU per heartbeat", |x| us(x.cpu_us_per_heartbeat)),
    ("above idle", |x| us(x.cpu_us_per_heartbeat_above_idle)),
    ("heartbeats/s", |x| num(x.heartbeats_per_s)),
    ("server CPU", |x| format!("{:.1} %", x.server_cpu_percent)),
    ("send errors", |x| x.heartbeat_errors.to_string()),
    ("alive", |x| {
        let all = num(x.params.replica_count() as f64);
        format!("{}/{all}", num(x.alive_replicas as f64))
    }),
    ("RSS per node (max)", |x| mib(x.rss_max_kib)),
    ("RSS of the nodes (sum)", |x| mib(x.rss_sum_kib)),
    ("idle RSS (sum)", |x| {
        mib(x.idle_rss_kib.iter().copied().sum())
    }),
    ("idle CPU", |x| {
        or_na(x.idle_cpu_percent, |v| format!("{v:.1} %"))
    }),
    ("join", |x| format!("{:.1} s", x.join_s)),
    ("others' CPU", |x| noise(x.others_cpu_percent)),
];

const FAILOVER_COLUMNS: &[Col<Failover>] = &[
    ("kill → new master routed as id 0 (median)", |x| {
        or_na(x.median_ms, |v| format!("{v:.0} ms"))
    }),
    ("samples", |x| ms_list(&x.samples_ms, "not done")),
    ("others' CPU", |x| noise(x.others_cpu_percent)),
];

fn set_name(kind: PeerKind, set: usize) -> String {
    format!("bench-{}-{set}", kind.id())
}

/// One replica of the heartbeat load: its connections and its heartbeat.
struct Replica {
    client: ControllerClient,
    header: BrokerHeartbeatRequestHeader,
}

/// Counters of the heartbeat schedule.
#[derive(Default)]
struct Beats {
    sent: AtomicU64,
    errors: AtomicU64,
    max_lag_us: AtomicU64,
    first_error: Mutex<Option<String>>,
}

/// Runs `step` up to 5 times while it fails.
async fn retry<T, E: std::fmt::Display>(
    what: &str,
    mut step: impl AsyncFnMut() -> Result<T, E>,
) -> anyhow::Result<T> {
    let mut failures = Vec::new();
    for _ in 0..5 {
        match step().await {
            Ok(value) => return Ok(value),
            Err(error) => failures.push(error.to_string()),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    bail!("{what} failed 5 times: {}", failures.join("; "))
}

/// Broker set `name` joins, a replica on each of `addrs`: every replica obtains its id and
/// registers, sends one heartbeat to every node, and the first asks for the election. The
/// replicas and the requests it took.
async fn join_set(
    controllers: &str,
    name: &str,
    params: &Params,
    addrs: &[String],
) -> anyhow::Result<(Vec<Arc<Replica>>, u64)> {
    let mut config = ControllerModeConfig::new(controllers)?;
    config.request_timeout = Duration::from_secs(10);
    let mut replicas = Vec::with_capacity(addrs.len());
    for addr in addrs {
        let client = ControllerClient::new(&config);
        let next_id = async || client.next_broker_id(CLUSTER, name).await;
        let id = retry("CONTROLLER_GET_NEXT_BROKER_ID", next_id).await?;
        let code = format!("{addr};{}", wall_ms());
        let apply = async || client.apply_broker_id(CLUSTER, name, id, &code).await;
        retry("CONTROLLER_APPLY_BROKER_ID", apply).await?;
        let register = async || client.register(CLUSTER, name, id, addr).await;
        retry("CONTROLLER_REGISTER_BROKER", register).await?;
        let header = BrokerHeartbeatRequestHeader {
            cluster_name: CLUSTER.to_owned(),
            broker_addr: addr.clone(),
            broker_name: name.to_owned(),
            broker_id: Some(id),
            epoch: Some(0),
            max_offset: Some(0),
            confirm_offset: Some(0),
            heartbeat_timeout_mills: Some(i64::try_from(params.heartbeat_timeout_ms)?),
            election_priority: Some(i32::MAX),
        };
        replicas.push(Arc::new(Replica { client, header }));
    }
    for r in &replicas {
        for (node, outcome) in r.client.heartbeat(&r.header, Duration::from_secs(5)).await {
            outcome.with_context(|| format!("first heartbeat of {name} to {node}"))?;
        }
    }
    let first = &replicas[0];
    let id = first.header.broker_id.unwrap_or(1);
    let mut failures = Vec::new();
    loop {
        match first.client.elect(CLUSTER, name, id).await {
            Ok(decision) if decision.master_id.is_some() => break,
            Ok(decision) => failures.push(format!("no master in {decision:?}")),
            Err(error) => failures.push(error.to_string()),
        }
        if failures.len() >= 20 {
            let failures = failures.join("; ");
            bail!("CONTROLLER_ELECT_MASTER for {name} failed: {failures}");
        }
        // The heartbeat may not have reached the leader yet.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Three requests per replica, and the elections.
    let requests = 3 * replicas.len() + failures.len() + 1;
    Ok((replicas, requests as u64))
}

/// `replica` heartbeats every node once per `interval` from `phase` on (its slot of the
/// interval), as a broker's fixed-rate task does.
async fn heartbeat_loop(
    replica: Arc<Replica>,
    phase: Instant,
    interval: Duration,
    beats: Arc<Beats>,
) {
    // Java's `sendHeartbeatTimeoutMillis` (1 s) bounds one send.
    let timeout = Duration::from_secs(1);
    let since = Instant::now().saturating_duration_since(phase);
    let periods = (since.as_secs_f64() / interval.as_secs_f64()).ceil();
    let mut ticker = tokio::time::interval_at(phase + interval.mul_f64(periods), interval);
    ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        let lag = ticker.tick().await.elapsed();
        let lag_us = u64::try_from(lag.as_micros()).unwrap_or(u64::MAX);
        beats.max_lag_us.fetch_max(lag_us, Relaxed);
        for (node, outcome) in replica.client.heartbeat(&replica.header, timeout).await {
            match outcome {
                Ok(()) => _ = beats.sent.fetch_add(1, Relaxed),
                Err(error) => {
                    beats.errors.fetch_add(1, Relaxed);
                    lock(&beats.first_error).get_or_insert(format!("to {node}: {error}"));
                }
            }
        }
    }
}

/// One measured heartbeat window.
struct Window {
    heartbeats: u64,
    errors: u64,
    lag_ms: f64,
    cpu: ServerCpu,
}

/// The max and the sum of `values`, `None` unless every one is known.
fn sum_max(values: &[Option<u64>]) -> (Option<u64>, Option<u64>) {
    let known: Option<Vec<u64>> = values.iter().copied().collect();
    let known = known.unwrap_or_default();
    let sum = (!known.is_empty()).then(|| known.iter().sum());
    (known.iter().copied().max(), sum)
}

/// The heartbeat measurement on a fresh `kind` group, replica `i` on `broker_addrs[i]`.
async fn run_heartbeats(
    setup: &PeerSetup,
    kind: PeerKind,
    params: &Params,
    broker_addrs: &[String],
) -> anyhow::Result<Heartbeats> {
    let mut group = group::start(setup, kind, params.nodes, GROUP_LIMIT).await?;
    let group_ready_s = group.ready_after.as_secs_f64();
    let controllers = group.controller_addr();
    let tag = format!("[controller {}]", kind.id());
    let nodes = params.nodes;
    eprintln!("{tag} group of {nodes} ready after {group_ready_s:.1} s: {controllers}");
    tokio::time::sleep(Duration::from_secs_f64(params.idle_settle_s)).await;
    let idle_before = CpuSnapshot::take_all(&group.pids());
    tokio::time::sleep(Duration::from_secs_f64(params.idle_s)).await;
    let idle_cpu_percent = idle_before
        .zip(CpuSnapshot::take_all(&group.pids()))
        .map(|(b, a)| ServerCpu::between(&b, &a).server_cpu_percent);
    let idle_rss_kib = group.rss_kib();
    let beats = Arc::new(Beats::default());
    // Aborted when dropped: no replica outlives the measurement.
    let schedule = Mutex::new(JoinSet::new());
    let interval = Duration::from_millis(params.heartbeat_interval_ms.max(1));
    let joined = Instant::now();
    // Each set heartbeats from the moment it joined, as brokers do (and so
    // that no connection sits idle while the other sets join).
    let sets: Vec<(Vec<Arc<Replica>>, u64)> = stream::iter(0..params.broker_sets)
        .map(async |set| {
            let (first, name) = (set * params.replicas, set_name(kind, set));
            let addrs = &broker_addrs[first..first + params.replicas];
            let (replicas, requests) = join_set(&controllers, &name, params, addrs).await?;
            let mut tasks = lock(&schedule);
            for (r, replica) in replicas.iter().enumerate() {
                // Replica i of n heartbeats at i/n of the interval.
                let slot = (first + r) as f64 / params.replica_count() as f64;
                let phase = joined + interval.mul_f64(slot);
                let beat = heartbeat_loop(replica.clone(), phase, interval, beats.clone());
                tasks.spawn(beat);
            }
            anyhow::Ok((replicas, requests))
        })
        .buffered(params.join_concurrency.max(1))
        .try_collect()
        .await?;
    let join_s = joined.elapsed().as_secs_f64();
    let join_requests = sets.iter().map(|(_, n)| n).sum();
    let replicas: Vec<Arc<Replica>> = sets.into_iter().flat_map(|(r, _)| r).collect();
    eprintln!(
        "{tag} {} broker sets × {} replicas joined in {join_s:.1} s; heartbeating {:.0}/s",
        params.broker_sets,
        params.replicas,
        params.scheduled_per_s()
    );
    group.check_running()?;
    let outcome = async {
        tokio::time::sleep(Duration::from_secs_f64(params.warmup_s)).await;
        let pids = group.pids();
        let unreadable = || anyhow!("cannot read /proc of the controller nodes {pids:?}");
        let measure = async || {
            beats.max_lag_us.store(0, Relaxed);
            let before = CpuSnapshot::take_all(&pids).ok_or_else(unreadable)?;
            let (sent, errors) = (beats.sent.load(Relaxed), beats.errors.load(Relaxed));
            tokio::time::sleep(Duration::from_secs_f64(params.duration_s)).await;
            let after = CpuSnapshot::take_all(&pids).ok_or_else(unreadable)?;
            let window = Window {
                heartbeats: beats.sent.load(Relaxed) - sent,
                errors: beats.errors.load(Relaxed) - errors,
                lag_ms: beats.max_lag_us.load(Relaxed) as f64 / 1_000.0,
                cpu: ServerCpu::between(&before, &after),
            };
            let cpu = &window.cpu;
            eprintln!(
                "{tag} window: {} heartbeats in {:.1} s, server CPU {:.2} s, others {:.0} %",
                window.heartbeats, cpu.window_s, cpu.server_cpu_s, cpu.others_cpu_percent
            );
            anyhow::Ok(window)
        };
        let label = format!("controller {}", kind.id());
        let noise = |w: &Window| w.cpu.others_cpu_percent;
        let (window, windows) = settle(&label, noise, measure).await?;
        group.check_running()?;
        let rss_kib = group.rss_kib();
        // Which replicas the leader takes for alive, set by set.
        let mut alive_replicas = 0;
        for set in 0..params.broker_sets {
            let name = set_name(kind, set);
            let info = replicas[0].client.sync_state_data(&name).await?;
            let all = info.iter().flat_map(|i| i.in_sync_replicas.iter());
            let all = all.chain(info.iter().flat_map(|i| &i.not_in_sync_replicas));
            alive_replicas += all.filter(|r| r.alive).count();
        }
        anyhow::Ok((window, windows, rss_kib, alive_replicas))
    }
    .await;
    lock(&schedule).abort_all();
    let server_cpus = group.cpus_allowed();
    // The group goes first, so that the replicas' connections closing cannot set off elections.
    group.stop();
    replicas.iter().for_each(|r| r.client.close());
    let (window, windows, rss_kib, alive_replicas) = outcome?;
    let (rss_max_kib, rss_sum_kib) = sum_max(&rss_kib);
    let first_error = lock(&beats.first_error).clone();
    let (heartbeats, cpu) = (window.heartbeats, &window.cpu);
    let counted = (heartbeats > 0).then_some(heartbeats as f64);
    let per_heartbeat = |cpu_s: f64| counted.map(|n| cpu_s * 1e6 / n);
    let above_idle = |idle: f64| (cpu.server_cpu_s - idle / 100.0 * cpu.window_s).max(0.0);
    Ok(Heartbeats {
        params: params.clone(),
        group_ready_s,
        idle_cpu_percent,
        idle_rss_kib,
        join_s,
        join_requests,
        heartbeats,
        heartbeat_errors: window.errors,
        first_error,
        window_s: cpu.window_s,
        heartbeats_per_s: heartbeats as f64 / cpu.window_s.max(1e-3),
        schedule_lag_max_ms: window.lag_ms,
        server_cpu_s: cpu.server_cpu_s,
        cpu_us_per_heartbeat: per_heartbeat(cpu.server_cpu_s),
        cpu_us_per_heartbeat_above_idle: idle_cpu_percent.map(above_idle).and_then(per_heartbeat),
        server_cpu_percent: cpu.server_cpu_percent,
        rss_kib,
        rss_max_kib,
        rss_sum_kib,
        alive_replicas,
        others_cpu_percent: Some(cpu.others_cpu_percent),
        windows,
        server_cpus,
    })
}

/// One failover replica, as `rmq-broker-sim --controller` runs it: its agent and its registrar's
/// schedule (`None` once crashed), and its notice listener (stopped when dropped).
struct AgentReplica {
    addr: String,
    agent: Option<ControllerAgent>,
    schedule: Option<Running>,
    notices: JoinSet<io::Result<()>>,
}

impl AgentReplica {
    fn agent(&self) -> Option<&ControllerAgent> {
        self.agent.as_ref()
    }

    fn role(&self) -> ReplicaRole {
        self.agent().map_or(ReplicaRole::Unknown, |a| a.role())
    }

    /// Stops it as a kill would: every connection closed at once, nothing unregistered. Returns
    /// the moment of the kill.
    fn crash(&mut self) -> Instant {
        let at = Instant::now();
        self.agent = None;
        if let Some(schedule) = self.schedule.take() {
            schedule.registrar().close_connections();
        }
        self.notices.abort_all();
        at
    }
}

/// The NameServer's route of the set `name`: id → address.
async fn routed(query: &RpcClient, name: &str) -> anyhow::Result<BTreeMap<i64, String>> {
    // The first of the topics each replica registers (`numbered_topics`).
    Ok(route(query, &format!("{name}-topic-0"))
        .await?
        .and_then(|r| r.broker_datas.into_iter().find(|b| b.broker_name == name))
        .map(|b| b.broker_addrs)
        .unwrap_or_default())
}

/// Waits until `set` has a master with every replica in sync, routed by the NameServer as id 0
/// (slaves under their ids).
async fn wait_settled(set: &[AgentReplica], name: &str, query: &RpcClient) -> anyhow::Result<()> {
    let (limit, mut last) = (Duration::from_secs(60), String::new());
    let settled = async || {
        let master = set.iter().find(|r| r.role() == ReplicaRole::Master);
        let is_slave = |r: &&AgentReplica| matches!(r.role(), ReplicaRole::Slave { .. });
        let slaves = set.iter().filter(is_slave).count();
        last = "no master".into();
        let Some(master) = master else {
            return Ok(false);
        };
        let agent = master.agent().context("the master runs")?;
        let sss = agent.sync_state_set().sync_state_set.len();
        let routed_as = |r: &AgentReplica| match r.role() {
            ReplicaRole::Master => 0,
            _ => r.agent().and_then(|a| a.controller_id()).unwrap_or(-1),
        };
        let expected: BTreeMap<i64, String> =
            set.iter().map(|r| (routed_as(r), r.addr.clone())).collect();
        let route = routed(query, name).await?;
        last = format!("sync-state set of {sss}, {slaves} slaves, route {route:?}");
        Ok(sss == set.len() && slaves + 1 == set.len() && route == expected)
    };
    let poll = Duration::from_millis(50);
    let took = ms_until(Instant::now(), poll, limit, settled).await?;
    let why = || format!("{name} did not settle within {limit:?}: {last}");
    took.map(drop).with_context(why)
}

/// The failover measurement on a fresh `kind` group, with replicas registering at `namesrv`.
async fn run_failover(
    setup: &PeerSetup,
    kind: PeerKind,
    params: &Params,
    namesrv: &RunningPeer,
) -> anyhow::Result<Failover> {
    let group = group::start(setup, kind, params.nodes, GROUP_LIMIT).await?;
    let tag = format!("[controller {} failover]", kind.id());
    let controllers = group.controller_addr();
    let store = format!("waymark-bench-{}-agents-{}", std::process::id(), kind.id());
    let store = std::env::temp_dir().join(store);
    let _ = std::fs::remove_dir_all(&store);
    // A replica of set `name` as `rmq-broker-sim --controller` starts one.
    let start = async |name: &str, r: usize| -> anyhow::Result<AgentReplica> {
        let dir = store.join(name).join(r.to_string());
        std::fs::create_dir_all(&dir)?;
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?.to_string();
        let broker = BrokerConfig::new(CLUSTER, name, &addr);
        // Two topics: a registration of one alone reads as an incremental
        // one, which a NameServer refuses before the full registration.
        let topics = numbered_topics(&format!("{name}-topic-"), 2, 8);
        let topics = TopicTable::with_topics(topics, wall_ms());
        let list = NameServerList::from_static(&namesrv.addr.to_string())?;
        let registrar = Arc::new(Registrar::new(broker, topics, list)?);
        let mut config = ControllerModeConfig::new(&controllers)?;
        config = config.with_identity_path(dir.join("brokerIdentity"));
        config.controller_heart_beat_timeout =
            Duration::from_millis(params.agent_heartbeat_timeout_ms);
        let agent = ControllerAgent::start(registrar.clone(), config, None);
        let java = Schedule::java(registrar.config(), None);
        let schedule = Some(rmq_broker_client::spawn(registrar, java, None));
        let mut notices = JoinSet::new();
        notices.spawn(serve_notices(listener, agent.notice_service(), pending()));
        let agent = Some(agent);
        Ok(AgentReplica {
            addr,
            agent,
            schedule,
            notices,
        })
    };
    let outcome = async {
        let mut sets = Vec::new();
        for k in 0..params.failover_samples {
            let name = format!("bench-failover-{}-{k}", kind.id());
            let mut set = Vec::new();
            for r in 0..params.replicas {
                let replica = start(&name, r).await?;
                // One at a time, so that the first replica is the first master.
                let role = || async { replica.role() != ReplicaRole::Unknown };
                if !rmq_testkit::eventually(Duration::from_secs(30), role).await {
                    bail!("{name} replica {r} got no role from the controller within 30 s");
                }
                set.push(replica);
            }
            sets.push((name, set));
        }
        let query = load::connect(namesrv.addr, 1).await?.remove(0);
        for (name, set) in &sets {
            wait_settled(set, name, &query).await?;
        }
        eprintln!("{tag} {} broker sets settled", sets.len());
        // The NameServer is part of what a failover goes through.
        let mut pids = group.pids();
        pids.push(namesrv.pid());
        let cpu_before = CpuSnapshot::take_all(&pids);
        let poll = Duration::from_millis(params.poll_ms);
        let give_up = Duration::from_secs_f64(params.give_up_s);
        let mut samples = Vec::new();
        for (k, (name, set)) in sets.iter_mut().enumerate() {
            // Also before the first sample, so that "others' CPU" is read
            // over seconds rather than over one failover.
            tokio::time::sleep(Duration::from_secs_f64(params.pause_s)).await;
            let master = set.iter_mut().find(|r| r.role() == ReplicaRole::Master);
            let master = master.context("no master to crash")?;
            let old = master.addr.clone();
            let moved = async || {
                let route = routed(&query, name).await?;
                Ok(route.get(&0).is_some_and(|a| *a != old))
            };
            let sample = ms_until(master.crash(), poll, give_up, moved).await?;
            let shown = sample.map_or("not done".into(), |v| format!("{v:.1} ms"));
            eprintln!("{tag} sample {k}: {shown}");
            samples.push(sample);
        }
        let others_cpu_percent = cpu_before
            .zip(CpuSnapshot::take_all(&pids))
            .map(|(b, a)| a.others_percent_since(&b));
        sets.iter_mut()
            .flat_map(|(_, set)| set)
            .for_each(|r| _ = r.crash());
        anyhow::Ok((samples, others_cpu_percent))
    }
    .await;
    let server_cpus = group.cpus_allowed();
    group.stop();
    let _ = std::fs::remove_dir_all(&store);
    let (samples, others_cpu_percent) = outcome?;
    Ok(Failover {
        params: params.clone(),
        median_ms: median(samples.iter().flatten().copied()),
        samples_ms: samples,
        others_cpu_percent,
        server_cpus,
    })
}
