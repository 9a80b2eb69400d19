//! The scenarios, one module each, and what they share: starting a peer for
//! a scenario, a fleet of registered brokers, and checking that the routes
//! a peer answers are the ones the fleet registered. `controller` runs
//! controller groups instead of NameServers ([`crate::group`]); `security`
//! starts its servers with extra settings ([`crate::peer::PeerOptions`]);
//! `route_change` follows routes with `rmq-route-client`'s `RouteClient`.
//!
//! Every scenario starts its own fresh peer process and stops it at the end,
//! so no scenario sees another's state. Each returns a plain result value
//! (`crate::results`); nothing here prints except the progress line.

pub mod controller;
pub mod failover;
pub mod hostile;
pub mod register;
pub mod route_change;
pub mod route_qps;
pub mod route_sweep;
pub mod security;
pub mod startup;
pub mod storm;

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{bail, Context};
use futures::future::join_all;
use rmq_broker_client::wall_ms;
use rmq_protocol::{JavaJson, TopicRouteData};
use rmq_transport::RpcClient;
use rmq_wire::ResponseCode;
use tokio::time::Instant;

use crate::load;
use crate::peer::{self, PeerKind, PeerSetup, RunningPeer};
use crate::workload::{self, Layout, Registration};

/// How long a peer may take to answer its first request.
const START_LIMIT: Duration = Duration::from_secs(120);
/// Timeout of one registration (a Java broker's `registerBrokerTimeoutMills` is 24 s).
pub const REGISTER_TIMEOUT: Duration = Duration::from_secs(30);
/// Timeout of one route query.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(5);

/// Starts `kind` for a scenario over `layout`, probing every 20 ms.
///
/// # Errors
/// See [`peer::start`].
pub async fn start_peer(
    setup: &PeerSetup,
    kind: PeerKind,
    layout: &Layout,
) -> anyhow::Result<RunningPeer> {
    peer::start(setup, kind, layout, Duration::from_millis(20), START_LIMIT).await
}

/// Brokers that registered with a peer, each on its own connection, which
/// stays open (a closed connection unregisters its broker).
pub struct Fleet {
    /// Connection of broker `i`.
    pub clients: Vec<RpcClient>,
    /// Registration state of broker `i`.
    pub registrations: Vec<Registration>,
}

/// The answer times of one round of registrations.
#[derive(Debug, Clone)]
pub struct Round {
    /// From the first send to the last answer.
    pub elapsed: Duration,
    /// Latency of each registration.
    pub latencies: Vec<Duration>,
}

impl Fleet {
    /// Connects one connection per registration.
    ///
    /// # Errors
    /// A connection fails.
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

    /// Every broker registers once (new DataVersion), all at the same time.
    ///
    /// # Errors
    /// Any registration that fails or is refused.
    pub async fn register_all(&mut self) -> anyhow::Result<Round> {
        let now = wall_ms();
        let requests: Vec<_> = self
            .registrations
            .iter_mut()
            .map(|r| r.next_request(now))
            .collect();
        let started = Instant::now();
        let calls = self
            .clients
            .iter()
            .zip(requests)
            .map(|(client, request)| async move {
                let sent = Instant::now();
                let response = client.invoke(request, REGISTER_TIMEOUT).await;
                (sent.elapsed(), response)
            });
        let answers = join_all(calls).await;
        let elapsed = started.elapsed();
        let mut latencies = Vec::with_capacity(answers.len());
        for (i, (latency, response)) in answers.into_iter().enumerate() {
            let name = self.registrations[i].broker_name();
            let response = response.with_context(|| format!("registration of {name} failed"))?;
            if response.response_code() != ResponseCode::Success {
                bail!(
                    "registration of {name} refused: code {} {}",
                    response.code,
                    response.remark.unwrap_or_default()
                );
            }
            latencies.push(latency);
        }
        Ok(Round { elapsed, latencies })
    }

    /// Re-registers every broker every [`KEEP_REGISTERED_EVERY`], as real
    /// brokers do, until the returned guard is dropped: the registrations
    /// carry no heartbeat timeout, so a server drops them after its default
    /// of 120 s, which a part whose windows are measured again (a disturbed
    /// machine) can outlast. A failed round is printed and retried at the next.
    pub fn keep_registered(mut self) -> KeepRegistered {
        let task = tokio::spawn(async move {
            let mut ticker = tokio::time::interval(KEEP_REGISTERED_EVERY);
            ticker.tick().await;
            loop {
                ticker.tick().await;
                if let Err(error) = self.register_all().await {
                    eprintln!("[keep registered] {error:#}");
                }
            }
        });
        KeepRegistered(task)
    }
}

/// How often [`Fleet::keep_registered`] re-registers: Java's
/// `registerNameServerPeriod` default.
pub const KEEP_REGISTERED_EVERY: Duration = Duration::from_secs(30);

/// Stops [`Fleet::keep_registered`]'s re-registrations (and closes the
/// fleet's connections, which unregisters the brokers) when dropped.
pub struct KeepRegistered(tokio::task::JoinHandle<()>);

impl Drop for KeepRegistered {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Registrations of every broker of `layout`.
///
/// # Errors
/// Cannot happen for valid layouts.
pub fn registrations(layout: &Layout) -> anyhow::Result<Vec<Registration>> {
    let now = wall_ms();
    (0..layout.brokers)
        .map(|b| Registration::of_layout(layout, b, now))
        .collect()
}

/// The route of `topic`, `None` for TOPIC_NOT_EXIST.
///
/// # Errors
/// The call fails, another code comes back, or the body does not parse.
pub async fn route(client: &RpcClient, topic: &str) -> anyhow::Result<Option<TopicRouteData>> {
    let response = client
        .invoke(workload::route_request(topic), QUERY_TIMEOUT)
        .await?;
    match response.response_code() {
        ResponseCode::Success => {
            let body = response.body.as_deref().unwrap_or_default();
            Ok(Some(TopicRouteData::from_json(body).with_context(
                || {
                    format!(
                        "route of {topic} does not parse: {}",
                        String::from_utf8_lossy(body)
                    )
                },
            )?))
        }
        ResponseCode::TopicNotExist => Ok(None),
        _ => bail!(
            "route of {topic}: code {} {}",
            response.code,
            response.remark.unwrap_or_default()
        ),
    }
}

/// Checks that the first topic of every topic set routes to exactly the
/// brokers of that set. The ceiling answers every topic with the route of
/// set 0, so for it only the number of brokers is checked.
///
/// # Errors
/// A topic is missing or routes elsewhere.
pub async fn verify_routes(
    client: &RpcClient,
    layout: &Layout,
    kind: PeerKind,
) -> anyhow::Result<()> {
    for set in 0..layout.topic_sets() {
        let topic = workload::topic_name(set, 0);
        let route = route(client, &topic)
            .await?
            .with_context(|| format!("{topic} is not routed after registration"))?;
        let mut names: Vec<String> = route
            .broker_datas
            .iter()
            .map(|b| b.broker_name.clone())
            .collect();
        names.sort();
        let mut expected: Vec<String> = layout
            .brokers_of_set(set)
            .map(workload::broker_name)
            .collect();
        expected.sort();
        let same = if kind.is_real() {
            names == expected
        } else {
            names.len() == layout.brokers_of_set(0).len()
        };
        if !same {
            bail!("{topic} routes to {names:?}, expected {expected:?}");
        }
    }
    Ok(())
}

/// Seconds as `f64`.
pub fn secs(duration: Duration) -> f64 {
    duration.as_secs_f64()
}

/// Milliseconds as `f64`.
pub fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}

/// Parses `20s`, `500ms`, `2m` or a bare number of seconds.
///
/// # Errors
/// Anything else.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, scale) = if let Some(n) = text.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('m') {
        (n, 60.0)
    } else {
        (text, 1.0)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("not a duration: {text:?} (use e.g. 20s, 500ms, 2m)"))?;
    if !(value.is_finite() && value >= 0.0) {
        return Err(format!("not a duration: {text:?}"));
    }
    Ok(Duration::from_secs_f64(value * scale))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("20s"), Ok(Duration::from_secs(20)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1_500)));
        assert!(parse_duration("fast").is_err());
    }
}
