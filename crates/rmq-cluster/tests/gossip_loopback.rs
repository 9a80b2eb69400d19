//! Three cores over real chitchat on loopback UDP: a broker one node holds
//! reaches the others, its removal too, and gossip from another cluster id
//! or that is not gossip at all is refused and counted.

use std::collections::{BTreeMap, HashMap};
use std::net::UdpSocket;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rmq_cluster::core::{
    BrokerDigest, BrokerRef, ClusterCore, CoreConfig, Effect, MemberId, Millis, PullFailure,
    PullRequest, RelayedGone, RemovalCause, Version,
};
use rmq_cluster::gossip::{self, Gossip, GossipSettings, GossipStats, Host, PullAnswer};
use tokio::sync::Notify;

/// What every node holds directly, by node name: where pulls are answered.
type Directory = Arc<Mutex<HashMap<String, BTreeMap<BrokerRef, BrokerDigest>>>>;

struct TestHost {
    start: Instant,
    directory: Directory,
    relayed: Mutex<BTreeMap<BrokerRef, BrokerDigest>>,
}

impl Host for TestHost {
    type Registration = BrokerDigest;

    fn now(&self) -> Millis {
        self.start.elapsed().as_millis() as u64
    }

    fn pull(
        &self,
        request: PullRequest,
    ) -> impl std::future::Future<Output = Result<PullAnswer<BrokerDigest>, PullFailure>> + Send + 'static
    {
        let held = self
            .directory
            .lock()
            .get(&request.remoting)
            .and_then(|brokers| brokers.get(&request.broker).cloned());
        async move {
            let digest = held.ok_or(PullFailure::NotHeld)?;
            Ok(PullAnswer {
                digest: digest.clone(),
                registration: digest,
            })
        }
    }

    fn apply_pulled(&self, broker: &BrokerRef, _from: &MemberId, registration: BrokerDigest) {
        self.relayed.lock().insert(broker.clone(), registration);
    }

    fn remove_relayed(&self, broker: &BrokerRef, _why: &RelayedGone) {
        self.relayed.lock().remove(broker);
    }

    fn observe(&self, _effect: &Effect) {}
}

struct Node {
    name: String,
    core: Arc<Mutex<ClusterCore>>,
    host: Arc<TestHost>,
    published: Arc<Notify>,
    stats: Arc<GossipStats>,
    gossip_addr: std::net::SocketAddr,
    stop: Arc<Notify>,
}

impl Node {
    fn register(&self, directory: &Directory, broker: &BrokerRef, digest: BrokerDigest) {
        directory
            .lock()
            .entry(self.name.clone())
            .or_default()
            .insert(broker.clone(), digest.clone());
        let now = self.host.now();
        self.core
            .lock()
            .direct_registered(broker.clone(), digest, now);
        self.published.notify_one();
    }

    fn unregister(&self, directory: &Directory, broker: &BrokerRef) {
        directory.lock().get_mut(&self.name).unwrap().remove(broker);
        self.core
            .lock()
            .direct_removed(broker, RemovalCause::Unregister, None);
        self.published.notify_one();
    }

    fn relays(&self, broker: &BrokerRef) -> bool {
        self.host.relayed.lock().contains_key(broker)
    }
}

async fn start(name: &str, cluster_id: &str, seeds: Vec<String>, directory: &Directory) -> Node {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let gossip_addr = socket.local_addr().unwrap();
    let settings = GossipSettings {
        cluster_id: cluster_id.to_owned(),
        node: name.to_owned(),
        generation: 1,
        advertise: gossip_addr,
        seeds: seeds.clone(),
        interval: Duration::from_millis(200),
        phi_threshold: 8.0,
        dead_grace: Duration::from_secs(3600),
        deleted_key_grace: Duration::from_secs(600),
    };
    let host = Arc::new(TestHost {
        start: Instant::now(),
        directory: directory.clone(),
        relayed: Mutex::new(BTreeMap::new()),
    });
    let config = CoreConfig {
        has_seeds: !seeds.is_empty(),
        ..CoreConfig::default()
    };
    let mut core = ClusterCore::new(MemberId::new(name, 1), name, config, host.now());
    let initial = core
        .take_publications()
        .into_iter()
        .filter_map(|effect| match effect {
            Effect::Publish { key, value } => Some((key, value)),
            _ => None,
        })
        .collect();
    let gossip = Gossip::spawn(&settings, socket, initial).await.unwrap();
    let stats = gossip.stats().clone();
    let core = Arc::new(Mutex::new(core));
    let published = Arc::new(Notify::new());
    let stop = Arc::new(Notify::new());
    tokio::spawn({
        let (core, host, published, stop) =
            (core.clone(), host.clone(), published.clone(), stop.clone());
        async move {
            gossip::run(
                core,
                gossip,
                host,
                published,
                Duration::from_millis(20),
                async move { stop.notified().await },
            )
            .await
        }
    });
    Node {
        name: name.to_owned(),
        core,
        host,
        published,
        stats,
        gossip_addr,
        stop,
    }
}

fn digest(counter: i64) -> BrokerDigest {
    BrokerDigest {
        name: "broker-a".into(),
        id: 0,
        version: Version {
            state_version: 0,
            counter,
            timestamp: counter,
        },
        topics: 1,
        topic_count: 1,
        changed_at: 0,
        timeout_ms: 120_000,
        silent_ms: None,
    }
}

/// Polls `check` every 10 ms for up to `within`; the time it took.
async fn until(within: Duration, mut check: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < within {
        if check() {
            return Some(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_and_its_removal_reach_every_node() {
    let directory: Directory = Arc::default();
    let a = start("a:9876", "test", vec![], &directory).await;
    let seeds = vec![a.gossip_addr.to_string()];
    let b = start("b:9876", "test", seeds.clone(), &directory).await;
    let c = start("c:9876", "test", seeds, &directory).await;
    let ready = until(Duration::from_secs(5), || {
        [&a, &b, &c].iter().all(|node| node.core.lock().is_ready())
    })
    .await;
    assert!(ready.is_some(), "every node ready");

    let broker = BrokerRef::new("DefaultCluster", "10.0.0.1:10911");
    a.register(&directory, &broker, digest(1));
    let took = until(Duration::from_secs(5), || {
        b.relays(&broker) && c.relays(&broker)
    })
    .await;
    assert!(took.is_some(), "relayed on b and c");

    a.unregister(&directory, &broker);
    let took = until(Duration::from_secs(5), || {
        !b.relays(&broker) && !c.relays(&broker)
    })
    .await;
    assert!(took.is_some(), "gone from b and c");

    for node in [a, b, c] {
        node.stop.notify_one();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gossip_of_another_cluster_and_garbage_are_refused_and_counted() {
    let directory: Directory = Arc::default();
    let a = start("a:9876", "prod", vec![], &directory).await;
    let stranger = start(
        "x:9876",
        "staging",
        vec![a.gossip_addr.to_string()],
        &directory,
    )
    .await;
    let refused = until(Duration::from_secs(5), || {
        GossipStats::get(&a.stats.foreign_cluster) > 0
            && GossipStats::get(&stranger.stats.foreign_cluster) > 0
    })
    .await;
    assert!(refused.is_some(), "both sides count the other cluster");
    assert!(a.core.lock().members().next().is_none(), "a never admits x");

    let garbage = UdpSocket::bind("127.0.0.1:0").unwrap();
    garbage
        .send_to(b"\xff\x00not gossip", a.gossip_addr)
        .unwrap();
    let counted = until(Duration::from_secs(5), || {
        GossipStats::get(&a.stats.garbage) == 1
    })
    .await;
    assert!(counted.is_some(), "the datagram is counted as garbage");
    a.stop.notify_one();
    stranger.stop.notify_one();
}
