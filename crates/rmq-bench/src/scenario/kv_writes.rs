//! `kv-writes`: PUT_KV_CONFIG of large values pipelined on a few connections until every put is
//! answered; then a few of them read back.

use super::fleet::{start_peer, TINY};
use super::{Ctx, Record, Scenario};
use crate::cli::secs;
use crate::load::{self, Progress};
use crate::peer::{PeerKind, PeerOptions, PeerSetup};
use crate::pin::CpuSnapshot;
use crate::report::format::{cpu_share, mib_of, noise, num, or_na, seconds, us};
use crate::report::{of, Col, Ratio, Section};
use crate::sample::{ServerCpu, ServerSample};
use anyhow::{bail, Context};
use clap::Args;
use rmq_protocol::headers::{
    GetKvConfigRequestHeader, GetKvConfigResponseHeader, PutKvConfigRequestHeader,
};
use rmq_transport::RpcClient;
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinSet;
use tokio::time::Instant;

pub struct KvWrites;

const NAMESPACE: &str = "WaymarkBenchKv";
/// Keys read back after the puts (spread evenly, the last one included).
const CHECKED: u64 = 16;
/// Time allowed for the whole wall-time target.
const TARGET_S: f64 = 10.0;

#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
pub struct Params {
    /// PUT_KV_CONFIG requests, each of its own key.
    #[arg(long, default_value_t = 2_000)]
    pub puts: u64,
    /// Bytes of each value; every one of them is a quote or a backslash but for the key's
    /// number in front, so JSON doubles it.
    #[arg(long, default_value_t = 8_192)]
    pub value_bytes: usize,
    /// Connections the puts are spread over.
    #[arg(long, default_value_t = 4)]
    pub connections: usize,
    /// Puts in flight per connection.
    #[arg(long, default_value_t = 8)]
    pub depth: usize,
    /// Puts still unanswered this long after the first was sent are given up.
    #[arg(long = "give-up", default_value_t = 900.0, value_parser = secs)]
    pub give_up_s: f64,
}

/// What one peer did: how long until every put was answered, the server's CPU over that time,
/// what its kvConfig file (and Waymark's journal) held at the end, and the values read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub params: Params,
    /// Puts answered SUCCESS.
    pub answered: u64,
    /// Puts answered otherwise, or not at all within the give-up time.
    pub failed: u64,
    pub first_error: Option<String>,
    /// First put sent to last put answered, s.
    pub wall_s: f64,
    pub cpu_us_per_put: Option<f64>,
    pub kv_file_bytes: Option<u64>,
    pub journal_bytes: Option<u64>,
    /// Keys read back with GET_KV_CONFIG, and how many gave the value put.
    pub checked: u64,
    pub stored: u64,
    #[serde(flatten)]
    pub server: ServerSample,
}

impl Outcome {
    fn puts_per_s(&self) -> Option<f64> {
        (self.wall_s > 0.0).then(|| self.answered as f64 / self.wall_s)
    }
}

impl Scenario for KvWrites {
    const ID: &'static str = "kv-writes";
    const ABOUT: &'static str =
        "PUT_KV_CONFIG of large values, pipelined, until every put is answered";
    type Params = Params;
    fn quick(p: &mut Params) {
        (p.puts, p.give_up_s) = (200, 120.0);
    }
    fn runs(kind: PeerKind) -> bool {
        kind.is_real()
    }
    async fn run(ctx: &Ctx<'_>, p: &Params, record: &mut Record) -> anyhow::Result<()> {
        for kind in ctx.peers::<Self>() {
            record.add(kind, "", kv_writes(ctx.setup, kind, p).await);
        }
        Ok(())
    }
    fn report(s: &mut Section<'_>) {
        let rows = s.rows::<Outcome>("");
        let waymark = of(&rows, PeerKind::Waymark);
        let puts = s.params::<Params>().map_or(0, |p| p.puts);
        let what = format!("{} puts answered ≤ {TARGET_S:.0} s", num(puts as f64));
        let shown = waymark.map(|x| match x.failed {
            0 => seconds(x.wall_s),
            n => format!("{} (not answered SUCCESS: {n})", seconds(x.wall_s)),
        });
        let met = waymark.map(|x| x.failed == 0 && x.wall_s <= TARGET_S);
        s.target(what, shown, met);
        s.table(&rows, COLUMNS);
        for r in &rows {
            if let Some(error) = r.ok().and_then(|x| x.first_error.as_deref()) {
                s.item(format!(
                    "{}: first put not answered SUCCESS: {error}",
                    r.label
                ));
            }
        }
        s.ratios(&rows, &[PeerKind::Java, PeerKind::RustPort], RATIOS);
    }
}

const COLUMNS: &[Col<Outcome>] = &[
    ("all answered in", |x| match x.failed {
        0 => seconds(x.wall_s),
        _ => format!(
            "not all: {} in {}",
            num(x.answered as f64),
            seconds(x.wall_s)
        ),
    }),
    ("puts/s", |x| or_na(x.puts_per_s(), num)),
    ("not SUCCESS", |x| x.failed.to_string()),
    ("server CPU", |x| cpu_share(x.server.server_cpu.as_ref())),
    ("CPU per put", |x| us(x.cpu_us_per_put)),
    ("kvConfig file", |x| bytes(x.kv_file_bytes)),
    ("journal", |x| {
        x.journal_bytes.map_or("—".into(), |b| bytes(Some(b)))
    }),
    ("read back", |x| format!("{}/{}", x.stored, x.checked)),
    ("others' CPU", |x| noise(x.server.others_cpu_percent)),
];

const RATIOS: &[Ratio<Outcome>] = &[
    Ratio::cost("all answered in (peer ÷ Waymark)", |x| {
        (x.failed == 0).then_some(x.wall_s)
    }),
    Ratio::rate("puts/s (Waymark ÷ peer)", Outcome::puts_per_s),
    Ratio::cost("server CPU per put (peer ÷ Waymark)", |x| x.cpu_us_per_put),
];

/// Bytes as MiB, through the report's KiB formatter.
fn bytes(b: Option<u64>) -> String {
    mib_of(b.map(|b| b as f64 / 1024.0))
}

/// The value of put `i`: its number, then quotes and backslashes up to `len` bytes.
fn value(i: u64, len: usize) -> String {
    let mut value = format!("{i}:");
    let fill = ['"', '\\'].into_iter().cycle();
    value.extend(fill.take(len.saturating_sub(value.len())));
    value
}

fn key(i: u64) -> String {
    format!("key-{i:06}")
}

fn put(i: u64, value_bytes: usize) -> RemotingCommand {
    let header = PutKvConfigRequestHeader {
        namespace: NAMESPACE.to_owned(),
        key: key(i),
        value: Some(value(i, value_bytes)),
    };
    RemotingCommand::request(RequestCode::PutKvConfig, 0).with_header(&header)
}

/// Answers of one sender: SUCCESS, others (and the first of them), and when the last arrived.
#[derive(Default)]
struct Tally {
    ok: u64,
    failed: u64,
    first_error: Option<String>,
    last: Option<Instant>,
}

/// Sends puts `0..p.puts` over `clients`, `p.depth` at a time on each, until each is answered
/// or the give-up time passes.
async fn send_all(clients: &[RpcClient], p: &Params, progress: &Arc<Progress>) -> Tally {
    let next = Arc::new(AtomicU64::new(0));
    let give_up = Instant::now() + Duration::from_secs_f64(p.give_up_s);
    let mut senders = JoinSet::new();
    for client in clients.iter().cycle().take(clients.len() * p.depth.max(1)) {
        let (client, next, progress) = (client.clone(), next.clone(), progress.clone());
        let (puts, value_bytes) = (p.puts, p.value_bytes);
        senders.spawn(async move {
            let mut tally = Tally::default();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= puts {
                    break;
                }
                let left = give_up.saturating_duration_since(Instant::now());
                let answer = client.invoke(put(i, value_bytes), left).await;
                let error = match answer {
                    Ok(r) if r.response_code() == ResponseCode::Success => None,
                    Ok(r) => Some(format!("code {} {}", r.code, r.remark.unwrap_or_default())),
                    Err(e) => Some(e.to_string()),
                };
                if let Some(e) = error {
                    tally.first_error.get_or_insert(e);
                    tally.failed += 1;
                    progress.errors.fetch_add(1, Ordering::Relaxed);
                } else {
                    tally.ok += 1;
                    progress.ok.fetch_add(1, Ordering::Relaxed);
                }
                tally.last = Some(Instant::now());
            }
            tally
        });
    }
    let mut total = Tally::default();
    while let Some(Ok(tally)) = senders.join_next().await {
        total.ok += tally.ok;
        total.failed += tally.failed;
        total.first_error = total.first_error.or(tally.first_error);
        total.last = total.last.max(tally.last);
    }
    // Never sent (the sender gave up first): not answered either.
    total.failed = p.puts - total.ok;
    total
}

/// How many of [`CHECKED`] keys spread over the puts read back as put.
async fn read_back(client: &RpcClient, p: &Params) -> anyhow::Result<(u64, u64)> {
    let keys: Vec<u64> = (0..CHECKED)
        .map(|k| k * p.puts.saturating_sub(1) / (CHECKED - 1))
        .collect();
    let mut stored = 0;
    for &i in &keys {
        let header = GetKvConfigRequestHeader {
            namespace: Some(NAMESPACE.to_owned()),
            key: Some(key(i)),
        };
        let get = RemotingCommand::request(RequestCode::GetKvConfig, 0).with_header(&header);
        let answer = client.invoke(get, Duration::from_secs(10)).await?;
        let found = answer.header::<GetKvConfigResponseHeader>().ok();
        let found = found.and_then(|h| h.value);
        stored += u64::from(found.as_deref() == Some(value(i, p.value_bytes).as_str()));
    }
    Ok((keys.len() as u64, stored))
}

fn size(path: &Path) -> Option<u64> {
    std::fs::metadata(path).ok().map(|m| m.len())
}

async fn kv_writes(setup: &PeerSetup, kind: PeerKind, p: &Params) -> anyhow::Result<Outcome> {
    let peer = start_peer(setup, kind, &TINY, &PeerOptions::default()).await?;
    let clients = load::connect(peer.addr, p.connections.max(1)).await?;
    let label = format!("kv-writes {}", kind.id());
    let before = CpuSnapshot::take(peer.pid()).context("cannot read the server's CPU")?;
    let started = Instant::now();
    let tally = load::shown(&label, async |progress| {
        send_all(&clients, p, progress).await
    })
    .await;
    let after = CpuSnapshot::take(peer.pid()).context("cannot read the server's CPU")?;
    if tally.ok == 0 {
        let why = tally.first_error.unwrap_or_default();
        bail!(
            "{} answered no PUT_KV_CONFIG with SUCCESS: {why}",
            kind.title()
        );
    }
    let wall_s = tally.last.map_or(0.0, |t| (t - started).as_secs_f64());
    let cpu = ServerCpu::between(&before, &after);
    let (checked, stored) = read_back(&clients[0], p).await?;
    let kv = peer.process.dir().join("kv.json");
    let journal = (kind == PeerKind::Waymark).then(|| kv.with_file_name("kv.json.journal"));
    let server = ServerSample::of(&peer, Some(cpu));
    eprintln!(
        "[{label}] {} answered in {wall_s:.2} s, {} not, {stored}/{checked} read back",
        tally.ok, tally.failed
    );
    let outcome = Outcome {
        params: p.clone(),
        answered: tally.ok,
        failed: tally.failed,
        first_error: tally.first_error,
        wall_s,
        cpu_us_per_put: server.us_per(tally.ok),
        kv_file_bytes: size(&kv),
        journal_bytes: journal.as_deref().and_then(size),
        checked,
        stored,
        server,
    };
    peer.stop();
    Ok(outcome)
}
