//! `security`: what authentication (signed registrations) and TLS (route queries) cost the
//! server in CPU per request.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use rmq_auth::Credentials;
use rmq_broker_client::wall_ms;
use rmq_transport::tls::{TlsClient, TlsSettings};
use rmq_transport::{ClientConfig, RequestHook, RpcClient};
use serde::{Deserialize, Serialize};

use super::fleet::{
    route_workers, start_peer, verify_routes, Fleet, QUERY_TIMEOUT, REGISTER_TIMEOUT,
};
use super::route_qps::LAYOUT;
use super::{lock, settings, settle, success, Ctx, Record, Scenario};
use crate::cli::secs;
use crate::load::{self, Progress, Window, Worker};
use crate::peer::{self, PeerKind, PeerOptions, PeerSetup, RunningPeer, DIR};
use crate::pin::CpuSnapshot;
use crate::report::format::{answered_ms, noise, num, or_na, ratio, us};
use crate::report::{of, Col, Row, Section};
use crate::sample::ServerSample;
use crate::stats::Latency;
use crate::workload::{self, Layout, Registration, CLUSTER};

pub struct Security;

/// The target: a signed registration costs the server less than this much more CPU, %.
const TARGET_EXTRA_PERCENT: f64 = 5.0;
/// The broker account of the signed registrations.
const ACCESS_KEY: &str = "bench-broker-key";
/// Its secret (a benchmark's, not RocketMQ's public default).
const SECRET_KEY: &str = "bench-broker-secret";
const SIGNING: &str = "signing";
const TLS: &str = "tls";

#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
pub struct Params {
    /// Topics of the one broker's registration body.
    #[arg(long = "topics", default_value_t = 2_000)]
    pub register_topics: usize,
    /// Route query connections of the TLS part (plain and TLS alike).
    #[arg(long = "connections", default_value_t = 8)]
    pub query_connections: usize,
    /// Route queries in flight per connection.
    #[arg(long = "depth", default_value_t = 4)]
    pub query_depth: usize,
    /// Unmeasured load before each window.
    #[arg(long = "warmup", default_value_t = 2.0, value_parser = secs)]
    pub warmup_s: f64,
    /// Unmeasured load over plain and TLS connections together before the
    /// TLS part's first window (so that Java's JIT has compiled both paths).
    #[arg(long = "joint-warmup", default_value_t = 10.0, value_parser = secs)]
    pub joint_warmup_s: f64,
    /// Each measured window.
    #[arg(long = "duration", default_value_t = 20.0, value_parser = secs)]
    pub duration_s: f64,
}

/// One measured window (`attempts`: windows measured to get one undisturbed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuWindow {
    pub answered: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    pub window_s: f64,
    pub per_s: f64,
    pub server_cpu_s: f64,
    pub server_cpu_percent: f64,
    pub cpu_us_per_request: Option<f64>,
    pub latency: Latency,
    pub others_cpu_percent: Option<f64>,
    pub attempts: usize,
}

/// Signed against unsigned registrations (Waymark), new and unchanged, and the servers' commands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Signing {
    pub params: Params,
    pub body_bytes: usize,
    pub unsigned: CpuWindow,
    pub signed: CpuWindow,
    pub unchanged_unsigned: Option<CpuWindow>,
    pub unchanged_signed: Option<CpuWindow>,
    pub unsigned_command: String,
    pub signed_command: String,
    #[serde(flatten)]
    pub server: ServerSample,
}

/// How much more server CPU a signed request costs, % (`signed ÷ unsigned − 1`).
fn extra_percent(signed: Option<&CpuWindow>, unsigned: Option<&CpuWindow>) -> Option<f64> {
    match (signed?.cpu_us_per_request, unsigned?.cpu_us_per_request) {
        (Some(s), Some(u)) if u > 0.0 => Some((s / u - 1.0) * 100.0),
        _ => None,
    }
}

/// The rows of [`Signing::windows`], and their short names.
const SIGNING_WINDOWS: [(&str, &str); 4] = [
    ("authentication off, unsigned", "unsigned"),
    ("authentication on, signed", "signed"),
    (
        "unchanged, authentication off, unsigned",
        "unchanged unsigned",
    ),
    ("unchanged, authentication on, signed", "unchanged signed"),
];

impl Signing {
    fn windows(&self) -> [Option<&CpuWindow>; 4] {
        let (unsigned, signed) = (Some(&self.unsigned), Some(&self.signed));
        let unchanged = [&self.unchanged_unsigned, &self.unchanged_signed].map(Option::as_ref);
        [unsigned, signed, unchanged[0], unchanged[1]]
    }

    /// The extra CPU of a signed registration with a new DataVersion, and of an unchanged one.
    fn extra_percents(&self) -> [Option<f64>; 2] {
        let w = self.windows();
        [extra_percent(w[1], w[0]), extra_percent(w[3], w[2])]
    }
}

/// Plain against TLS route queries on one server, and how it was started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TlsQueries {
    pub params: Params,
    pub plain: CpuWindow,
    pub tls: CpuWindow,
    pub command: String,
    pub mean_response_bytes: f64,
    #[serde(flatten)]
    pub server: ServerSample,
}

impl Scenario for Security {
    const ID: &'static str = "security";
    const ABOUT: &'static str = "Server CPU per request: signed against unsigned registrations \
                                 (Waymark), TLS against plain route queries (Waymark and Java)";
    type Params = Params;
    fn quick(p: &mut Params) {
        (p.warmup_s, p.joint_warmup_s, p.duration_s) = (0.2, 0.2, 1.0);
    }
    fn runs(kind: PeerKind) -> bool {
        matches!(kind, PeerKind::Waymark | PeerKind::Java)
    }
    async fn run(ctx: &Ctx<'_>, p: &Params, record: &mut Record) -> anyhow::Result<()> {
        let peers = ctx.peers::<Self>();
        if peers.contains(&PeerKind::Waymark) {
            record.add(PeerKind::Waymark, SIGNING, signing(ctx.setup, p).await);
        }
        for kind in peers {
            record.add(kind, TLS, tls(ctx.setup, kind, p).await);
        }
        Ok(())
    }
    fn report(s: &mut Section<'_>) {
        s.peers.clear();
        let signing = s.rows::<Signing>(SIGNING);
        let x = of(&signing, PeerKind::Waymark);
        let topics = num(x.map_or(2_000, |x| x.params.register_topics) as f64);
        let new_version = format!(
            "a signed REGISTER_BROKER of {topics} topics costs Waymark < \
             {TARGET_EXTRA_PERCENT:.0} % more server CPU than an unsigned one"
        );
        let unchanged = "the same, for an unchanged re-registration (what a broker sends every \
                         30 s while its topics stay)";
        let extras = x.map_or([None; 2], Signing::extra_percents);
        for (what, extra) in [new_version.as_str(), unchanged].into_iter().zip(extras) {
            let measured = extra.map(|e| format!("{e:+.1} %"));
            s.target(what, measured, extra.map(|e| e < TARGET_EXTRA_PERCENT));
        }
        s.heading("Signed registrations (Waymark)");
        match signing.first().map(|r| &r.result) {
            None => s.text("Not run: Waymark was not among the peers."),
            Some(Err(error)) => s.text(format!("Not measured: {error}")),
            Some(Ok(x)) => signing_section(s, x),
        }
        s.heading("TLS route queries");
        tls_section(s, &s.rows::<TlsQueries>(TLS));
    }
}

/// The columns of one measured window.
const WINDOW: &[Col<CpuWindow>] = &[
    ("registrations/s", |w| num(w.per_s)),
    ("CPU per registration", |w| us(w.cpu_us_per_request)),
    ("server CPU", |w| format!("{:.1} %", w.server_cpu_percent)),
    ("p50", |w| answered_ms(&w.latency, w.latency.p50_us)),
    ("p99", |w| answered_ms(&w.latency, w.latency.p99_us)),
    ("errors", |w| w.errors.to_string()),
    ("others' CPU", |w| noise(w.others_cpu_percent)),
    ("windows", |w| w.attempts.to_string()),
];

/// Items naming the first failure of the windows that had any.
fn failures(s: &mut Section<'_>, windows: Vec<(String, &CpuWindow)>) {
    for (label, w) in windows {
        if let (true, Some(first)) = (w.errors > 0, &w.first_error) {
            let first = first.replace('|', "/");
            s.item(format!("{label}: first failure: {first}."));
        }
    }
}

fn signing_section(s: &mut Section<'_>, x: &Signing) {
    let kb = num(x.body_bytes as f64 / 1e3);
    let (unsigned, signed) = (&x.unsigned_command, &x.signed_command);
    s.text(format!(
        "{kb} kB of JSON a registration. Unsigned: `{unsigned}`; signed: `{signed}`."
    ));
    let (mut rows, mut failed) = (Vec::new(), Vec::new());
    for ((row, short), w) in SIGNING_WINDOWS.into_iter().zip(x.windows()) {
        let Some(w) = w else { continue };
        rows.push(Row::new(PeerKind::Waymark, row, Ok(w.clone())));
        failed.push((short.to_owned(), w));
    }
    s.table_headed(Some("Waymark"), &rows, WINDOW);
    let whats = [
        "A signed registration with a new DataVersion",
        "A signed unchanged re-registration",
    ];
    for (what, extra) in whats.into_iter().zip(x.extra_percents()) {
        let Some(extra) = extra else { continue };
        let (amount, direction) = (extra.abs(), if extra >= 0.0 { "more" } else { "less" });
        s.text(format!(
            "{what} cost the server {amount:.1} % {direction} CPU than an unsigned one (CPU per \
             registration, signed ÷ unsigned − 1)."
        ));
    }
    failures(s, failed);
}

fn tls_section(s: &mut Section<'_>, tls: &[Row<TlsQueries>]) {
    let (mut rows, mut ratios, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    for r in tls {
        let x = match &r.result {
            Ok(x) => x,
            Err(error) => {
                rows.push(Row::new(r.peer, &r.label, Err(error.clone())));
                continue;
            }
        };
        if let Some(info) = s.results.peers.iter().find(|i| i.peer == r.peer) {
            let (label, version, command) = (&r.label, &info.version, &x.command);
            s.item(format!("{label}: {version}, started as `{command}`"));
        }
        for (connections, w) in [("plain", &x.plain), ("TLS", &x.tls)] {
            let cells = WINDOW.iter().map(|(_, cell)| cell(w));
            let cells = [connections.to_owned()].into_iter().chain(cells).collect();
            rows.push(Row::new(r.peer, &r.label, Ok(cells)));
            failed.push((format!("{}, {connections}", r.label), w));
        }
        let tls_over_plain = ratio(x.tls.cpu_us_per_request, x.plain.cpu_us_per_request);
        ratios.push(Row::new(r.peer, &r.label, Ok(vec![tls_over_plain])));
    }
    let mut heads = vec!["connections", "queries/s", "CPU per query"];
    heads.extend(WINDOW[2..].iter().map(|(head, _)| *head));
    s.cells(Some("peer"), &heads, &rows);
    s.cells(Some("CPU per query"), &["TLS ÷ plain"], &ratios);
    if let (Some(w), Some(j)) = (of(tls, PeerKind::Waymark), of(tls, PeerKind::Java)) {
        let java_over = |f: fn(&TlsQueries) -> &CpuWindow| {
            ratio(f(j).cpu_us_per_request, f(w).cpu_us_per_request)
        };
        let cells = Ok(vec![java_over(|x| &x.plain), java_over(|x| &x.tls)]);
        let row = Row::new(PeerKind::Waymark, "CPU per query (Java ÷ Waymark)", cells);
        s.cells(Some("Waymark"), &["plain", "TLS"], &[row]);
    }
    failures(s, failed);
}

/// The accounts file of the signed part: one broker account, bound to the benchmark's broker 0.
fn accounts_yml() -> String {
    format!(
        "accounts:\n  - accessKey: {ACCESS_KEY}\n    secretKey: {SECRET_KEY}\n    admin: false\n    \
         brokers:\n      - clusterName: {CLUSTER}\n        brokerName: {}\n",
        workload::broker_name(0)
    )
}

/// Waymark's options with authentication on over [`accounts_yml`].
fn auth_options() -> PeerOptions {
    let accounts = format!("{DIR}/accounts.yml");
    PeerOptions {
        files: vec![("accounts.yml".into(), accounts_yml().into_bytes())],
        settings: settings(&[
            ("authenticationEnabled", "true"),
            ("authenticationAccountsFile", &accounts),
        ]),
    }
}

/// The TLS part's options: Waymark's permissive TLS with a fresh self-signed certificate; Java
/// serves TLS with its defaults.
fn tls_options(kind: PeerKind) -> anyhow::Result<PeerOptions> {
    if kind != PeerKind::Waymark {
        return Ok(PeerOptions::default());
    }
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()])
        .context("cannot make the server certificate")?;
    let (cert, key) = (certified.cert.pem(), certified.key_pair.serialize_pem());
    let (cert_path, key_path) = (format!("{DIR}/server.pem"), format!("{DIR}/server.key"));
    Ok(PeerOptions {
        files: vec![
            ("server.pem".into(), cert.into_bytes()),
            ("server.key".into(), key.into_bytes()),
        ],
        settings: settings(&[
            ("tls.server.mode", "permissive"),
            ("tls.server.certPath", &cert_path),
            ("tls.server.keyPath", &key_path),
        ]),
    })
}

/// A TLS client that accepts any server certificate.
fn trust_any_client() -> anyhow::Result<TlsClient> {
    let properties = BTreeMap::from([("tls.client.authServer".to_owned(), "false".to_owned())]);
    let settings = TlsSettings::from_properties_with(&properties, None)?;
    Ok(TlsClient::from_settings(&settings)?.0)
}

/// Signed against unsigned registrations on two fresh Waymark servers.
async fn signing(setup: &PeerSetup, p: &Params) -> anyhow::Result<Signing> {
    let layout = Layout::new(1, p.register_topics.max(2), 1);
    let template = Registration::of_layout(&layout, 0, wall_ms())?;
    let body_bytes = template.body_len();
    let (topics, kb) = (layout.topics_per_broker, body_bytes as f64 / 1e3);
    eprintln!("[security signing] one broker, {topics} topics ({kb:.0} kB a registration)");
    let (off, on) = (PeerOptions::default(), auth_options());
    let unsigned = registrations(setup, p, &layout, &off, None, template.clone()).await?;
    let credentials = Arc::new(Credentials::new(ACCESS_KEY, SECRET_KEY));
    let signed = registrations(setup, p, &layout, &on, Some(credentials), template).await?;
    Ok(Signing {
        params: p.clone(),
        body_bytes,
        unsigned: unsigned.0,
        signed: signed.0,
        unchanged_unsigned: Some(unsigned.1),
        unchanged_signed: Some(signed.1),
        unsigned_command: peer::command_line(setup, PeerKind::Waymark, &layout, &off)?,
        signed_command: peer::command_line(setup, PeerKind::Waymark, &layout, &on)?,
        server: unsigned.2,
    })
}

/// One fresh Waymark with `options`: re-registrations closed loop (signed with `credentials`),
/// with a new DataVersion each, then unchanged.
async fn registrations(
    setup: &PeerSetup,
    p: &Params,
    layout: &Layout,
    options: &PeerOptions,
    credentials: Option<Arc<Credentials>>,
    registration: Registration,
) -> anyhow::Result<(CpuWindow, CpuWindow, ServerSample)> {
    let signed = credentials.is_some();
    let label = format!("security {}", if signed { "signed" } else { "unsigned" });
    let peer = start_peer(setup, PeerKind::Waymark, layout, options).await?;
    let config = ClientConfig {
        request_hook: credentials.map(|c| c as Arc<dyn RequestHook>),
        ..load::client_config()
    };
    let client = load::connect_with(peer.addr, 1, &config).await?.remove(0);
    let registration = Arc::new(Mutex::new(registration));
    let next = |r: &Mutex<Registration>| lock(r).next_request(wall_ms());
    let first = client.invoke(next(&registration), REGISTER_TIMEOUT).await;
    let first = first.context("the first registration failed")?;
    success(first, "the first registration was refused")?;
    let one = |make: load::Maker| {
        let client = client.clone();
        vec![Worker { client, make }]
    };
    let changing = || {
        let registration = registration.clone();
        one(Box::new(move || next(&registration)))
    };
    let changed = measure(&peer, &label, p, REGISTER_TIMEOUT, changing).await?;
    // A Java broker re-registers every 30 s with the same header and, while
    // its topics stay, the same body (and so the same signature).
    let unchanged = next(&registration);
    let repeat = || {
        let unchanged = unchanged.clone();
        one(Box::new(move || unchanged.clone()))
    };
    let label = format!("{label} unchanged");
    let unchanged = measure(&peer, &label, p, REGISTER_TIMEOUT, repeat).await?;
    let server = ServerSample::of(&peer, None);
    client.close();
    peer.stop();
    Ok((changed, unchanged, server))
}

/// Plain against TLS route queries on a fresh `kind`.
async fn tls(setup: &PeerSetup, kind: PeerKind, p: &Params) -> anyhow::Result<TlsQueries> {
    let options = tls_options(kind)?;
    let command = peer::command_line(setup, kind, &LAYOUT, &options)?;
    let peer = start_peer(setup, kind, &LAYOUT, &options).await?;
    let fleet = Fleet::registered(peer.addr, &LAYOUT).await?;
    let fleet = fleet.keep_registered();
    let connections = p.query_connections.max(1);
    let plain = load::connect(peer.addr, connections).await?;
    verify_routes(&plain[0], &LAYOUT, kind).await?;
    let tls_config = ClientConfig {
        tls: Some(trust_any_client()?),
        ..load::client_config()
    };
    let tls = load::connect_with(peer.addr, connections, &tls_config).await;
    let tls = tls.context("TLS connections")?;
    let verified = verify_routes(&tls[0], &LAYOUT, kind).await;
    verified.context("over TLS")?;
    let over = |clients: &[RpcClient]| route_workers(clients, p.query_depth, &LAYOUT);
    let id = kind.id();
    if p.joint_warmup_s > 0.0 {
        let both = Window::secs(0.0, p.joint_warmup_s, QUERY_TIMEOUT);
        let all = over(&plain).into_iter().chain(over(&tls)).collect();
        let label = format!("security {id} plain+TLS warmup");
        load::shown(label, async |progress| {
            load::closed_loop(all, both, progress, false, None).await
        })
        .await;
    }
    let window = async |what: &str, clients: &[RpcClient]| {
        let label = format!("security {id} {what}");
        measure(&peer, &label, p, QUERY_TIMEOUT, || over(clients)).await
    };
    let plain_window = window("plain", &plain).await;
    let tls_window = window("TLS", &tls).await;
    let request = workload::route_request(&LAYOUT.all_topics()[0]);
    let answer = plain[0].invoke(request, QUERY_TIMEOUT).await;
    let response_bytes = answer.ok().and_then(|a| a.body).map_or(0, |b| b.len());
    let server = ServerSample::of(&peer, None);
    drop((plain, tls, fleet));
    peer.stop();
    Ok(TlsQueries {
        params: p.clone(),
        plain: plain_window?,
        tls: tls_window?,
        command,
        mean_response_bytes: response_bytes as f64,
        server,
    })
}

/// Warms up with `workers()`, then measures windows of them until one is not disturbed; the
/// least disturbed is returned.
async fn measure(
    peer: &RunningPeer,
    label: &str,
    p: &Params,
    timeout: Duration,
    mut workers: impl FnMut() -> Vec<Worker>,
) -> anyhow::Result<CpuWindow> {
    let pid = peer.pid();
    let snapshot = || {
        let unreadable = || format!("cannot read /proc/{pid}: the server exited?");
        CpuSnapshot::take(pid).with_context(unreadable)
    };
    if p.warmup_s > 0.0 {
        let warmup = Window::secs(0.0, p.warmup_s, timeout);
        let progress = Arc::new(Progress::default());
        let _ = load::closed_loop(workers(), warmup, &progress, false, None).await;
    }
    let window = Window::secs(0.0, p.duration_s.max(0.1), timeout);
    let attempt = async || {
        let (before, outcome, after) = load::shown(label, async |progress| {
            let before = snapshot()?;
            let outcome = load::closed_loop(workers(), window, progress, false, None).await;
            anyhow::Ok((before, outcome, snapshot()?))
        })
        .await?;
        let (seconds, answered) = (after.seconds_since(&before).max(1e-3), outcome.ok);
        let server_cpu_s = after.server_seconds_since(&before);
        let w = CpuWindow {
            answered,
            errors: outcome.errors,
            first_error: outcome.first_error,
            window_s: seconds,
            per_s: answered as f64 / seconds,
            server_cpu_s,
            server_cpu_percent: server_cpu_s * 100.0 / seconds,
            cpu_us_per_request: (answered > 0).then(|| server_cpu_s * 1e6 / answered as f64),
            latency: Latency::of(&outcome.latency),
            others_cpu_percent: Some(after.others_percent_since(&before)),
            attempts: 1,
        };
        let each = or_na(w.cpu_us_per_request, |v| format!("{v:.1}"));
        eprintln!(
            "[{label}] {answered} answered, {:.0}/s, {each} µs CPU each, server {:.0} %",
            w.per_s, w.server_cpu_percent
        );
        anyhow::Ok(w)
    };
    let noise = |w: &CpuWindow| w.others_cpu_percent.unwrap_or(0.0);
    let (kept, attempts) = settle(label, noise, attempt).await?;
    Ok(CpuWindow { attempts, ..kept })
}
