//! One function per sub-command: build the request, ask every server
//! ([`fan_out`](crate::namesrv::fan_out)) or the controller leader
//! ([`on_leader`](crate::controller::on_leader)), decode, and turn the answers
//! into a [`Report`]. [`execute`] is the single `match` from command to
//! function.
//!
//! Owns what each command sends and shows; connections are `namesrv`'s,
//! finding the controller leader `controller`'s, formatting rules
//! `output`'s, the cross-NameServer comparison `diff`'s.

mod cluster;
mod controller;
mod kv;
mod topic;

use serde::Serialize;

use crate::cli::{
    BrokerCommand, ClusterCommand, Command, ConfigCommand, ControllerCommand,
    ControllerConfigCommand, KvCommand, NamesrvCommand, TopicCommand,
};
use crate::diff;
use crate::namesrv::ConnectOptions;
use crate::output::{Report, Server};

/// Where to ask, and how to connect.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The servers the command is for, in the order given: the NameServers
    /// (`-n`), or for `controller` commands the controllers (`-a`).
    pub addrs: &'a [String],
    /// The NameServers given with `-n` (empty if none), for controller
    /// commands that look something up in them.
    pub namesrvs: &'a [String],
    /// The connect and per-request limit, TLS and request signing.
    pub connect: &'a ConnectOptions,
}

/// The result of commands that return nothing but success: `{}` in JSON.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Done {}

/// The row of a [`Done`] result.
fn ok_row(_: &Done) -> Vec<Vec<String>> {
    vec![vec!["OK".to_owned()]]
}

/// Runs one command against the servers of `target`.
pub async fn execute(command: &Command, target: Target<'_>) -> Report {
    match command {
        Command::Cluster(ClusterCommand::List) => cluster::list(target).await,
        Command::Topic(TopicCommand::Route { topic }) => topic::route(target, topic).await,
        Command::Topic(TopicCommand::List(filter)) => {
            topic::list(target, filter.cluster.as_deref()).await
        }
        Command::Topic(TopicCommand::Delete { topic, filter }) => {
            topic::delete(target, topic, filter.cluster.as_deref()).await
        }
        Command::Kv(KvCommand::Put {
            namespace,
            key,
            value,
        }) => kv::put(target, namespace, key, value).await,
        Command::Kv(KvCommand::Get { namespace, key }) => kv::get(target, namespace, key).await,
        Command::Kv(KvCommand::Delete { namespace, key }) => {
            kv::delete(target, namespace, key).await
        }
        Command::Kv(KvCommand::List { namespace }) => kv::list(target, namespace).await,
        Command::Broker(BrokerCommand::WipeWritePerm { broker_name }) => {
            cluster::write_perm(target, broker_name, cluster::PermChange::Wipe).await
        }
        Command::Broker(BrokerCommand::AddWritePerm { broker_name }) => {
            cluster::write_perm(target, broker_name, cluster::PermChange::Add).await
        }
        Command::Broker(BrokerCommand::MemberGroup {
            broker_name,
            cluster: cluster_name,
        }) => cluster::member_group(target, cluster_name, broker_name).await,
        Command::Config(ConfigCommand::Get { keys }) => {
            kv::config_get(target, Server::NameServer, keys).await
        }
        Command::Config(ConfigCommand::Set { pairs }) => {
            kv::config_set(target, Server::NameServer, pairs).await
        }
        Command::Namesrv(NamesrvCommand::Diff) => diff::run(target).await,
        // It streams rather than reports: `crate::run` runs it (`crate::watch`).
        Command::Route(_) => Report {
            text: String::new(),
            json: serde_json::Value::Null,
            errors: vec![
                "error: route watch prints as it goes: run it through rmq_admin::run".to_owned(),
            ],
            exit: crate::error::EXIT_USAGE,
        },
        Command::Controller(args) => execute_controller(&args.command, target).await,
    }
}

async fn execute_controller(command: &ControllerCommand, target: Target<'_>) -> Report {
    match command {
        ControllerCommand::Metadata => controller::metadata(target).await,
        ControllerCommand::SyncStateSet {
            broker_names,
            cluster,
        } => controller::sync_state_set(target, broker_names, cluster.as_deref()).await,
        ControllerCommand::ElectMaster {
            broker_name,
            broker_id,
            cluster,
        } => controller::elect_master(target, cluster, broker_name, *broker_id).await,
        ControllerCommand::CleanBrokerMetadata {
            broker_name,
            broker_ids,
            clean_living_broker,
            cluster,
        } => {
            controller::clean_broker_metadata(
                target,
                cluster,
                broker_name,
                broker_ids.as_ref(),
                *clean_living_broker,
            )
            .await
        }
        ControllerCommand::Config(ControllerConfigCommand::Get { keys }) => {
            kv::config_get(target, Server::Controller, keys).await
        }
        ControllerCommand::Config(ControllerConfigCommand::Update { key, value }) => {
            let pair = [(key.clone(), value.clone())];
            kv::config_set(target, Server::Controller, &pair).await
        }
    }
}

/// The `#BID` / `#Addr` cells of an id → address map, one row per member;
/// `["-", "-"]` for an empty map.
fn member_cells(addrs: &std::collections::BTreeMap<i64, String>) -> Vec<[String; 2]> {
    if addrs.is_empty() {
        return vec![["-".to_owned(), "-".to_owned()]];
    }
    addrs
        .iter()
        .map(|(id, addr)| [id.to_string(), addr.clone()])
        .collect()
}
