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
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, MutexGuard};
use rmq_ops::metrics::Refusals;
use rmq_protocol::headers::SubscribeRoutesResponseHeader;
use rmq_protocol::Dialect;
use rmq_transport::{ConnId, ConnectionHandle};
use rmq_wire::ResponseCode;
use tokio::sync::Notify;

pub use hub::Key;

use crate::answer::Answer;
use crate::config::SharedConfig;
use crate::error::{Error, HandlerResult};
use crate::kv::SharedKv;
use crate::limits::Limits;
use crate::metrics::refusal;
use crate::route::SharedRoutes;
use hub::{Hub, Refusal};

/// How often subscribers whose changes were coalesced are looked at again.
const BEHIND_CHECK: Duration = Duration::from_millis(50);

/// How often keys nobody subscribes to any more are looked at, to forget
/// those past their grace.
const ORPHAN_CHECK: Duration = Duration::from_secs(5);

/// What a pushed route is computed from, as GET_ROUTEINFO_BY_TOPIC computes
/// it: the route table, the order-topic configuration in the KV store, and
/// the options that change routes (`supportActingMaster`,
/// `orderMessageEnable`).
#[derive(Debug, Clone)]
pub struct Sources {
    /// The route table.
    pub routes: Arc<SharedRoutes>,
    /// The KV store.
    pub kv: Arc<SharedKv>,
    /// The configuration.
    pub config: Arc<SharedConfig>,
}

/// A route subscription as a client asked for it (WAYMARK_SUBSCRIBE_ROUTES),
/// checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    /// The topics, and cluster membership if asked for; never empty.
    pub keys: Vec<Key>,
    /// The JSON dialect of the routes pushed.
    pub dialect: Dialect,
    /// The cursor of an earlier subscription, as sent.
    pub cursor: Option<String>,
}

/// The subscriptions of one NameServer.
#[derive(Debug)]
pub struct RoutePush {
    sources: Sources,
    /// The route push bounds (`Limits`' route push keys).
    limits: Limits,
    /// Where stalled subscribers cut off are counted.
    refusals: Arc<Refusals>,
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

impl RoutePush {
    /// No subscriptions, a fresh instance number; routes computed from
    /// `sources`, within `limits`, stalled subscribers counted in `refusals`.
    pub fn new(sources: Sources, limits: Limits, refusals: Arc<Refusals>) -> RoutePush {
        RoutePush {
            sources,
            limits,
            refusals,
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
    fn pass(&self, force: bool) {
        let mut hub = self.lock_hub();
        hub.refresh(&self.sources, &self.limits, force);
        for _ in 0..hub.catch_up_behind(&self.limits) {
            self.refusals.refused(refusal::ROUTE_PUSH_STALLED);
        }
        self.behind.store(hub.has_behind(), Ordering::Relaxed);
        self.orphans.store(hub.has_orphans(), Ordering::Relaxed);
    }

    /// WAYMARK_SUBSCRIBE_ROUTES: the keys join the subscription of
    /// `subscriber`'s connection; every route owed (all of them, or those
    /// changed since the cursor) is queued on the connection before the
    /// answer, which carries the new cursor when nothing owed had to be held
    /// back.
    ///
    /// # Errors
    /// A subscription over a route push bound: SYSTEM_BUSY (the client
    /// polls instead) or INVALID_PARAMETER, naming the bound.
    pub fn subscribe(
        &self,
        subscriber: &ConnectionHandle,
        subscription: Subscription,
    ) -> HandlerResult {
        let Subscription {
            keys,
            dialect,
            cursor,
        } = subscription;
        let outcome = {
            let mut hub = self.lock_hub();
            hub.refresh(&self.sources, &self.limits, false);
            let subscribed = hub.subscribe(
                &self.sources,
                &self.limits,
                subscriber,
                dialect,
                keys,
                cursor.as_deref(),
            );
            self.behind.store(hub.has_behind(), Ordering::Relaxed);
            subscribed
        };
        let refused = match outcome {
            Ok(subscribed) => {
                return Ok(Answer::success().with_header(&SubscribeRoutesResponseHeader {
                    cursor: subscribed.cursor.map(|cursor| cursor.to_string()),
                    seq: subscribed.seq,
                }))
            }
            Err(Refusal::Subscribers(max)) => Error::new(
                ResponseCode::SystemBusy,
                format!("{max} connections already subscribe to routes (maxRouteSubscribers); poll instead"),
            ),
            Err(Refusal::TopicsPerSubscriber(max)) => Error::new(
                ResponseCode::InvalidParameter,
                format!("a connection may subscribe to at most {max} topics (maxTopicsPerRouteSubscriber)"),
            ),
            Err(Refusal::Entries(max)) => Error::new(
                ResponseCode::SystemBusy,
                format!("the NameServer holds {max} topic subscriptions already (maxRouteSubscriptionEntries); poll instead"),
            ),
        };
        Err(refused.counted_as(refusal::ROUTE_SUBSCRIPTIONS))
    }

    /// WAYMARK_UNSUBSCRIBE_ROUTES: `keys` leave the subscription of
    /// connection `conn`. Keys it did not subscribe to are ignored.
    pub fn unsubscribe(&self, conn: ConnId, keys: &[Key]) -> HandlerResult {
        let mut hub = self.lock_hub();
        hub.unsubscribe(conn, keys);
        self.orphans.store(hub.has_orphans(), Ordering::Relaxed);
        drop(hub);
        Ok(Answer::success())
    }
}

/// A number for this run of the NameServer: cursors carry it, so that a
/// cursor from another run (before a restart, or another NameServer) is
/// not taken for one of this run's. Read from the system clock, not the
/// server's [`WallClock`](crate::clock::WallClock): it is only ever compared
/// for equality, so a clock step does it no harm.
fn instance_number() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    // Truncation keeps the fast-moving low bits, which is what differs.
    (nanos as u64) ^ (u64::from(std::process::id()) << 40)
}

/// Pushes route changes until aborted: woken by every route table write
/// that may change a route, by [`RoutePush::recheck`], and every
/// [`BEHIND_CHECK`] while a subscriber has changes held back.
pub async fn run(push: Arc<RoutePush>) {
    loop {
        let behind = push.behind.load(Ordering::Relaxed);
        let orphans = push.orphans.load(Ordering::Relaxed);
        let force = tokio::select! {
            () = push.sources.routes.changed() => false,
            () = push.recheck.notified() => true,
            () = tokio::time::sleep(BEHIND_CHECK), if behind => false,
            () = tokio::time::sleep(ORPHAN_CHECK), if orphans => false,
        };
        // Recomputing every subscribed route is work for the blocking pool,
        // not for the runtime's workers, which answer route queries.
        let for_pass = push.clone();
        let pass = tokio::task::spawn_blocking(move || for_pass.pass(force));
        if let Err(error) = pass.await {
            tracing::error!(%error, "route push pass failed");
        }
    }
}
