//! The schedule under paused tokio time (no sockets: the NameServer list is
//! empty, so every registration is a no-op that still reports).

use std::sync::Arc;
use std::time::Duration;

use rmq_broker_client::{
    clamp_period, BrokerConfig, Event, NameServerList, Registrar, Schedule, Skip, SlotSkip,
    TopicTable, Trigger,
};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;

fn registrar(config: BrokerConfig) -> Arc<Registrar> {
    Arc::new(Registrar::new(config, TopicTable::new(0), NameServerList::empty()).unwrap())
}

fn config() -> BrokerConfig {
    BrokerConfig::new("c", "b", "127.0.0.1:10911")
}

/// (seconds since start, trigger, skip reason or None) of slot events.
async fn slots(
    events: &mut UnboundedReceiver<Event>,
    start: Instant,
    n: usize,
) -> Vec<(u64, Trigger, Option<SlotSkip>)> {
    let mut out = Vec::new();
    while out.len() < n {
        let at = || start.elapsed().as_secs();
        match events.recv().await.unwrap() {
            Event::Registered { trigger, report } => {
                assert_eq!(report.skipped, Some(Skip::NoNameServer));
                out.push((at(), trigger, None));
            }
            Event::Skipped { trigger, reason } => out.push((at(), trigger, Some(reason))),
            _ => {}
        }
    }
    out
}

#[test]
fn period_is_clamped_to_java_bounds() {
    assert_eq!(
        clamp_period(Duration::from_secs(5)),
        Duration::from_secs(10)
    );
    assert_eq!(
        clamp_period(Duration::from_secs(30)),
        Duration::from_secs(30)
    );
    assert_eq!(
        clamp_period(Duration::from_secs(600)),
        Duration::from_secs(60)
    );
    let mut config = config();
    config.register_name_server_period = Duration::from_millis(1);
    let schedule = Schedule::java(&config, None);
    assert_eq!(schedule.register_period, Duration::from_secs(10));
    assert_eq!(schedule.first_register_delay, Duration::from_secs(10));
    assert!(schedule.heartbeat_interval.is_none());
}

#[tokio::test(start_paused = true)]
async fn startup_then_first_periodic_after_10s_then_every_period() {
    let mut config = config();
    config.register_name_server_period = Duration::from_secs(20);
    let registrar = registrar(config.clone());
    let (tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let start = Instant::now();
    let _running = rmq_broker_client::spawn(registrar, Schedule::java(&config, None), Some(tx));
    let got = slots(&mut events, start, 4).await;
    assert_eq!(
        got,
        [
            (0, Trigger::Startup, None),
            (10, Trigger::Periodic, None),
            (30, Trigger::Periodic, None),
            (50, Trigger::Periodic, None),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn should_start_time_delays_only_periodic_runs() {
    let mut config = config();
    config.disappear_time_after_start = Some(Duration::from_secs(25));
    let registrar = registrar(config.clone());
    let (tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let start = Instant::now();
    let _running = rmq_broker_client::spawn(registrar, Schedule::java(&config, None), Some(tx));
    let got = slots(&mut events, start, 3).await;
    assert_eq!(
        got,
        [
            (0, Trigger::Startup, None),
            (10, Trigger::Periodic, Some(SlotSkip::BeforeStartTime)),
            (40, Trigger::Periodic, None),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn isolated_broker_waits_and_does_not_heartbeat() {
    let mut config = config();
    config.enable_slave_acting_master = true;
    config.total_replicas = 2;
    let registrar = registrar(config.clone());
    assert!(registrar.is_isolated());
    let schedule = Schedule::java(&config, None);
    assert_eq!(schedule.heartbeat_interval, Some(Duration::from_secs(1)));
    let (tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let start = Instant::now();
    let _running = rmq_broker_client::spawn(registrar.clone(), schedule, Some(tx));
    let got = slots(&mut events, start, 2).await;
    assert_eq!(
        got,
        [
            (0, Trigger::Startup, Some(SlotSkip::Isolated)),
            (10, Trigger::Periodic, Some(SlotSkip::Isolated)),
        ]
    );
    // No heartbeat was sent while isolated.
    assert!(events.try_recv().is_err());

    registrar.set_isolated(false);
    let mut heartbeats = 0;
    let mut registered_at = None;
    while registered_at.is_none() {
        match events.recv().await.unwrap() {
            Event::Heartbeat { .. } => heartbeats += 1,
            Event::Registered { trigger, .. } => {
                assert_eq!(trigger, Trigger::Periodic);
                registered_at = Some(start.elapsed().as_secs());
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(registered_at, Some(40));
    // One heartbeat per second between 10 s and 40 s.
    assert!((29..=31).contains(&heartbeats), "{heartbeats}");
}
