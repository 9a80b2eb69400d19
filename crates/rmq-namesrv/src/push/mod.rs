//! Route push, Waymark's extension of the protocol (docs/protocol-extensions.md):
//! a client subscribes to topics' routes (and cluster membership) on its
//! connection and is sent each change as the NameServer applies it, instead
//! of polling every 30 s.
//!
//! Owns the subscriptions and what each subscriber has been sent. The route
//! table knows nothing of it: after any write that may change a route
//! ([`SharedRoutes::write`](crate::route::SharedRoutes::write) wakes
//! [`run`]) every subscribed topic's route is recomputed and compared with
//! the one last sent, so whatever changed a route — a registration, an
//! unregistration, an expiry, a permission wipe, a topic deletion — is
//! pushed without any handler knowing about subscribers.
//!
//! Each change of a subscribed route gets the next version number; a
//! subscriber is told a cursor (this run's instance and a version) only
//! when it has been sent every change up to that version, so reconnecting
//! with the last cursor it saw loses nothing: routes changed since are sent
//! again (`hub.rs`). A subscriber that does not read has its changes
//! coalesced (only the latest route of each topic is sent once it reads)
//! and is disconnected if it stays behind (`Limits`' route push keys).

mod hub;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::{Mutex, MutexGuard};
use rmq_protocol::headers::{
    SubscribeRoutesRequestHeader, SubscribeRoutesResponseHeader, UnsubscribeRoutesRequestHeader,
};
use rmq_protocol::route_push::split_topics;
use rmq_protocol::version::route_dialect;
use rmq_transport::{ConnId, ConnectionInfo};
use rmq_wire::{RemotingCommand, ResponseCode};
use tokio::sync::Notify;

use crate::error::{Error, HandlerResult};
use crate::handlers::validate;
use crate::state::Namesrv;
use hub::{Hub, Key, Refusal};

/// How often subscribers whose changes were coalesced are looked at again.
const BEHIND_CHECK: Duration = Duration::from_millis(50);

/// How often keys nobody subscribes to any more are looked at, to forget
/// those past their grace.
const ORPHAN_CHECK: Duration = Duration::from_secs(5);

/// The subscriptions of one NameServer.
#[derive(Debug)]
pub struct RoutePush {
    /// Locked on the blocking pool (a pass over every subscribed route may
    /// take a while); the runtime's workers only ever try it.
    hub: Mutex<Hub>,
    /// Connections closed while a pass held `hub`, whose subscriptions the
    /// next one drops.
    closed: Mutex<Vec<ConnId>>,
    /// Wakes [`run`] for a change the route table's generation does not
    /// show (an order-topic configuration put in the KV store).
    recheck: Notify,
    /// After the last pass: a subscriber has changes held back.
    behind: AtomicBool,
    /// After the last pass: keys nobody subscribes to are still followed.
    orphans: AtomicBool,
}

impl Default for RoutePush {
    fn default() -> Self {
        RoutePush::new()
    }
}

impl RoutePush {
    /// No subscriptions, a fresh instance number.
    pub fn new() -> RoutePush {
        RoutePush {
            hub: Mutex::new(Hub::new(instance_number())),
            closed: Mutex::new(Vec::new()),
            recheck: Notify::new(),
            behind: AtomicBool::new(false),
            orphans: AtomicBool::new(false),
        }
    }

    /// Asks [`run`] to recompute every subscribed route even though the
    /// route table did not change.
    pub fn recheck(&self) {
        self.recheck.notify_one();
    }

    /// Drops a closed connection's subscription, if it had one: at once
    /// when no pass holds the subscriptions, else by that pass's successor
    /// (the runtime's workers never wait for a pass). Only connections
    /// closed during a pass wait in the list, so churn cannot grow it.
    pub fn disconnected(&self, conn: ConnId) {
        match self.hub.try_lock() {
            Some(mut hub) => hub.remove_subscriber(conn),
            None => self.closed.lock().push(conn),
        }
    }

    /// The hub, with the subscriptions of closed connections dropped.
    fn lock_hub(&self) -> MutexGuard<'_, Hub> {
        let mut hub = self.hub.lock();
        for conn in std::mem::take(&mut *self.closed.lock()) {
            hub.remove_subscriber(conn);
        }
        // A subscription applied after its connection's close was noted
        // (the request waited in the pool) has no disconnect to come.
        hub.remove_closed();
        hub
    }

    /// One pass: every subscribed route brought up to date, held-back
    /// changes sent where there is room again.
    fn pass(&self, state: &Namesrv, force: bool) {
        let mut hub = self.lock_hub();
        hub.refresh(state, force);
        for _ in 0..hub.catch_up_behind(&state.limits) {
            state
                .metrics
                .refusals
                .refused(crate::metrics::refusal::ROUTE_PUSH_STALLED);
        }
        self.behind.store(hub.has_behind(), Ordering::Relaxed);
        self.orphans.store(hub.has_orphans(), Ordering::Relaxed);
    }
}

/// A number for this run of the NameServer: cursors carry it, so that a
/// cursor from another run (before a restart, or another NameServer) is
/// not taken for one of this run's.
fn instance_number() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    // Truncation keeps the fast-moving low bits, which is what differs.
    (nanos as u64) ^ (u64::from(std::process::id()) << 40)
}

/// WAYMARK_SUBSCRIBE_ROUTES: the topics join the connection's subscription;
/// every route owed (all of them, or those changed since `cursor`) is queued
/// on the connection before the response, which carries the new cursor
/// when nothing owed had to be held back.
pub fn subscribe(
    state: &Namesrv,
    conn: &ConnectionInfo,
    request: &RemotingCommand,
) -> HandlerResult {
    let header: SubscribeRoutesRequestHeader = request.header()?;
    let mut keys = Vec::new();
    for topic in split_topics(&header.topics) {
        // The looser check of registered topics: a broker named after its
        // host registers topics with dots, and they may be watched too.
        validate::registered_topic(topic, 0, 0).map_err(|error| {
            Error::new(
                ResponseCode::InvalidParameter,
                error.remark.unwrap_or_default(),
            )
        })?;
        keys.push(Key::Topic(topic.to_owned()));
    }
    if header.cluster {
        keys.push(Key::Cluster);
    }
    if keys.is_empty() {
        return Err(Error::new(
            ResponseCode::InvalidParameter,
            "topics is empty and cluster is not asked for: nothing to subscribe to",
        ));
    }
    let dialect = route_dialect(request.version, header.accept_standard_json_only);
    let cursor = header.cursor.as_deref();
    let outcome = {
        let mut hub = state.push.lock_hub();
        hub.refresh(state, false);
        let subscribed = hub.subscribe(state, conn.handle(), dialect, keys, cursor);
        state.push.behind.store(hub.has_behind(), Ordering::Relaxed);
        subscribed
    };
    if outcome.is_err() {
        state
            .metrics
            .refusals
            .refused(crate::metrics::refusal::ROUTE_SUBSCRIPTIONS);
    }
    match outcome {
        Ok(subscribed) => Ok(RemotingCommand::response_to(request, ResponseCode::Success)
            .with_header(&SubscribeRoutesResponseHeader {
                cursor: subscribed.cursor.map(|cursor| cursor.to_string()),
                seq: subscribed.seq,
            })),
        Err(Refusal::Subscribers(max)) => Err(Error::new(
            ResponseCode::SystemBusy,
            format!("{max} connections already subscribe to routes (maxRouteSubscribers); poll instead"),
        )),
        Err(Refusal::TopicsPerSubscriber(max)) => Err(Error::new(
            ResponseCode::InvalidParameter,
            format!("a connection may subscribe to at most {max} topics (maxTopicsPerRouteSubscriber)"),
        )),
        Err(Refusal::Entries(max)) => Err(Error::new(
            ResponseCode::SystemBusy,
            format!("the NameServer holds {max} topic subscriptions already (maxRouteSubscriptionEntries); poll instead"),
        )),
    }
}

/// WAYMARK_UNSUBSCRIBE_ROUTES: the topics (and cluster membership, if
/// asked) leave the connection's subscription. Topics it did not subscribe
/// to are ignored.
pub fn unsubscribe(
    state: &Namesrv,
    conn: &ConnectionInfo,
    request: &RemotingCommand,
) -> HandlerResult {
    let header: UnsubscribeRoutesRequestHeader = request.header()?;
    let mut keys: Vec<Key> = split_topics(&header.topics)
        .map(|topic| Key::Topic(topic.to_owned()))
        .collect();
    if header.cluster {
        keys.push(Key::Cluster);
    }
    let mut hub = state.push.lock_hub();
    hub.unsubscribe(conn.id(), &keys);
    state
        .push
        .orphans
        .store(hub.has_orphans(), Ordering::Relaxed);
    drop(hub);
    Ok(RemotingCommand::response_to(request, ResponseCode::Success))
}

/// Pushes route changes until aborted: woken by every route table write
/// that may change a route, by [`RoutePush::recheck`], and every
/// [`BEHIND_CHECK`] while a subscriber has changes held back.
pub async fn run(state: std::sync::Arc<Namesrv>) {
    loop {
        let behind = state.push.behind.load(Ordering::Relaxed);
        let orphans = state.push.orphans.load(Ordering::Relaxed);
        let force = tokio::select! {
            () = state.routes.changed() => false,
            () = state.push.recheck.notified() => true,
            () = tokio::time::sleep(BEHIND_CHECK), if behind => false,
            () = tokio::time::sleep(ORPHAN_CHECK), if orphans => false,
        };
        // Recomputing every subscribed route is work for the blocking pool,
        // not for the runtime's workers, which answer route queries.
        let for_pass = state.clone();
        let pass = tokio::task::spawn_blocking(move || for_pass.push.pass(&for_pass, force));
        if let Err(error) = pass.await {
            tracing::error!(%error, "route push pass failed");
        }
    }
}
