//! When registrations, heartbeats and address fetches happen (Java
//! `BrokerController.start` and its scheduled tasks): a start-up registration,
//! periodic registrations (period clamped to [10 s, 60 s], first after
//! 10 s), `shouldStartTime` and isolation, the optional 1 s heartbeat, the
//! HTTP address-service poll, and unregistration at shutdown.
//!
//! All timing uses `tokio::time`, so tests can pause and advance time where
//! no sockets are involved. What one cycle does is the [`Registrar`]'s.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;
use tokio::time::{interval_at, Instant, MissedTickBehavior};

use crate::config::BrokerConfig;
use crate::error::HttpError;
use crate::http::AddressService;
use crate::registrar::Registrar;
use crate::report::{NsResult, RegisterReport};

/// Java's bounds of `registerNameServerPeriod`.
pub const MIN_REGISTER_PERIOD: Duration = Duration::from_secs(10);
/// Upper bound of the period.
pub const MAX_REGISTER_PERIOD: Duration = Duration::from_secs(60);

/// The timings of one broker. [`Schedule::java`] gives Java's; fields are
/// public so tests and simulations may use any values (the clamp applies only
/// in `java`).
#[derive(Debug, Clone)]
pub struct Schedule {
    /// Forced registration as soon as the schedule starts (unless isolated).
    pub register_at_start: bool,
    /// Delay of the first periodic registration (Java: 10 s).
    pub first_register_delay: Duration,
    /// Period of registration.
    pub register_period: Duration,
    /// `forceRegister` of the periodic runs.
    pub force_register: bool,
    /// Periodic runs are skipped until this long after the start
    /// (`disappearTimeAfterStart`).
    pub disappear_time_after_start: Option<Duration>,
    /// Lightweight heartbeat period, if any (acting master: 1 s, first after 1 s).
    pub heartbeat_interval: Option<Duration>,
    /// Where to fetch the NameServer list from, if anywhere.
    pub address_service: Option<AddressService>,
    /// Fetch period; the first periodic fetch is one period after start.
    pub fetch_interval: Duration,
    /// Timeout of one fetch (Java: 3 s).
    pub fetch_timeout: Duration,
}

impl Schedule {
    /// Java's schedule for `config`, with `address_service` if the list is
    /// fetched over HTTP.
    pub fn java(config: &BrokerConfig, address_service: Option<AddressService>) -> Schedule {
        Schedule {
            register_at_start: true,
            first_register_delay: Duration::from_secs(10),
            register_period: clamp_period(config.register_name_server_period),
            force_register: config.force_register,
            disappear_time_after_start: config.disappear_time_after_start,
            heartbeat_interval: config
                .enable_slave_acting_master
                .then_some(config.broker_heartbeat_interval),
            address_service,
            fetch_interval: config.fetch_namesrv_addr_interval,
            fetch_timeout: Duration::from_secs(3),
        }
    }
}

/// `max(10 s, min(period, 60 s))`.
pub fn clamp_period(period: Duration) -> Duration {
    period.clamp(MIN_REGISTER_PERIOD, MAX_REGISTER_PERIOD)
}

/// Which schedule slot a registration belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// The forced registration at start.
    Startup,
    /// A periodic run.
    Periodic,
}

/// Why a slot did not register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotSkip {
    /// The broker is isolated.
    Isolated,
    /// Before `shouldStartTime`.
    BeforeStartTime,
}

/// What the schedule did; sent to the optional event channel.
#[derive(Debug)]
pub enum Event {
    /// A registration ran.
    Registered {
        /// Which slot.
        trigger: Trigger,
        /// Its result.
        report: RegisterReport,
    },
    /// A slot was skipped.
    Skipped {
        /// Which slot.
        trigger: Trigger,
        /// Why.
        reason: SlotSkip,
    },
    /// A heartbeat went out.
    Heartbeat {
        /// One entry per NameServer.
        results: Vec<NsResult<()>>,
    },
    /// The address service changed the NameServer list.
    NameServersChanged {
        /// The new list.
        addrs: Vec<String>,
    },
    /// The address service gave nothing usable.
    AddressFetchFailed {
        /// Why.
        error: HttpError,
    },
}

/// The running tasks of one broker. Dropping it stops them without
/// unregistering; [`Running::shutdown`] unregisters.
#[derive(Debug)]
pub struct Running {
    registrar: Arc<Registrar>,
    tasks: Vec<JoinHandle<()>>,
}

impl Running {
    /// The registrar the tasks drive.
    pub fn registrar(&self) -> &Arc<Registrar> {
        &self.registrar
    }

    /// Stops the tasks (an in-flight registration is abandoned), then
    /// [`Registrar::shutdown`]: no later registration, UNREGISTER_BROKER to
    /// every NameServer.
    pub async fn shutdown(mut self) -> Vec<NsResult<()>> {
        for task in std::mem::take(&mut self.tasks) {
            task.abort();
            let _ = task.await;
        }
        self.registrar.shutdown().await
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

fn emit(events: &Option<UnboundedSender<Event>>, event: Event) {
    if let Some(tx) = events {
        let _ = tx.send(event);
    }
}

/// Starts `schedule` for `registrar`; `events` receives what happens.
pub fn spawn(
    registrar: Arc<Registrar>,
    schedule: Schedule,
    events: Option<UnboundedSender<Event>>,
) -> Running {
    let start = Instant::now();
    let mut tasks = Vec::new();
    tasks.push(tokio::spawn(register_loop(
        registrar.clone(),
        schedule.clone(),
        events.clone(),
        start,
    )));
    if let Some(interval) = schedule.heartbeat_interval {
        tasks.push(tokio::spawn(heartbeat_loop(
            registrar.clone(),
            interval,
            events.clone(),
            start,
        )));
    }
    if let Some(service) = schedule.address_service.clone() {
        tasks.push(tokio::spawn(fetch_loop(
            registrar.clone(),
            service,
            schedule,
            events,
            start,
        )));
    }
    Running { registrar, tasks }
}

async fn register_loop(
    registrar: Arc<Registrar>,
    schedule: Schedule,
    events: Option<UnboundedSender<Event>>,
    start: Instant,
) {
    if schedule.register_at_start {
        // Improvement over Java: with an address service and no list yet,
        // fetch once before the start-up registration instead of sending it
        // to nobody.
        if let Some(service) = &schedule.address_service {
            if registrar.namesrv().addrs().is_empty() {
                fetch_once(&registrar, service, schedule.fetch_timeout, &events).await;
            }
        }
        let trigger = Trigger::Startup;
        if registrar.is_isolated() {
            let reason = SlotSkip::Isolated;
            emit(&events, Event::Skipped { trigger, reason });
        } else {
            let report = registrar.register_all(true, false, true).await;
            emit(&events, Event::Registered { trigger, report });
        }
    }
    let should_start = schedule.disappear_time_after_start.map(|d| start + d);
    let mut ticker = interval_at(
        start + schedule.first_register_delay,
        schedule.register_period,
    );
    ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let trigger = Trigger::Periodic;
    loop {
        ticker.tick().await;
        let reason = if should_start.is_some_and(|at| Instant::now() < at) {
            Some(SlotSkip::BeforeStartTime)
        } else if registrar.is_isolated() {
            Some(SlotSkip::Isolated)
        } else {
            None
        };
        if let Some(reason) = reason {
            emit(&events, Event::Skipped { trigger, reason });
            continue;
        }
        let report = registrar
            .register_all(true, false, schedule.force_register)
            .await;
        if let Some(error) = report.failures().next() {
            tracing::warn!(ns = error.0, error = %error.1, "periodic registration failed");
        }
        emit(&events, Event::Registered { trigger, report });
    }
}

async fn heartbeat_loop(
    registrar: Arc<Registrar>,
    interval: Duration,
    events: Option<UnboundedSender<Event>>,
    start: Instant,
) {
    let mut ticker = interval_at(start + interval, interval);
    ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        if registrar.is_isolated() {
            continue;
        }
        let results = registrar.heartbeat().await;
        emit(&events, Event::Heartbeat { results });
    }
}

async fn fetch_once(
    registrar: &Registrar,
    service: &AddressService,
    timeout: Duration,
    events: &Option<UnboundedSender<Event>>,
) {
    match service.fetch(timeout).await {
        Ok(Some(text)) => {
            if registrar.namesrv().apply_fetched(&text) {
                let addrs = registrar.namesrv().addrs();
                tracing::info!(?addrs, "name server list changed");
                emit(events, Event::NameServersChanged { addrs });
            }
        }
        Ok(None) => {}
        Err(error) => {
            tracing::warn!(url = service.url(), %error, "cannot fetch name server list");
            emit(events, Event::AddressFetchFailed { error });
        }
    }
}

async fn fetch_loop(
    registrar: Arc<Registrar>,
    service: AddressService,
    schedule: Schedule,
    events: Option<UnboundedSender<Event>>,
    start: Instant,
) {
    let mut ticker = interval_at(start + schedule.fetch_interval, schedule.fetch_interval);
    ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        fetch_once(&registrar, &service, schedule.fetch_timeout, &events).await;
    }
}
