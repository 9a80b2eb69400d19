//! `route-under-storm`: route queries while brokers re-register.
//!
//! 100 brokers × 2,000 topics (each topic on 10 brokers) register; then every
//! broker re-registers its full body with a new DataVersion, closed-loop on
//! its own connection (as fast as the server absorbs), while route queries
//! run at a fixed rate over separate connections. Reports query latency
//! percentiles and registrations absorbed per second. A real broker
//! registers every 30 s, so this is far beyond production load; it measures
//! whether readers wait behind writers.
//!
//! The server's CPU is read at the start and the end of the measured
//! window; it covers queries and registrations alike. CPU per registration
//! takes off the queries' share at the server's CPU per query in route-qps
//! of the same run ([`Storm::attribute_cpu`], called by the comparison once
//! both ran); without it the queries' share stays in, and the result says so.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use rmq_broker_client::wall_ms;
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use super::{registrations, start_peer, verify_routes, Fleet, QUERY_TIMEOUT, REGISTER_TIMEOUT};
use crate::cpu::{self, ServerCpu};
use crate::load::{self, Outcome, Progress, Window, Worker};
use crate::peer::{PeerKind, PeerSetup};
use crate::scenario::millis;
use crate::stats::Latency;
use crate::workload::{self, Layout};

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Brokers and topics.
    pub layout: Layout,
    /// Route queries per second.
    pub query_rate: f64,
    /// Query connections.
    pub query_connections: usize,
    /// Unmeasured lead-in, seconds.
    pub warmup_s: f64,
    /// Measured time, seconds.
    pub duration_s: f64,
}

impl Params {
    /// The defaults (a few seconds and a smaller fleet with `quick`).
    pub fn defaults(quick: bool) -> Params {
        Params {
            layout: Layout {
                brokers: if quick { 10 } else { 100 },
                topics_per_broker: if quick { 200 } else { 2_000 },
                spread: 10,
                queues: 8,
            },
            query_rate: 1_000.0,
            query_connections: 16,
            warmup_s: if quick { 0.5 } else { 2.0 },
            duration_s: if quick { 2.0 } else { 20.0 },
        }
    }
}

/// What one peer did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Storm {
    /// What ran.
    pub params: Params,
    /// Latency of the successful route queries.
    pub queries: Latency,
    /// Failed route queries.
    pub query_errors: u64,
    /// The first query failure.
    pub query_first_error: Option<String>,
    /// How late the query schedule ran at worst (generator saturation), ms.
    pub query_schedule_lag_max_ms: f64,
    /// Scheduling of the generator's query thread.
    pub query_thread: String,
    /// Registrations answered per second.
    pub registrations_per_s: f64,
    /// Topic-queue entries re-registered per second.
    pub entries_per_s: f64,
    /// Latency of the registrations.
    pub registration_latency: Latency,
    /// Failed registrations.
    pub registration_errors: u64,
    /// The first registration failure.
    pub registration_first_error: Option<String>,
    /// Server RSS at the end, KiB.
    pub rss_kib: Option<u64>,
    /// CPUs the server was allowed.
    pub server_cpus: Option<String>,
    /// CPU other processes used during the run, % of one CPU (noise).
    #[serde(default)]
    pub others_cpu_percent: Option<f64>,
    /// The server's CPU over the measured window (queries and
    /// registrations together).
    #[serde(default)]
    pub server_cpu: Option<ServerCpu>,
    /// Route queries answered inside the window.
    #[serde(default)]
    pub queries_answered: u64,
    /// Registrations answered inside the window.
    #[serde(default)]
    pub registrations_answered: u64,
    /// Server CPU per registration, µs: [`cpu::attribute`] of `server_cpu`
    /// (`None` below [`cpu::MIN_TICKS`]).
    #[serde(default)]
    pub cpu_us_per_registration: Option<f64>,
    /// The CPU per query taken off for each answered query, µs (the same
    /// server's in route-qps); `None`: nothing taken off, the queries'
    /// share is in `cpu_us_per_registration`.
    #[serde(default)]
    pub cpu_us_per_query_subtracted: Option<f64>,
}

impl Storm {
    /// Sets `cpu_us_per_registration`, taking off `query_us` (the same
    /// server's CPU per query measured alone, if known) for each query.
    pub fn attribute_cpu(&mut self, query_us: Option<f64>) {
        let Some(server_cpu) = &self.server_cpu else {
            return;
        };
        self.cpu_us_per_query_subtracted = query_us;
        self.cpu_us_per_registration = cpu::attribute(
            server_cpu,
            self.queries_answered,
            query_us,
            self.registrations_answered,
        );
    }
}

/// The query stream on a thread and runtime of its own. Sharing the
/// registrations' runtime would make a query's answer wait in the task
/// queue behind up to 100 registration tasks (each copying a body of
/// hundreds of kilobytes) and measure the generator; on its own thread the
/// kernel schedules it as soon as its socket is readable.
///
/// Both threads share the generator's CPU, and a CPU-bound registration
/// thread can keep a woken query thread waiting for a scheduler slice
/// (milliseconds). So the query thread asks for `SCHED_FIFO` priority 1
/// (`chrt -f -p 1 <tid>`; it only ever runs briefly and sleeps): then it
/// runs the moment an answer arrives. Whether that worked is reported.
struct QueryThread {
    go: oneshot::Sender<()>,
    done: oneshot::Receiver<Outcome>,
    priority: String,
}

/// Puts the calling thread under `SCHED_FIFO` 1; says what it got.
fn realtime_priority() -> String {
    let tid = std::fs::read_link("/proc/thread-self")
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    let Some(tid) = tid else {
        return "normal (no thread id)".into();
    };
    match std::process::Command::new("chrt")
        .args(["-f", "-p", "1", &tid])
        .output()
    {
        Ok(out) if out.status.success() => "SCHED_FIFO 1 (chrt)".into(),
        Ok(out) => format!(
            "normal (chrt failed: {})",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(error) => format!("normal (no chrt: {error})"),
    }
}

impl QueryThread {
    /// Connects the query connections on a new thread; returns once they
    /// are open. The stream starts with [`Self::run`].
    async fn start(
        addr: SocketAddr,
        params: &Params,
        topics: Vec<String>,
        window: Window,
        progress: &Arc<Progress>,
    ) -> anyhow::Result<QueryThread> {
        let (ready_tx, ready_rx) = oneshot::channel::<anyhow::Result<String>>();
        let (go_tx, go_rx) = oneshot::channel::<()>();
        let (done_tx, done_rx) = oneshot::channel();
        let (connections, rate) = (params.query_connections, params.query_rate);
        let progress = progress.clone();
        std::thread::Builder::new()
            .name("storm-queries".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(error) => {
                        let _ = ready_tx.send(Err(error.into()));
                        return;
                    }
                };
                let priority = realtime_priority();
                runtime.block_on(async move {
                    let clients = match load::connect(addr, connections).await {
                        Ok(clients) => clients,
                        Err(error) => {
                            let _ = ready_tx.send(Err(error));
                            return;
                        }
                    };
                    let _ = ready_tx.send(Ok(priority));
                    if go_rx.await.is_err() {
                        return;
                    }
                    let query: load::Numbered = Arc::new(move |i| {
                        workload::route_request(&topics[i as usize % topics.len()])
                    });
                    let outcome =
                        load::fixed_rate(&clients, rate, window, query, &progress, None).await;
                    let _ = done_tx.send(outcome);
                });
            })?;
        let priority = ready_rx.await.context("the query thread died")??;
        Ok(QueryThread {
            go: go_tx,
            done: done_rx,
            priority,
        })
    }

    /// Starts the stream and waits for its outcome.
    async fn run(self) -> anyhow::Result<(Outcome, String)> {
        let _ = self.go.send(());
        let outcome = self.done.await.context("the query thread died")?;
        Ok((outcome, self.priority))
    }
}

/// Runs the scenario against a fresh `kind`.
///
/// # Errors
/// The peer does not start, refuses the first registrations or routes wrongly.
pub async fn run(setup: &PeerSetup, kind: PeerKind, params: &Params) -> anyhow::Result<Storm> {
    let layout = params.layout;
    layout.validate()?;
    let peer = start_peer(setup, kind, &layout).await?;
    let mut fleet = Fleet::connect(peer.addr, registrations(&layout)?).await?;
    fleet.register_all().await?;
    let check = load::connect(peer.addr, 1).await?;
    verify_routes(&check[0], &layout, kind).await?;

    let registering: Vec<Worker> = fleet
        .clients
        .iter()
        .cloned()
        .zip(std::mem::take(&mut fleet.registrations))
        .map(|(client, mut registration)| Worker {
            client,
            make: Box::new(move || registration.next_request(wall_ms())),
        })
        .collect();
    let warmup = Duration::from_secs_f64(params.warmup_s);
    let duration = Duration::from_secs_f64(params.duration_s);
    let register_window = Window {
        warmup,
        duration,
        timeout: REGISTER_TIMEOUT,
    };
    let query_window = Window {
        warmup,
        duration,
        timeout: QUERY_TIMEOUT,
    };
    let progress = Progress::new(
        format!("route-under-storm {}", kind.id()),
        warmup + duration,
    );
    let queries = QueryThread::start(
        peer.addr,
        params,
        layout.all_topics(),
        query_window,
        &progress,
    )
    .await?;
    let printer = progress.spawn_printer();
    let (registered, queried) = tokio::join!(
        load::closed_loop_with_cpu(registering, register_window, &progress, true, peer.pid()),
        queries.run(),
    );
    printer.finish();
    let others_cpu_percent = registered
        .server_cpu
        .as_ref()
        .map(|window| window.others_cpu_percent);
    let (queried, query_thread) = queried?;

    let mut result = Storm {
        params: params.clone(),
        queries: Latency::of(&queried.latency),
        query_errors: queried.errors,
        query_first_error: queried.first_error.clone(),
        query_schedule_lag_max_ms: millis(queried.max_schedule_lag),
        query_thread,
        registrations_per_s: registered.rate(),
        entries_per_s: registered.rate() * layout.topics_per_broker as f64,
        registration_latency: Latency::of(&registered.latency),
        registration_errors: registered.errors,
        registration_first_error: registered.first_error.clone(),
        rss_kib: peer.rss_kib(),
        server_cpus: peer.cpus_allowed(),
        others_cpu_percent,
        server_cpu: registered.server_cpu.clone(),
        queries_answered: queried.answered_in_window,
        registrations_answered: registered.ok,
        cpu_us_per_registration: None,
        cpu_us_per_query_subtracted: None,
    };
    result.attribute_cpu(None);
    drop(fleet);
    peer.stop();
    Ok(result)
}
