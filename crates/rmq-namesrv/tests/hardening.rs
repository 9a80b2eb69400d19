//! Hostile input against the real binary over real sockets: a registration
//! of millions of topics (refused while it is decoded, memory held to a
//! budget, route queries answered), heavy requests beyond the queue capacity
//! (SYSTEM_BUSY, as Java), and the KV quotas.

#[path = "common/mod.rs"]
mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmq_protocol::{BodyFlavor, TopicConfig};
use rmq_wire::{RemotingCommand, RequestCode as C, ResponseCode as R};

use common::*;

const MIB: u64 = 1 << 20;

/// A registration of `topics` short, distinct topic names, compressed as a
/// broker with `compressedRegister` sends it.
fn compressed_registration(name: &str, addr: &str, topics: usize) -> RemotingCommand {
    let mut reg = Register::new(name, addr, 0, &[]);
    reg.topics = (0..topics)
        .map(|i| TopicConfig::new(format!("t{i:x}")))
        .collect();
    let mut request = reg.request_with(reg.body().to_compressed(BodyFlavor::V5));
    request
        .ext_fields
        .as_mut()
        .unwrap()
        .insert("compressed".into(), "true".into());
    request
}

/// Samples the server's VmRSS every 10 ms until stopped; the peak.
fn rss_sampler(server: Arc<Server>) -> (Arc<AtomicBool>, std::thread::JoinHandle<u64>) {
    let stop = Arc::new(AtomicBool::new(false));
    let peak = AtomicU64::new(server.rss_bytes());
    let flag = stop.clone();
    let sampler = std::thread::spawn(move || {
        while !flag.load(Ordering::Relaxed) {
            peak.fetch_max(server.rss_bytes(), Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(10));
        }
        peak.load(Ordering::Relaxed)
    });
    (stop, sampler)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_million_topic_registration_is_refused_within_a_memory_budget() {
    let dir = TempDir::new();
    let server = Arc::new(Server::start(&dir, &[]));
    // broker-a stays registered (its connection open) so its topic has a route.
    let broker = server.client().await;
    let ok = broker
        .invoke(
            Register::new("broker-a", "127.0.0.1:10911", 0, &["TopicA", "TopicA2"]).request(),
            TIMEOUT,
        )
        .await
        .unwrap();
    assert_code(&ok, R::Success);

    let hostile = compressed_registration("broker-x", "127.0.0.1:20911", 2_000_000);
    assert!(
        hostile.body.as_ref().unwrap().len() < 16 << 20,
        "fits a frame"
    );
    let baseline = server.rss_bytes();
    let (stop, sampler) = rss_sampler(server.clone());

    let client = server.client().await;
    let register = client.invoke(hostile, Duration::from_secs(60));
    let query = async {
        // While the body is sent and handled.
        tokio::time::sleep(Duration::from_millis(20)).await;
        tokio::time::timeout(TIMEOUT, server.call(route_request("TopicA"))).await
    };
    let (refused, route) = tokio::join!(register, query);
    stop.store(true, Ordering::Relaxed);
    let peak = sampler.join().unwrap();

    let refused = refused.expect("answered");
    assert_code(&refused, R::SystemError);
    let remark = refused.remark.unwrap_or_default();
    assert!(
        remark.contains("maxTopicsPerRegistration")
            && remark.contains("200000")
            && remark.contains("broker-x"),
        "{remark}"
    );
    assert_code(
        &route.expect("a route query answered during the registration"),
        R::Success,
    );
    let grown = peak.saturating_sub(baseline);
    assert!(
        grown < 256 * MIB,
        "peak RSS grew by {} MiB over the baseline",
        grown / MIB
    );
    let log = read(&dir.path("server.log"));
    assert!(
        log.contains("maxTopicsPerRegistration") && log.contains("127.0.0.1:"),
        "the refusal names the limit and the peer:\n{log}"
    );
    // Nothing of it was registered.
    assert_code(&server.call(route_request("t0")).await, R::TopicNotExist);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heavy_requests_beyond_the_queue_capacity_get_system_busy() {
    let dir = TempDir::new();
    let server = Server::start(
        &dir,
        &[
            ("defaultThreadPoolNums", "1"),
            ("defaultThreadPoolQueueCapacity", "1"),
        ],
    );
    // One slow registration runs, one waits, the third is refused: all sent
    // at once on one connection.
    let slow = compressed_registration("broker-a", "127.0.0.1:10911", 150_000);
    let queued = Register::new("broker-b", "127.0.0.1:10921", 0, &["TopicB", "TopicB2"]).request();
    let refused = Register::new("broker-c", "127.0.0.1:10931", 0, &["TopicC", "TopicC2"]).request();
    let mut bytes = Vec::new();
    for (opaque, mut request) in [(1, slow), (2, queued), (3, refused)] {
        request.opaque = opaque;
        bytes.extend_from_slice(&rmq_wire::frame::encode_to_bytes(&request));
    }
    let mut raw = Raw::connect(server.addr).await;
    raw.send(&bytes).await;

    // The first answer is the refusal, at once, while the slow one runs.
    let busy = raw.read_command(TIMEOUT).await.expect("an answer");
    assert_eq!(busy.opaque, 3);
    assert_code(&busy, R::SystemBusy);
    assert_eq!(
        busy.remark.as_deref(),
        Some("[OVERLOAD]system busy, start flow control for a while")
    );
    // KV writes have their own pool: not refused, not waiting behind it.
    let put = server
        .call(request(
            C::PutKvConfig,
            &[("namespace", "ns"), ("key", "k"), ("value", "v")],
        ))
        .await;
    assert_code(&put, R::Success);

    let mut answered = Vec::new();
    for _ in 0..2 {
        let response = raw
            .read_command(Duration::from_secs(60))
            .await
            .expect("an answer");
        assert_code(&response, R::Success);
        answered.push(response.opaque);
    }
    answered.sort();
    assert_eq!(answered, [1, 2]);
    assert_code(&server.call(route_request("TopicB")).await, R::Success);
    assert_code(
        &server.call(route_request("TopicC")).await,
        R::TopicNotExist,
    );
}

fn put(namespace: &str, key: &str, value: &str) -> RemotingCommand {
    request(
        C::PutKvConfig,
        &[("namespace", namespace), ("key", key), ("value", value)],
    )
}

#[tokio::test]
async fn kv_values_over_the_quota_are_refused_by_name() {
    let dir = TempDir::new();
    // The value travels in the header: raise the header limits (which refuse
    // a field over 32 KiB by default) so the KV quota is what answers.
    let server = Server::start(
        &dir,
        &[
            ("maxHeaderBytes", "262144"),
            ("maxHeaderFieldBytes", "131072"),
        ],
    );
    assert_code(
        &server.call(put("ns", "k", &"v".repeat(64 * 1024))).await,
        R::Success,
    );
    let over = server
        .call(put("ns", "k2", &"v".repeat(64 * 1024 + 1)))
        .await;
    assert_code(&over, R::SystemError);
    let remark = over.remark.unwrap_or_default();
    assert!(
        remark.contains("maxKvValueBytes") && remark.contains("65536"),
        "{remark}"
    );
    let get = request(C::GetKvConfig, &[("namespace", "ns"), ("key", "k2")]);
    assert_code(&server.call(get).await, R::QueryNotFound);
}

#[tokio::test]
async fn a_kv_listing_larger_than_a_frame_is_refused_by_name() {
    let dir = TempDir::new();
    // A store written before the quotas: 300 values of 60 KiB, ~18 MiB.
    let value = "v".repeat(60 * 1024);
    let entries: Vec<String> = (0..300).map(|i| format!("\"k{i}\":\"{value}\"")).collect();
    std::fs::write(
        dir.path("kvConfig.json"),
        format!("{{\"configTable\":{{\"big\":{{{}}}}}}}", entries.join(",")),
    )
    .unwrap();
    let server = Server::start(&dir, &[]);

    let list = server
        .call(request(C::GetKvlistByNamespace, &[("namespace", "big")]))
        .await;
    assert_code(&list, R::SystemError);
    let remark = list.remark.unwrap_or_default();
    assert!(
        remark.contains("Namespace: big") && remark.contains("maxKvListBytes"),
        "{remark}"
    );
    // The store loaded, and its keys are still served one by one.
    let get = request(C::GetKvConfig, &[("namespace", "big"), ("key", "k7")]);
    assert_code(&server.call(get).await, R::Success);
}
