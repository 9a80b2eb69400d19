//! `Registrar`: one broker's registration with a list of NameServers — the
//! `registerBrokerAll` cycle, `needRegister`, incremental registration,
//! heartbeats and unregistration (Java `BrokerController` and
//! `BrokerOuterAPI`), plus the runtime state they depend on (broker id, permission,
//! isolation, master addresses).
//!
//! Registrations of one broker never overlap: an async lock serializes them,
//! so DataVersions reach each NameServer in order. Synchronous locks guard
//! the topic table and the role and are never held across an await. The
//! timing of cycles is [`Schedule`](crate::Schedule)'s business.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use rmq_protocol::DataVersion;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::body::{self, BodyOptions, EncodedBody, Identity};
use crate::config::BrokerConfig;
use crate::error::ConfigError;
use crate::nsaddr::NameServerList;
use crate::pool::Pool;
use crate::report::{NsReply, NsResult, RegisterReport, Skip};
use crate::role::{MasterInfo, Role};
use crate::security;
use crate::send;
use crate::topics::TopicTable;

/// Wall-clock milliseconds, as Java stamps DataVersions.
pub fn wall_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[derive(Debug)]
struct Live {
    broker_id: i64,
    broker_permission: i32,
    isolated: bool,
    shutdown: bool,
}

/// The registration side of one broker. Share it with `Arc`.
#[derive(Debug)]
pub struct Registrar {
    config: BrokerConfig,
    namesrv: NameServerList,
    pool: Pool,
    topics: Mutex<TopicTable>,
    topics_path: Option<PathBuf>,
    live: Mutex<Live>,
    master: watch::Sender<MasterInfo>,
    serial: tokio::sync::Mutex<()>,
}

impl Registrar {
    /// A registrar for `config`'s broker with `topics`, registering with the
    /// NameServers in `namesrv` (read at every cycle, so changes apply
    /// without restart). Starts isolated if [`BrokerConfig::starts_isolated`].
    ///
    /// # Errors
    /// [`BrokerConfig::validate`] failures.
    pub fn new(
        config: BrokerConfig,
        topics: TopicTable,
        namesrv: NameServerList,
    ) -> Result<Registrar, ConfigError> {
        config.validate()?;
        // NOTIFY_MIN_BROKER_ID_CHANGE, the one request a NameServer sends,
        // is for acting-master bookkeeping, which this crate does not do:
        // the client config drops it.
        let client = security::client_config(
            config.connect_timeout,
            config.inner_client_authentication_credentials.as_ref(),
            config.tls.as_ref(),
        );
        let live = Live {
            broker_id: config.effective_broker_id(),
            broker_permission: config.broker_permission,
            isolated: config.starts_isolated(),
            shutdown: false,
        };
        let master = MasterInfo {
            ha_server_addr: config
                .has_static_ha_master()
                .then(|| config.ha_master_address.clone())
                .flatten(),
            ..MasterInfo::default()
        };
        Ok(Registrar {
            config,
            namesrv,
            pool: Pool::new(client),
            topics: Mutex::new(topics),
            topics_path: None,
            live: Mutex::new(live),
            master: watch::Sender::new(master),
            serial: tokio::sync::Mutex::new(()),
        })
    }

    /// Persists the topic table to `path` whenever the registrar itself
    /// changes it (order-config adoption, role and permission bumps).
    pub fn with_topics_path(mut self, path: impl Into<PathBuf>) -> Registrar {
        self.topics_path = Some(path.into());
        self
    }

    /// The settings.
    pub fn config(&self) -> &BrokerConfig {
        &self.config
    }

    /// The NameServer list handle.
    pub fn namesrv(&self) -> &NameServerList {
        &self.namesrv
    }

    /// The broker id now.
    pub fn broker_id(&self) -> i64 {
        self.live.lock().broker_id
    }

    /// `brokerPermission` now.
    pub fn broker_permission(&self) -> i32 {
        self.live.lock().broker_permission
    }

    /// Whether the periodic and heartbeat tasks skip (Java `isIsolated`: an
    /// acting master before pre-online, a fenced controller-mode broker, or
    /// after `stopService`).
    pub fn is_isolated(&self) -> bool {
        self.live.lock().isolated
    }

    /// Sets or clears isolation (pre-online done, controller unfence).
    pub fn set_isolated(&self, isolated: bool) {
        self.live.lock().isolated = isolated;
    }

    /// The master addresses now.
    pub fn master(&self) -> MasterInfo {
        self.master.borrow().clone()
    }

    /// A receiver that sees every change of [`Self::master`].
    pub fn watch_master(&self) -> watch::Receiver<MasterInfo> {
        self.master.subscribe()
    }

    /// The live DataVersion.
    pub fn data_version(&self) -> DataVersion {
        self.topics.lock().data_version()
    }

    /// Runs `f` on the topic table. Mutations bump the version themselves;
    /// persisting them is the caller's (see [`Self::persist_topics`]).
    pub fn update_topics<R>(&self, f: impl FnOnce(&mut TopicTable) -> R) -> R {
        f(&mut self.topics.lock())
    }

    /// Writes the topic table to the configured path, if any.
    ///
    /// # Errors
    /// The I/O failure of [`TopicTable::save`].
    pub fn persist_topics(&self) -> std::io::Result<()> {
        match &self.topics_path {
            None => Ok(()),
            Some(path) => {
                let snapshot = self.topics.lock().clone();
                snapshot.save(path)
            }
        }
    }

    fn persist_or_log(&self) {
        if let Err(error) = self.persist_topics() {
            tracing::error!(%error, "cannot persist the topic table");
        }
    }

    /// Adopts a role decided from outside: broker id, master addresses and,
    /// with `state_version`, a DataVersion bump (the AutoSwitch seam). The
    /// caller then registers (`register_all(true, false, force)`).
    pub fn set_role(&self, role: Role) {
        self.live.lock().broker_id = role.broker_id;
        let static_ha = self.config.has_static_ha_master();
        self.master.send_modify(|m| {
            m.master_addr = role.master.master_addr;
            if !static_ha {
                m.ha_server_addr = role.master.ha_server_addr;
            }
        });
        if let Some(state_version) = role.state_version {
            self.update_topics(|t| t.bump_with_state_version(state_version, wall_ms()));
            self.persist_or_log();
        }
    }

    /// Changes `brokerPermission`, bumping the DataVersion as Java's
    /// UPDATE_BROKER_CONFIG does; returns whether it changed. Java then
    /// registers with `register_all(false, false, true)`.
    pub fn set_permission(&self, broker_permission: i32) -> bool {
        {
            let mut live = self.live.lock();
            if live.broker_permission == broker_permission {
                return false;
            }
            live.broker_permission = broker_permission;
        }
        self.update_topics(|t| t.bump(wall_ms()));
        self.persist_or_log();
        true
    }

    fn identity(&self) -> (Identity, BodyOptions) {
        let live = self.live.lock();
        let identity = Identity {
            cluster_name: self.config.cluster_name.clone(),
            broker_name: self.config.broker_name.clone(),
            broker_addr: self.config.broker_addr.clone(),
            ha_server_addr: self.config.ha_server_addr.clone(),
            broker_id: live.broker_id,
        };
        let options = BodyOptions::from_config(&self.config, live.broker_permission);
        (identity, options)
    }

    /// The addresses to use now; connections to others are closed.
    fn targets(&self) -> Vec<String> {
        let addrs = self.namesrv.addrs();
        self.pool.retain(&addrs);
        addrs
    }

    /// Java `registerBrokerAll(checkOrderConfig, oneway, forceRegister)`:
    /// builds the wrapper with the live DataVersion (masking every
    /// topic's perm if the broker is not both readable and writable), asks
    /// `needRegister` unless `force` or split registration, then sends each
    /// body to all NameServers in parallel and applies the first successful
    /// answer of each batch (Java `handleRegisterBrokerResult` reads the
    /// first answer in completion order).
    pub async fn register_all(
        &self,
        check_order: bool,
        oneway: bool,
        force: bool,
    ) -> RegisterReport {
        let _serial = self.serial.lock().await;
        let started = Instant::now();
        let (identity, options) = self.identity();
        if self.live.lock().shutdown {
            let mut report = RegisterReport::new(identity.broker_id, self.data_version());
            report.skipped = Some(Skip::Shutdown);
            return report;
        }
        // needRegister first, so an unneeded cycle does not encode the table.
        if options.split.is_none() && !force {
            let addrs = self.targets();
            let version = self.data_version();
            if !addrs.is_empty()
                && !send::need_register(&self.pool, &self.config, &identity, &addrs, version).await
            {
                let mut report = RegisterReport::new(identity.broker_id, version);
                report.skipped = Some(Skip::NotNeeded);
                report.elapsed = started.elapsed();
                return report;
            }
        }
        let build_started = Instant::now();
        let (bodies, version) = {
            let table = self.topics.lock();
            let bodies = body::full_bodies(&table, &options, wall_ms());
            (bodies, table.data_version())
        };
        let mut report = RegisterReport::new(identity.broker_id, version);
        report.build_time = build_started.elapsed();
        self.send_bodies(&identity, &bodies, check_order, oneway, &mut report)
            .await;
        report.elapsed = started.elapsed();
        report
    }

    /// Java `registerIncrementBrokerData`: only `topics`, with the
    /// live DataVersion (bump it first); not gated by `needRegister`.
    /// Nothing is sent if none of the topics exists.
    pub async fn register_increment(&self, topics: &[String]) -> RegisterReport {
        let _serial = self.serial.lock().await;
        let started = Instant::now();
        let (identity, options) = self.identity();
        let (body, version) = {
            let table = self.topics.lock();
            let body = body::increment_body(&table, topics, &options, wall_ms());
            (body, table.data_version())
        };
        let mut report = RegisterReport::new(identity.broker_id, version);
        report.build_time = started.elapsed();
        if let Some(body) = body {
            self.send_bodies(&identity, &[body], true, false, &mut report)
                .await;
        }
        report.elapsed = started.elapsed();
        report
    }

    async fn send_bodies(
        &self,
        identity: &Identity,
        bodies: &[EncodedBody],
        check_order: bool,
        oneway: bool,
        report: &mut RegisterReport,
    ) {
        if self.live.lock().shutdown {
            report.skipped = Some(Skip::Shutdown);
            return;
        }
        let addrs = self.targets();
        if addrs.is_empty() {
            report.skipped = Some(Skip::NoNameServer);
            return;
        }
        for body in bodies {
            let batch =
                send::register(&self.pool, &self.config, identity, &addrs, body, oneway).await;
            let first = batch
                .results
                .iter()
                .find_map(|r| r.outcome.as_ref().ok().cloned().flatten());
            if let Some(reply) = first {
                self.apply(&reply, check_order);
                report.applied = Some(reply);
            }
            report.batches.push(batch);
        }
    }

    /// Java `handleRegisterBrokerResult` for the first successful answer.
    fn apply(&self, reply: &NsReply, check_order: bool) {
        let static_ha = self.config.has_static_ha_master();
        self.master.send_if_modified(|m| {
            let before = m.clone();
            if !static_ha && reply.ha_server_addr.is_some() {
                m.ha_server_addr.clone_from(&reply.ha_server_addr);
            }
            m.master_addr.clone_from(&reply.master_addr);
            *m != before
        });
        if let (true, Some(kv)) = (check_order, &reply.order_topic_config) {
            if self.update_topics(|t| t.apply_order_config(kv, wall_ms())) {
                self.persist_or_log();
            }
        }
    }

    /// Java `needRegister` (QUERY_DATA_VERSION) over every configured NameServer.
    pub async fn need_register(&self) -> bool {
        let (identity, _) = self.identity();
        let addrs = self.targets();
        let version = self.data_version();
        send::need_register(&self.pool, &self.config, &identity, &addrs, version).await
    }

    /// One lightweight heartbeat to every NameServer (what an acting-master
    /// broker sends every `brokerHeartbeatInterval`); empty while shut down.
    pub async fn heartbeat(&self) -> Vec<NsResult<()>> {
        if self.live.lock().shutdown {
            return Vec::new();
        }
        let (identity, _) = self.identity();
        let addrs = self.targets();
        let version = self.data_version();
        send::heartbeat(&self.pool, &self.config, &identity, &addrs, version).await
    }

    /// UNREGISTER_BROKER to every configured NameServer in parallel, bounded
    /// by `unregister_timeout` (Java sends them one after another, 3 s each).
    /// Does not stop later registrations; see
    /// [`Self::shutdown`].
    pub async fn unregister_all(&self) -> Vec<NsResult<()>> {
        let (identity, _) = self.identity();
        let addrs = self.targets();
        send::unregister(&self.pool, &self.config, &identity, &addrs).await
    }

    /// Java `shutdownBasicService`: refuse every later registration, wait
    /// for one in flight, then [`Self::unregister_all`].
    pub async fn shutdown(&self) -> Vec<NsResult<()>> {
        self.live.lock().shutdown = true;
        drop(self.serial.lock().await);
        self.unregister_all().await
    }

    /// Closes every NameServer connection (they reopen on next use).
    pub fn close_connections(&self) {
        self.pool.close_all();
    }
}
