//! Shared pieces of the end-to-end tests: brokers registering through
//! `rmq-broker-client` on a fast schedule, a started `rmq-route-client`
//! following their routes, and waits on what either side reports. The
//! NameServer is `rmq-testkit`'s: Waymark's by default, Java's when
//! `WAYMARK_JAVA_NAMESRV_CLASSPATH` is set.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use rmq_broker_client::{
    wall_ms, BrokerConfig, Event, NameServerList, RegisterReport, Registrar, Running, Schedule,
    TopicTable,
};
use rmq_protocol::TopicConfig;
use rmq_route_client::{MessageQueue, RouteClientConfig, RouteWatch, TopicView};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

/// Period of the brokers' registrations and the client's refresh.
pub const PERIOD: Duration = Duration::from_millis(300);
/// The client's route refresh period.
pub const POLL: Duration = Duration::from_millis(100);
/// How long a test waits for something the other side should report.
pub const WAIT: Duration = Duration::from_secs(10);

/// A master `name` at a made-up `127.0.0.1:port` serving `topic` (4 queues,
/// read|write) and, as real brokers do, a topic named after itself (the
/// NameServer refuses a first registration with a single topic).
pub fn broker(name: &str, port: u16, topic: &str, namesrv: &[&str]) -> Arc<Registrar> {
    let config = BrokerConfig::new("LifecycleCluster", name, format!("127.0.0.1:{port}"));
    let topics = [topic, name].map(|t| {
        let mut config = TopicConfig::new(t);
        (config.read_queue_nums, config.write_queue_nums, config.perm) = (4, 4, 6);
        config
    });
    let table = TopicTable::with_topics(topics, wall_ms());
    let list = NameServerList::from_static(&namesrv.join(";")).unwrap();
    Arc::new(Registrar::new(config, table, list).unwrap())
}

/// Java's schedule with the start-up registration and then one every
/// [`PERIOD`]; what happens comes out of the receiver.
pub fn run(registrar: &Arc<Registrar>) -> (Running, UnboundedReceiver<Event>) {
    let schedule = Schedule {
        first_register_delay: PERIOD,
        register_period: PERIOD,
        ..Schedule::java(registrar.config(), None)
    };
    let (tx, events) = unbounded_channel();
    (
        rmq_broker_client::spawn(registrar.clone(), schedule, Some(tx)),
        events,
    )
}

/// The next registration report of the schedule for which `check` holds
/// (earlier ones are skipped).
pub async fn registration_where(
    events: &mut UnboundedReceiver<Event>,
    what: &str,
    check: impl Fn(&RegisterReport) -> bool,
) -> RegisterReport {
    let wait = async {
        loop {
            if let Event::Registered { report, .. } = events.recv().await.expect("schedule alive") {
                if check(&report) {
                    return report;
                }
            }
        }
    };
    tokio::time::timeout(WAIT, wait)
        .await
        .unwrap_or_else(|_| panic!("no registration {what} within {WAIT:?}"))
}

/// Forgets the events reported so far.
pub fn drain(events: &mut UnboundedReceiver<Event>) {
    while events.try_recv().is_ok() {}
}

/// Waits for the schedule to report a skipped slot (proof that no
/// registration started before the change that caused it is still running).
pub async fn skipped_slot(events: &mut UnboundedReceiver<Event>) {
    let wait =
        async { while !matches!(events.recv().await, Some(Event::Skipped { .. }) | None) {} };
    tokio::time::timeout(WAIT, wait)
        .await
        .expect("a skipped slot");
}

/// A client config for `addrs` with short timeouts and a [`POLL`] refresh.
pub fn client_config(addrs: &[&str]) -> RouteClientConfig {
    let mut config = RouteClientConfig {
        namesrv_addrs: addrs.iter().map(|a| a.to_string()).collect(),
        poll_name_server_interval: POLL,
        mq_client_api_timeout: Duration::from_secs(2),
        ..Default::default()
    };
    config.channel.connect_timeout = Duration::from_secs(1);
    config
}

/// Waits for the next change a watch signals and returns the view.
pub async fn next_change(watch: &mut RouteWatch) -> Arc<TopicView> {
    tokio::time::timeout(WAIT, watch.changed())
        .await
        .expect("a route change")
        .expect("client alive");
    watch.borrow_and_update().clone().expect("a view")
}

/// `broker:queueId` of each queue.
pub fn names<'a>(queues: impl IntoIterator<Item = &'a MessageQueue>) -> Vec<String> {
    queues
        .into_iter()
        .map(|q| format!("{}:{}", q.broker_name, q.queue_id))
        .collect()
}

/// `broker:0..3` for each broker, in order: the queues of a 4-queue topic.
pub fn queues_of(brokers: &[&str]) -> Vec<String> {
    brokers
        .iter()
        .flat_map(|b| (0..4).map(move |i| format!("{b}:{i}")))
        .collect()
}

/// The broker names of a view's route, sorted.
pub fn brokers(view: &TopicView) -> Vec<String> {
    let mut names: Vec<_> = view
        .route
        .broker_datas
        .iter()
        .map(|b| b.broker_name.clone())
        .collect();
    names.sort();
    names
}

/// The permission the route gives `broker`'s queues.
pub fn perm_of(view: &TopicView, broker: &str) -> i32 {
    view.route
        .queue_datas
        .iter()
        .find(|q| q.broker_name == broker)
        .unwrap_or_else(|| panic!("{broker} in the route"))
        .perm
}
