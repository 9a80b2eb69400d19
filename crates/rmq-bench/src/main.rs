//! `rmq-bench`: runs the same NameServer and controller workloads against several servers in one
//! run and reports their ratios; performance is measured here, never asserted.

mod ceiling;
mod cli;
mod group;
mod load;
mod peer;
mod pin;
mod provenance;
mod report;
mod results;
mod sample;
mod scenario;
mod setup;
mod stats;
mod workload;

use std::io::Write;

use anyhow::Context;
use clap::{ArgMatches, FromArgMatches};
use tokio::runtime::{Builder, Runtime};

use crate::cli::{CeilingArgs, CompareArgs, Global, ReportArgs};
use crate::results::Results;
use crate::scenario::{Entry, ALL};

fn main() -> anyhow::Result<()> {
    let matches = cli::command().get_matches();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env();
    let filter = filter.unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colour codes only for a terminal: in a redirected log file they are noise.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let global = Global::from_arg_matches(&matches)?;
    let Some((name, sub)) = matches.subcommand() else {
        anyhow::bail!("no sub-command (see --help)");
    };
    match name {
        "ceiling-server" => {
            let ceiling = CeilingArgs::from_arg_matches(sub)?;
            runtime(1)?.block_on(ceiling::run(ceiling.listen, ceiling.layout()))
        }
        "report" => {
            let report = ReportArgs::from_arg_matches(sub)?;
            let results = Results::load(&report.input)?;
            if let Some(why) = provenance::refusal(&results, report.allow.allow()) {
                anyhow::bail!("{} not written: {why}", report.report.display());
            }
            report::write(&results, &report.report)?;
            eprintln!("wrote {}", report.report.display());
            Ok(())
        }
        _ => {
            if !global.no_pin {
                pin::pin_self(&global.client_cpus)?;
            }
            // One runtime thread per CPU the generator may use: under
            // `taskset -c 0` a single-threaded runtime, no cross-thread wake-ups.
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            runtime(threads)?.block_on(run(&global, name, sub))
        }
    }
}

/// A runtime of `threads` worker threads, on the calling thread for one.
fn runtime(threads: usize) -> std::io::Result<Runtime> {
    let mut builder = match threads {
        1 => Builder::new_current_thread(),
        _ => Builder::new_multi_thread(),
    };
    builder.worker_threads(threads).enable_all().build()
}

/// `compare`, or one scenario's sub-command (`name`).
async fn run(global: &Global, name: &str, sub: &ArgMatches) -> anyhow::Result<()> {
    let compare = (name == "compare").then(|| CompareArgs::from_arg_matches(sub));
    let compare = compare.transpose()?;
    let all = ALL.iter().copied();
    let entries: Vec<&dyn Entry> = match &compare {
        Some(CompareArgs {
            scenarios: Some(ids),
            ..
        }) => all.filter(|e| ids.iter().any(|i| i == e.id())).collect(),
        // A quick run checks the harness: every scenario, those too long for a default full run.
        Some(_) => all.filter(|e| e.in_default_set() || global.quick).collect(),
        None => all.filter(|e| e.id() == name).collect(),
    };
    let setup = setup::peers(global, &entries)?;
    let argv = std::env::args().collect::<Vec<_>>().join(" ");
    let line = compare.as_ref().and_then(|c| c.command_line.clone());
    let mut results = setup::results(global, &setup, &entries, line.unwrap_or(argv))?;
    let dirty = results.git.as_ref().filter(|g| g.is_dirty());
    if let (Some(git), Some(compare)) = (dirty, compare.as_ref().filter(|c| !c.allow.allow_dirty)) {
        eprintln!(
            "the work tree is dirty (git {}): the results will be written, {} will not \
             (commit first, or pass --allow-dirty)",
            git.describe,
            compare.report.display()
        );
    }
    let matches = compare.is_none().then_some(sub);
    scenario::run_all(global, &setup, &entries, matches, &mut results).await?;
    for json in compare.iter().map(|c| &c.results).chain(&global.json) {
        results.save(json)?;
    }
    let Some(compare) = compare else {
        let json = serde_json::to_string_pretty(&results)?;
        return writeln!(std::io::stdout().lock(), "{json}").context("cannot write the results");
    };
    let (json, md) = (compare.results.display(), compare.report.display());
    if let Some(why) = provenance::refusal(&results, compare.allow.allow()) {
        let later = format!("`rmq-bench report --input {json}` writes it later");
        anyhow::bail!("wrote {json} but not {md}: {why} ({later})");
    }
    report::write(&results, &compare.report)?;
    let minutes = results.duration_s / 60.0;
    eprintln!("wrote {json} and {md} ({minutes:.1} min)");
    Ok(())
}
