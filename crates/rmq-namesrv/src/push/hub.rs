//! The subscriptions and what each subscriber has been sent: which routes
//! are followed, the version of each one's last change, and for each
//! subscriber its topics, its push sequence and the changes held back while
//! it does not read.
//!
//! The rule that makes a reconnect lose nothing: a push carries a cursor
//! only when the subscriber has been sent every change of its routes up to
//! that cursor's version (a live change sent in order; the `synced` push
//! after held-back routes were sent; the subscribe response when nothing
//! owed was held back). Routes sent without one (owed at subscription,
//! held back) carry their latest state, so the next cursor covers them.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::{Duration, Instant};

use bytes::Bytes;
use rmq_protocol::headers::RouteChangedHeader;
use rmq_protocol::route_push::{Cursor, PushKind};
use rmq_protocol::{ClusterInfo, Dialect, JavaJson, TopicRouteData};
use rmq_transport::{ConnId, ConnectionHandle};
use rmq_wire::{RemotingCommand, RequestCode};

use super::Sources;
use crate::kv::ORDER_TOPIC_CONFIG;
use crate::limits::Limits;

/// What can be subscribed to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// Cluster membership (GET_BROKER_CLUSTER_INFO).
    Cluster,
    /// One topic's route (GET_ROUTEINFO_BY_TOPIC).
    Topic(String),
}

/// The answer the NameServer would give for a key now.
#[derive(Debug, PartialEq)]
enum State {
    Route(TopicRouteData),
    Gone,
    Cluster(ClusterInfo),
}

/// A key some connection subscribes to.
#[derive(Debug)]
struct Tracked {
    state: State,
    /// The version of the last change of `state`.
    changed_at: u64,
    /// `state` encoded, per dialect, once some subscriber needed it.
    bodies: [Option<Bytes>; 2],
    subscribers: HashSet<ConnId>,
    /// Since when nobody subscribes to it. It is kept up to date for
    /// [`ORPHAN_GRACE`], so that a subscriber that reconnects with its
    /// cursor is sent only what changed, not every route again.
    orphaned_since: Option<Instant>,
}

/// Keys whose routes are computed per hold of the route table's read lock.
const KEYS_PER_LOCK: usize = 1_000;

/// How long a key nobody subscribes to any more is still followed.
const ORPHAN_GRACE: Duration = Duration::from_secs(60);

/// One subscribing connection.
#[derive(Debug)]
struct Subscriber {
    handle: ConnectionHandle,
    dialect: Dialect,
    keys: HashSet<Key>,
    /// The sequence number of the last push sent.
    seq: i64,
    /// Keys whose latest state is owed but held back: the subscriber's
    /// pushes queued and unread are over budget.
    behind: BTreeSet<Key>,
    /// Since when `behind` has not been empty.
    behind_since: Option<Instant>,
}

/// What a subscription request is answered.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Subscribed {
    /// The subscriber's cursor, when nothing owed was held back.
    pub(super) cursor: Option<Cursor>,
    /// The sequence number of the last push queued before the answer.
    pub(super) seq: i64,
}

/// Which bound refused a subscription; each carries the limit.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    /// `maxRouteSubscribers`.
    Subscribers(usize),
    /// `maxTopicsPerRouteSubscriber`.
    TopicsPerSubscriber(usize),
    /// `maxRouteSubscriptionEntries`.
    Entries(usize),
}

/// All subscriptions of one NameServer.
#[derive(Debug)]
pub(super) struct Hub {
    instance: u64,
    /// The version of the latest change of any tracked key.
    version: u64,
    /// The route table's generation the tracked states were computed at.
    seen_generation: Option<u64>,
    tracked: HashMap<Key, Tracked>,
    subscribers: HashMap<ConnId, Subscriber>,
    /// Keys subscribed, summed over subscribers.
    entries: usize,
}

impl Hub {
    pub(super) fn new(instance: u64) -> Hub {
        Hub {
            instance,
            version: 0,
            seen_generation: None,
            tracked: HashMap::new(),
            subscribers: HashMap::new(),
            entries: 0,
        }
    }

    /// Whether some subscriber has changes held back.
    pub(super) fn has_behind(&self) -> bool {
        self.subscribers.values().any(|sub| !sub.behind.is_empty())
    }

    fn cursor(&self) -> Cursor {
        Cursor {
            instance: self.instance,
            version: self.version,
        }
    }

    /// Recomputes every tracked key (unless the route table has not been
    /// written since the last time and `force` is false) and pushes each
    /// changed one to its subscribers.
    pub(super) fn refresh(&mut self, sources: &Sources, limits: &Limits, force: bool) {
        self.forget_orphans(limits.max_route_subscription_entries);
        if self.tracked.is_empty()
            || (!force && self.seen_generation == Some(sources.routes.changes()))
        {
            return;
        }
        let keys: Vec<Key> = self.tracked.keys().cloned().collect();
        let (generation, fresh) = current_states(sources, &keys);
        self.seen_generation = Some(generation);
        let mut changed = Vec::new();
        for (key, now) in keys.into_iter().zip(fresh) {
            let Some(tracked) = self.tracked.get_mut(&key) else {
                continue;
            };
            if tracked.state != now {
                self.version += 1;
                tracked.state = now;
                tracked.changed_at = self.version;
                tracked.bodies = [None, None];
                changed.push(key);
            }
        }
        if changed.is_empty() {
            return;
        }
        let mut budget = Budget::measure(&self.subscribers, limits);
        for key in changed {
            let Some(tracked) = self.tracked.get(&key) else {
                continue;
            };
            let version = tracked.changed_at;
            let mut conns: Vec<ConnId> = tracked.subscribers.iter().copied().collect();
            conns.sort_unstable_by_key(|conn| conn.0);
            for conn in conns {
                self.offer(conn, &key, Some(version), &mut budget);
            }
        }
    }

    /// Adds `keys` to the subscription of `handle`'s connection and sends
    /// what it is owed: every key, or with a cursor of this run those
    /// changed after it.
    pub(super) fn subscribe(
        &mut self,
        sources: &Sources,
        limits: &Limits,
        handle: &ConnectionHandle,
        dialect: Dialect,
        mut keys: Vec<Key>,
        cursor: Option<&str>,
    ) -> Result<Subscribed, Refusal> {
        keys.sort_unstable();
        keys.dedup();
        let conn = handle.id();
        let existing = self.subscribers.get(&conn);
        if existing.is_none() && self.subscribers.len() >= limits.max_route_subscribers {
            return Err(Refusal::Subscribers(limits.max_route_subscribers));
        }
        let added = keys
            .iter()
            .filter(|key| existing.is_none_or(|sub| !sub.keys.contains(key)))
            .count();
        let topics = existing.map_or(0, |sub| sub.keys.len()) + added;
        if topics > limits.max_topics_per_route_subscriber {
            return Err(Refusal::TopicsPerSubscriber(
                limits.max_topics_per_route_subscriber,
            ));
        }
        if self.entries + added > limits.max_route_subscription_entries {
            return Err(Refusal::Entries(limits.max_route_subscription_entries));
        }
        let since = cursor
            .and_then(Cursor::parse)
            .filter(|cursor| cursor.instance == self.instance && cursor.version <= self.version)
            .map(|cursor| cursor.version);

        let untracked: Vec<Key> = keys
            .iter()
            .filter(|key| !self.tracked.contains_key(key))
            .cloned()
            .collect();
        if !untracked.is_empty() {
            let (_, states) = current_states(sources, &untracked);
            for (key, now) in untracked.into_iter().zip(states) {
                self.version += 1;
                self.tracked.insert(
                    key,
                    Tracked {
                        state: now,
                        changed_at: self.version,
                        bodies: [None, None],
                        subscribers: HashSet::new(),
                        orphaned_since: None,
                    },
                );
            }
        }
        let sub = self.subscribers.entry(conn).or_insert_with(|| Subscriber {
            handle: handle.clone(),
            dialect,
            keys: HashSet::new(),
            seq: 0,
            behind: BTreeSet::new(),
            behind_since: None,
        });
        sub.dialect = dialect;
        for key in &keys {
            if sub.keys.insert(key.clone()) {
                self.entries += 1;
                if let Some(tracked) = self.tracked.get_mut(key) {
                    tracked.subscribers.insert(conn);
                    tracked.orphaned_since = None;
                }
            }
        }
        let mut budget = Budget::measure(&self.subscribers, limits);
        for key in &keys {
            let owed = self
                .tracked
                .get(key)
                .is_some_and(|tracked| since.is_none_or(|since| tracked.changed_at > since));
            if owed {
                self.offer(conn, key, None, &mut budget);
            }
        }
        let (caught_up, seq) = self
            .subscribers
            .get(&conn)
            .map_or((false, 0), |sub| (sub.behind.is_empty(), sub.seq));
        Ok(Subscribed {
            cursor: caught_up.then(|| self.cursor()),
            seq,
        })
    }

    /// Removes `keys` from `conn`'s subscription; a connection left with
    /// none is no longer a subscriber.
    pub(super) fn unsubscribe(&mut self, conn: ConnId, keys: &[Key]) {
        let Some(sub) = self.subscribers.get_mut(&conn) else {
            return;
        };
        let mut removed = Vec::new();
        for key in keys {
            if sub.keys.remove(key) {
                sub.behind.remove(key);
                removed.push(key.clone());
            }
        }
        if sub.keys.is_empty() {
            self.subscribers.remove(&conn);
        }
        for key in removed {
            self.untrack(&key, conn);
        }
    }

    pub(super) fn remove_subscriber(&mut self, conn: ConnId) {
        if let Some(sub) = self.subscribers.remove(&conn) {
            for key in sub.keys {
                self.untrack(&key, conn);
            }
        }
    }

    /// Drops the subscriptions of connections that have closed.
    pub(super) fn remove_closed(&mut self) {
        let closed: Vec<ConnId> = self
            .subscribers
            .iter()
            .filter(|(_, sub)| sub.handle.is_closed())
            .map(|(conn, _)| *conn)
            .collect();
        for conn in closed {
            self.remove_subscriber(conn);
        }
    }

    fn untrack(&mut self, key: &Key, conn: ConnId) {
        self.entries = self.entries.saturating_sub(1);
        if let Some(tracked) = self.tracked.get_mut(key) {
            tracked.subscribers.remove(&conn);
            if tracked.subscribers.is_empty() {
                tracked.orphaned_since = Some(Instant::now());
            }
        }
    }

    /// Stops following keys nobody has subscribed to for [`ORPHAN_GRACE`],
    /// and every orphan once more keys are followed than `max` (the bound
    /// on subscriptions, so orphans never cost more than subscriptions do).
    fn forget_orphans(&mut self, max: usize) {
        let crowded = self.tracked.len() > max;
        self.tracked.retain(|_, tracked| {
            tracked
                .orphaned_since
                .is_none_or(|since| !crowded && since.elapsed() < ORPHAN_GRACE)
        });
    }

    /// Whether keys nobody subscribes to are still followed.
    pub(super) fn has_orphans(&self) -> bool {
        self.tracked
            .values()
            .any(|tracked| tracked.orphaned_since.is_some())
    }

    /// Sends held-back routes to subscribers that have read enough since,
    /// then a `synced` push with their new cursor; disconnects those
    /// behind for longer than `routePushStallSeconds` and returns how many.
    pub(super) fn catch_up_behind(&mut self, limits: &Limits) -> usize {
        let stall = Duration::from_secs(limits.route_push_stall_seconds as u64);
        let behind: Vec<ConnId> = self
            .subscribers
            .iter()
            .filter(|(_, sub)| !sub.behind.is_empty())
            .map(|(conn, _)| *conn)
            .collect();
        if behind.is_empty() {
            return 0;
        }
        let mut stalled = 0;
        let mut budget = Budget::measure(&self.subscribers, limits);
        let cursor = self.cursor();
        for conn in behind {
            let Some(sub) = self.subscribers.get_mut(&conn) else {
                continue;
            };
            if sub
                .behind_since
                .is_some_and(|since| since.elapsed() > stall)
            {
                tracing::warn!(%conn, held_back = sub.behind.len(), stall_seconds = stall.as_secs(),
                    "route subscriber has not read its pushes, disconnecting (routePushStallSeconds)");
                sub.handle.close();
                self.remove_subscriber(conn);
                stalled += 1;
                continue;
            }
            while budget.has_room(sub) {
                let Some(key) = sub.behind.pop_first() else {
                    break;
                };
                if let Some(tracked) = self.tracked.get_mut(&key) {
                    let frame = push_frame(tracked, &key, sub, None);
                    budget.spend(&frame);
                    let _ = sub.handle.send(frame);
                }
            }
            if sub.behind.is_empty() {
                sub.behind_since = None;
                let frame = synced_frame(sub, cursor);
                let _ = sub.handle.send(frame);
            }
        }
        stalled
    }

    /// Sends `key`'s current state to `conn`, carrying a cursor at
    /// `version` when given (a live change), or holds it back when the
    /// subscriber is behind or over budget.
    fn offer(&mut self, conn: ConnId, key: &Key, version: Option<u64>, budget: &mut Budget) {
        let Some(sub) = self.subscribers.get_mut(&conn) else {
            return;
        };
        let Some(tracked) = self.tracked.get_mut(key) else {
            return;
        };
        if !sub.behind.is_empty() || !budget.has_room(sub) {
            sub.behind.insert(key.clone());
            sub.behind_since.get_or_insert_with(Instant::now);
            return;
        }
        let cursor = version.map(|version| Cursor {
            instance: self.instance,
            version,
        });
        let frame = push_frame(tracked, key, sub, cursor);
        budget.spend(&frame);
        // A closed connection's subscription goes with its disconnect.
        let _ = sub.handle.send(frame);
    }
}

/// Bytes of pushes subscribers have not read, against the route push keys.
struct Budget {
    per_subscriber: usize,
    total_limit: usize,
    total: usize,
}

impl Budget {
    fn measure(subscribers: &HashMap<ConnId, Subscriber>, limits: &Limits) -> Budget {
        Budget {
            per_subscriber: limits.route_push_queue_bytes_per_subscriber,
            total_limit: limits.route_push_queue_bytes,
            total: subscribers
                .values()
                .map(|sub| sub.handle.queued_bytes())
                .sum(),
        }
    }

    fn has_room(&self, sub: &Subscriber) -> bool {
        self.total < self.total_limit && sub.handle.queued_bytes() < self.per_subscriber
    }

    fn spend(&mut self, frame: &RemotingCommand) {
        self.total += frame.body.as_ref().map_or(0, Bytes::len) + 256;
    }
}

/// The WAYMARK_ROUTE_CHANGED push of `key`'s state to `sub`.
fn push_frame(
    tracked: &mut Tracked,
    key: &Key,
    sub: &mut Subscriber,
    cursor: Option<Cursor>,
) -> RemotingCommand {
    let slot = match sub.dialect {
        Dialect::Default => 0,
        Dialect::Standard => 1,
    };
    let (kind, body) = match &tracked.state {
        State::Route(route) => {
            let body = tracked.bodies[slot]
                .get_or_insert_with(|| Bytes::from(route.to_json(sub.dialect)))
                .clone();
            (PushKind::Route, Some(body))
        }
        State::Gone => (PushKind::Gone, None),
        // Always the default dialect, as GET_BROKER_CLUSTER_INFO.
        State::Cluster(info) => {
            let body = tracked.bodies[0]
                .get_or_insert_with(|| Bytes::from(info.to_json(Dialect::Default)))
                .clone();
            (PushKind::Cluster, Some(body))
        }
    };
    let topic = match key {
        Key::Topic(topic) => Some(topic.clone()),
        Key::Cluster => None,
    };
    let frame = frame(sub, kind, topic, cursor);
    match body {
        Some(body) => frame.with_body(body),
        None => frame,
    }
}

fn synced_frame(sub: &mut Subscriber, cursor: Cursor) -> RemotingCommand {
    frame(sub, PushKind::Synced, None, Some(cursor))
}

fn frame(
    sub: &mut Subscriber,
    kind: PushKind,
    topic: Option<String>,
    cursor: Option<Cursor>,
) -> RemotingCommand {
    sub.seq += 1;
    let header = RouteChangedHeader {
        seq: sub.seq,
        kind: kind.as_str().to_owned(),
        topic,
        cursor: cursor.map(|cursor| cursor.to_string()),
    };
    // The opaque only helps reading captures; subscribers go by `seq`.
    let opaque = i32::try_from(sub.seq).unwrap_or(i32::MAX);
    RemotingCommand::request(RequestCode::WaymarkRouteChanged, opaque)
        .with_header(&header)
        .oneway()
}

/// What GET_ROUTEINFO_BY_TOPIC and GET_BROKER_CLUSTER_INFO would answer for
/// `keys` now (the route as a client without zone filtering asks for it),
/// and the route table's generation they were read at.
fn current_states(sources: &Sources, keys: &[Key]) -> (u64, Vec<State>) {
    let (acting_master, order_enabled) = {
        let config = sources.config.read();
        (config.support_acting_master, config.order_message_enable)
    };
    let mut generation = None;
    let mut states = Vec::with_capacity(keys.len());
    // The read lock is taken per slice: a writer waiting for it would hold
    // back route queries for as long as all keys took. Slices may see
    // different writes; the generation of the first is kept, so the next
    // refresh computes again and every key ends at the latest table.
    for slice in keys.chunks(KEYS_PER_LOCK) {
        let table = sources.routes.read();
        // Read under the lock: every write counted in it has completed.
        generation.get_or_insert_with(|| sources.routes.changes());
        states.extend(slice.iter().map(|key| {
            match key {
                Key::Cluster => State::Cluster(table.cluster_info()),
                Key::Topic(topic) => table
                    .topic_route(topic, acting_master)
                    .map_or(State::Gone, State::Route),
            }
        }));
    }
    let generation = generation.unwrap_or_else(|| sources.routes.changes());
    if order_enabled {
        let kv = sources.kv.read();
        for (key, now) in keys.iter().zip(&mut states) {
            if let (Key::Topic(topic), State::Route(route)) = (key, now) {
                route.order_topic_conf = kv.get(ORDER_TOPIC_CONFIG, topic).map(str::to_owned);
            }
        }
    }
    (generation, states)
}
