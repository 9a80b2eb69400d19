//! The simulated world: NameServer nodes (each the real route table and the
//! real cluster core, joined by the real functions of
//! `rmq_namesrv::cluster::table`), brokers registering with some of them,
//! gossip through the model of `rmq_cluster::model`, pulls over a lossy
//! network, and faults. Time moves in ticks; one seed decides everything.

use std::collections::{BTreeMap, HashMap};

use fastrand::Rng;
use parking_lot::Mutex;
use rmq_cluster::core::{
    ClusterCore, CoreConfig, Effect, MemberId, PullFailure, PullId, PullRequest,
};
use rmq_cluster::model::GossipModel;
use rmq_namesrv::cluster::broker_key;
use rmq_namesrv::cluster::held_topics::HeldTopicLists;
use rmq_namesrv::cluster::table::{self, Registered};
use rmq_namesrv::metrics::RemovalReason;
use rmq_namesrv::route::{
    BrokerKey, BrokerRegistration, ConnId, Millis, RouteTable, SharedRoutes, Unregistration,
};
use rmq_protocol::{DataVersion, TopicConfig};

use crate::invariants;
use crate::params::{Flaw, Params};
use crate::trace::{Failure, Trace};

/// One step of simulated time.
pub const TICK: Millis = 50;

/// The cluster's name in every run.
const CLUSTER: &str = "DefaultCluster";

/// A NameServer node.
pub struct Node {
    /// Its name (remoting address).
    pub name: String,
    /// Its incarnation.
    pub generation: u64,
    /// Its route table.
    pub routes: SharedRoutes,
    /// Its cluster core.
    pub core: Mutex<ClusterCore>,
    /// The topic lists it answered pulls with (gone with the incarnation).
    pub held_topics: HeldTopicLists,
    /// Up or crashed.
    pub up: bool,
    /// When this incarnation started.
    pub started: Millis,
    /// When it reported itself ready, and whether synced.
    pub ready: Option<(Millis, bool)>,
    next_gossip: Millis,
    next_scan: Millis,
    /// Registrations pulled, held until the core says apply or drop.
    pulled: HashMap<PullId, BrokerRegistration>,
    restart_at: Millis,
}

impl Node {
    /// This incarnation's member id.
    pub fn id(&self) -> MemberId {
        MemberId::new(self.name.clone(), self.generation)
    }

    /// Whether its table routes `key`, and the live entry's facts.
    pub fn holds(&self, key: &BrokerKey) -> Option<Held> {
        let table = self.routes.read();
        let live = table.live_broker(key)?;
        Some(Held {
            version: live.data_version,
            relayed: live.relayed_from.is_some(),
            provisional: live.provisional,
        })
    }
}

/// What a node's table says of a broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    /// The DataVersion held.
    pub version: DataVersion,
    /// Relayed from another node.
    pub relayed: bool,
    /// Restored from the route snapshot, unconfirmed.
    pub provisional: bool,
}

/// A broker.
pub struct Broker {
    /// Its key.
    pub key: BrokerKey,
    /// Its name.
    pub name: String,
    /// The nodes it registers with.
    pub nodes: Vec<usize>,
    /// Its current DataVersion.
    pub version: DataVersion,
    topics: Vec<TopicConfig>,
    /// Registering (not killed, not vanished).
    pub alive: bool,
    next_registration: Millis,
    /// Its open connection to each node.
    conns: Vec<Option<ConnId>>,
    /// Its links to each node that are cut, until when.
    cut_until: Vec<Millis>,
    /// The last time a registration of it reached a node.
    pub last_seen: Millis,
    /// For each node: since when it holds the broker directly (ground
    /// truth: set by a registration there, cleared when that node removed
    /// or demoted it), with the version it last sent there.
    pub direct: Vec<Option<(Millis, DataVersion)>>,
    /// For each node: since when its table has routed the broker without
    /// a break (restored entries not counted).
    pub routed_since: Vec<Option<Millis>>,
    /// When a node last removed it while it held it directly (closed,
    /// expired, unregistered: a removal the peers will hear of), until it
    /// next registers with one.
    pub removed_at: Option<Millis>,
}

/// A pull on its way.
struct InFlight {
    node: usize,
    request: PullRequest,
    arrives: Millis,
}

/// A connection that closes at a node once the close is noticed.
struct Closing {
    node: usize,
    conn: ConnId,
    at: Millis,
}

/// The whole run.
pub struct World {
    /// The seed's settings.
    pub params: Params,
    rng: Rng,
    /// Simulated time.
    pub now: Millis,
    /// The nodes.
    pub nodes: Vec<Node>,
    /// The brokers.
    pub brokers: Vec<Broker>,
    model: GossipModel,
    /// Node-to-node links cut until when.
    cut: BTreeMap<(usize, usize), Millis>,
    /// The last cut of each link: (from, until).
    last_cut: BTreeMap<(usize, usize), (Millis, Millis)>,
    pulls: Vec<InFlight>,
    closing: Vec<Closing>,
    next_conn: ConnId,
    /// When faults stopped and every link, node and loss was healed.
    pub healed_at: Option<Millis>,
    /// What happened, for a failure report.
    pub trace: Trace,
    /// Pulls applied, removals, demotions: counted for the report.
    pub counts: Counts,
}

/// What a run did, for the summary line.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counts {
    /// Registrations delivered.
    pub registrations: u64,
    /// Pulled registrations applied.
    pub applied: u64,
    /// Relayed brokers dropped.
    pub dropped: u64,
    /// Direct brokers kept as relayed.
    pub demoted: u64,
    /// Node crashes.
    pub crashes: u64,
}

impl World {
    /// The world of `params`, at time 0.
    pub fn new(params: Params, rng: Rng) -> World {
        let mut world = World {
            rng,
            now: 0,
            nodes: Vec::new(),
            brokers: Vec::new(),
            model: GossipModel::new(params.dead_after_ms),
            cut: BTreeMap::new(),
            last_cut: BTreeMap::new(),
            pulls: Vec::new(),
            closing: Vec::new(),
            next_conn: 1,
            healed_at: None,
            trace: Trace::default(),
            counts: Counts::default(),
            params,
        };
        for i in 0..world.params.nodes {
            let node = world.start_node(i, 1, None);
            world.nodes.push(node);
        }
        for b in 0..world.params.brokers {
            let addr = format!("10.1.0.{b}:10911");
            let topics = (0..3)
                .map(|t| TopicConfig::new(format!("topic-{b}-{t}")))
                .collect();
            let nodes = world.params.registers_with[b].clone();
            world.brokers.push(Broker {
                key: BrokerKey::new(CLUSTER, addr),
                name: format!("broker-{b}"),
                nodes,
                version: DataVersion::new(1, 0, 1_000),
                topics,
                alive: true,
                next_registration: world.rng.u64(0..world.params.period_ms),
                conns: vec![None; world.params.nodes],
                cut_until: vec![0; world.params.nodes],
                last_seen: 0,
                direct: vec![None; world.params.nodes],
                routed_since: vec![None; world.params.nodes],
                removed_at: None,
            });
        }
        world
    }

    fn start_node(&mut self, i: usize, generation: u64, table: Option<RouteTable>) -> Node {
        let name = format!("10.0.0.{i}:9876");
        let config = CoreConfig {
            // Node 0 starts the cluster; every other node has seeds.
            has_seeds: i != 0 || generation > 1,
            bootstrap_timeout_ms: 10_000,
            max_pulls: 8,
            pull_timeout_ms: 2_000,
            pull_retry_ms: 500,
            ack_interval_ms: 500,
            sweep_interval_ms: 500,
        };
        let id = MemberId::new(name.clone(), generation);
        let core = ClusterCore::new(id.clone(), &name, config, self.now);
        self.model.join(&id, self.now);
        let routes = SharedRoutes::new();
        if let Some(table) = table {
            *routes.write() = table;
        }
        Node {
            name,
            generation,
            routes,
            core: Mutex::new(core),
            held_topics: HeldTopicLists::default(),
            up: true,
            started: self.now,
            ready: None,
            next_gossip: self.now,
            next_scan: self.now + self.params.scan_ms,
            pulled: HashMap::new(),
            restart_at: 0,
        }
    }

    /// Whether `a` and `b` can talk now.
    fn linked(&self, a: usize, b: usize) -> bool {
        let key = (a.min(b), a.max(b));
        self.nodes[a].up
            && self.nodes[b].up
            && self.cut.get(&key).is_none_or(|until| *until <= self.now)
    }

    /// Whether `a` and `b` could talk all the time since `since`: `b` up
    /// (this incarnation started before), their link not cut since, and
    /// no message lost (loss runs only with the faults).
    pub fn steadily_linked(&self, a: usize, b: usize, since: Millis) -> bool {
        let key = (a.min(b), a.max(b));
        let uncut = self
            .last_cut
            .get(&key)
            .is_none_or(|(_, until)| *until <= since);
        let lossless =
            self.params.loss_percent == 0 || self.healed_at.is_some_and(|healed| healed <= since);
        self.nodes[b].up && self.nodes[b].started <= since && uncut && lossless
    }

    /// Whether a message is lost (only while faults run).
    fn lost(&mut self) -> bool {
        self.healed_at.is_none()
            && self.params.loss_percent > 0
            && self.rng.u32(0..100) < self.params.loss_percent
    }

    /// Runs until every deadline has passed after healing; checks the
    /// invariants after every tick.
    pub fn run(mut self, seed: u64) -> Result<Counts, Failure> {
        let mut invariants = invariants::all();
        let end = self.params.faults_ms + crate::settle_ms(&self.params) + 5_000;
        while self.now < end {
            self.step();
            for invariant in &mut invariants {
                if let Err(problem) = invariant.check(&self) {
                    return Err(Failure {
                        seed,
                        at: self.now,
                        invariant: invariant.name(),
                        problem,
                        trace: self.trace.tail(),
                    });
                }
            }
        }
        Ok(self.counts)
    }

    fn step(&mut self) {
        self.now += TICK;
        if self.now < self.params.faults_ms {
            self.faults();
        } else if self.healed_at.is_none() {
            self.heal();
        }
        self.restart_nodes();
        self.register_brokers();
        self.close_connections();
        self.scan_expiry();
        self.gossip_rounds();
        for i in 0..self.nodes.len() {
            if self.nodes[i].up {
                self.work(i);
            }
        }
        self.deliver_pulls();
        self.note_routes();
    }

    /// Notes, for every node and broker, since when the node has routed it.
    fn note_routes(&mut self) {
        for b in 0..self.brokers.len() {
            for i in 0..self.nodes.len() {
                let routed = self.nodes[i].up
                    && self.nodes[i]
                        .holds(&self.brokers[b].key)
                        .is_some_and(|held| !held.provisional);
                let since = &mut self.brokers[b].routed_since[i];
                match (routed, *since) {
                    (true, None) => *since = Some(self.now),
                    (false, Some(_)) => *since = None,
                    _ => {}
                }
            }
        }
    }

    // ----- faults -----

    /// Draws this tick's faults; a rate is per second, in thousandths.
    fn chance(&mut self, rate: u32) -> bool {
        rate > 0 && self.rng.u32(0..1_000_000) < rate * (TICK as u32)
    }

    fn faults(&mut self) {
        let n = self.nodes.len();
        if self.chance(self.params.partition_rate) {
            let (a, b) = (self.rng.usize(0..n), self.rng.usize(0..n));
            if a != b {
                let until = self.now + self.rng.u64(1_000..20_000);
                self.cut.insert((a.min(b), a.max(b)), until);
                self.last_cut
                    .insert((a.min(b), a.max(b)), (self.now, until));
                self.trace
                    .line(self.now, format!("link n{a}-n{b} cut until {until}"));
            }
        }
        if self.chance(self.params.crash_rate) {
            let i = self.rng.usize(0..n);
            if self.nodes[i].up {
                let down = self.rng.u64(500..10_000);
                self.crash(i, down);
            }
        }
        let brokers = self.brokers.len();
        if self.chance(self.params.kill_rate) {
            let b = self.rng.usize(0..brokers);
            if self.brokers[b].alive {
                self.kill(b, true);
            } else {
                self.revive(b);
            }
        }
        if self.chance(self.params.vanish_rate) {
            let b = self.rng.usize(0..brokers);
            if self.brokers[b].alive {
                self.kill(b, false);
            }
        }
        if self.chance(self.params.cut_rate) {
            let b = self.rng.usize(0..brokers);
            let i = self.brokers[b].nodes[self.rng.usize(0..self.brokers[b].nodes.len())];
            let until = self.now + self.rng.u64(1_000..30_000);
            self.brokers[b].cut_until[i] = until;
            self.trace
                .line(self.now, format!("broker b{b} cut from n{i} until {until}"));
            if let Some(conn) = self.brokers[b].conns[i].take() {
                let at = self.now + self.params.close_after_ms;
                self.closing.push(Closing { node: i, conn, at });
            }
        }
        if self.chance(self.params.change_rate) {
            let b = self.rng.usize(0..brokers);
            let broker = &mut self.brokers[b];
            broker.version.counter += 1;
            broker.version.timestamp += 1;
            let t = broker.version.counter;
            broker
                .topics
                .push(TopicConfig::new(format!("topic-{b}-{}", 10 + t)));
            self.trace.line(
                self.now,
                format!("broker b{b} changes its topics (counter {t})"),
            );
        }
    }

    /// Everything cut is joined again, crashed nodes restart, loss stops.
    fn heal(&mut self) {
        self.healed_at = Some(self.now);
        for (key, until) in std::mem::take(&mut self.cut) {
            if until > self.now {
                if let Some(last) = self.last_cut.get_mut(&key) {
                    last.1 = self.now;
                }
            }
        }
        for broker in &mut self.brokers {
            broker.cut_until.iter_mut().for_each(|until| *until = 0);
        }
        for node in &mut self.nodes {
            if !node.up {
                node.restart_at = self.now;
            }
        }
        self.trace.line(self.now, "healed: no more faults".into());
    }

    fn crash(&mut self, i: usize, down: Millis) {
        let node = &mut self.nodes[i];
        node.up = false;
        node.restart_at = self.now + down;
        self.model.leave(&node.id());
        self.pulls.retain(|pull| pull.node != i);
        self.closing.retain(|closing| closing.node != i);
        for broker in &mut self.brokers {
            broker.conns[i] = None;
            broker.direct[i] = None;
        }
        self.counts.crashes += 1;
        self.trace
            .line(self.now, format!("n{i} crashes for {down} ms"));
    }

    fn restart_nodes(&mut self) {
        for i in 0..self.nodes.len() {
            let node = &self.nodes[i];
            if node.up || self.now < node.restart_at {
                continue;
            }
            let table = if self.params.flaw == Some(Flaw::RestoreRelayed) {
                Some(node.routes.read().clone())
            } else {
                self.params.warm_restarts.then(|| {
                    RouteTable::restore(&node.routes.read().snapshot(), self.now)
                        .expect("a snapshot of a table restores")
                })
            };
            let generation = node.generation + 1;
            let restarted = self.start_node(i, generation, table);
            self.nodes[i] = restarted;
            self.trace.line(
                self.now,
                format!(
                    "n{i} restarts (generation {generation}, warm {})",
                    self.params.warm_restarts
                ),
            );
        }
    }

    fn kill(&mut self, b: usize, close: bool) {
        let broker = &mut self.brokers[b];
        broker.alive = false;
        for i in 0..self.nodes.len() {
            if let Some(conn) = broker.conns[i].take() {
                if close {
                    self.closing.push(Closing {
                        node: i,
                        conn,
                        at: self.now + TICK,
                    });
                }
            }
        }
        let how = if close { "killed" } else { "vanishes" };
        self.trace.line(self.now, format!("broker b{b} {how}"));
    }

    fn revive(&mut self, b: usize) {
        let broker = &mut self.brokers[b];
        broker.alive = true;
        broker.next_registration = self.now;
        self.trace.line(self.now, format!("broker b{b} restarts"));
    }

    // ----- brokers -----

    fn register_brokers(&mut self) {
        for b in 0..self.brokers.len() {
            if !self.brokers[b].alive || self.now < self.brokers[b].next_registration {
                continue;
            }
            self.brokers[b].next_registration = self.now + self.params.period_ms;
            for i in self.brokers[b].nodes.clone() {
                if !self.nodes[i].up || self.brokers[b].cut_until[i] > self.now {
                    continue;
                }
                self.register(b, i);
            }
        }
    }

    fn register(&mut self, b: usize, i: usize) {
        let conn = match self.brokers[b].conns[i] {
            Some(conn) => conn,
            None => {
                let conn = self.next_conn;
                self.next_conn += 1;
                self.brokers[b].conns[i] = Some(conn);
                conn
            }
        };
        let broker = &self.brokers[b];
        let registration = BrokerRegistration {
            cluster: broker.key.cluster.clone(),
            broker_addr: broker.key.addr.clone(),
            broker_name: broker.name.clone(),
            broker_id: 0,
            ha_server_addr: broker.key.addr.replace("10911", "10912"),
            zone_name: None,
            heartbeat_timeout_ms: Some(self.params.timeout_ms),
            enable_acting_master: Some(false),
            data_version: broker.version,
            topic_configs: broker.topics.clone(),
            mappings: BTreeMap::new(),
            filter_servers: Some(Vec::new()),
            conn,
            client_version: 0,
        };
        let registered = Registered::of(&registration);
        let version = broker.version;
        let node = &self.nodes[i];
        let outcome = node
            .routes
            .register_broker(registration, self.now, false, false)
            .expect("a full registration is applied");
        let told = self.params.flaw != Some(Flaw::RelayOverDirect);
        if told && !outcome.ignored_stale_state_version {
            // As the REGISTER_BROKER handler: the digest of an applied
            // registration goes to the core.
            table::direct_registered(&node.routes, &node.core, &registered, self.now, self.now);
        }
        let broker = &mut self.brokers[b];
        broker.last_seen = self.now;
        let since = broker.direct[i].map_or(self.now, |(since, _)| since);
        broker.direct[i] = Some((since, version));
        broker.removed_at = None;
        self.counts.registrations += 1;
    }

    // ----- removals at a node -----

    fn close_connections(&mut self) {
        let now = self.now;
        let (due, rest): (Vec<Closing>, Vec<Closing>) = self
            .closing
            .drain(..)
            .partition(|closing| closing.at <= now);
        self.closing = rest;
        for closing in due {
            if !self.nodes[closing.node].up {
                continue;
            }
            let batch = self.nodes[closing.node]
                .routes
                .read()
                .connection_closed(closing.conn);
            self.remove(closing.node, batch, RemovalReason::Close);
        }
    }

    fn scan_expiry(&mut self) {
        for i in 0..self.nodes.len() {
            if !self.nodes[i].up || self.now < self.nodes[i].next_scan {
                continue;
            }
            self.nodes[i].next_scan = self.now + self.params.scan_ms;
            let expired = self.nodes[i].routes.read().expired(self.now);
            for expired in &expired {
                // The server closes an expired broker's connection.
                for broker in &mut self.brokers {
                    if broker.conns[i] == Some(expired.conn) {
                        broker.conns[i] = None;
                    }
                }
            }
            let batch = expired.into_iter().map(|e| e.unregistration).collect();
            self.remove(i, batch, RemovalReason::Expiry);
        }
    }

    /// The unregistration worker of node `i`, through the real batch.
    fn remove(&mut self, i: usize, batch: Vec<Unregistration>, reason: RemovalReason) {
        if batch.is_empty() {
            return;
        }
        let reasons = vec![reason; batch.len()];
        let node = &self.nodes[i];
        let outcome =
            table::remove_batch(&node.routes, &node.core, &batch, &reasons, false, self.now);
        for key in &outcome.removed.removed_brokers {
            self.forget_direct(i, key);
            if let Some(broker) = self.brokers.iter_mut().find(|b| b.key == *key) {
                broker.removed_at = Some(self.now);
            }
            self.trace
                .line(self.now, format!("n{i} removes {} ({reason:?})", key.addr));
        }
        for (key, _, from) in &outcome.demoted {
            self.forget_direct(i, key);
            self.counts.demoted += 1;
            self.trace.line(
                self.now,
                format!(
                    "n{i} keeps {} as relayed from {} ({reason:?})",
                    key.addr, from
                ),
            );
        }
    }

    fn forget_direct(&mut self, i: usize, key: &BrokerKey) {
        if let Some(broker) = self.brokers.iter_mut().find(|b| b.key == *key) {
            broker.direct[i] = None;
        }
    }

    // ----- gossip and the cores -----

    fn gossip_rounds(&mut self) {
        for i in 0..self.nodes.len() {
            if !self.nodes[i].up || self.now < self.nodes[i].next_gossip {
                continue;
            }
            self.nodes[i].next_gossip = self.now + self.params.gossip_ms;
            let id = self.nodes[i].id();
            self.model.beat(&id, self.now);
            let peer = self.rng.usize(0..self.nodes.len());
            self.exchange(i, peer);
        }
    }

    fn exchange(&mut self, a: usize, b: usize) {
        if a == b || !self.linked(a, b) || self.lost() {
            return;
        }
        let (ida, idb) = (self.nodes[a].id(), self.nodes[b].id());
        self.model.exchange(&ida, &idb, self.now);
    }

    /// One node's turn: publications out, peers' changes in, a tick, the
    /// effects carried out as the server's gossip task carries them out.
    fn work(&mut self, i: usize) {
        let id = self.nodes[i].id();
        let publications = self.nodes[i].core.lock().take_publications();
        if !publications.is_empty() {
            self.model.publish(&id, &publications);
            if publications.contains(&Effect::GossipNow) {
                for peer in 0..self.nodes.len() {
                    self.exchange(i, peer);
                }
            }
        }
        let updates = self.model.changes(&id, self.now);
        let mut effects = Vec::new();
        {
            let mut core = self.nodes[i].core.lock();
            for update in updates {
                effects.extend(core.member_changed(update, self.now));
            }
            effects.extend(core.tick(self.now));
        }
        self.carry_out(i, effects);
    }

    fn carry_out(&mut self, i: usize, effects: Vec<Effect>) {
        let flaw = self.params.flaw;
        for effect in effects {
            match effect {
                Effect::Pull(request) => {
                    let holder = self.node_named(&request.remoting);
                    let arrives = self.now + TICK;
                    let reaches = holder.is_some_and(|h| self.linked(i, h)) && !self.lost();
                    if reaches {
                        self.pulls.push(InFlight {
                            node: i,
                            request,
                            arrives,
                        });
                    }
                }
                Effect::ApplyPulled { id, broker, from } => {
                    if let Some(registration) = self.nodes[i].pulled.remove(&id) {
                        self.apply(i, registration, &from);
                        self.trace.line(
                            self.now,
                            format!("n{i} applies {} pulled from {from}", broker.addr),
                        );
                    }
                }
                Effect::DiscardPulled { id, why } if self.nodes[i].pulled.remove(&id).is_some() => {
                    self.trace
                        .line(self.now, format!("n{i} drops pull {id}: {why}"));
                }
                Effect::RemoveRelayed { broker, why } => {
                    if flaw == Some(Flaw::KeepRelayed) {
                        continue;
                    }
                    if table::drop_relayed(&self.nodes[i].routes, &broker_key(&broker)) {
                        self.counts.dropped += 1;
                        self.trace.line(
                            self.now,
                            format!("n{i} drops relayed {} ({why:?})", broker.addr),
                        );
                    }
                }
                Effect::Ready { synced } => {
                    self.nodes[i].ready = Some((self.now, synced));
                    self.trace
                        .line(self.now, format!("n{i} ready (synced {synced})"));
                }
                Effect::Refused { peer, kind, detail } => {
                    self.trace.line(
                        self.now,
                        format!("n{i} refuses {peer}: {} {detail}", kind.as_str()),
                    );
                }
                _ => {}
            }
        }
    }

    fn apply(&mut self, i: usize, registration: BrokerRegistration, from: &MemberId) {
        let routes = &self.nodes[i].routes;
        if self.params.flaw == Some(Flaw::RelayOverDirect) {
            let key = BrokerKey::new(&registration.cluster, &registration.broker_addr);
            let fence = routes.read().generation();
            routes
                .write()
                .demote(&key, from.node.as_str().into(), fence);
        }
        if table::apply_relayed(routes, registration, from, self.now).is_ok() {
            self.counts.applied += 1;
        }
    }

    fn node_named(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|node| node.name == name)
    }

    /// Pulls that arrive now are answered by the holder's table and core
    /// (as the server's pull handler answers), and the answer reaches the
    /// puller's core, unless lost.
    fn deliver_pulls(&mut self) {
        let now = self.now;
        let (due, rest): (Vec<InFlight>, Vec<InFlight>) =
            self.pulls.drain(..).partition(|pull| pull.arrives <= now);
        self.pulls = rest;
        for pull in due {
            let Some(h) = self.node_named(&pull.request.remoting) else {
                continue;
            };
            if !self.linked(pull.node, h) || self.lost() {
                continue;
            }
            if self.nodes[h].generation != pull.request.from.generation {
                // Another incarnation answers at that address: not its word.
                let effects = self.nodes[pull.node].core.lock().pull_done(
                    pull.request.id,
                    Err(PullFailure::Failed("restarted".into())),
                    now,
                );
                self.carry_out(pull.node, effects);
                continue;
            }
            let key = broker_key(&pull.request.broker);
            let answer = table::held(
                &self.nodes[h].routes,
                &self.nodes[h].core,
                &self.nodes[h].held_topics,
                &key,
                pull.request.relayed,
            );
            let result = match answer {
                Some((mut registration, digest)) => {
                    registration.conn = rmq_namesrv::route::RELAYED_CONN;
                    self.nodes[pull.node]
                        .pulled
                        .insert(pull.request.id, registration);
                    Ok(digest)
                }
                None => Err(PullFailure::NotHeld),
            };
            let effects = self.nodes[pull.node]
                .core
                .lock()
                .pull_done(pull.request.id, result, now);
            self.carry_out(pull.node, effects);
        }
    }
}
