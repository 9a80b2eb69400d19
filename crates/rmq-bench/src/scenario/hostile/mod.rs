//! `hostile`: rmq-testkit's hostile peers set on every NameServer: memory, route queries during
//! each attack, alive after.

pub mod attacks;
use super::fleet::{route, start_peer, Fleet};
use super::{Ctx, Record, Scenario};
use crate::cli::{millis as ms_arg, secs};
use crate::load::{self, Window};
use crate::peer::{PeerKind, PeerOptions, PeerSetup, RunningPeer};
use crate::pin;
use crate::report::format::{answered_ms, mib, num};
use crate::report::{Col, Row, Section};
use crate::stats::Latency;
use crate::workload::{self, Layout};
use anyhow::Context;
use attacks::topic_flood_request;
use bytes::Bytes;
use clap::{Args, ValueEnum};
use rmq_testkit::hostile::{Fate, Struck};
use rmq_transport::RpcClient;
use rmq_wire::ResponseCode;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

pub struct Hostile;

/// An attack, named in flags, results and the report as clap and serde spell it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Attack {
    /// REGISTER_BROKER whose brokerName is 1 MiB, a few in a row, each on a new connection.
    #[default]
    BigHeader,
    /// Connections that each announce a 16 MiB frame, send all but its last byte and hold on.
    SlowFrames,
    /// Connections that pipeline GET_ALL_TOPIC_LIST_FROM_NAMESERVER and never read.
    UnreadAnswers,
    /// Thousands of connections, each with one route query answered, held, then closed at once.
    ConnectionFlood,
    /// One REGISTER_BROKER with millions of topics in a zlib-compressed 4.x-style body.
    TopicFlood,
}

impl Attack {
    /// The name used in flags, results and the report.
    pub fn id(self) -> String {
        self.to_possible_value()
            .map_or_else(String::new, |v| v.get_name().into())
    }
}

#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
pub struct Params {
    /// The attacks, in order.
    #[arg(long, value_enum, value_delimiter = ',')]
    #[arg(default_values_t = Attack::value_variants().to_vec())]
    pub attacks: Vec<Attack>,
    /// How long each attack runs (route queries and RSS sampling alike).
    #[arg(long = "duration", default_value_t = 15.0, value_parser = secs)]
    pub attack_s: f64,
    /// Route queries per second during an attack.
    #[arg(long, default_value_t = 20.0)]
    pub query_rate: f64,
    /// Timeout of a route query (and of the check afterwards).
    #[arg(long = "query-timeout", default_value = "2s", value_parser = ms_arg)]
    pub query_timeout_ms: u64,
    /// RSS sampling period.
    #[arg(long = "rss-sample", default_value = "200ms", value_parser = ms_arg)]
    pub rss_sample_ms: u64,
    /// Topics of the broker registered before every attack but unread-answers.
    #[arg(long, default_value_t = 4)]
    pub fleet_topics: usize,
    /// big-header: bytes of the brokerName.
    #[arg(long, default_value_t = 1 << 20)]
    pub big_header_bytes: usize,
    /// big-header: requests, each on a new connection.
    #[arg(long, default_value_t = 4)]
    pub big_header_sends: usize,
    /// slow-frames: connections.
    #[arg(long, default_value_t = 48)]
    pub slow_connections: usize,
    /// slow-frames: announced frame size, length prefix included, bytes.
    #[arg(long, default_value_t = 16 << 20)]
    pub slow_frame_bytes: usize,
    /// unread-answers: topics of the registered broker.
    #[arg(long, default_value_t = 20_000)]
    pub unread_topics: usize,
    /// unread-answers: connections.
    #[arg(long, default_value_t = 8)]
    pub unread_connections: usize,
    /// unread-answers: requests pipelined on each.
    #[arg(long, default_value_t = 400)]
    pub unread_requests: usize,
    /// connection-flood: connections.
    #[arg(long, default_value_t = 5_000)]
    pub flood_connections: usize,
    /// connection-flood: connections per source address (127.0.0.2, .3, …), below Waymark's
    /// default `maxConnectionsPerIp` (4096).
    #[arg(long, default_value_t = 1_000)]
    pub flood_per_address: usize,
    /// connection-flood: connections opened at the same time.
    #[arg(long, default_value_t = 64)]
    pub flood_concurrency: usize,
    /// connection-flood: wait after closing them before reading RSS.
    #[arg(long = "flood-settle", default_value_t = 5.0, value_parser = secs)]
    pub flood_settle_s: f64,
    /// topic-flood: topics in the body.
    #[arg(long, default_value_t = 2_000_000)]
    pub flood_topics: usize,
}

/// What one attack did to one peer (`error`: the harness could not run it, no figures then).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AttackRun {
    pub attack: Attack,
    pub error: Option<String>,
    pub rss_before_kib: Option<u64>,
    pub rss_peak_kib: Option<u64>,
    pub rss_after_kib: Option<u64>,
    pub queries: Latency,
    pub queries_sent: u64,
    pub query_failures: u64,
    pub query_first_error: Option<String>,
    pub alive_after: bool,
    pub after: String,
    pub out_of_memory: bool,
    pub refusal: Fate,
    pub attacker_sent_bytes: u64,
    pub attacker_planned_bytes: u64,
    pub note: Option<String>,
}

/// What one peer went through: one run per attack, in order, the size of the topic flood's
/// compressed body, and the wall time of all attacks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub params: Params,
    pub flood_body_bytes: Option<usize>,
    pub attacks: Vec<AttackRun>,
    pub duration_s: f64,
}

impl Scenario for Hostile {
    const ID: &'static str = "hostile";
    const ABOUT: &'static str =
        "Hostile peers (huge headers, slow frames, unread answers, connection and \
                                  topic floods): memory, route queries during, alive after";
    type Params = Params;
    fn quick(p: &mut Params) {
        (p.attack_s, p.flood_settle_s, p.big_header_sends) = (3.0, 2.0, 2);
        (p.slow_connections, p.unread_topics) = (8, 5_000);
        (p.unread_connections, p.unread_requests) = (4, 100);
        (p.flood_connections, p.flood_topics) = (500, 100_000);
    }
    fn runs(kind: PeerKind) -> bool {
        kind.is_real()
    }
    async fn run(ctx: &Ctx<'_>, p: &Params, record: &mut Record) -> anyhow::Result<()> {
        let mut flood = None;
        if p.attacks.contains(&Attack::TopicFlood) {
            let topics = p.flood_topics.max(2);
            let request = tokio::task::spawn_blocking(move || topic_flood_request(topics)).await;
            let (frame, body_bytes) =
                request.context("building the topic-flood registration panicked")??;
            flood = Some((frame, body_bytes));
        }
        for kind in ctx.peers::<Self>() {
            let started = Instant::now();
            let mut attacks = Vec::new();
            for &attack in &p.attacks {
                let frame = flood.as_ref().map(|(frame, _)| frame.clone());
                let run = attack_once(ctx.setup, kind, p, attack, frame).await;
                let run = run.unwrap_or_else(|error| AttackRun {
                    attack,
                    error: Some(format!("{error:#}")),
                    ..AttackRun::default()
                });
                let how = run.error.as_deref().unwrap_or(&run.after);
                eprintln!("[hostile {} {}] {how}", kind.id(), attack.id());
                attacks.push(run);
            }
            let outcome = Outcome {
                params: p.clone(),
                flood_body_bytes: flood.as_ref().map(|(_, body_bytes)| *body_bytes),
                attacks,
                duration_s: started.elapsed().as_secs_f64(),
            };
            record.add(kind, "", anyhow::Ok(outcome));
        }
        Ok(())
    }
    fn report(s: &mut Section<'_>) {
        let rows = s.rows::<Outcome>("");
        let ran: Vec<(PeerKind, &Outcome)> = rows
            .iter()
            .filter_map(|r| Some((r.peer, r.ok()?)))
            .collect();
        let took = |(p, h): &(PeerKind, &Outcome)| format!("{} {:.0} s", p.title(), h.duration_s);
        let took = ran.iter().map(took).collect::<Vec<_>>().join(", ");
        if !took.is_empty() {
            s.text(format!(
                "Every attack on a peer, its server starts included, took {took}."
            ));
        }
        for row in &rows {
            if let Err(error) = &row.result {
                s.text(format!("{}: {error}", row.label));
            }
        }
        let flood_body = ran.iter().find_map(|(_, h)| h.flood_body_bytes);
        let Some(p) = s.params::<Params>() else {
            return;
        };
        for &attack in Attack::value_variants() {
            let attack_row = |(peer, h): &(PeerKind, &Outcome)| {
                let run = h.attacks.iter().find(|a| a.attack == attack)?.clone();
                let result = match &run.error {
                    Some(error) => Err(format!("not run: {error:.160}")),
                    None => Ok(run),
                };
                Some(Row::new(*peer, peer.title(), result))
            };
            let runs: Vec<Row<AttackRun>> = ran.iter().filter_map(attack_row).collect();
            if runs.is_empty() {
                continue;
            }
            s.heading(attack.id());
            s.text(describe(attack, &p, flood_body));
            s.table(&runs, COLUMNS);
            for (label, run) in runs.iter().filter_map(|r| Some((&r.label, r.ok()?))) {
                if let Some(note) = &run.note {
                    s.item(format!("{label}: {note}."));
                }
                if let (true, Some(first)) = (run.query_failures > 0, &run.query_first_error) {
                    let first = first.replace('|', "/");
                    s.item(format!("{label}: first failed route query: {first}."));
                }
            }
        }
    }
}

const COLUMNS: &[Col<AttackRun>] = &[
    ("RSS before → peak", |r| {
        format!("{} → {}", mib(r.rss_before_kib), mib(r.rss_peak_kib))
    }),
    ("RSS after", |r| mib(r.rss_after_kib)),
    ("route p50", |r| answered_ms(&r.queries, r.queries.p50_us)),
    ("p99", |r| answered_ms(&r.queries, r.queries.p99_us)),
    ("max", |r| answered_ms(&r.queries, r.queries.max_us)),
    ("route failures", |r| {
        format!("{}/{}", r.query_failures, r.queries_sent)
    }),
    ("alive after", |r| {
        let oom = r.out_of_memory.then_some(", OutOfMemoryError in its log");
        let oom = oom.unwrap_or_default();
        match r.alive_after {
            true => format!("yes{oom}"),
            false => format!("**no**: {}{oom}", r.after),
        }
    }),
    ("attacker", |r| r.refusal.summary().replace('|', "/")),
];

fn bytes_text(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / f64::from(1 << 20)),
        b => format!("{} B", num(b as f64)),
    }
}

fn describe(attack: Attack, p: &Params, flood_body: Option<usize>) -> String {
    let count = |n: usize| num(n as f64);
    match attack {
        Attack::BigHeader => format!(
            "{} REGISTER_BROKER whose brokerName is {} long, each on a new connection given {} ms.",
            p.big_header_sends, bytes_text(p.big_header_bytes), p.query_timeout_ms
        ),
        Attack::SlowFrames => format!(
            "{} connections each announce a {} frame and send all of it but its last byte: {} if the server kept every byte.",
            p.slow_connections,
            bytes_text(p.slow_frame_bytes),
            bytes_text(p.slow_connections * p.slow_frame_bytes)
        ),
        Attack::UnreadAnswers => format!(
            "The broker registers {} topics; {} connections each pipeline {} GET_ALL_TOPIC_LIST_FROM_NAMESERVER and read nothing.",
            count(p.unread_topics), p.unread_connections, p.unread_requests
        ),
        Attack::ConnectionFlood => format!(
            "{} connections, {} at a time, {} per source address; \"RSS after\" is read {:.0} s after closing them.",
            count(p.flood_connections), p.flood_concurrency, count(p.flood_per_address), p.flood_settle_s
        ),
        Attack::TopicFlood => format!(
            "One REGISTER_BROKER as a 4.9.7 broker sends it, carrying {} topics in a zlib body{}.",
            count(p.flood_topics),
            flood_body.map_or(String::new(), |b| format!(" of {:.1} MB", b as f64 / 1e6))
        ),
    }
}

/// `attack` on a fresh `kind` holding one broker: its RSS before, at the peak (sampled while the
/// attack runs) and after, route queries at a fixed rate meanwhile, and whether it still answers.
async fn attack_once(
    setup: &PeerSetup,
    kind: PeerKind,
    p: &Params,
    attack: Attack,
    flood: Option<Bytes>,
) -> anyhow::Result<AttackRun> {
    let topics = match attack {
        Attack::UnreadAnswers => p.unread_topics,
        _ => p.fleet_topics,
    };
    let layout = Layout::new(1, topics.max(2), 1);
    let mut peer = start_peer(setup, kind, &layout, &PeerOptions::default()).await?;
    let fleet = Fleet::registered(peer.addr, &layout).await?;
    let topic = workload::topic_name(0, 0);
    let queries = load::connect(peer.addr, 1).await?;
    let routed = route(&queries[0], &topic).await?;
    routed.with_context(|| format!("{topic} is not routed after registration"))?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut run = AttackRun::default();
    (run.attack, run.rss_before_kib) = (attack, peer.rss_kib());
    let timeout = Duration::from_millis(p.query_timeout_ms);
    let during = Window::secs(0.0, p.attack_s.max(0.5), timeout);
    let deadline = Instant::now() + during.duration;
    let (addr, attack_params) = (peer.addr, p.clone());
    let attacker =
        tokio::spawn(
            async move { attacks::run(attack, addr, &attack_params, deadline, flood).await },
        );
    let request = workload::route_request(&topic);
    let query: load::Numbered = Arc::new(move |_| request.clone());
    let label = format!("hostile {} {}", kind.id(), attack.id());
    let rate = p.query_rate.max(1.0);
    let attacked = async {
        let outcome = load::shown(label, async |progress| {
            load::fixed_rate(&queries, rate, during, query, progress, None).await
        });
        let (outcome, struck) = (outcome.await, attacker.await);
        let struck = struck.unwrap_or_else(|error| {
            (
                Struck::default(),
                Some(format!("the attack task failed: {error}")),
            )
        });
        (outcome, struck)
    };
    // The peak RSS, sampled until the attack and its queries are over.
    let (peak, pid) = (&mut run.rss_peak_kib, peer.pid());
    let sample_peak = async {
        let mut tick = tokio::time::interval(Duration::from_millis(p.rss_sample_ms));
        loop {
            tick.tick().await;
            *peak = (*peak).max(pin::rss_kib(pid));
        }
    };
    let (outcome, (struck, note)) = tokio::select! {
        done = attacked => done,
        () = sample_peak => unreachable!("RSS sampling runs until the attack is over"),
    };
    let closed_at = Instant::now();
    (run.alive_after, run.after) = check_after(&mut peer, &topic, timeout).await;
    let settle = match attack {
        Attack::ConnectionFlood => Duration::from_secs_f64(p.flood_settle_s),
        _ => Duration::from_millis(500),
    };
    tokio::time::sleep_until(closed_at + settle).await;
    run.rss_after_kib = peer.rss_kib();
    run.out_of_memory = logs_mention(peer.process.dir(), b"OutOfMemoryError", &mut (64 << 20));
    drop((queries, fleet));
    peer.stop();
    run.queries = Latency::of(&outcome.latency);
    (run.queries_sent, run.query_failures) = (outcome.ok + outcome.errors, outcome.errors);
    (run.query_first_error, run.note) = (outcome.first_error, note);
    (run.refusal, run.attacker_sent_bytes) = (struck.fate, struck.sent_bytes);
    run.attacker_planned_bytes = struck.planned_bytes;
    Ok(run)
}

/// Whether `peer` still runs and answers a route query for `topic` on a fresh connection within
/// `timeout`, and what was seen.
async fn check_after(peer: &mut RunningPeer, topic: &str, timeout: Duration) -> (bool, String) {
    if let Some(status) = peer.process.exit_status() {
        return (false, format!("exited ({status})"));
    }
    let mut config = load::client_config();
    config.connect_timeout = timeout;
    let answer = match RpcClient::connect(peer.addr, config).await {
        Ok(client) => client.invoke(workload::route_request(topic), timeout).await,
        Err(error) => return (false, format!("cannot connect: {error}")),
    };
    match answer {
        Ok(r) if r.response_code() == ResponseCode::Success => (true, "answered SUCCESS".into()),
        Ok(r) => (true, format!("answered code {}", r.code)),
        Err(error) => (false, format!("no answer: {error}")),
    }
}

/// Whether any file under `dir` (logs; `budget` bytes read at most) contains `needle`.
fn logs_mention(dir: &Path, needle: &[u8], budget: &mut u64) -> bool {
    let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
    let mut files = entries.filter_map(|e| Some((e.path(), e.metadata().ok()?)));
    files.any(|(path, meta)| match meta.is_dir() {
        true => logs_mention(&path, needle, budget),
        false if meta.len() > *budget => false,
        false => {
            *budget -= meta.len();
            let bytes = std::fs::read(&path).unwrap_or_default();
            bytes.windows(needle.len()).any(|w| w == needle)
        }
    })
}
