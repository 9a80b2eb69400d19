//! `hostile`: peers that try to exhaust the server, as the integration tests
//! of crates/rmq-namesrv (tests/server/hostile_peers.rs) attack Waymark, run
//! against every NameServer side by side.
//!
//! For each attack a fresh server starts and one broker registers a few
//! topics on a connection that stays open; then, for a bounded window, the
//! attack runs while a separate connection sends GET_ROUTEINFO_BY_TOPIC at a
//! fixed modest rate (2 s timeout: a timeout is a failure) and the server's
//! RSS is sampled. Afterwards: is the process still there and does it answer
//! a route query on a fresh connection, and how was the attacker refused.
//! A server that dies is a result, not an error: the next attack gets a
//! fresh one.
//!
//! What each attack does is in [`attacks`]; the report is
//! `crate::report`'s. This module owns the parameters, the per-attack
//! measurement around an attack, and the result values.

pub mod attacks;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use clap::ValueEnum;
use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::ResponseCode;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::{registrations, route, start_peer, Fleet};
use crate::load::{self, Progress, Window};
use crate::peer::{PeerKind, PeerSetup, RunningPeer};
use crate::pin;
use crate::stats::Latency;
use crate::workload::{self, Layout};

pub use attacks::{topic_flood_request, TopicFlood};

/// One attack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Attack {
    /// REGISTER_BROKER whose brokerName is 1 MiB, a few in a row, each on a
    /// new connection.
    BigHeader,
    /// Connections that each announce a 16 MiB frame, send all but its last
    /// byte and hold on.
    SlowFrames,
    /// Connections that pipeline GET_ALL_TOPIC_LIST_FROM_NAMESERVER (each
    /// answer lists a broker's 20,000 topics) and never read.
    UnreadAnswers,
    /// Thousands of connections, each with one route query answered, held,
    /// then closed at once.
    ConnectionFlood,
    /// One REGISTER_BROKER with millions of topics in a zlib-compressed
    /// 4.x-style body.
    TopicFlood,
}

impl Attack {
    /// Every attack, in report order.
    pub const ALL: [Attack; 5] = [
        Attack::BigHeader,
        Attack::SlowFrames,
        Attack::UnreadAnswers,
        Attack::ConnectionFlood,
        Attack::TopicFlood,
    ];

    /// The name used in flags, results and the report.
    pub fn id(self) -> &'static str {
        match self {
            Attack::BigHeader => "big-header",
            Attack::SlowFrames => "slow-frames",
            Attack::UnreadAnswers => "unread-answers",
            Attack::ConnectionFlood => "connection-flood",
            Attack::TopicFlood => "topic-flood",
        }
    }
}

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// The attacks, in order.
    pub attacks: Vec<Attack>,
    /// How long each attack runs (route queries and RSS sampling alike), s.
    pub attack_s: f64,
    /// Route queries per second during an attack.
    pub query_rate: f64,
    /// Timeout of a route query (and of the check afterwards), ms.
    pub query_timeout_ms: u64,
    /// RSS sampling period, ms.
    pub rss_sample_ms: u64,
    /// Topics of the one broker registered before every attack but
    /// `unread-answers`.
    pub fleet_topics: usize,
    /// `big-header`: size of the brokerName, bytes.
    pub big_header_bytes: usize,
    /// `big-header`: requests, each on a new connection.
    pub big_header_sends: usize,
    /// `slow-frames`: connections.
    pub slow_connections: usize,
    /// `slow-frames`: announced frame size, length prefix included, bytes.
    pub slow_frame_bytes: usize,
    /// `unread-answers`: topics of the registered broker.
    pub unread_topics: usize,
    /// `unread-answers`: connections.
    pub unread_connections: usize,
    /// `unread-answers`: requests pipelined on each.
    pub unread_requests: usize,
    /// `connection-flood`: connections.
    pub flood_connections: usize,
    /// `connection-flood`: connections per source address (127.0.0.2, .3, …),
    /// below Waymark's default `maxConnectionsPerIp` (4096).
    pub flood_per_address: usize,
    /// `connection-flood`: connections opened at the same time.
    pub flood_concurrency: usize,
    /// `connection-flood`: wait after closing them before reading RSS, s.
    pub flood_settle_s: f64,
    /// `topic-flood`: topics in the body.
    pub flood_topics: usize,
}

impl Params {
    /// The defaults (everything scaled down with `quick`).
    pub fn defaults(quick: bool) -> Params {
        let pick = |full, small| if quick { small } else { full };
        Params {
            attacks: Attack::ALL.to_vec(),
            attack_s: if quick { 3.0 } else { 15.0 },
            query_rate: 20.0,
            query_timeout_ms: 2_000,
            rss_sample_ms: 200,
            fleet_topics: 4,
            big_header_bytes: 1 << 20,
            big_header_sends: pick(4, 2),
            slow_connections: pick(48, 8),
            slow_frame_bytes: 16 << 20,
            unread_topics: pick(20_000, 5_000),
            unread_connections: pick(8, 4),
            unread_requests: pick(400, 100),
            flood_connections: pick(5_000, 500),
            flood_per_address: 1_000,
            flood_concurrency: 64,
            flood_settle_s: if quick { 2.0 } else { 5.0 },
            flood_topics: pick(2_000_000, 100_000),
        }
    }

    fn query_timeout(&self) -> Duration {
        Duration::from_millis(self.query_timeout_ms)
    }
}

/// How the attacker's connections (or requests) ended, counted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Fate {
    /// Connections (or requests) the attack made.
    pub attempts: u64,
    /// Answered with SUCCESS.
    pub accepted: u64,
    /// Answered with another code.
    pub error_responses: u64,
    /// The first such answer: code and remark.
    pub first_error_response: Option<String>,
    /// Closed by the server (end of stream or reset).
    pub closed: u64,
    /// Neither answered nor closed by the end: kept open.
    pub kept: u64,
    /// The generator could not connect at all.
    pub connect_failed: u64,
    /// The first connect failure.
    pub first_connect_error: Option<String>,
}

impl Fate {
    /// Counts one reaction.
    pub fn count(&mut self, reaction: &attacks::Reaction) {
        use attacks::Reaction;
        match reaction {
            Reaction::Answer { code, .. } if ResponseCode::from(*code) == ResponseCode::Success => {
                self.accepted += 1;
            }
            Reaction::Answer { code, remark } => {
                self.error_responses += 1;
                self.first_error_response.get_or_insert_with(|| {
                    let remark: String = remark.chars().take(200).collect();
                    format!("code {code}: {remark}")
                });
            }
            Reaction::Closed => self.closed += 1,
            Reaction::Nothing => self.kept += 1,
        }
    }

    /// A failed connect.
    pub fn connect_failed(&mut self, error: &std::io::Error) {
        self.connect_failed += 1;
        self.first_connect_error
            .get_or_insert_with(|| error.to_string());
    }

    /// One line for the report: "closed 4/4", "answered code 13 ×4 (…)", ….
    pub fn summary(&self) -> String {
        let n = self.attempts;
        let mut parts = Vec::new();
        if self.closed > 0 {
            parts.push(format!("closed {}/{n}", self.closed));
        }
        if self.error_responses > 0 {
            let first = self.first_error_response.as_deref().unwrap_or("");
            parts.push(format!(
                "error answer {}/{n} ({})",
                self.error_responses,
                first.replace('|', "/")
            ));
        }
        if self.accepted > 0 {
            parts.push(format!("accepted {}/{n}", self.accepted));
        }
        if self.kept > 0 {
            parts.push(format!("kept open {}/{n}", self.kept));
        }
        if self.connect_failed > 0 {
            let first = self.first_connect_error.as_deref().unwrap_or("");
            parts.push(format!(
                "connect failed {}/{n} ({first})",
                self.connect_failed
            ));
        }
        if parts.is_empty() {
            "n/a".into()
        } else {
            parts.join(", ")
        }
    }
}

/// What one attack did to one peer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttackRun {
    /// Which attack.
    pub attack: Attack,
    /// Why the harness could not run it (the peer did not start, the broker
    /// could not register): no figures then.
    pub error: Option<String>,
    /// RSS with the broker registered, before the attack, KiB.
    pub rss_before_kib: Option<u64>,
    /// Highest RSS sampled during the attack, KiB.
    pub rss_peak_kib: Option<u64>,
    /// RSS once the attacker's connections closed (`connection-flood`:
    /// `flood_settle_s` later), KiB.
    pub rss_after_kib: Option<u64>,
    /// Latency of the route queries answered with SUCCESS during the attack.
    pub queries: Latency,
    /// Route queries sent during the attack.
    pub queries_sent: u64,
    /// Route queries that failed (timeout, error code, closed connection).
    pub query_failures: u64,
    /// The first failure.
    pub query_first_error: Option<String>,
    /// Whether the process was still running and answered a route query on
    /// a fresh connection within the timeout afterwards.
    pub alive_after: bool,
    /// What the check afterwards saw ("answered SUCCESS", "exited: …", …).
    pub after: String,
    /// Whether the peer's logs mention `OutOfMemoryError`.
    pub out_of_memory: bool,
    /// How the attacker's connections ended.
    pub refusal: Fate,
    /// Bytes the attacker wrote (all of them, or as far as the server read).
    pub attacker_sent_bytes: u64,
    /// Bytes the attacker meant to write.
    pub attacker_planned_bytes: u64,
    /// Anything else worth a line (e.g. how long the flood took to open).
    pub note: Option<String>,
}

impl AttackRun {
    fn failed(attack: Attack, error: String) -> AttackRun {
        AttackRun {
            attack,
            error: Some(error),
            rss_before_kib: None,
            rss_peak_kib: None,
            rss_after_kib: None,
            queries: Latency::default(),
            queries_sent: 0,
            query_failures: 0,
            query_first_error: None,
            alive_after: false,
            after: String::new(),
            out_of_memory: false,
            refusal: Fate::default(),
            attacker_sent_bytes: 0,
            attacker_planned_bytes: 0,
            note: None,
        }
    }
}

/// What one peer went through.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hostile {
    /// What ran.
    pub params: Params,
    /// `topic-flood`: size of the compressed body, bytes.
    pub flood_body_bytes: Option<usize>,
    /// One entry per attack, in order.
    pub attacks: Vec<AttackRun>,
    /// Wall time of all attacks on this peer, s.
    pub duration_s: f64,
}

/// Runs every attack of `params` against fresh `kind`s. `flood` is the
/// prepared topic-flood request (building it takes seconds, so callers
/// build it once for every peer).
///
/// # Errors
/// None so far: an attack the harness could not run is recorded in its
/// [`AttackRun::error`].
pub async fn run(
    setup: &PeerSetup,
    kind: PeerKind,
    params: &Params,
    flood: Option<&TopicFlood>,
) -> anyhow::Result<Hostile> {
    let started = Instant::now();
    let mut runs = Vec::new();
    for &attack in &params.attacks {
        let run = match run_one(setup, kind, params, attack, flood).await {
            Ok(run) => run,
            Err(error) => AttackRun::failed(attack, format!("{error:#}")),
        };
        eprintln!(
            "[hostile {} {}] RSS {:?} → peak {:?} KiB, queries p99 {:.1} ms, {} of {} failed, \
             alive after: {} ({}), attacker: {}{}",
            kind.id(),
            attack.id(),
            run.rss_before_kib,
            run.rss_peak_kib,
            run.queries.p99_us / 1_000.0,
            run.query_failures,
            run.queries_sent,
            run.alive_after,
            run.after,
            run.refusal.summary(),
            run.error
                .as_deref()
                .map_or(String::new(), |e| format!("; not run: {e}"))
        );
        runs.push(run);
    }
    Ok(Hostile {
        params: params.clone(),
        flood_body_bytes: flood.map(TopicFlood::body_len),
        attacks: runs,
        duration_s: started.elapsed().as_secs_f64(),
    })
}

/// What an attack reports back to the measurement around it.
#[derive(Debug, Default)]
pub struct Struck {
    /// How the attacker's connections ended.
    pub fate: Fate,
    /// Bytes written.
    pub sent_bytes: u64,
    /// Bytes meant to be written.
    pub planned_bytes: u64,
    /// A line for the report.
    pub note: Option<String>,
}

async fn run_one(
    setup: &PeerSetup,
    kind: PeerKind,
    params: &Params,
    attack: Attack,
    flood: Option<&TopicFlood>,
) -> anyhow::Result<AttackRun> {
    let topics = if attack == Attack::UnreadAnswers {
        params.unread_topics
    } else {
        params.fleet_topics
    };
    let layout = Layout {
        brokers: 1,
        topics_per_broker: topics.max(2),
        spread: 1,
        queues: 8,
    };
    let mut peer = start_peer(setup, kind, &layout).await?;
    let mut fleet = Fleet::connect(peer.addr, registrations(&layout)?).await?;
    fleet.register_all().await?;
    let topic = workload::topic_name(0, 0);
    let queries = load::connect(peer.addr, 1).await?;
    if route(&queries[0], &topic).await?.is_none() {
        anyhow::bail!("{topic} is not routed after registration");
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let rss_before_kib = peer.rss_kib();

    let window = Duration::from_secs_f64(params.attack_s);
    let deadline = Instant::now() + window;
    let sampler = RssSampler::spawn(peer.pid(), Duration::from_millis(params.rss_sample_ms));
    let addr = peer.addr;
    let attack_params = params.clone();
    let flood_request = flood.map(|f| f.frame.clone());
    let attacker = tokio::spawn(async move {
        attacks::run(attack, addr, &attack_params, deadline, flood_request).await
    });
    let progress = Progress::new(format!("hostile {} {}", kind.id(), attack.id()), window);
    let printer = progress.spawn_printer();
    let request = workload::route_request(&topic);
    let outcome = load::fixed_rate(
        &queries,
        params.query_rate,
        Window {
            warmup: Duration::ZERO,
            duration: window,
            timeout: params.query_timeout(),
        },
        Arc::new(move |_| request.clone()),
        &progress,
        None,
    )
    .await;
    printer.finish();
    let struck = attacker.await.unwrap_or_else(|error| Struck {
        note: Some(format!("the attack task failed: {error}")),
        ..Struck::default()
    });
    let closed_at = Instant::now();
    let rss_peak_kib = sampler.stop().await;

    let (alive_after, after) = check_after(&mut peer, &topic, params.query_timeout()).await;
    let settle = if attack == Attack::ConnectionFlood {
        Duration::from_secs_f64(params.flood_settle_s)
    } else {
        Duration::from_millis(500)
    };
    tokio::time::sleep_until(closed_at + settle).await;
    let rss_after_kib = peer.rss_kib();
    let out_of_memory = logs_mention(peer.dir(), "OutOfMemoryError");
    drop(queries);
    drop(fleet);
    peer.stop();
    Ok(AttackRun {
        attack,
        error: None,
        rss_before_kib,
        rss_peak_kib,
        rss_after_kib,
        queries: Latency::of(&outcome.latency),
        queries_sent: outcome.ok + outcome.errors,
        query_failures: outcome.errors,
        query_first_error: outcome.first_error,
        alive_after,
        after,
        out_of_memory,
        refusal: struck.fate,
        attacker_sent_bytes: struck.sent_bytes,
        attacker_planned_bytes: struck.planned_bytes,
        note: struck.note,
    })
}

/// Whether `peer` still runs and answers a route query for `topic` on a
/// fresh connection within `timeout`, and what was seen.
async fn check_after(peer: &mut RunningPeer, topic: &str, timeout: Duration) -> (bool, String) {
    if let Some(status) = peer.exit_status() {
        return (false, format!("exited ({status})"));
    }
    let config = ClientConfig {
        connect_timeout: timeout,
        inbound_capacity: 0,
        ..ClientConfig::default()
    };
    let client = match RpcClient::connect(peer.addr, config).await {
        Ok(client) => client,
        Err(error) => return (false, format!("cannot connect: {error}")),
    };
    let answer = client.invoke(workload::route_request(topic), timeout).await;
    match answer {
        Ok(response) if response.response_code() == ResponseCode::Success => {
            (true, "answered SUCCESS".into())
        }
        Ok(response) => (true, format!("answered code {}", response.code)),
        Err(error) => (false, format!("no answer: {error}")),
    }
}

/// Samples a process's RSS until stopped; keeps the highest.
struct RssSampler {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<Option<u64>>,
}

impl RssSampler {
    fn spawn(pid: u32, every: Duration) -> RssSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let task = tokio::spawn(async move {
            let mut peak: Option<u64> = None;
            let mut tick = tokio::time::interval(every);
            while !flag.load(Ordering::Relaxed) {
                tick.tick().await;
                if let Some(rss) = pin::rss_kib(pid) {
                    peak = Some(peak.map_or(rss, |p| p.max(rss)));
                }
            }
            peak
        });
        RssSampler { stop, task }
    }

    async fn stop(self) -> Option<u64> {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.ok().flatten()
    }
}

/// Whether any file under `dir` (logs; 64 MiB read at most) contains `needle`.
fn logs_mention(dir: &Path, needle: &str) -> bool {
    fn walk(dir: &Path, needle: &[u8], budget: &mut u64) -> bool {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return false;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                if walk(&path, needle, budget) {
                    return true;
                }
            } else if meta.len() <= *budget {
                *budget -= meta.len();
                if let Ok(bytes) = std::fs::read(&path) {
                    if bytes.windows(needle.len()).any(|w| w == needle) {
                        return true;
                    }
                }
            }
        }
        false
    }
    walk(dir, needle.as_bytes(), &mut (64 << 20))
}

/// The bytes of `command` on the wire, length prefix included.
pub(crate) fn frame_of(command: &rmq_wire::RemotingCommand) -> Bytes {
    rmq_wire::frame::encode_to_bytes(command)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fates_summarise_what_happened() {
        let mut fate = Fate {
            attempts: 4,
            ..Fate::default()
        };
        fate.count(&attacks::Reaction::Closed);
        fate.count(&attacks::Reaction::Answer {
            code: 13,
            remark: "brokerName exceeds maxHeaderFieldBytes".into(),
        });
        fate.count(&attacks::Reaction::Answer {
            code: 0,
            remark: String::new(),
        });
        fate.count(&attacks::Reaction::Nothing);
        assert_eq!(
            fate.summary(),
            "closed 1/4, error answer 1/4 (code 13: brokerName exceeds maxHeaderFieldBytes), \
             accepted 1/4, kept open 1/4"
        );
        assert_eq!(Fate::default().summary(), "n/a");
    }

    #[test]
    fn quick_scales_everything_down() {
        let full = Params::defaults(false);
        let quick = Params::defaults(true);
        assert_eq!(full.attacks, Attack::ALL.to_vec());
        assert!(quick.attack_s < full.attack_s);
        assert!(quick.flood_connections < full.flood_connections);
        assert!(quick.flood_topics < full.flood_topics);
        assert_eq!(full.flood_topics, 2_000_000);
        // Every source address stays under Waymark's default per-IP limit.
        assert!(full.flood_per_address < 4_096);
    }
}
