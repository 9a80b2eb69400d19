//! `rmq-admin`: mqadmin's NameServer and controller commands for any
//! RocketMQ NameServer or AutoSwitch-HA controller (Waymark or Java), with
//! aligned tables for people and `--json` for scripts.
//!
//! Every NameServer command asks every NameServer given with `-n`
//! concurrently and reports per NameServer; `namesrv diff` compares what they
//! hold. Controller commands (`-a`) ask every controller given, or find the
//! leader and ask it. Layout: [`cli`] parses, [`namesrv`] connects and sends,
//! [`controller`] finds the controller leader, [`commands`] and [`diff`]
//! decide what to send and show, [`output`] formats, [`error`] names failures
//! and exit codes. Requests go out as Java, version 479; wire types are
//! `rmq-protocol`'s.

pub mod cli;
pub mod commands;
pub mod controller;
pub mod diff;
pub mod error;
pub mod namesrv;
pub mod output;

use std::time::Duration;

use clap::error::ErrorKind;
use clap::CommandFactory;

use crate::cli::{Cli, Command, ControllerCommand, NamesrvCommand};
use crate::commands::Target;
use crate::output::Report;

/// The addresses the command talks to, checking what clap cannot: that
/// NameServers were given (with `-n` or `NAMESRV_ADDR`), and at least two
/// for `namesrv diff`; for controller commands, that controllers were given
/// with `-a`, and NameServers too for `sync-state-set --cluster`.
///
/// # Errors
/// A clap usage error; `.exit()` on it prints the usage and exits with 2.
pub fn addrs(cli: &Cli) -> Result<Vec<String>, clap::Error> {
    if let Command::Controller(controller) = &cli.command {
        let Some(list) = &controller.addrs else {
            return Err(Cli::command().error(
                ErrorKind::MissingRequiredArgument,
                "no controller given: use -a host:port[;host:port] (controller -a ADDRS ...)",
            ));
        };
        let by_cluster = matches!(
            controller.command,
            ControllerCommand::SyncStateSet {
                cluster: Some(_),
                ..
            }
        );
        if by_cluster && cli.namesrv.is_none() {
            return Err(Cli::command().error(
                ErrorKind::MissingRequiredArgument,
                "sync-state-set --cluster reads the cluster's broker names from the NameServers: use -n host:port[;host:port] or set NAMESRV_ADDR",
            ));
        }
        return Ok(list.0.clone());
    }
    let Some(list) = &cli.namesrv else {
        return Err(Cli::command().error(
            ErrorKind::MissingRequiredArgument,
            "no NameServer given: use -n host:port[;host:port] or set NAMESRV_ADDR",
        ));
    };
    if matches!(cli.command, Command::Namesrv(NamesrvCommand::Diff)) && list.0.len() < 2 {
        return Err(Cli::command().error(
            ErrorKind::TooFewValues,
            "namesrv diff needs at least two NameServers (-n 'host:port;host:port')",
        ));
    }
    Ok(list.0.clone())
}

/// Runs the command on a single-threaded runtime and returns its report.
///
/// # Errors
/// Only if the runtime cannot be created.
pub fn run(cli: &Cli, addrs: &[String]) -> std::io::Result<Report> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let target = Target {
        addrs,
        namesrvs: cli.namesrv.as_ref().map_or(&[], |list| list.0.as_slice()),
        timeout: Duration::from_millis(cli.timeout_ms),
    };
    Ok(runtime.block_on(commands::execute(&cli.command, target)))
}
