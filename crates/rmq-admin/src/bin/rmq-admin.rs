//! `rmq-admin`: parse flags, resolve signing and TLS (notes and warnings on
//! stderr), run the command, print, exit with its code.

use std::process::ExitCode;

use clap::Parser;
use rmq_admin::cli::Cli;
use rmq_admin::error::EXIT_FAILED;

fn main() -> ExitCode {
    // mqadmin's command names (clusterList, topicRoute -t T, ...) are aliases.
    let cli = Cli::parse_from(rmq_admin::mqadmin_names::expand(
        std::env::args_os().collect(),
    ));
    let addrs = rmq_admin::addrs(&cli).unwrap_or_else(|error| error.exit());
    let env = |name: &str| std::env::var(name).ok();
    let (connect, messages) =
        rmq_admin::security::connect_options(&cli, &env).unwrap_or_else(|error| error.exit());
    for message in messages {
        eprintln!("{message}");
    }
    match rmq_admin::run(&cli, &addrs, &connect) {
        Ok(rmq_admin::Outcome::Report(report)) => {
            report.write(cli.json);
            ExitCode::from(report.exit)
        }
        Ok(rmq_admin::Outcome::Streamed(exit)) => ExitCode::from(exit),
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}
