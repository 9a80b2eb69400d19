//! `rmq-admin`: mqadmin's NameServer commands for any RocketMQ NameServer
//! (Waymark or Java), with aligned tables for people and `--json` for scripts.
//!
//! Every command asks every NameServer given with `-n` concurrently and
//! reports per NameServer; `namesrv diff` compares what they hold. Layout:
//! [`cli`] parses, [`namesrv`] connects and sends, [`commands`] and [`diff`]
//! decide what to send and show, [`output`] formats, [`error`] names failures
//! and exit codes. Requests go out as Java, version 479; wire types are
//! `rmq-protocol`'s.

pub mod cli;
pub mod commands;
pub mod diff;
pub mod error;
pub mod namesrv;
pub mod output;

use std::time::Duration;

use clap::error::ErrorKind;
use clap::CommandFactory;

use crate::cli::{Cli, Command, NamesrvCommand};
use crate::commands::Target;
use crate::output::Report;

/// Checks what clap cannot: that NameServers were given (with `-n` or
/// `NAMESRV_ADDR`), and at least two for `namesrv diff`.
///
/// # Errors
/// A clap usage error; `.exit()` on it prints the usage and exits with 2.
pub fn addrs(cli: &Cli) -> Result<Vec<String>, clap::Error> {
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
        timeout: Duration::from_millis(cli.timeout_ms),
    };
    Ok(runtime.block_on(commands::execute(&cli.command, target)))
}
