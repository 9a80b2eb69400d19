//! `route-change-latency`: how soon a client following a topic sees a broker come and go (route
//! push against polling).

use std::time::Duration;

use anyhow::{ensure, Context};
use clap::Args;
use rmq_broker_client::{body, wall_ms, BrokerConfig};
use rmq_protocol::headers::UnregisterBrokerRequestHeader;
use rmq_protocol::{TopicConfig, TopicRouteData};
use rmq_route_client::{PushState, RouteClient, RouteClientConfig, RouteWatch};
use rmq_transport::RpcClient;
use rmq_wire::RequestCode;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::fleet::{millis, signed_millis, start_peer, Fleet, REGISTER_TIMEOUT, TINY};
use super::success;
use super::{Ctx, Record, Scenario};
use crate::cli::{millis as ms_arg, secs};
use crate::load;
use crate::peer::{PeerKind, PeerOptions, PeerSetup};
use crate::report::format::{div, ms, num, or_na, ratio, seconds};
use crate::report::{of, Col, Row, Section};
use crate::sample::ServerSample;
use crate::stats::Summary;
use crate::workload::{self, Registration, CLUSTER};

const TOPICS: [&str; 2] = ["RouteChangeTopic-0", "RouteChangeTopic-1"];
/// The broker that stays registered, so the followed topic always has a route.
const ANCHOR: &str = "route-change-anchor";
/// The broker whose comings and goings are the changes measured.
const MOVER: &str = "route-change-mover";
/// The part of Waymark's second run, its client's route push off.
const PUSH_OFF: &str = "push-off";

pub struct RouteChangeLatency;

#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
pub struct Params {
    /// Samples of a client that follows by route push.
    #[arg(long, default_value_t = 20)]
    pub push_samples: usize,
    /// Shortest pause between a pushed change being seen and the next change.
    #[arg(long = "push-pause-min", default_value = "200ms", value_parser = ms_arg)]
    pub push_pause_min_ms: u64,
    /// Longest pause between a pushed change being seen and the next change.
    #[arg(long = "push-pause-max", default_value = "600ms", value_parser = ms_arg)]
    pub push_pause_max_ms: u64,
    /// Samples of a polling client (each takes up to one poll interval).
    #[arg(long, default_value_t = 6)]
    pub poll_samples: usize,
    /// pollNameServerInterval of the clients (Java's default 30 s). Keep it
    /// under a minute: the second broker, not re-registered, must stay
    /// within the NameServer's 120 s broker expiry for two changes.
    #[arg(long = "poll-interval", default_value = "30s", value_parser = ms_arg)]
    pub poll_interval_ms: u64,
    /// How long a client may take to subscribe, or to learn that it cannot.
    #[arg(long = "settle", default_value_t = 10.0, value_parser = secs)]
    pub settle_s: f64,
    /// A change not seen within one poll interval and this long is missed.
    #[arg(long = "give-up-after-poll", default_value_t = 10.0, value_parser = secs)]
    pub give_up_after_poll_s: f64,
}

/// What a change request did to the second broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    Added,
    Removed,
}

/// How the client followed the route, from its [`PushState`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FollowedBy {
    /// Subscribed: the NameServer pushes each change.
    Push,
    /// Polling: the NameServer answered the subscription REQUEST_CODE_NOT_SUPPORTED.
    PollingNotSupported,
    /// Polling: route push was off in the client.
    PollingPushOff,
    /// Polling: the subscription was neither accepted nor refused (the client keeps trying).
    PollingNotSubscribed,
}

impl FollowedBy {
    fn of(state: &PushState) -> FollowedBy {
        match state {
            PushState::Pushing { .. } => FollowedBy::Push,
            PushState::Polling { .. } => FollowedBy::PollingNotSupported,
            PushState::Off => FollowedBy::PollingPushOff,
            PushState::Connecting => FollowedBy::PollingNotSubscribed,
        }
    }

    fn text(self, poll_s: f64) -> String {
        let why = match self {
            FollowedBy::Push => return "route push".into(),
            FollowedBy::PollingNotSupported => "route push answered REQUEST_CODE_NOT_SUPPORTED",
            FollowedBy::PollingPushOff => "route push off",
            FollowedBy::PollingNotSubscribed => "route subscription neither accepted nor refused",
        };
        format!("polling every {poll_s:.0} s ({why})")
    }
}

/// One change and when the client saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub change: Change,
    /// From sending the change request to its answer, ms.
    pub request_ms: f64,
    /// From the answer to the client's watcher being told, ms; negative when
    /// the client was told before the answer arrived; `None`: not seen in time.
    pub seen_ms: Option<f64>,
}

/// One peer with one client setting: how the client followed the route, its samples and summaries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub params: Params,
    pub route_push: bool,
    pub followed_by: FollowedBy,
    pub followed_by_at_end: FollowedBy,
    pub samples: Vec<Sample>,
    pub latency_ms: Option<Summary>,
    pub missed: usize,
    pub request_ms: Option<Summary>,
    pub duration_s: f64,
    #[serde(flatten)]
    pub server: ServerSample,
}

impl Scenario for RouteChangeLatency {
    const ID: &'static str = "route-change-latency";
    const ABOUT: &'static str = "A broker coming and going until a client following the topic \
                                 sees it: route push (Waymark) against polling every 30 s";
    const IN_DEFAULT_SET: bool = false;
    type Params = Params;
    fn quick(p: &mut Params) {
        (p.push_samples, p.poll_samples) = (4, 2);
        (p.poll_interval_ms, p.give_up_after_poll_s) = (2_000, 3.0);
    }
    fn runs(kind: PeerKind) -> bool {
        kind.is_real()
    }
    async fn run(ctx: &Ctx<'_>, p: &Params, record: &mut Record) -> anyhow::Result<()> {
        for kind in ctx.peers::<Self>() {
            record.add(kind, "", follow(ctx.setup, kind, p, true).await);
            if kind == PeerKind::Waymark {
                record.add(kind, PUSH_OFF, follow(ctx.setup, kind, p, false).await);
            }
        }
        Ok(())
    }
    fn report(s: &mut Section<'_>) {
        let waymark = s.rows::<Outcome>("");
        let push = of(&waymark, PeerKind::Waymark).filter(|x| x.followed_by == FollowedBy::Push);
        let push = push.and_then(|x| x.latency_ms.clone());
        let mut rows = Vec::new();
        for (part, suffix) in [("", ""), (PUSH_OFF, ", client's route push off")] {
            for r in s.rows::<Outcome>(part) {
                let versus = r.result.map(|x| (x, push.clone()));
                rows.push(Row::new(r.peer, format!("{}{suffix}", r.label), versus));
            }
        }
        // In report order, each peer's run with route push before its run without (a stable sort).
        rows.sort_by_key(|r| PeerKind::ALL.iter().position(|&p| p == r.peer));
        s.table_headed(Some("server"), &rows, COLUMNS);
        s.text("Samples in the order taken:");
        for r in &rows {
            if let Some((x, _)) = r.ok() {
                s.item(format!("{}: {}", r.label, sample_list(x)));
            }
        }
    }
}

/// A latency in ms as `-4 µs`, `124 µs`, `1.23 ms` or `14.61 s`.
fn latency(value_ms: f64) -> String {
    match value_ms.abs() {
        v if v < 1.0 => format!("{:.0} µs", value_ms * 1_000.0),
        v if v < 1_000.0 => ms(value_ms * 1_000.0),
        _ => seconds(value_ms / 1_000.0),
    }
}

/// `a ÷ b` as `0.50×`, `12×` or `117,350×`; `n/a` unless both are positive (a median seen before
/// the answer arrived has no meaningful ratio).
fn times(a: Option<f64>, b: Option<f64>) -> String {
    match div(a, b).filter(|_| a > Some(0.0)) {
        Some(r) if r >= 10.0 => format!("{}×", num(r)),
        _ => ratio(a, b),
    }
}

/// A row's outcome, and the latency of Waymark's route push it is compared with.
type Versus = (Outcome, Option<Summary>);

/// `f` of `summary`, a latency.
fn of_summary(summary: &Option<Summary>, f: fn(&Summary) -> f64) -> String {
    or_na(summary.as_ref(), |l| latency(f(l)))
}

fn versus((x, push): &Versus, f: fn(&Summary) -> f64) -> String {
    times(x.latency_ms.as_ref().map(f), push.as_ref().map(f))
}

const COLUMNS: &[Col<Versus>] = &[
    ("client follows the route by", |(x, _)| {
        let poll_s = x.params.poll_interval_ms as f64 / 1_000.0;
        let by = x.followed_by.text(poll_s);
        match x.followed_by == x.followed_by_at_end {
            true => by,
            false => format!("{by}; by the end: {}", x.followed_by_at_end.text(poll_s)),
        }
    }),
    ("samples", |(x, _)| match x.missed {
        0 => x.samples.len().to_string(),
        missed => format!("{} ({missed} not seen in time)", x.samples.len()),
    }),
    ("min", |(x, _)| of_summary(&x.latency_ms, |l| l.min)),
    ("p50", |(x, _)| of_summary(&x.latency_ms, |l| l.p50)),
    ("max", |(x, _)| of_summary(&x.latency_ms, |l| l.max)),
    ("mean", |(x, _)| of_summary(&x.latency_ms, |l| l.mean)),
    ("answered in", |(x, _)| of_summary(&x.request_ms, |l| l.p50)),
    ("p50 ÷ Waymark push", |x| versus(x, |l| l.p50)),
    ("mean ÷ Waymark push", |x| versus(x, |l| l.mean)),
    ("run", |(x, _)| format!("{:.0} s", x.duration_s)),
];

/// The samples in the order taken, each after the request that made the change (`reg`, `unreg`).
fn sample_list(x: &Outcome) -> String {
    let sample = |s: &Sample| {
        let added = s.change == Change::Added;
        let seen = s.seen_ms.map_or_else(|| "not seen".to_owned(), latency);
        format!("{} {seen}", if added { "reg" } else { "unreg" })
    };
    x.samples.iter().map(sample).collect::<Vec<_>>().join(", ")
}

/// Whether `route` lists `broker` in both its broker and queue entries (`None`: in one only).
fn lists_broker(route: &TopicRouteData, broker: &str) -> Option<bool> {
    let in_brokers = route.broker_datas.iter().any(|b| b.broker_name == broker);
    let in_queues = route.queue_datas.iter().any(|q| q.broker_name == broker);
    (in_brokers == in_queues).then_some(in_brokers)
}

/// `count` offsets into `period`, one at a random point of each of its `count` equal slices, in
/// random order.
fn spread_offsets(count: usize, period: Duration, rng: &mut fastrand::Rng) -> Vec<Duration> {
    let mut slices: Vec<usize> = (0..count).collect();
    rng.shuffle(&mut slices);
    let offset = |slice: usize| period.mul_f64((slice as f64 + rng.f64()) / count as f64);
    slices.into_iter().map(offset).collect()
}

/// The first moment at `offset` into a period of a schedule that started at time 0 with `period`,
/// not before `now` (all measured from the start).
fn next_at_offset(now: Duration, period: Duration, offset: Duration) -> Duration {
    if now <= offset {
        return offset;
    }
    let period_ns = period.as_nanos().max(1);
    let periods = (now - offset).as_nanos().div_ceil(period_ns);
    offset + Duration::from_nanos(u64::try_from(periods * period_ns).unwrap_or(u64::MAX))
}

/// A broker's config, and its registration.
type Broker = (BrokerConfig, Registration);

/// Broker `name` on the address of broker `index`, registering `topics`.
pub(super) fn broker(name: &str, index: usize, topics: [&str; 2]) -> anyhow::Result<Broker> {
    let config = BrokerConfig::new(CLUSTER, name, workload::broker_addr(index));
    let topics = topics.map(TopicConfig::new).into();
    let registration = Registration::new(config.clone(), topics, wall_ms())?;
    Ok((config, registration))
}

/// Sends the request by which the mover makes `change`, and waits for its answer.
async fn make(
    client: &RpcClient,
    (config, registration): &mut Broker,
    change: Change,
) -> anyhow::Result<()> {
    let request = match change {
        Change::Added => registration.next_request(wall_ms()),
        Change::Removed => body::request(RequestCode::UnregisterBroker, &*config).with_header(
            &UnregisterBrokerRequestHeader {
                broker_name: config.broker_name.clone(),
                broker_addr: config.broker_addr.clone(),
                cluster_name: config.cluster_name.clone(),
                broker_id: config.effective_broker_id(),
            },
        ),
    };
    let response = client.invoke(request, REGISTER_TIMEOUT).await;
    let response = response.with_context(|| format!("{change:?} request of {MOVER} failed"))?;
    success(response, format!("{change:?} request of {MOVER} refused"))
}

/// When the watcher was told, and whether the route it was told of lists the mover.
type Told = (Instant, Option<bool>);

/// Timestamps every route `watch` is told of, as it is told.
fn record_changes(mut watch: RouteWatch) -> (mpsc::UnboundedReceiver<Told>, JoinHandle<()>) {
    let (sender, receiver) = mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        while watch.changed().await.is_ok() {
            let at = Instant::now();
            let view = watch.borrow_and_update();
            let listed = view.as_ref().and_then(|v| lists_broker(&v.route, MOVER));
            drop(view);
            let _ = sender.send((at, listed));
        }
    });
    (receiver, task)
}

/// When the watcher was first told of a route where the mover's presence is `listed`, if before
/// `deadline`.
async fn told_of(
    told: &mut mpsc::UnboundedReceiver<Told>,
    listed: bool,
    deadline: Instant,
) -> Option<Instant> {
    // Until the deadline passes or the recorder stops.
    while let Ok(Some((at, state))) = tokio::time::timeout_at(deadline, told.recv()).await {
        if state == Some(listed) {
            return Some(at);
        }
    }
    None
}

/// How the client follows routes once it has subscribed, been refused, or `limit` has passed.
async fn settled(client: &RouteClient, limit: Duration) -> FollowedBy {
    let mut states = client.push_state();
    let answered = states.wait_for(|state| *state != PushState::Connecting);
    if let Ok(Ok(state)) = tokio::time::timeout(limit, answered).await {
        return FollowedBy::of(&state);
    }
    FollowedBy::PollingNotSubscribed
}

/// The scenario against a fresh `kind`, its client's route push set to `route_push`.
async fn follow(
    setup: &PeerSetup,
    kind: PeerKind,
    params: &Params,
    route_push: bool,
) -> anyhow::Result<Outcome> {
    let started = Instant::now();
    let peer = start_peer(setup, kind, &TINY, &PeerOptions::default()).await?;
    let push_off = if route_push { "" } else { ", route push off" };
    let label = format!("route-change-latency {}{push_off}", kind.id());
    let mut anchor = Fleet::connect(peer.addr, vec![broker(ANCHOR, 2_000, TOPICS)?.1]).await?;
    anchor.register_all().await?;
    let _anchor = anchor.keep_registered();
    let mut mover = broker(MOVER, 2_001, TOPICS)?;
    let mover_client = load::connect(peer.addr, 1).await?.remove(0);

    let period = Duration::from_millis(params.poll_interval_ms.max(1));
    let config = RouteClientConfig {
        route_push,
        poll_name_server_interval: period,
        ..RouteClientConfig::with_namesrv_addr(&peer.addr.to_string())
    };
    let client_started = Instant::now();
    let client = RouteClient::start(config);
    // The client polls at its start plus the initial delay, then every period.
    let poll_origin = client_started + client.config().poll_initial_delay;
    let (settle, topic) = (Duration::from_secs_f64(params.settle_s), TOPICS[0]);
    let mut watch = client.watch(topic).await;
    if watch.borrow_and_update().is_none() {
        let _ = tokio::time::timeout(settle, watch.changed()).await;
    }
    let first = watch.borrow_and_update().clone();
    let route = &first
        .with_context(|| format!("the client got no route of {topic}"))?
        .route;
    let alone =
        lists_broker(route, ANCHOR) == Some(true) && lists_broker(route, MOVER) == Some(false);
    ensure!(
        alone,
        "the first route of {topic} is not the anchor's alone: {route:?}"
    );
    let followed_by = settled(&client, settle).await;
    let (mut told, recorder) = record_changes(watch);

    let pushed = followed_by == FollowedBy::Push;
    let count = match pushed {
        true => params.push_samples,
        false => params.poll_samples,
    };
    let mut rng = fastrand::Rng::new();
    let offsets = spread_offsets(count, period, &mut rng);
    let give_up = period + Duration::from_secs_f64(params.give_up_after_poll_s);
    eprintln!("[{label}] client follows by {followed_by:?}: {count} samples");
    let (min, max) = (params.push_pause_min_ms, params.push_pause_max_ms);
    let mut samples = Vec::with_capacity(count);
    // The mover comes, goes, comes again, …
    let changes = [Change::Added, Change::Removed].into_iter().cycle();
    for (n, (change, offset)) in changes.zip(offsets).enumerate() {
        let at = match pushed {
            // A range of the one pause `min` unless `max` is above it.
            true => Instant::now() + Duration::from_millis(rng.u64(min..max.max(min + 1))),
            false => poll_origin + next_at_offset(poll_origin.elapsed(), period, offset),
        };
        tokio::time::sleep_until(at).await;
        while told.try_recv().is_ok() {}
        let sent = Instant::now();
        make(&mover_client, &mut mover, change).await?;
        let answered = Instant::now();
        let seen = told_of(&mut told, change == Change::Added, answered + give_up).await;
        let seen_ms = seen.map(|at| signed_millis(answered, at));
        let after = |ms: f64| format!("{ms:.3} ms after the answer");
        let shown = seen_ms.map_or("not in time".into(), after);
        eprintln!("[{label}] sample {}: {change:?}, seen {shown}", n + 1);
        let request_ms = millis(answered - sent);
        samples.push(Sample {
            change,
            request_ms,
            seen_ms,
        });
    }
    let followed_by_at_end = FollowedBy::of(&client.push_state().borrow());
    client.shutdown();
    recorder.abort();
    drop(client);

    let seen: Vec<f64> = samples.iter().filter_map(|s| s.seen_ms).collect();
    let requests: Vec<f64> = samples.iter().map(|s| s.request_ms).collect();
    // The anchor and the mover's connection close before the peer stops.
    Ok(Outcome {
        params: params.clone(),
        route_push,
        followed_by,
        followed_by_at_end,
        latency_ms: Summary::of(&seen),
        missed: samples.len() - seen.len(),
        request_ms: Summary::of(&requests),
        samples,
        duration_s: started.elapsed().as_secs_f64(),
        server: ServerSample::of(&peer, None),
    })
}
