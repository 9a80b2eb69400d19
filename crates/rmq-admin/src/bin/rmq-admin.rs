//! `rmq-admin`: parse flags, run the command, print, exit with its code.

use std::process::ExitCode;

use clap::Parser;
use rmq_admin::cli::Cli;
use rmq_admin::error::EXIT_FAILED;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let addrs = rmq_admin::addrs(&cli).unwrap_or_else(|error| error.exit());
    match rmq_admin::run(&cli, &addrs) {
        Ok(report) => {
            report.write(cli.json);
            ExitCode::from(report.exit)
        }
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}
