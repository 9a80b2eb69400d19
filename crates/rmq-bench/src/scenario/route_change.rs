//! `route-change-latency`: how soon a client following a topic sees a
//! broker come and go.
//!
//! An anchor broker registers two topics and stays registered (it
//! re-registers every 30 s, as a broker does). A client — `rmq-route-client`'s
//! [`RouteClient`], started with Java's defaults — follows the first topic
//! ([`RouteClient::watch`]). Then, sample after sample, a second broker
//! registers the same two topics or unregisters (UNREGISTER_BROKER),
//! alternately, on its own connection; a sample is the time from the arrival
//! of that request's answer to the client's watcher being told of the
//! changed route.
//!
//! The client follows by route push where the NameServer offers it
//! (Waymark) and polls every `pollNameServerInterval` otherwise (the Java
//! NameServer answers the subscription REQUEST_CODE_NOT_SUPPORTED; Waymark
//! too when the client's route push is switched off). A pushed client is
//! sampled `push_samples` times, each change a random few hundred ms after
//! the previous one was seen. A polling client sees a change only at its
//! next poll, so each sample takes up to one poll interval and there are
//! only `poll_samples`: the changes are placed at random offsets into the
//! poll period, one in each equal slice of it (in random order), so that
//! few samples still cover the whole period. The ceiling keeps no brokers:
//! not applicable there.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{ensure, Context};
use rmq_broker_client::{body, wall_ms, BrokerConfig};
use rmq_protocol::headers::UnregisterBrokerRequestHeader;
use rmq_protocol::{TopicConfig, TopicRouteData};
use rmq_route_client::{PushState, RouteClient, RouteClientConfig, RouteWatch};
use rmq_transport::RpcClient;
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::{millis, secs, start_peer, Fleet, REGISTER_TIMEOUT};
use crate::load;
use crate::peer::{PeerKind, PeerSetup};
use crate::stats::Summary;
use crate::workload::{self, Layout, Registration, CLUSTER};

const TOPICS: [&str; 2] = ["RouteChangeTopic-0", "RouteChangeTopic-1"];
/// The broker that stays registered, so the followed topic always has a route.
const ANCHOR: &str = "route-change-anchor";
/// The broker whose comings and goings are the changes measured.
const MOVER: &str = "route-change-mover";

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Samples of a client that follows by route push.
    pub push_samples: usize,
    /// Shortest pause between a pushed change being seen and the next change, ms.
    pub push_pause_min_ms: u64,
    /// Longest pause between a pushed change being seen and the next change, ms.
    pub push_pause_max_ms: u64,
    /// Samples of a polling client (each takes up to one poll interval).
    pub poll_samples: usize,
    /// `pollNameServerInterval` of every client, ms (Java's default 30 s).
    pub poll_interval_ms: u64,
    /// How long a client may take to subscribe, or to learn that it cannot, s.
    pub settle_s: f64,
    /// A change not seen within one poll interval and this long is missed, s.
    pub give_up_after_poll_s: f64,
}

impl Params {
    /// The defaults: Java's poll interval, 20 pushed and 6 polled samples
    /// (about 3 minutes per polling client). With `quick`, a 2 s poll
    /// interval and a handful of samples: a harness check only.
    pub fn defaults(quick: bool) -> Params {
        Params {
            push_samples: if quick { 4 } else { 20 },
            push_pause_min_ms: 200,
            push_pause_max_ms: 600,
            poll_samples: if quick { 2 } else { 6 },
            poll_interval_ms: if quick { 2_000 } else { 30_000 },
            settle_s: 10.0,
            give_up_after_poll_s: if quick { 3.0 } else { 10.0 },
        }
    }

    fn poll_interval(&self) -> Duration {
        Duration::from_millis(self.poll_interval_ms.max(1))
    }
}

/// What a change request did to the second broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// It registered: the route gains it.
    Added,
    /// It unregistered: the route loses it.
    Removed,
}

/// How the client followed the route, from its [`PushState`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FollowedBy {
    /// Subscribed: the NameServer pushes each change.
    Push,
    /// Polling: the NameServer answered the subscription
    /// REQUEST_CODE_NOT_SUPPORTED.
    PollingNotSupported,
    /// Polling: route push was off in the client.
    PollingPushOff,
    /// Polling: the subscription was neither accepted nor refused as
    /// unsupported (the client keeps trying).
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
}

/// One change and when the client saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// What changed.
    pub change: Change,
    /// From sending the change request to its answer, ms.
    pub request_ms: f64,
    /// From the answer to the client's watcher being told, ms; negative when
    /// the client was told before the answer arrived; `None`: not seen in time.
    pub seen_ms: Option<f64>,
}

/// What one peer (with one client setting) did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouteChangeLatency {
    /// What ran.
    pub params: Params,
    /// The client's `route_push` setting.
    pub route_push: bool,
    /// How the client followed the route when sampling began.
    pub followed_by: FollowedBy,
    /// How it followed the route after the last sample.
    pub followed_by_at_end: FollowedBy,
    /// Every sample, in the order taken.
    pub samples: Vec<Sample>,
    /// The seen samples' `seen_ms`, summarised (ms).
    pub latency_ms: Option<Summary>,
    /// Samples the client did not see in time.
    pub missed: usize,
    /// The change requests' round trips, summarised (ms).
    pub request_ms: Option<Summary>,
    /// Wall time of this peer's run, from the server's start, seconds.
    pub duration_s: f64,
    /// CPUs the server was allowed.
    pub server_cpus: Option<String>,
}

/// Whether `route` lists `broker`: `Some(true)` when both its broker and
/// its queue entries are there, `Some(false)` when neither is, `None` for
/// a route that has one but not the other.
pub fn lists_broker(route: &TopicRouteData, broker: &str) -> Option<bool> {
    let in_brokers = route.broker_datas.iter().any(|b| b.broker_name == broker);
    let in_queues = route.queue_datas.iter().any(|q| q.broker_name == broker);
    (in_brokers == in_queues).then_some(in_brokers)
}

/// `count` offsets into `period`, one at a random point of each of `count`
/// equal slices of it, in random order.
pub fn spread_offsets(count: usize, period: Duration, rng: &mut fastrand::Rng) -> Vec<Duration> {
    let mut slices: Vec<usize> = (0..count).collect();
    rng.shuffle(&mut slices);
    slices
        .into_iter()
        .map(|slice| period.mul_f64((slice as f64 + rng.f64()) / count as f64))
        .collect()
}

/// The first moment at `offset` into a period of a schedule that started at
/// time 0 with `period`, not before `now` (all measured from the start).
pub fn next_at_offset(now: Duration, period: Duration, offset: Duration) -> Duration {
    if now <= offset {
        return offset;
    }
    let period_ns = period.as_nanos().max(1);
    let periods = (now - offset).as_nanos().div_ceil(period_ns);
    offset + Duration::from_nanos(u64::try_from(periods * period_ns).unwrap_or(u64::MAX))
}

/// `to - from` in ms, negative when `to` is earlier.
fn signed_millis(from: Instant, to: Instant) -> f64 {
    match to.checked_duration_since(from) {
        Some(after) => millis(after),
        None => -millis(from - to),
    }
}

fn broker(name: &str, index: usize) -> anyhow::Result<(BrokerConfig, Registration)> {
    let config = BrokerConfig::new(CLUSTER, name, workload::broker_addr(2_000 + index));
    let topics = TOPICS.iter().map(|t| TopicConfig::new(*t)).collect();
    let registration = Registration::new(config.clone(), topics, wall_ms())?;
    Ok((config, registration))
}

/// The second broker, on its own connection.
struct Mover {
    client: RpcClient,
    config: BrokerConfig,
    registration: Registration,
}

impl Mover {
    async fn connect(addr: SocketAddr) -> anyhow::Result<Mover> {
        let (config, registration) = broker(MOVER, 1)?;
        Ok(Mover {
            client: load::connect(addr, 1).await?.remove(0),
            config,
            registration,
        })
    }

    fn request(&mut self, change: Change) -> RemotingCommand {
        match change {
            Change::Added => self.registration.next_request(wall_ms()),
            Change::Removed => body::request(RequestCode::UnregisterBroker, &self.config)
                .with_header(&UnregisterBrokerRequestHeader {
                    broker_name: self.config.broker_name.clone(),
                    broker_addr: self.config.broker_addr.clone(),
                    cluster_name: self.config.cluster_name.clone(),
                    broker_id: self.config.effective_broker_id(),
                }),
        }
    }

    /// Sends the request that makes `change` and waits for its answer.
    async fn make(&mut self, change: Change) -> anyhow::Result<()> {
        let request = self.request(change);
        let response = self
            .client
            .invoke(request, REGISTER_TIMEOUT)
            .await
            .with_context(|| format!("{change:?} request of {MOVER} failed"))?;
        ensure!(
            response.response_code() == ResponseCode::Success,
            "{change:?} request of {MOVER} refused: code {} {}",
            response.code,
            response.remark.unwrap_or_default()
        );
        Ok(())
    }
}

/// When the watcher was told, and whether the route it was told of lists
/// the second broker.
type Told = (Instant, Option<bool>);

/// Timestamps every route `watch` is told of, as it is told.
fn record_changes(
    mut watch: RouteWatch,
) -> (mpsc::UnboundedReceiver<Told>, tokio::task::JoinHandle<()>) {
    let (sender, receiver) = mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        while watch.changed().await.is_ok() {
            let at = Instant::now();
            let listed = watch
                .borrow_and_update()
                .as_ref()
                .and_then(|view| lists_broker(&view.route, MOVER));
            if sender.send((at, listed)).is_err() {
                return;
            }
        }
    });
    (receiver, task)
}

/// When the watcher was first told of a route where the second broker's
/// presence is `listed`, if before `deadline`.
async fn told_of(
    told: &mut mpsc::UnboundedReceiver<Told>,
    listed: bool,
    deadline: Instant,
) -> Option<Instant> {
    loop {
        match tokio::time::timeout_at(deadline, told.recv()).await {
            Ok(Some((at, state))) if state == Some(listed) => return Some(at),
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => return None,
        }
    }
}

/// How the client follows routes once it has subscribed, been refused, or
/// `limit` has passed.
async fn settled(client: &RouteClient, limit: Duration) -> FollowedBy {
    let mut states = client.push_state();
    let deadline = Instant::now() + limit;
    loop {
        let state = states.borrow_and_update().clone();
        if state != PushState::Connecting {
            return FollowedBy::of(&state);
        }
        match tokio::time::timeout_at(deadline, states.changed()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) | Err(_) => return FollowedBy::of(&state),
        }
    }
}

/// Runs the scenario against a fresh `kind`, its client's route push set to
/// `route_push`.
///
/// # Errors
/// The peer does not start, refuses a change, or the client never gets the
/// anchor's route.
pub async fn run(
    setup: &PeerSetup,
    kind: PeerKind,
    params: &Params,
    route_push: bool,
) -> anyhow::Result<RouteChangeLatency> {
    let tiny = Layout {
        brokers: 1,
        topics_per_broker: 2,
        spread: 1,
        queues: 8,
    };
    let started = Instant::now();
    let peer = start_peer(setup, kind, &tiny).await?;
    let label = format!(
        "route-change-latency {}{}",
        kind.id(),
        if route_push { "" } else { ", route push off" }
    );
    let mut anchor = Fleet::connect(peer.addr, vec![broker(ANCHOR, 0)?.1]).await?;
    anchor.register_all().await?;
    let anchor = anchor.keep_registered();
    let mut mover = Mover::connect(peer.addr).await?;

    let period = params.poll_interval();
    let config = RouteClientConfig {
        route_push,
        poll_name_server_interval: period,
        ..RouteClientConfig::with_namesrv_addr(&peer.addr.to_string())
    };
    let client_started = Instant::now();
    let client = RouteClient::start(config);
    // The client polls at its start plus the initial delay, then every period.
    let poll_origin = client_started + client.config().poll_initial_delay;
    let settle = Duration::from_secs_f64(params.settle_s);
    let mut watch = client.watch(TOPICS[0]).await;
    if watch.borrow_and_update().is_none() {
        let _ = tokio::time::timeout(settle, watch.changed()).await;
    }
    let first = watch
        .borrow_and_update()
        .clone()
        .with_context(|| format!("the client got no route of {}", TOPICS[0]))?;
    ensure!(
        lists_broker(&first.route, ANCHOR) == Some(true)
            && lists_broker(&first.route, MOVER) == Some(false),
        "the first route of {} is not the anchor's alone: {:?}",
        TOPICS[0],
        first.route
    );
    let followed_by = settled(&client, settle).await;
    let (mut told, recorder) = record_changes(watch);

    let pushed = followed_by == FollowedBy::Push;
    let count = if pushed {
        params.push_samples
    } else {
        params.poll_samples
    };
    let mut rng = fastrand::Rng::new();
    let offsets = spread_offsets(count, period, &mut rng);
    let give_up = period + Duration::from_secs_f64(params.give_up_after_poll_s);
    eprintln!("[{label}] client follows by {followed_by:?}: {count} samples");
    let mut samples = Vec::with_capacity(count);
    let mut listed = false;
    for offset in offsets {
        let at = if pushed {
            let pause = if params.push_pause_max_ms > params.push_pause_min_ms {
                rng.u64(params.push_pause_min_ms..params.push_pause_max_ms)
            } else {
                params.push_pause_min_ms
            };
            Instant::now() + Duration::from_millis(pause)
        } else {
            poll_origin + next_at_offset(poll_origin.elapsed(), period, offset)
        };
        tokio::time::sleep_until(at).await;
        while told.try_recv().is_ok() {}
        let change = if listed {
            Change::Removed
        } else {
            Change::Added
        };
        let sent = Instant::now();
        mover.make(change).await?;
        let answered = Instant::now();
        listed = !listed;
        let seen = told_of(&mut told, listed, answered + give_up).await;
        let sample = Sample {
            change,
            request_ms: millis(answered - sent),
            seen_ms: seen.map(|at| signed_millis(answered, at)),
        };
        eprintln!(
            "[{label}] sample {}: {change:?}, seen {}",
            samples.len() + 1,
            sample.seen_ms.map_or_else(
                || "not in time".to_owned(),
                |ms| format!("{ms:.3} ms after the answer")
            )
        );
        samples.push(sample);
    }
    let followed_by_at_end = FollowedBy::of(&client.push_state().borrow());
    client.shutdown();
    recorder.abort();
    drop(client);

    let seen: Vec<f64> = samples.iter().filter_map(|s| s.seen_ms).collect();
    let requests: Vec<f64> = samples.iter().map(|s| s.request_ms).collect();
    let result = RouteChangeLatency {
        params: params.clone(),
        route_push,
        followed_by,
        followed_by_at_end,
        latency_ms: Summary::of(&seen),
        missed: samples.len() - seen.len(),
        request_ms: Summary::of(&requests),
        samples,
        duration_s: secs(started.elapsed()),
        server_cpus: peer.cpus_allowed(),
    };
    drop(mover);
    drop(anchor);
    peer.stop();
    Ok(result)
}

#[cfg(test)]
mod tests {
    use rmq_protocol::{BrokerData, QueueData};

    use super::*;

    #[test]
    fn offsets_fall_one_in_each_slice_of_the_period() {
        let period = Duration::from_secs(30);
        let mut rng = fastrand::Rng::with_seed(7);
        let offsets = spread_offsets(6, period, &mut rng);
        assert_eq!(offsets.len(), 6);
        let mut slices: Vec<u128> = offsets
            .iter()
            .map(|o| {
                assert!(*o < period, "{o:?}");
                o.as_nanos() / Duration::from_secs(5).as_nanos()
            })
            .collect();
        slices.sort_unstable();
        assert_eq!(slices, [0, 1, 2, 3, 4, 5]);
        assert!(spread_offsets(0, period, &mut rng).is_empty());
    }

    #[test]
    fn next_moment_at_an_offset_is_never_in_the_past() {
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        assert_eq!(next_at_offset(s(1), s(30), s(5)), s(5));
        assert_eq!(next_at_offset(s(5), s(30), s(5)), s(5));
        assert_eq!(next_at_offset(s(6), s(30), s(5)), s(35));
        assert_eq!(next_at_offset(s(35) + ms(1), s(30), s(20)), s(50));
        assert_eq!(next_at_offset(s(65), s(30), s(5)), s(65));
        assert_eq!(next_at_offset(s(65) + ms(1), s(30), s(5)), s(95));
    }

    #[test]
    fn a_broker_is_listed_only_with_both_its_entries() {
        let mut route = TopicRouteData::default();
        assert_eq!(lists_broker(&route, MOVER), Some(false));
        route.broker_datas.push(BrokerData {
            broker_addrs: [(0, "10.0.0.1:10911".to_owned())].into_iter().collect(),
            broker_name: MOVER.to_owned(),
            cluster: CLUSTER.to_owned(),
            enable_acting_master: false,
            zone_name: None,
        });
        assert_eq!(lists_broker(&route, MOVER), None);
        route.queue_datas.push(QueueData {
            broker_name: MOVER.to_owned(),
            perm: 6,
            read_queue_nums: 8,
            topic_sys_flag: 0,
            write_queue_nums: 8,
        });
        assert_eq!(lists_broker(&route, MOVER), Some(true));
        assert_eq!(lists_broker(&route, ANCHOR), Some(false));
    }

    #[test]
    fn latency_before_the_answer_is_negative() {
        let answered = Instant::now();
        let later = answered + Duration::from_millis(3);
        assert!((signed_millis(answered, later) - 3.0).abs() < 1e-9);
        assert!((signed_millis(later, answered) + 3.0).abs() < 1e-9);
    }
}
