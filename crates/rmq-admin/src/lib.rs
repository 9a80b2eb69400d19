//! `rmq-admin`: mqadmin's NameServer and controller commands for any
//! RocketMQ NameServer or AutoSwitch-HA controller (Waymark or Java), with
//! aligned tables for people and `--json` for scripts.
//!
//! Every NameServer command asks every NameServer given with `-n`
//! concurrently and reports per NameServer; `namesrv diff` compares what they
//! hold. Controller commands (`-a`) ask every controller given, or find the
//! leader and ask it. Layout: [`cli`] parses, [`security`] turns the signing
//! and TLS flags into connection options, [`namesrv`] connects and sends,
//! [`controller`] finds the controller leader, [`commands`] and [`diff`]
//! decide what to send and show, [`output`] formats, [`error`] names failures
//! and exit codes. Requests go out as Java, version 479; wire types are
//! `rmq-protocol`'s.
//!
//! # Signing and TLS
//!
//! Every connection, to NameServers and controllers alike, is made the same
//! way, as Java's one `tls.enable` switch and one `AclClientRPCHook` cover
//! all of mqadmin's connections:
//!
//! * requests are signed exactly as mqadmin signs them (`AccessKey`,
//!   `Signature`: HMAC-SHA1 over the ext fields and body) with
//!   `--access-key`/`--secret-key` (defaults `ROCKETMQ_ACCESS_KEY`,
//!   `ROCKETMQ_SECRET_KEY`: the environment keeps the secret out of `ps`
//!   and shell history), or `--tools-yml PATH` (mqadmin's file), or — the
//!   one source mqadmin has — `$ROCKETMQ_HOME/conf/tools.yml` when it
//!   exists, announced by a note on stderr;
//! * `--tls` makes every connection TLS (`-Dtls.enable=true`); the server
//!   is checked against `--tls-trust` (chain only, never the host name, as
//!   Java) or not at all with `--tls-insecure` (Java's default, with a
//!   warning); `--tls-cert`/`--tls-key` present a client certificate;
//!   `--tls-config-file` is Java's `tls.config.file`. The flags become
//!   Java's `tls.client.*` keys, read by the same code as the servers'.
//!
//! A NameServer with authentication on answers an unsigned or wrongly signed
//! write NO_PERMISSION (16) with a remark naming the reason; that is shown
//! per server like any error response, exit code 3 when no server accepted.

pub mod cli;
pub mod commands;
pub mod controller;
pub mod diff;
pub mod error;
pub mod mqadmin_names;
pub mod namesrv;
pub mod output;
pub mod security;
pub mod watch;

use clap::error::ErrorKind;
use clap::CommandFactory;

use crate::cli::{Cli, Command, ControllerCommand, NamesrvCommand, RouteCommand};
use crate::commands::Target;
use crate::namesrv::ConnectOptions;
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

/// What a command left to do once it ran.
#[derive(Debug)]
pub enum Outcome {
    /// A report to print.
    Report(Report),
    /// The command printed as it went (`route watch`); the exit code.
    Streamed(u8),
}

/// Runs the command on a single-threaded runtime, connecting as `connect`
/// says ([`security::connect_options`]).
///
/// # Errors
/// Only if the runtime cannot be created.
pub fn run(cli: &Cli, addrs: &[String], connect: &ConnectOptions) -> std::io::Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    if let Command::Route(RouteCommand::Watch {
        topics,
        poll_ms,
        count,
    }) = &cli.command
    {
        let request = watch::WatchRequest {
            addrs,
            topics,
            poll: std::time::Duration::from_millis(*poll_ms),
            count: *count,
            json: cli.json,
        };
        let exit = runtime.block_on(watch::run(request, connect, std::io::stdout()));
        return Ok(Outcome::Streamed(exit));
    }
    let target = Target {
        addrs,
        namesrvs: cli.namesrv.as_ref().map_or(&[], |list| list.0.as_slice()),
        connect,
    };
    Ok(Outcome::Report(
        runtime.block_on(commands::execute(&cli.command, target)),
    ))
}
