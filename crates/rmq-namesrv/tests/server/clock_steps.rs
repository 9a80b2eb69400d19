//! Clock steps (apache/rocketmq#9455): a NameServer in this process whose
//! wall clock the test steps by hours either way while brokers register
//! over TCP, and brokers whose DataVersion timestamps go back. Liveness
//! runs on the monotonic clock, so no step expires a broker early or keeps
//! one past its timeout; DataVersions are compared for equality only, so a
//! registration with an earlier timestamp is applied like any other.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmq_namesrv::clock::{WallClock, WallStep};
use rmq_namesrv::config::NamesrvConfig;
use rmq_namesrv::kv::KvStore;
use rmq_namesrv::state::Namesrv;
use rmq_protocol::cluster_status::ClusterStatusBody;
use rmq_protocol::{DataVersion, JavaJson, TopicConfig, TopicRouteData};
use rmq_transport::tls::ServerTls;
use rmq_transport::{ClientConfig, RpcClient, ServerLimits};
use rmq_wire::{ResponseCode as R, SerializeType};
use tokio::sync::oneshot;

use crate::common::*;

const HOUR_MS: i64 = 3_600_000;

/// A NameServer served from this process, its wall clock steppable.
struct InProcess {
    addr: std::net::SocketAddr,
    step: WallStep,
    stop: Option<oneshot::Sender<()>>,
    _dir: TempDir,
}

impl InProcess {
    /// Registrations run on the blocking pool: a multi-threaded runtime.
    async fn start(scan_interval_ms: i64) -> InProcess {
        let dir = TempDir::new();
        let mut config = NamesrvConfig::defaults(&dir.0, None);
        config.kv_config_path = dir.path("kvConfig.json").display().to_string();
        config.config_store_path = dir.path("namesrv.properties").display().to_string();
        config.scan_not_active_broker_interval = scan_interval_ms;
        // So that a registration's removals apply too, not only its additions.
        config.delete_topic_with_broker_registration = true;
        let kv = KvStore::load(&config.kv_config_path).unwrap();
        let listener = rmq_transport::server::bind("127.0.0.1:0", config.listen_options())
            .await
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let (mut state, queues) = Namesrv::new(config, kv);
        let (wall, step) = WallClock::steppable();
        state.wall = wall;
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            rmq_namesrv::server::run(
                listener,
                Arc::new(state),
                queues,
                SerializeType::Json,
                &ServerLimits::new(),
                ServerTls::Disabled,
                async move {
                    let _ = stopped.await;
                },
            )
            .await
        });
        InProcess {
            addr,
            step,
            stop: Some(stop),
            _dir: dir,
        }
    }

    async fn client(&self) -> RpcClient {
        RpcClient::connect(self.addr, ClientConfig::default())
            .await
            .expect("connect")
    }

    /// The route of `topic`, `None` if the server has none.
    async fn route(&self, topic: &str) -> Option<TopicRouteData> {
        let response = self
            .client()
            .await
            .invoke(route_request(topic), TIMEOUT)
            .await
            .expect("response");
        (response.response_code() == R::Success)
            .then(|| TopicRouteData::from_json(response.body.as_deref().unwrap()).unwrap())
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn register(conn: &RpcClient, registration: &Register) {
    let response = conn
        .invoke(registration.request(), TIMEOUT)
        .await
        .expect("response");
    assert_code(&response, R::Success);
}

/// The broker's registration with `timeout_ms`, on its own address (two
/// topics at least: a 5.x NameServer takes a one-topic first registration
/// for an incremental one racing ahead of the full one).
fn broker(name: &str, port: u16, topics: &[&str], timeout_ms: u64) -> Register {
    Register::new(name, &format!("127.0.0.1:{port}"), 0, topics)
        .ext("heartbeatTimeoutMillis", &timeout_ms.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wall_clock_steps_neither_expire_brokers_early_nor_keep_them_late() {
    let server = InProcess::start(200).await;
    let started = Instant::now();
    // Kept alive by re-registering every 250 ms; a 2.5 s timeout. Java's
    // NameServer compares each broker's last update, a wall-clock time,
    // with the wall clock: the step forward below would expire it at the
    // next scan, the step back would keep it hours after it fell silent.
    let steady_conn = server.client().await;
    let steady = broker(
        "broker-steady",
        10911,
        &["SteadyTopic", "SteadyOther"],
        2_500,
    );
    register(&steady_conn, &steady).await;
    // Registered once, silent since, its connection open: 7 s.
    let silent_conn = server.client().await;
    let silent = broker(
        "broker-silent",
        10921,
        &["SilentTopic", "SilentOther"],
        7_000,
    );
    register(&silent_conn, &silent).await;
    let silent_at = Instant::now();

    let steps = [6 * HOUR_MS, -12 * HOUR_MS, 9 * HOUR_MS, -4 * HOUR_MS];
    let mut stepped = 0;
    while started.elapsed() < Duration::from_millis(6_000) {
        if started.elapsed() >= Duration::from_millis(1_000 + 1_200 * stepped as u64)
            && stepped < steps.len()
        {
            server.step.by(steps[stepped]);
            stepped += 1;
        }
        register(&steady_conn, &steady).await;
        assert!(
            server.route("SteadyTopic").await.is_some(),
            "the re-registering broker expired after {stepped} steps"
        );
        // Its 7 s are not up: no step may have taken it early.
        if silent_at.elapsed() < Duration::from_millis(6_500) {
            assert!(
                server.route("SilentTopic").await.is_some(),
                "the silent broker expired early, after {stepped} steps"
            );
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(stepped, steps.len());

    // The silent broker goes at its 7 s (the next scan, every 200 ms),
    // the wall clock now 1 h ahead of where it started.
    assert!(
        eventually(Duration::from_secs(3), || async {
            server.route("SilentTopic").await.is_none()
        })
        .await,
        "the silent broker outlived its timeout"
    );
    let silent_for = silent_at.elapsed();
    assert!(
        silent_for >= Duration::from_millis(7_000),
        "expired after {silent_for:?}, before its 7 s timeout"
    );

    // The steady broker registers a last time and falls silent, and the
    // clock is set back 12 h: it goes 2.5 s later all the same.
    register(&steady_conn, &steady).await;
    let fell_silent = Instant::now();
    server.step.by(-12 * HOUR_MS);
    assert!(server.route("SteadyTopic").await.is_some());
    assert!(
        eventually(Duration::from_secs(5), || async {
            server.route("SteadyTopic").await.is_none()
        })
        .await,
        "a step back kept a dead broker"
    );
    assert!(fell_silent.elapsed() >= Duration::from_millis(2_500));
}

fn version(counter: i64, timestamp: i64) -> DataVersion {
    DataVersion::new(counter, 0, timestamp)
}

fn topic_names(route: &TopicRouteData) -> Vec<String> {
    route
        .queue_datas
        .iter()
        .map(|queue| queue.broker_name.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_whose_data_version_timestamps_go_back_keeps_routing_and_its_changes_apply() {
    let server = InProcess::start(200).await;
    let conn = server.client().await;
    let now = 1_765_000_000_000;
    let mut reg = broker("broker-a", 10911, &["Kept", "Dropped"], 3_000);
    reg.version = version(7, now);
    register(&conn, &reg).await;
    assert!(server.route("Dropped").await.is_some());

    // The broker's clock is set back an hour; its next change carries the
    // earlier timestamp (with the next counter, as a Java broker's does).
    reg.topics = vec![TopicConfig::new("Kept"), TopicConfig::new("Added")];
    reg.version = version(8, now - HOUR_MS);
    register(&conn, &reg).await;
    assert!(server.route("Added").await.is_some(), "the change applies");
    assert!(
        server.route("Dropped").await.is_none(),
        "the removal applies"
    );

    // A store rebuilt on the stepped-back host: the counter is the old one,
    // only the timestamp differs (earlier still), with another change.
    reg.topics = vec![TopicConfig::new("Kept"), TopicConfig::new("Rebuilt")];
    reg.version = version(8, now - 2 * HOUR_MS);
    register(&conn, &reg).await;
    assert!(server.route("Rebuilt").await.is_some());
    assert!(server.route("Added").await.is_none());

    // Unchanged re-registrations with the earlier version keep it alive
    // past several of its 3 s timeouts (they count as heartbeats).
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(8_000) {
        register(&conn, &reg).await;
        let route = server.route("Kept").await.expect("still routed");
        assert_eq!(topic_names(&route), ["broker-a"]);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }

    // QUERY_DATA_VERSION with the earlier version: unchanged, as Java
    // compares for equality; with the later one it is "changed".
    for (counter, timestamp, changed) in [
        (8, now - 2 * HOUR_MS, false),
        (8, now - HOUR_MS, true),
        (7, now, true),
    ] {
        let query = reg.query_data_version(version(counter, timestamp));
        let response = conn.invoke(query, TIMEOUT).await.expect("response");
        assert_code(&response, R::Success);
        assert_eq!(
            response.ext("changed"),
            Some(if changed { "true" } else { "false" }),
            "counter {counter} timestamp {timestamp}"
        );
    }
}

/// Long enough for gossip (100 ms rounds) and a pull on a loaded machine.
const CONVERGE: Duration = Duration::from_secs(20);

/// WAYMARK_GET_CLUSTER_STATUS of `server`, decoded.
async fn cluster_status(server: &Server) -> ClusterStatusBody {
    let response = server
        .call(request(rmq_wire::RequestCode::WaymarkGetClusterStatus, &[]))
        .await;
    assert_code(&response, R::Success);
    ClusterStatusBody::from_json(response.body.as_deref().unwrap_or_default()).unwrap()
}

/// The brokers `server` routes `topic` to, none if it has no route.
async fn routed_by(server: &Server, topic: &str) -> Vec<String> {
    let response = server.call(route_request(topic)).await;
    if response.response_code() != R::Success {
        return Vec::new();
    }
    topic_names(&TopicRouteData::from_json(response.body.as_deref().unwrap()).unwrap())
}

#[tokio::test]
async fn the_cluster_generation_is_kept_on_disk_and_rises_after_the_clock_steps_back() {
    let dir = TempDir::new();
    let kept = dir.path("kvConfig.json.clusterGeneration");
    let node = cluster_node(&dir, "generations", None, &[]);
    let first = cluster_status(&node).await.node.unwrap().generation;
    assert_eq!(read(&kept).trim(), first.to_string());
    node.stop();

    // The past life started ten hours ahead of this host's clock now: a
    // restart after the clock was set back by more than the downtime.
    let past = first + 10 * HOUR_MS as u64;
    std::fs::write(&kept, format!("{past}\n")).unwrap();
    let node = cluster_node(&dir, "generations", None, &[]);
    let restarted = cluster_status(&node).await.node.unwrap().generation;
    assert_eq!(
        restarted,
        past + 1,
        "above the past life's, not the clock's"
    );
    assert_eq!(read(&kept).trim(), restarted.to_string());
    node.stop();

    // A file that does not hold a generation stops the start: starting
    // below a past life is what it is there to prevent.
    std::fs::write(&kept, "not a number").unwrap();
    let refused = Server::refused_start(
        &dir,
        &[
            ("clusterGossipAddr", "127.0.0.1:0"),
            ("clusterId", "generations"),
            (
                "kvConfigPath",
                &dir.path("kvConfig.json").display().to_string(),
            ),
        ],
    );
    assert!(refused.contains("clusterGeneration"), "{refused}");
}

#[tokio::test]
async fn a_three_node_cluster_takes_a_registration_whose_timestamp_went_back() {
    let dirs = [TempDir::new(), TempDir::new(), TempDir::new()];
    // So that a registration's removals apply too, not only its additions.
    let sets = [("deleteTopicWithBrokerRegistration", "true")];
    let a = cluster_node(&dirs[0], "clock-steps", None, &sets);
    let seeds = cluster_status(&a).await.node.unwrap().gossip_addr;
    let b = cluster_node(&dirs[1], "clock-steps", Some(&seeds), &sets);
    let c = cluster_node(&dirs[2], "clock-steps", Some(&seeds), &sets);
    let now = 1_765_000_000_000;
    let routes = |topic: &'static str, expected: bool| {
        let (b, c) = (&b, &c);
        async move {
            for node in [b, c] {
                let routed = routed_by(node, topic).await == ["broker-a"];
                if routed != expected {
                    return false;
                }
            }
            true
        }
    };

    // broker-a registers with a only; b and c relay it.
    let at_a = a.client().await;
    let mut reg = Register::new("broker-a", "127.0.0.1:10911", 0, &["Kept", "Old"]);
    reg.version = version(5, now);
    register(&at_a, &reg).await;
    assert!(
        eventually(CONVERGE, || routes("Old", true)).await,
        "b and c relay broker-a"
    );

    // Its clock is set back an hour; its next change (the next counter,
    // an earlier timestamp) replaces the copies at b and c.
    reg.topics = vec![TopicConfig::new("Kept"), TopicConfig::new("Mid")];
    reg.version = version(6, now - HOUR_MS);
    register(&at_a, &reg).await;
    assert!(
        eventually(CONVERGE, || async {
            routes("Mid", true).await && routes("Old", false).await
        })
        .await,
        "b and c take the registration with the earlier timestamp"
    );

    // It now registers with b, its store rebuilt on the stepped-back host:
    // the same counter, an earlier timestamp still, another topic. a keeps
    // its copy (the connection is open, silent for far less than its
    // 120 s): c must take b's, the one the broker sent last, not a's for
    // its later timestamp.
    let at_b = b.client().await;
    reg.topics = vec![TopicConfig::new("Kept"), TopicConfig::new("New")];
    reg.version = version(6, now - 2 * HOUR_MS);
    register(&at_b, &reg).await;
    assert!(
        eventually(CONVERGE, || async {
            routed_by(&c, "New").await == ["broker-a"] && routed_by(&c, "Mid").await.is_empty()
        })
        .await,
        "c takes broker-a's last registration: New {:?}, Mid {:?}",
        routed_by(&c, "New").await,
        routed_by(&c, "Mid").await
    );
    // And keeps it: a's earlier registration does not come back.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(routed_by(&c, "New").await, ["broker-a"]);
    assert!(routed_by(&c, "Mid").await.is_empty());
    drop(at_a);
}
