//! The route push task of a started client: one subscription, to the
//! chosen NameServer, for every topic the client follows; each pushed route
//! goes into the cache exactly as a polled one would (Java's change test,
//! watchers told), so watchers hear of a change as the NameServer applies
//! it rather than at the next poll.
//!
//! Owns reconnecting: after a lost connection it subscribes again with the
//! last cursor for the topics whose routes it had read, and without one for
//! the rest, so nothing is missed. A NameServer without route push (Java's)
//! leaves the client polling, and is asked again after `route_push_retry`.
//! Like the refresh task it holds only a weak reference to the client.

use std::collections::HashSet;
use std::sync::Weak;
use std::time::Duration;

use rmq_protocol::route_push::Cursor;
use tokio::sync::watch;

use super::{Inner, RouteClient};
use crate::push::{PushConfig, PushError, PushEvent, PushState, RouteSubscription};

/// Wait before subscribing again after a failure other than "not supported".
const RECONNECT_DELAY: Duration = Duration::from_secs(1);

/// What a subscription knows across reconnects.
#[derive(Default)]
struct Progress {
    /// Every change up to it of the topics in `read` has been applied.
    cursor: Option<Cursor>,
    /// Topics whose route (or its absence) has been pushed.
    read: HashSet<String>,
    /// The index of the NameServer to try next when none is chosen.
    next_addr: usize,
}

pub(super) async fn run(
    inner: Weak<Inner>,
    mut stop: watch::Receiver<bool>,
    mut topics: watch::Receiver<u64>,
) {
    let mut progress = Progress::default();
    loop {
        let outcome = tokio::select! {
            outcome = follow(&inner, &mut topics, &mut progress) => outcome,
            changed = stop.changed() => {
                if changed.is_err() || *stop.borrow() {
                    return;
                }
                continue;
            }
        };
        let Some(client) = upgrade(&inner) else {
            return;
        };
        let wait = match outcome {
            Err(PushError::NotSupported { addr }) => {
                tracing::info!(%addr, retry = ?client.inner.config.route_push_retry,
                    "name server has no route push; polling routes");
                client
                    .inner
                    .push_state
                    .send_replace(PushState::Polling { addr });
                client.inner.config.route_push_retry
            }
            Err(error) => {
                tracing::info!(%error, "route subscription ended; subscribing again");
                client.inner.push_state.send_replace(PushState::Connecting);
                RECONNECT_DELAY
            }
            Ok(()) => Duration::ZERO,
        };
        drop(client);
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            changed = stop.changed() => {
                if changed.is_err() || *stop.borrow() {
                    return;
                }
            }
        }
    }
}

fn upgrade(inner: &Weak<Inner>) -> Option<RouteClient> {
    inner.upgrade().map(|inner| RouteClient { inner })
}

/// One connection's life: subscribe, then apply pushes and follow changes
/// of the topic set until something fails. `Ok` when there is nothing to
/// follow yet and the topic set changed.
async fn follow(
    inner: &Weak<Inner>,
    topics: &mut watch::Receiver<u64>,
    progress: &mut Progress,
) -> Result<(), PushError> {
    let (addr, config, wanted) = {
        let client = upgrade(inner).ok_or(PushError::Closed)?;
        let wanted: HashSet<String> = client
            .inner
            .state
            .lock()
            .cache
            .refresh_topics()
            .into_iter()
            .collect();
        (choose_addr(&client, progress), push_config(&client), wanted)
    };
    topics.borrow_and_update();
    if wanted.is_empty() {
        return topics.changed().await.map_err(|_| PushError::Closed);
    }
    let addr = addr.ok_or(PushError::Closed)?;
    let mut subscription = RouteSubscription::connect(&addr, config)
        .await
        .inspect_err(|_| progress.next_addr += 1)?;
    let (read, unread): (Vec<&String>, Vec<&String>) = wanted
        .iter()
        .partition(|topic| progress.read.contains(*topic));
    if !read.is_empty() {
        subscription
            .subscribe(
                read.iter().map(|topic| topic.as_str()),
                false,
                progress.cursor,
            )
            .await?;
    }
    if !unread.is_empty() {
        subscription
            .subscribe(unread.iter().map(|topic| topic.as_str()), false, None)
            .await?;
    }
    tracing::info!(%addr, topics = wanted.len(), "following routes by push");
    if let Some(client) = upgrade(inner) {
        client
            .inner
            .push_state
            .send_replace(PushState::Pushing { addr: addr.clone() });
    }
    let mut subscribed = wanted;
    loop {
        tokio::select! {
            event = subscription.next() => {
                apply(inner, event?, progress).await?;
                progress.cursor = subscription.cursor();
            }
            changed = topics.changed() => {
                changed.map_err(|_| PushError::Closed)?;
                let client = upgrade(inner).ok_or(PushError::Closed)?;
                let wanted: HashSet<String> = client.inner.state.lock().cache.refresh_topics().into_iter().collect();
                drop(client);
                let added: Vec<&str> = wanted.difference(&subscribed).map(String::as_str).collect();
                if !added.is_empty() {
                    subscription.subscribe(added, false, None).await?;
                }
                let removed: Vec<&str> = subscribed.difference(&wanted).map(String::as_str).collect();
                if !removed.is_empty() {
                    subscription.unsubscribe(removed, false).await?;
                }
                subscribed = wanted;
            }
        }
    }
}

/// The chosen NameServer, else the next of the list in turn.
fn choose_addr(client: &RouteClient, progress: &Progress) -> Option<String> {
    if let Some(chosen) = client.inner.channel.chosen() {
        return Some(chosen);
    }
    let addrs = client.inner.channel.addrs();
    (!addrs.is_empty()).then(|| addrs[progress.next_addr % addrs.len()].clone())
}

fn push_config(client: &RouteClient) -> PushConfig {
    let config = &client.inner.config;
    PushConfig {
        connect_timeout: config.channel.connect_timeout,
        request_timeout: config.mq_client_api_timeout,
        accept_standard_json_only: config.accept_standard_json_only,
        tls: config.tls.clone(),
        credentials: config.credentials.clone(),
    }
}

/// Puts a pushed route into the cache. A topic the NameServer no longer
/// knows keeps its cached route, as a polled TOPIC_NOT_EXIST does.
async fn apply(
    inner: &Weak<Inner>,
    event: PushEvent,
    progress: &mut Progress,
) -> Result<(), PushError> {
    let PushEvent::Route { topic, route } = event else {
        return Ok(());
    };
    progress.read.insert(topic.clone());
    let Some(route) = route else {
        tracing::debug!(%topic, "pushed: no route for the topic; cached route kept");
        return Ok(());
    };
    let client = upgrade(inner).ok_or(PushError::Closed)?;
    if let Err(error) = client.store_pushed(&topic, route).await {
        tracing::warn!(%topic, %error, "pushed route not applied");
    }
    Ok(())
}
