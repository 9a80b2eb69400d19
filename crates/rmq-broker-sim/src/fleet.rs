//! Building the simulated fleet: one registrar per broker (groups × replicas),
//! their schedules, and the `--once` run; the topic tables and options
//! controller mode (`replicas.rs`) shares.
//!
//! Broker `r` of group `g` is `<prefix>-<g>`, id `r` (0 = master), at
//! `<ip>:<base_port + 10·(g·(slaves+1) + r)>`, HA port + 1. Replicas of a
//! group share the group's topic table, as real master and slaves do.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use rmq_broker_client::{
    numbered_topics, system_topics, wall_ms, AddressService, BrokerConfig, NameServerList,
    Registrar, Schedule, TopicTable,
};

use crate::security::Security;
use crate::{line, print_report, Args};

/// Every simulated broker, masters first within each group.
pub fn build(
    args: &Args,
    security: &Security,
    namesrv: &NameServerList,
) -> anyhow::Result<Vec<Arc<Registrar>>> {
    let replicas = args.slaves_per_broker + 1;
    let mut fleet = Vec::with_capacity(args.brokers * replicas);
    for group in 0..args.brokers {
        let (name, table) = group_topics(args, group);
        for replica in 0..replicas {
            let index = group * replicas + replica;
            let port = u16::try_from(usize::from(args.base_port) + 10 * index)
                .context("too many brokers for --base-port: ports run past 65535")?;
            let mut config = BrokerConfig::new(&args.cluster, &name, format!("{}:{port}", args.ip));
            if replica > 0 {
                config = config.slave(i64::try_from(replica)?);
            }
            configure(args, security, &mut config);
            let registrar = Registrar::new(config, table.clone(), namesrv.clone())
                .with_context(|| format!("broker {name} id {replica}"))?;
            fleet.push(Arc::new(registrar));
        }
    }
    Ok(fleet)
}

/// The name of group `group` and its topic table (replicas of a group share
/// it, as real master and slaves do).
pub fn group_topics(args: &Args, group: usize) -> (String, TopicTable) {
    let name = format!("{}-{group}", args.broker_name);
    let prefix = if args.distinct_topics {
        format!("{}{group}-", args.topic_prefix)
    } else {
        args.topic_prefix.clone()
    };
    let mut topics = numbered_topics(&prefix, args.topics, args.queues);
    if !args.no_system_topics {
        topics.extend(system_topics(&args.cluster, &name));
    }
    (name, TopicTable::with_topics(topics, wall_ms()))
}

/// Applies the registration options of `args`, and the signing and TLS
/// of `security`, to `config`.
pub fn configure(args: &Args, security: &Security, config: &mut BrokerConfig) {
    security.apply_to_broker(config);
    config.register_name_server_period = args.period;
    config.register_broker_timeout = args.timeout;
    config.compressed_register = args.compressed;
    config.enable_split_registration = args.split;
    config.split_registration_size = args.split_size;
    config.flavor = args.version_flavor.into();
    config.enable_slave_acting_master = args.acting_master;
    config.broker_permission = args.permission;
}

/// The schedule of one simulated broker.
pub fn schedule(args: &Args, registrar: &Registrar, service: Option<AddressService>) -> Schedule {
    let mut schedule = Schedule::java(registrar.config(), service);
    if args.no_clamp {
        schedule.register_period = args.period;
        schedule.first_register_delay = args.period;
    }
    schedule
}

/// `--once`: every master registers (in parallel, staggered), then every
/// slave, one line each, then a summary. True if all succeeded.
pub async fn register_once(fleet: &[Arc<Registrar>], stagger: Duration) -> bool {
    let started = Instant::now();
    let mut ok = 0;
    for masters in [true, false] {
        let mut tasks = Vec::new();
        for registrar in fleet.iter().filter(|r| (r.broker_id() == 0) == masters) {
            let registrar = registrar.clone();
            tasks.push(tokio::spawn(async move {
                let report = registrar.register_all(true, false, true).await;
                print_report(&registrar, "startup", &report);
                report.is_success()
            }));
            if !stagger.is_zero() {
                tokio::time::sleep(stagger).await;
            }
        }
        for task in tasks {
            ok += usize::from(task.await.unwrap_or(false));
        }
    }
    let topics: usize = fleet.iter().map(|r| r.update_topics(|t| t.len())).sum();
    line(&format!(
        "summary brokers={} ok={ok} failed={} topics={topics} ms={:.1}",
        fleet.len(),
        fleet.len() - ok,
        started.elapsed().as_secs_f64() * 1000.0
    ));
    ok == fleet.len()
}
