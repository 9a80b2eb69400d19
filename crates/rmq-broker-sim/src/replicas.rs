//! Controller mode (`--controller`): each broker set is `--replicas`
//! replicas whose roles the controller decides. Every replica listens on
//! its own address (for NOTIFY_BROKER_ROLE_CHANGED), keeps its controller id
//! in an identity file, and registers with the NameServers through a
//! `ControllerAgent`: master as id 0, slaves under their controller ids.
//!
//! Replica `r` of group `g` is `<prefix>-<g>/<r>` at
//! `<ip>:<base_port + 10·(g·replicas + r)>` (any free port with
//! `--base-port 0`); its files are `<store>/<prefix>-<g>/<r>/brokerIdentity`.
//! Stopping a replica is a crash: no UNREGISTER_BROKER, every connection
//! closed, so the controller elects another master at once.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use rmq_broker_client::controller::serve_notices;
use rmq_broker_client::{
    spawn, AddressService, BrokerConfig, ControllerAgent, ControllerModeConfig, NameServerList,
    Registrar, ReplicaRole, Running, TopicTable,
};
use tokio::net::TcpListener;
use tokio::sync::mpsc::unbounded_channel;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::commands::{self, Command, Target};
use crate::output::{print_events, role_name};
use crate::security::Security;
use crate::{fleet, line, stamp, Args};

/// One replica, running or stopped.
struct Replica {
    label: String,
    name: String,
    addr: String,
    config: ControllerModeConfig,
    topics: TopicTable,
    live: Option<Live>,
}

struct Live {
    agent: ControllerAgent,
    schedule: Running,
    notices: (JoinHandle<()>, oneshot::Sender<()>),
    printer: JoinHandle<()>,
}

/// Every replica of every set, and what they share.
struct Sets<'a> {
    args: &'a Args,
    security: &'a Security,
    namesrv: NameServerList,
    service: Option<AddressService>,
    replicas: Vec<Replica>,
}

/// Runs the replica sets until `--duration` passes or Ctrl-C, obeying the
/// commands on standard input and `--stop-master-after`.
pub async fn run(
    args: &Args,
    security: &Security,
    controller: &str,
    namesrv: NameServerList,
    service: Option<AddressService>,
) -> anyhow::Result<bool> {
    let mut base = ControllerModeConfig::new(controller)?;
    security.apply_to_controller(&mut base);
    for setting in &args.set {
        let (key, value) = setting
            .split_once('=')
            .with_context(|| format!("--set {setting:?}: expected KEY=VALUE"))?;
        if !base.set(key.trim(), value)? {
            anyhow::bail!("--set {key}: not a controller-mode option");
        }
    }
    let (store, temporary) = match &args.store_dir {
        Some(dir) => (dir.clone(), false),
        None => (
            std::env::temp_dir().join(format!("rmq-broker-sim-{}", std::process::id())),
            true,
        ),
    };
    let mut sets = Sets {
        args,
        security,
        namesrv,
        service,
        replicas: Vec::new(),
    };
    sets.start_all(&base, &store).await?;

    let mut commands = commands::from_stdin();
    let mut stdin_open = true;
    let stop_master = tokio::time::sleep(args.stop_master_after.unwrap_or_default());
    let mut stop_master_pending = args.stop_master_after.is_some();
    let end = async {
        match args.duration {
            Some(duration) => tokio::time::sleep(duration).await,
            None => crate::stop_requested().await,
        }
    };
    tokio::pin!(stop_master, end);
    loop {
        tokio::select! {
            () = &mut end => break,
            () = &mut stop_master, if stop_master_pending => {
                stop_master_pending = false;
                sets.stop(&Target::Master(None)).await;
            }
            command = commands.recv(), if stdin_open => match command {
                Some(command) => {
                    if let Err(error) = sets.obey(command).await {
                        eprintln!("{error:#}");
                    }
                }
                None => stdin_open = false,
            },
        }
    }
    sets.shutdown().await;
    if temporary {
        let _ = std::fs::remove_dir_all(&store);
    }
    Ok(true)
}

impl Sets<'_> {
    async fn start_all(
        &mut self,
        base: &ControllerModeConfig,
        store: &std::path::Path,
    ) -> anyhow::Result<()> {
        let args = self.args;
        for group in 0..args.brokers {
            let (name, topics) = fleet::group_topics(args, group);
            for r in 0..args.replicas {
                let index = group * args.replicas + r;
                let port = match args.base_port {
                    0 => 0,
                    base => u16::try_from(usize::from(base) + 10 * index)
                        .context("too many replicas for --base-port: ports run past 65535")?,
                };
                let listener = TcpListener::bind((args.ip.as_str(), port))
                    .await
                    .with_context(|| format!("cannot listen on {}:{port}", args.ip))?;
                let port = listener.local_addr()?.port();
                let label = format!("{name}/{r}");
                let dir: PathBuf = store.join(&name).join(r.to_string());
                let mut replica = Replica {
                    addr: format!("{}:{port}", args.ip),
                    config: base.clone().with_identity_path(dir.join("brokerIdentity")),
                    name: name.clone(),
                    topics: topics.clone(),
                    label,
                    live: None,
                };
                self.launch(&mut replica, listener)?;
                if let Some(live) = &replica.live {
                    // One at a time, so that on a new set replica r gets id
                    // r + 1 and the first is the first master; bounded, in
                    // case the controller is not there yet.
                    let mut view = live.agent.watch();
                    let _ = tokio::time::timeout(
                        Duration::from_secs(5),
                        view.wait_for(|v| v.role != ReplicaRole::Unknown),
                    )
                    .await;
                }
                self.replicas.push(replica);
                if !args.stagger.is_zero() {
                    tokio::time::sleep(args.stagger).await;
                }
            }
        }
        Ok(())
    }

    fn launch(&self, replica: &mut Replica, listener: TcpListener) -> anyhow::Result<()> {
        let mut config = BrokerConfig::new(&self.args.cluster, &replica.name, &replica.addr);
        fleet::configure(self.args, self.security, &mut config);
        let registrar = Arc::new(
            Registrar::new(config, replica.topics.clone(), self.namesrv.clone())
                .with_context(|| format!("replica {}", replica.label))?,
        );
        let (agent_tx, agent_events) = unbounded_channel();
        let agent =
            ControllerAgent::start(registrar.clone(), replica.config.clone(), Some(agent_tx));
        let (schedule_tx, schedule_events) = unbounded_channel();
        let schedule = fleet::schedule(self.args, &registrar, self.service.clone());
        let schedule = spawn(registrar.clone(), schedule, Some(schedule_tx));
        let (stop, stopped) = oneshot::channel::<()>();
        let service = agent.notice_service();
        let notices = tokio::spawn(async move {
            let _ = serve_notices(listener, service, async {
                let _ = stopped.await;
            })
            .await;
        });
        let printer = tokio::spawn(print_events(
            replica.label.clone(),
            registrar,
            agent_events,
            schedule_events,
        ));
        replica.live = Some(Live {
            agent,
            schedule,
            notices: (notices, stop),
            printer,
        });
        Ok(())
    }

    async fn obey(&mut self, command: Command) -> anyhow::Result<()> {
        match command {
            Command::Stop(target) => self.stop(&target).await,
            Command::Start(label) => self.start_again(&label).await?,
            Command::Status => {
                for replica in &self.replicas {
                    let text = match &replica.live {
                        Some(live) => {
                            let view = live.agent.view();
                            format!(
                                "status replica={} addr={} id={} role={} epoch={} phase={:?}",
                                replica.label,
                                replica.addr,
                                view.controller_id.map_or("-".into(), |id| id.to_string()),
                                role_name(&view.role),
                                view.master_epoch,
                                view.phase
                            )
                        }
                        None => format!(
                            "status replica={} addr={} stopped",
                            replica.label, replica.addr
                        ),
                    };
                    line(&text);
                }
            }
        }
        Ok(())
    }

    /// Stops the targeted replicas as a crash would.
    async fn stop(&mut self, target: &Target) {
        let chosen: Vec<usize> = self
            .replicas
            .iter()
            .enumerate()
            .filter(|(_, r)| match target {
                Target::Master(set) => {
                    r.live
                        .as_ref()
                        .is_some_and(|l| l.agent.role() == ReplicaRole::Master)
                        && set.as_ref().is_none_or(|s| *s == r.name)
                }
                Target::Replica(label) => *label == r.label && r.live.is_some(),
            })
            .map(|(i, _)| i)
            .collect();
        if chosen.is_empty() {
            eprintln!("nothing to stop for {target:?}");
        }
        for i in chosen {
            let replica = &mut self.replicas[i];
            let Some(live) = replica.live.take() else {
                continue;
            };
            let view = live.agent.view();
            let registrar = live.agent.registrar().clone();
            live.agent.stop().await;
            drop(live.schedule);
            registrar.close_connections();
            let (task, stop) = live.notices;
            let _ = stop.send(());
            let _ = task.await;
            live.printer.abort();
            line(&format!(
                "stopped time={} replica={} addr={} id={} role={} epoch={}",
                stamp::now(),
                replica.label,
                replica.addr,
                view.controller_id.map_or("-".into(), |id| id.to_string()),
                role_name(&view.role),
                view.master_epoch
            ));
        }
    }

    /// Starts a stopped replica again on its address, with its files.
    async fn start_again(&mut self, label: &str) -> anyhow::Result<()> {
        let Some(i) = self.replicas.iter().position(|r| r.label == label) else {
            eprintln!("no replica {label}");
            return Ok(());
        };
        if self.replicas[i].live.is_some() {
            eprintln!("{label} is running");
            return Ok(());
        }
        let addr = self.replicas[i].addr.clone();
        let listener = TcpListener::bind(addr.as_str())
            .await
            .with_context(|| format!("cannot listen on {addr} again"))?;
        let mut replica = self.replicas.remove(i);
        let launched = self.launch(&mut replica, listener);
        self.replicas.insert(i, replica);
        launched?;
        line(&format!(
            "started time={} replica={label} addr={addr}",
            stamp::now()
        ));
        Ok(())
    }

    /// Stops every replica; unregisters the running ones unless `--no-unregister`.
    async fn shutdown(&mut self) {
        for replica in &mut self.replicas {
            let Some(live) = replica.live.take() else {
                continue;
            };
            live.agent.stop().await;
            let registrar = live.schedule.registrar().clone();
            if self.args.no_unregister {
                drop(live.schedule);
            } else {
                let results = live.schedule.shutdown().await;
                let failed = results.iter().filter(|r| r.outcome.is_err()).count();
                line(&format!(
                    "unregister broker={} replica={} id={} ok={}/{}",
                    replica.name,
                    replica.label,
                    registrar.broker_id(),
                    results.len() - failed,
                    results.len()
                ));
            }
            let (task, stop) = live.notices;
            let _ = stop.send(());
            let _ = task.await;
            live.printer.abort();
        }
    }
}
