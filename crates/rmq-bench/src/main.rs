//! `rmq-bench`: parse flags, pin the generator, set up tracing and the
//! runtime, run the sub-command. Everything else is in the library.

use std::io::Write;

use anyhow::Context;
use clap::Parser;
use rmq_bench::cli::{Cli, Command, Global, ScenarioName};
use rmq_bench::results::{PeerOutcome, Results};
use rmq_bench::scenario::{failover, route_sweep, startup};
use rmq_bench::{ceiling, compare, pin, provenance, report};

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        // Colour codes only for a terminal: in a redirected log file they are noise.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    match cli.command {
        Command::CeilingServer(args) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
            .block_on(ceiling::run(args.listen, args.layout())),
        Command::Report(args) => {
            let results = Results::load(&args.input)?;
            if let Some(why) = provenance::refusal(&results, args.allow.allow()) {
                anyhow::bail!("{} not written: {why}", args.report.display());
            }
            report::write(&results, &args.report)?;
            eprintln!("wrote {}", args.report.display());
            Ok(())
        }
        command => {
            if !cli.global.no_pin {
                pin::pin_self(&cli.global.client_cpus)?;
            }
            // One runtime thread per CPU the generator may use: under
            // `taskset -c 0` a single-threaded runtime, no cross-thread wake-ups.
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            let runtime = if threads == 1 {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?
            } else {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(threads)
                    .enable_all()
                    .build()?
            };
            runtime.block_on(run(cli.global, command))
        }
    }
}

/// The scenarios `command` runs.
fn scenarios_of(command: &Command) -> Vec<ScenarioName> {
    match command {
        Command::Compare(args) => args.scenarios.clone(),
        Command::RouteQps(_) => vec![ScenarioName::RouteQps],
        Command::RouteSweep(_) => vec![ScenarioName::RouteSweep],
        Command::RouteUnderStorm(_) => vec![ScenarioName::RouteUnderStorm],
        Command::Register(_) => vec![ScenarioName::Register],
        Command::Failover(_) => vec![ScenarioName::Failover],
        Command::Startup(_) => vec![ScenarioName::Startup],
        Command::Controller(_) => vec![ScenarioName::Controller],
        Command::Hostile(_) => vec![ScenarioName::Hostile],
        Command::Security(_) => vec![ScenarioName::Security],
        Command::RouteChangeLatency(_) => vec![ScenarioName::RouteChangeLatency],
        Command::Report(_) | Command::CeilingServer(_) => Vec::new(),
    }
}

async fn run(global: Global, command: Command) -> anyhow::Result<()> {
    let (setup, infos) = compare::setup(&global, &scenarios_of(&command))?;
    let argv = std::env::args().collect::<Vec<_>>().join(" ");
    let quick = global.quick;
    if let Command::Compare(args) = &command {
        let line = args.command_line.clone().unwrap_or(argv);
        let mut results = compare::new_results(&global, infos, &setup, line);
        let allow = args.allow.allow();
        if let Some(git) = results
            .git
            .as_ref()
            .filter(|g| g.is_dirty() && !allow.dirty)
        {
            eprintln!(
                "the work tree is dirty (git {}): the results will be written, {} will not \
                 (commit first, or pass --allow-dirty)",
                git.describe,
                args.report.display()
            );
        }
        compare::run(&global, &setup, &args.scenarios, &mut results).await?;
        results.save(&args.results)?;
        if let Some(json) = &global.json {
            results.save(json)?;
        }
        if let Some(why) = provenance::refusal(&results, allow) {
            anyhow::bail!(
                "wrote {} but not {}: {why} (`rmq-bench report --input {}` writes it later)",
                args.results.display(),
                args.report.display(),
                args.results.display()
            );
        }
        report::write(&results, &args.report)?;
        eprintln!(
            "wrote {} and {} ({:.1} min)",
            args.results.display(),
            args.report.display(),
            results.duration_s / 60.0
        );
        return Ok(());
    }
    let mut results = compare::new_results(&global, infos, &setup, argv);
    let started = tokio::time::Instant::now();
    match &command {
        Command::RouteQps(args) => {
            let params = args.params(quick);
            for &kind in &global.peers {
                let outcome = compare::route_qps_settled(&setup, kind, &params).await;
                results.route_qps.push(PeerOutcome::of(kind, outcome));
            }
        }
        Command::RouteSweep(args) => {
            let params = args.params(quick);
            for &kind in &global.peers {
                let outcome = route_sweep::run(&setup, kind, &params).await;
                results.route_sweep.push(PeerOutcome::of(kind, outcome));
            }
        }
        Command::RouteUnderStorm(args) => {
            let params = args.params(quick);
            for &kind in &global.peers {
                let outcome = compare::storm_settled(&setup, kind, &params).await;
                results
                    .route_under_storm
                    .push(PeerOutcome::of(kind, outcome));
            }
        }
        Command::Register(args) => {
            compare::run_register(&global, &setup, &args.params(quick), &mut results).await?;
        }
        Command::Failover(args) => {
            let params = args.params(quick);
            for &kind in global.peers.iter().filter(|k| k.is_real()) {
                let outcome = failover::run(&setup, kind, &params).await;
                results.failover.push(PeerOutcome::of(kind, outcome));
            }
        }
        Command::Startup(args) => {
            let params = args.params(quick);
            for &kind in &global.peers {
                let outcome = startup::run(&setup, kind, &params).await;
                results.startup.push(PeerOutcome::of(kind, outcome));
            }
        }
        Command::Controller(args) => {
            compare::run_controller(&global, &setup, &args.params(quick), &mut results).await?;
        }
        Command::Hostile(args) => {
            compare::run_hostile(&global, &setup, &args.params(quick), &mut results).await?;
        }
        Command::Security(args) => {
            compare::run_security(&global, &setup, &args.params(quick), &mut results).await;
        }
        Command::RouteChangeLatency(args) => {
            compare::run_route_change(&global, &setup, &args.params(quick), &mut results).await;
        }
        Command::Compare(_) | Command::Report(_) | Command::CeilingServer(_) => {
            unreachable!("handled before")
        }
    }
    results.duration_s = started.elapsed().as_secs_f64();
    results.machine.load_at_end = pin::load_average();
    if let Some(json) = &global.json {
        results.save(json)?;
    }
    let json = serde_json::to_string_pretty(&results)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{json}").context("cannot write the results")?;
    Ok(())
}
