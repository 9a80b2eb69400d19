//! The route table as the server shares it: a read/write lock with a
//! generation counter, and a cache of encoded GET_ROUTEINFO_BY_TOPIC bodies
//! keyed by that generation.
//!
//! Encoding a route is most of the cost of answering a route query (JSON of
//! every broker and queue of the topic, in one of two dialects). Routes change
//! only when a broker registers, leaves or has its permissions changed, while
//! clients ask for them all the time, so the encoded body is kept until the
//! table changes. Any write lock taken through [`SharedRoutes::write`] bumps
//! the generation, and a cached body is served only while its generation is
//! current, so a cache hit is always what encoding the table would give now.
//! A write that cannot change a route (a heartbeat) uses
//! [`SharedRoutes::write_liveness`] and keeps the cache.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use rmq_protocol::{Dialect, TopicConfig};
use tokio::sync::Notify;

use super::register::{
    BrokerRegistration, RegisterError, RegisterOutcome, RegistrationSource, RouteInputs,
    TopicChanges,
};
use super::{BrokerKey, HeldBody, Millis, RouteTable, MASTER_ID};

/// Topics a registration writes per hold of the write lock. Route queries
/// wait for the lock on the runtime's workers; a 100,000-topic registration
/// held it for 150 ms in one piece, a slice of this many takes a few.
const TOPICS_PER_LOCK: usize = 2_000;

/// The route table behind its lock, with the encoded-route cache.
#[derive(Debug, Default)]
pub struct SharedRoutes {
    table: RwLock<RouteTable>,
    /// Bumped, under the write lock, by every write: cached bodies are of
    /// one generation, so the cache holds only routes asked for since the
    /// table was last written, not every topic's.
    generation: AtomicU64,
    /// Bumped, under the write lock, by every write that may change a
    /// route or the cluster info: the route snapshot's writer and route
    /// push skip a count they have seen ([`changes`](Self::changes)).
    route_changes: AtomicU64,
    bodies: RwLock<CachedBodies>,
    /// The GET_ALL_TOPIC_LIST_FROM_NAMESERVER body and its generation: with
    /// 100,000 topics it is megabytes of JSON, and a client asking for it in
    /// a loop would otherwise keep the runtime's workers encoding.
    all_topics: RwLock<Option<(u64, Bytes)>>,
    /// Woken by every write that may change a route, for route push.
    changed: Notify,
    /// Seeds the fingerprints of registrations' topic lists (random per
    /// process, so that no list can be made to match another's).
    fingerprints: foldhash::quality::RandomState,
}

/// Encoded bodies of one generation of the table.
#[derive(Debug, Default)]
struct CachedBodies {
    generation: u64,
    by_topic: HashMap<String, [Option<Bytes>; VARIANTS]>,
}

/// One body per dialect × acting-master setting.
const VARIANTS: usize = 4;

/// What, besides the table, decides a route body's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteVariant {
    /// The JSON dialect the client qualified for.
    pub dialect: Dialect,
    /// `supportActingMaster` at the time of the query.
    pub acting_master: bool,
}

impl RouteVariant {
    fn slot(self) -> usize {
        let dialect = match self.dialect {
            Dialect::Default => 0,
            Dialect::Standard => 1,
        };
        dialect * 2 + usize::from(self.acting_master)
    }
}

impl SharedRoutes {
    /// An empty table.
    pub fn new() -> Self {
        SharedRoutes::default()
    }

    /// Shared access to the table.
    pub fn read(&self) -> RwLockReadGuard<'_, RouteTable> {
        self.table.read()
    }

    /// Shared access for a short read on the runtime's workers (a route
    /// query copying one route out, a pull answer copying one broker, the
    /// expiry scan): every such read goes through here.
    ///
    /// Unlike [`read`](Self::read), this does not queue behind a writer
    /// that waits while others read. A long reader (the route snapshot's
    /// writer copies the whole table once a second, tens of milliseconds
    /// at a million entries, more at its low priority) keeps a
    /// registration waiting, and with a plain read the worker, and every
    /// route query queued on it, would then wait behind that registration
    /// too. A waiting writer still gets the lock as soon as the readers in
    /// it leave: a read cannot enter a lock nobody holds while a writer
    /// waits, and each holds it for microseconds.
    pub fn read_briefly(&self) -> RwLockReadGuard<'_, RouteTable> {
        self.table.read_recursive()
    }

    /// How many writes that may change a route the table has had: equal
    /// counts mean equal routes (the route snapshot's writer skips a tick
    /// on it).
    pub fn changes(&self) -> u64 {
        self.route_changes.load(Ordering::Acquire)
    }

    /// Exclusive access to the table; cached route bodies become stale.
    pub fn write(&self) -> RwLockWriteGuard<'_, RouteTable> {
        let guard = self.table.write();
        self.count_change();
        guard
    }

    /// Counts a write that may have changed a route: called with the write
    /// lock held, so a reader that saw the old count saw the old table.
    fn count_change(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.count_route_change();
    }

    fn count_route_change(&self) {
        self.route_changes.fetch_add(1, Ordering::AcqRel);
        // The waiter reads the table under the read lock, so it sees this
        // write once the guard is dropped.
        self.changed.notify_one();
    }

    /// Resolves after a write that may have changed a route (one made
    /// while nobody waited counts, so none is missed between two waits).
    /// One waiter: route push.
    pub async fn changed(&self) {
        self.changed.notified().await;
    }

    /// Exclusive access for a write that only refreshes liveness timestamps
    /// and so cannot change any route; cached bodies stay valid.
    pub fn write_liveness(&self) -> RwLockWriteGuard<'_, RouteTable> {
        self.table.write()
    }

    /// The encoded route of `topic`, when one is cached for the current table.
    pub fn cached_body(&self, topic: &str, variant: RouteVariant) -> Option<Bytes> {
        let current = self.generation.load(Ordering::Acquire);
        let bodies = self.bodies.read();
        if bodies.generation != current {
            return None;
        }
        bodies.by_topic.get(topic)?[variant.slot()].clone()
    }

    /// REGISTER_BROKER, with the write lock held only for what changes.
    ///
    /// A master's topics are first compared with the table under
    /// the read lock ([`RouteTable::topic_changes`]), where registrations of
    /// different brokers run side by side: a broker re-registering its
    /// topics unchanged, as it does every 30 s and with every new
    /// DataVersion, differs in none, and the write lock then covers only
    /// the broker's part ([`RouteTable::begin_registration`]). Nor is the
    /// comparison needed when the broker's last registration sent the same
    /// list (a [`fingerprint`](Self::fingerprint) of it), left the table
    /// holding it as sent, and nothing wrote the topic map since
    /// ([`RouteTable::holds_topics`]); nor, for a body that repeats the
    /// broker's last one but for its DataVersion, the decoding
    /// ([`register_repeated`](Self::register_repeated)). The entries
    /// that differ are written [`TOPICS_PER_LOCK`] at a time, the first
    /// slice with the broker's part, so that route queries are answered in
    /// between; a registration of at most that many topics is one hold of
    /// the lock, as atomic as Java's. Each topic's route changes at once; a
    /// large registration's topics appear (or change) over a few
    /// milliseconds, and should the broker register again or be
    /// unregistered meanwhile, the rest are not written.
    ///
    /// Should another write reach the topic map between the comparison and
    /// a slice ([`TopicWork::may_use`]), the comparison no longer tells
    /// which entries are as the registration would write them, and the
    /// registration's remaining topics are written whole, slice by slice.
    ///
    /// `notify_min_id` (`notifyMinBrokerIdChanged`) has a registration that
    /// lowers its group's smallest broker id return the notifications of
    /// the group; `delete_missing_topics` is
    /// `deleteTopicWithBrokerRegistration`.
    ///
    /// # Errors
    /// [`RegisterError::SingleTopicBeforeFullRegistration`]: a one-topic
    /// registration of a member not yet registered, refused as Java refuses
    /// an incremental registration that overtook the broker's first full one.
    pub fn register_broker(
        &self,
        reg: BrokerRegistration,
        now: Millis,
        notify_min_id: bool,
        delete_missing_topics: bool,
    ) -> Result<RegisterOutcome, RegisterError> {
        self.register_broker_from_body(reg, None, now, notify_min_id, delete_missing_topics)
    }

    /// [`register_broker`](Self::register_broker) of a registration decoded
    /// from a body of fingerprint `body` (`crate::request::RepeatedBody`):
    /// should the table take its topic list as sent, it notes the body too,
    /// for [`register_repeated`](Self::register_repeated) to recognise the
    /// next registration repeating it.
    ///
    /// # Errors
    /// As [`register_broker`](Self::register_broker).
    pub fn register_broker_from_body(
        &self,
        reg: BrokerRegistration,
        body: Option<u128>,
        now: Millis,
        notify_min_id: bool,
        delete_missing_topics: bool,
    ) -> Result<RegisterOutcome, RegisterError> {
        self.register(
            reg,
            body,
            now,
            notify_min_id,
            delete_missing_topics,
            &RegistrationSource::Direct,
        )
    }

    /// REGISTER_BROKER of a master whose body repeats, but for its
    /// DataVersion, the body of fingerprint `body` its last registration
    /// sent, with `reg` carrying the request's header and the body's
    /// DataVersion and filter servers but no topics. Applied as
    /// [`register_broker`](Self::register_broker) would apply the decoded
    /// body, with the same outcome, in one hold of the write lock: the
    /// broker's part is written by the same code, and the topics need no
    /// write, since the table holds them as that body sent them
    /// ([`RouteTable::held_body`]) and the broker is its group's master at
    /// that address, so no topic is written as new.
    ///
    /// `None`, having changed nothing, unless all of that holds, the body
    /// lists at most `max_topics` topics (as decoding it would check), and
    /// topics missing from it are not dropped
    /// (`deleteTopicWithBrokerRegistration`, which needs the list): then
    /// the body is to be decoded and registered in full. `Some` also gives
    /// how many topics the body lists.
    ///
    /// # Errors
    /// As [`register_broker`](Self::register_broker).
    pub fn register_repeated(
        &self,
        reg: &BrokerRegistration,
        body: u128,
        max_topics: usize,
        now: Millis,
        notify_min_id: bool,
        delete_missing_topics: bool,
    ) -> Option<Result<(RegisterOutcome, usize), RegisterError>> {
        if reg.broker_id != MASTER_ID
            || delete_missing_topics
            || !reg.mappings.is_empty()
            || !reg.topic_configs.is_empty()
        {
            return None;
        }
        let key = BrokerKey::new(&reg.cluster, &reg.broker_addr);
        let held = |table: &RouteTable| {
            table
                .held_body(&key, &reg.broker_name, body)
                .filter(|held| held.body.is_some_and(|body| body.topics <= max_topics))
        };
        // Asked first under the read lock: a registration that does not
        // repeat its last body leaves the write lock (and the cached
        // routes it drops) to the full registration.
        held(&self.read())?;
        let table = self.table.write();
        let held = held(&table)?;
        let mut table = RegistrationHold::holding(self, table, reg);
        let outcome = table.begin_registration_from(
            reg,
            now,
            notify_min_id,
            delete_missing_topics,
            &RegistrationSource::Direct,
        );
        Some(outcome.map(|(outcome, work)| {
            if let Some(work) = work {
                table.record_held_topics(&work, held.fingerprint, held.body);
            }
            (outcome, held.body.map_or(0, |body| body.topics))
        }))
    }

    /// A registration pulled from `from`, another NameServer of the cluster
    /// that holds the broker directly: applied as
    /// [`register_broker`](Self::register_broker) applies one, as relayed,
    /// unless the broker is held here directly
    /// ([`RegisterOutcome::kept_direct`]). Notifies nobody; the topics it
    /// no longer lists leave (the pull carries the holder's whole list).
    ///
    /// # Errors
    /// As [`RouteTable::register_broker`].
    pub fn register_relayed(
        &self,
        reg: BrokerRegistration,
        from: Arc<str>,
        now: Millis,
    ) -> Result<RegisterOutcome, RegisterError> {
        self.register(
            reg,
            None,
            now,
            false,
            true,
            &RegistrationSource::Relayed { from },
        )
    }

    fn register(
        &self,
        mut reg: BrokerRegistration,
        body: Option<u128>,
        now: Millis,
        notify_min_id: bool,
        delete_missing_topics: bool,
        source: &RegistrationSource,
    ) -> Result<RegisterOutcome, RegisterError> {
        // Only a master's topics are known to make routes before its
        // broker's part is written: a slave's make them only as the prime
        // slave of a group without master, which is decided there. A slave's
        // list is not compared (in a master/slave group it is never
        // written), and is written whole in the rare case it applies.
        let compared = (reg.broker_id == MASTER_ID).then(|| {
            let fingerprint = self.fingerprint(&reg.broker_name, &reg.topic_configs);
            let key = BrokerKey::new(&reg.cluster, &reg.broker_addr);
            let table = self.read();
            let changes = if table.holds_topics(&key, fingerprint) {
                TopicChanges::none(table.topic_edits())
            } else {
                table.topic_changes(&reg.broker_name, &reg.topic_configs)
            };
            (fingerprint, changes)
        });
        let mut table = RegistrationHold::first(self, &reg);
        let none_to_drop = table.none_to_drop(&reg, compared.as_ref().map(|c| c.0), source);
        let (outcome, work) = table.begin_registration_from(
            &reg,
            now,
            notify_min_id,
            delete_missing_topics,
            source,
        )?;
        let Some(work) = work else {
            return Ok(outcome);
        };
        let topics = std::mem::take(&mut reg.topic_configs);
        if !work.applies() {
            return Ok(outcome);
        }

        // Positions before `settled` are written, or were found as they
        // would be written with no write to the topic map since.
        let mut settled = 0;
        let mut as_sent = work.writes_as_sent();
        let usable = compared
            .as_ref()
            .filter(|(_, changes)| work.may_use(changes, table.topic_edits()));
        if let Some((_, changes)) = usable {
            as_sent |= changes.positions().is_empty();
            table.reserve_topics(changes.new_topics());
            let mut slices = changes.positions().chunks(TOPICS_PER_LOCK);
            settled = topics.len();
            while let Some(slice) = slices.next() {
                table.apply_topic_changes(&work, &topics, slice);
                if slices.len() == 0 {
                    break;
                }
                let edits = table.topic_edits();
                drop(table);
                table = RegistrationHold::changed(self);
                if table.topic_edits() != edits {
                    settled = slice.last().map_or(0, |last| last + 1);
                    break;
                }
            }
        } else {
            let missing_at_most = topics.len().saturating_sub(table.topic_count());
            table.reserve_topics(missing_at_most);
        }
        let mut rest = topics[settled..].chunks(TOPICS_PER_LOCK).peekable();
        while let Some(slice) = rest.next() {
            table.apply_topics(&work, slice);
            if rest.peek().is_some() {
                drop(table);
                table = RegistrationHold::changed(self);
            }
        }
        if let Some((fingerprint, _)) = compared.as_ref().filter(|_| as_sent) {
            let body = body.map(|fingerprint| HeldBody {
                fingerprint,
                topics: topics.len(),
            });
            table.record_held_topics(&work, *fingerprint, body);
        }

        if none_to_drop {
            return Ok(outcome);
        }
        if topics.len() <= TOPICS_PER_LOCK {
            table.finish_topics(&work, &topics);
            return Ok(outcome);
        }
        drop(table);
        if !work.drops_missing() {
            return Ok(outcome);
        }
        let keep = work.keep(&topics);
        let gone = self.read().topics_to_drop(&work, &keep);
        for slice in gone.chunks(TOPICS_PER_LOCK) {
            self.write().drop_topics(&work, slice);
        }
        Ok(outcome)
    }

    /// A 64-bit fingerprint of a registration's broker name and topic list
    /// (each topic's name and numbers, in order). Equal fingerprints are
    /// taken for equal lists ([`RouteTable::holds_topics`]): a registration
    /// whose list matched another by chance (about one in 2^64) would leave
    /// its changed entries unwritten until the topic map is next written.
    fn fingerprint(&self, broker_name: &str, topics: &[TopicConfig]) -> u64 {
        let mut hasher = self.fingerprints.build_hasher();
        broker_name.hash(&mut hasher);
        topics.len().hash(&mut hasher);
        for tc in topics {
            tc.topic_name.hash(&mut hasher);
            hasher.write_i32(tc.read_queue_nums);
            hasher.write_i32(tc.write_queue_nums);
            hasher.write_i32(tc.perm);
            hasher.write_i32(tc.topic_sys_flag);
        }
        hasher.finish()
    }

    /// The encoded list of every topic: copied out with `find` under the
    /// table's read lock and encoded with `encode` after it, only when the
    /// table changed since the last time.
    pub fn all_topics_body<R>(
        &self,
        find: impl FnOnce(&RouteTable) -> R,
        encode: impl FnOnce(R) -> Bytes,
    ) -> Bytes {
        let current = self.generation.load(Ordering::Acquire);
        if let Some((generation, body)) = &*self.all_topics.read() {
            if *generation == current {
                return body.clone();
            }
        }
        let (found, generation) = {
            let table = self.table.read();
            let generation = self.generation.load(Ordering::Acquire);
            (find(&table), generation)
        };
        let body = encode(found);
        let mut cached = self.all_topics.write();
        if cached.as_ref().is_none_or(|(held, _)| *held < generation) {
            *cached = Some((generation, body.clone()));
        }
        body
    }

    /// Finds `topic`'s route with `find` under the table's read lock
    /// ([`read_briefly`](Self::read_briefly)), encodes it with `encode`
    /// after the lock is released, and caches the result for the table's
    /// generation at the time of the read. `None` when the topic has no route.
    pub fn encode_and_cache<R>(
        &self,
        topic: &str,
        variant: RouteVariant,
        find: impl FnOnce(&RouteTable) -> Option<R>,
        encode: impl FnOnce(R) -> Bytes,
    ) -> Option<Bytes> {
        let (found, generation) = {
            let table = self.read_briefly();
            // Read under the lock: no writer can bump it until we release.
            let generation = self.generation.load(Ordering::Acquire);
            (find(&table)?, generation)
        };
        let body = encode(found);
        let mut bodies = self.bodies.write();
        if bodies.generation != generation {
            if generation < bodies.generation {
                // The table changed again while we encoded; don't cache.
                return Some(body);
            }
            bodies.generation = generation;
            bodies.by_topic.clear();
        }
        bodies.by_topic.entry(topic.to_owned()).or_default()[variant.slot()] = Some(body.clone());
        Some(body)
    }
}

/// A registration's hold of the write lock. The first counts as a change
/// of the routes ([`SharedRoutes::changes`]), as it is released, only when
/// the registration changed what routes, cluster info or the route snapshot
/// are made of ([`RouteInputs`]): most registrations are a broker re-sending
/// its unchanged topics with a new DataVersion (and every node of a cluster
/// applies each one), and counting those had the route snapshot encoded
/// again about once a second. Cached route bodies are dropped all the same:
/// kept across them, the cache grew to every topic asked for, and five
/// cluster nodes on one CPU answered routes with a p99 of 26–51 ms, against
/// 7–8 ms before (`rmq-bench compare --scenarios cluster-convergence`). The later holds of a sliced
/// registration write topics, and count when taken.
struct RegistrationHold<'a> {
    routes: &'a SharedRoutes,
    table: RwLockWriteGuard<'a, RouteTable>,
    /// The broker, its group and the inputs before the first hold; `None`
    /// for a hold counted when taken.
    before: Option<(BrokerKey, String, RouteInputs)>,
}

impl<'a> RegistrationHold<'a> {
    fn first(routes: &'a SharedRoutes, reg: &BrokerRegistration) -> Self {
        RegistrationHold::holding(routes, routes.table.write(), reg)
    }

    /// The first hold, of the write lock `table` already taken.
    fn holding(
        routes: &'a SharedRoutes,
        table: RwLockWriteGuard<'a, RouteTable>,
        reg: &BrokerRegistration,
    ) -> Self {
        routes.generation.fetch_add(1, Ordering::AcqRel);
        let key = BrokerKey::new(&reg.cluster, &reg.broker_addr);
        let before = if reg.mappings.is_empty() {
            let inputs = table.route_inputs(&key, &reg.broker_name);
            Some((key, reg.broker_name.clone(), inputs))
        } else {
            routes.count_route_change();
            None
        };
        RegistrationHold {
            routes,
            table,
            before,
        }
    }

    fn changed(routes: &'a SharedRoutes) -> Self {
        RegistrationHold {
            routes,
            table: routes.write(),
            before: None,
        }
    }
}

impl std::ops::Deref for RegistrationHold<'_> {
    type Target = RouteTable;

    fn deref(&self) -> &RouteTable {
        &self.table
    }
}

impl std::ops::DerefMut for RegistrationHold<'_> {
    fn deref_mut(&mut self) -> &mut RouteTable {
        &mut self.table
    }
}

impl Drop for RegistrationHold<'_> {
    fn drop(&mut self) {
        if let Some((key, broker_name, before)) = &self.before {
            // Still under the lock: the guard is dropped after this.
            if self.table.route_inputs(key, broker_name) != *before {
                self.routes.count_route_change();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: RouteVariant = RouteVariant {
        dialect: Dialect::Default,
        acting_master: false,
    };

    #[test]
    fn a_route_query_reads_past_a_writer_waiting_for_a_long_reader() {
        let routes = std::sync::Arc::new(SharedRoutes::new());
        // The route snapshot's writer, copying the table.
        let long_reader = routes.read();
        let writer = {
            let routes = routes.clone();
            std::thread::spawn(move || drop(routes.write()))
        };
        // The registration now waits for the lock.
        while !routes.table.is_locked_exclusive() {
            std::thread::yield_now();
        }
        let (answered, answer) = std::sync::mpsc::channel();
        let query = {
            let routes = routes.clone();
            std::thread::spawn(move || {
                let table = routes.read_briefly();
                answered.send(table.topic_count()).unwrap();
            })
        };
        let topics = answer.recv_timeout(std::time::Duration::from_secs(10));
        drop(long_reader);
        query.join().unwrap();
        writer.join().unwrap();
        assert_eq!(topics, Ok(0), "the query waited behind the registration");
        // The registration got the lock once the readers left.
        assert!(routes.changes() >= 1);
    }

    fn encode_once(routes: &SharedRoutes, topic: &str, variant: RouteVariant, body: &'static str) {
        let encoded = routes.encode_and_cache(topic, variant, |_| Some(()), |()| Bytes::from(body));
        assert_eq!(encoded.as_deref(), Some(body.as_bytes()));
    }

    #[test]
    fn a_cached_body_is_served_until_the_table_is_written() {
        let routes = SharedRoutes::new();
        assert_eq!(routes.cached_body("t", PLAIN), None);
        encode_once(&routes, "t", PLAIN, "v1");
        assert_eq!(routes.cached_body("t", PLAIN).as_deref(), Some(&b"v1"[..]));

        drop(routes.write_liveness());
        assert_eq!(routes.cached_body("t", PLAIN).as_deref(), Some(&b"v1"[..]));

        drop(routes.write());
        assert_eq!(routes.cached_body("t", PLAIN), None);
        encode_once(&routes, "t", PLAIN, "v2");
        assert_eq!(routes.cached_body("t", PLAIN).as_deref(), Some(&b"v2"[..]));
    }

    #[test]
    fn variants_are_cached_apart() {
        let routes = SharedRoutes::new();
        let standard = RouteVariant {
            dialect: Dialect::Standard,
            acting_master: false,
        };
        let acting = RouteVariant {
            dialect: Dialect::Default,
            acting_master: true,
        };
        encode_once(&routes, "t", PLAIN, "default");
        assert_eq!(routes.cached_body("t", standard), None);
        assert_eq!(routes.cached_body("t", acting), None);
        encode_once(&routes, "t", standard, "standard");
        assert_eq!(
            routes.cached_body("t", PLAIN).as_deref(),
            Some(&b"default"[..])
        );
        assert_eq!(
            routes.cached_body("t", standard).as_deref(),
            Some(&b"standard"[..])
        );
        assert_eq!(routes.cached_body("u", PLAIN), None);
    }

    #[test]
    fn the_topic_list_is_encoded_once_per_table_generation() {
        let routes = SharedRoutes::new();
        let encodings = std::cell::Cell::new(0);
        let encode = |()| {
            encodings.set(encodings.get() + 1);
            Bytes::from(format!("v{}", encodings.get()))
        };
        let find = |_: &RouteTable| ();
        assert_eq!(routes.all_topics_body(find, encode), "v1");
        assert_eq!(routes.all_topics_body(find, encode), "v1");
        drop(routes.write_liveness());
        assert_eq!(routes.all_topics_body(find, encode), "v1");
        drop(routes.write());
        assert_eq!(routes.all_topics_body(find, encode), "v2");
        assert_eq!(encodings.get(), 2);
    }

    #[test]
    fn a_missing_route_is_not_cached() {
        let routes = SharedRoutes::new();
        let found = routes.encode_and_cache("t", PLAIN, |_| None::<()>, |()| Bytes::new());
        assert_eq!(found, None);
        assert_eq!(routes.cached_body("t", PLAIN), None);
    }
}
