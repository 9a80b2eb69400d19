//! The scenarios, the one model each follows ([`Scenario`]), the registry
//! ([`ALL`]), and what they share: [`settle`], [`two_cpus`], [`run_all`].

use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard, PoisonError};

use anyhow::{ensure, Context};
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, Command, FromArgMatches};
use rmq_wire::{RemotingCommand, ResponseCode};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::cli::Global;
use crate::peer::{PeerKind, PeerSetup};
use crate::pin;
use crate::report::Section;
use crate::results::{Results, Run, ScenarioRuns};

// Declared here, not by a macro: rustfmt formats only the modules it sees declared.
pub mod cluster_convergence;
pub mod controller;
pub mod failover;
pub mod fleet;
pub mod hostile;
pub mod kv_writes;
pub mod register;
pub mod route_change;
pub mod route_qps;
pub mod route_sweep;
pub mod security;
pub mod startup;
pub mod storm;

/// Every scenario, in the order `compare` runs them.
pub const ALL: &[&dyn Entry] = &[
    &route_qps::RouteQps,
    &route_sweep::RouteSweep,
    &storm::RouteUnderStorm,
    &register::Register,
    &failover::Failover,
    &startup::Startup,
    &controller::Controller,
    &hostile::Hostile,
    &security::Security,
    &route_change::RouteChangeLatency,
    &cluster_convergence::ClusterConvergence,
    &kv_writes::KvWrites,
];

/// Others' CPU (% of one CPU) above which a measurement is repeated and kept out of the report.
pub const DISTURBED_PERCENT: f64 = 15.0;
/// Runs of a disturbed measurement at most.
const ATTEMPTS: usize = 3;

/// What a scenario starts of each peer it runs (a controller group comes with Waymark's
/// NameServer for brokers to register with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Starts {
    NameServer,
    Controller,
}

pub trait Scenario: Sync + 'static {
    /// Its name: sub-command, `--scenarios` value, results key, report markers.
    const ID: &'static str;
    /// One line for `--help` and the head of its report section.
    const ABOUT: &'static str;
    /// Whether `compare` runs it without `--scenarios` (a `--quick` compare runs them all).
    const IN_DEFAULT_SET: bool = true;
    const STARTS: Starts = Starts::NameServer;
    /// Its parameters: flags with the full run's defaults, serialized into each outcome.
    type Params: Args + FromArgMatches + Serialize + DeserializeOwned + Clone;
    /// The quick profile: what `--quick` changes of the defaults.
    fn quick(params: &mut Self::Params);
    /// Whether it runs `kind` (every peer unless said otherwise).
    fn runs(_kind: PeerKind) -> bool {
        true
    }
    fn run(
        ctx: &Ctx<'_>,
        params: &Self::Params,
        record: &mut Record,
    ) -> impl Future<Output = anyhow::Result<()>>;
    fn report(section: &mut Section<'_>);
}

/// A registered scenario, as the driver and the report take it.
pub trait Entry: Sync {
    fn id(&self) -> &'static str;
    fn about(&self) -> &'static str;
    fn in_default_set(&self) -> bool;
    fn starts(&self) -> Starts;
    fn runs(&self, kind: PeerKind) -> bool;
    fn command(&self) -> Command;
    /// Runs it with the parameters of `matches` (`None`: the defaults), quick if the run is.
    fn run<'a>(
        &'a self,
        ctx: &'a Ctx<'a>,
        matches: Option<&'a ArgMatches>,
        record: &'a mut Record,
    ) -> Pin<Box<dyn Future<Output = anyhow::Result<()>> + 'a>>;
    fn report(&self, section: &mut Section<'_>);
}

impl<S: Scenario> Entry for S {
    fn id(&self) -> &'static str {
        S::ID
    }
    fn about(&self) -> &'static str {
        S::ABOUT
    }
    fn in_default_set(&self) -> bool {
        S::IN_DEFAULT_SET
    }
    fn starts(&self) -> Starts {
        S::STARTS
    }
    fn runs(&self, kind: PeerKind) -> bool {
        S::runs(kind)
    }
    fn command(&self) -> Command {
        let about = match S::IN_DEFAULT_SET {
            true => S::ABOUT.to_owned(),
            false => format!("{} (compare: only when named, or with --quick)", S::ABOUT),
        };
        S::Params::augment_args(Command::new(S::ID).about(about))
    }
    fn run<'a>(
        &'a self,
        ctx: &'a Ctx<'a>,
        matches: Option<&'a ArgMatches>,
        record: &'a mut Record,
    ) -> Pin<Box<dyn Future<Output = anyhow::Result<()>> + 'a>> {
        Box::pin(async move {
            let params = params::<S>(matches, ctx.global.quick)?;
            S::run(ctx, &params, record).await
        })
    }
    fn report(&self, section: &mut Section<'_>) {
        S::report(section);
    }
}

/// `S`'s parameters from `matches`, or its defaults; with `quick`, every
/// one not given on the command line takes its quick value.
pub fn params<S: Scenario>(matches: Option<&ArgMatches>, quick: bool) -> anyhow::Result<S::Params> {
    let defaults = S::Params::augment_args(Command::new(S::ID)).try_get_matches_from([S::ID])?;
    let matches = matches.unwrap_or(&defaults);
    let params = S::Params::from_arg_matches(matches)?;
    if !quick {
        return Ok(params);
    }
    let mut fast = params.clone();
    S::quick(&mut fast);
    let mut merged = serde_json::to_value(&params)?;
    let given = |key: &str| {
        matches.ids().any(|id| id.as_str() == key)
            && matches.value_source(key) == Some(ValueSource::CommandLine)
    };
    if let (Some(merged), serde_json::Value::Object(fast)) =
        (merged.as_object_mut(), serde_json::to_value(&fast)?)
    {
        merged.extend(fast.into_iter().filter(|(key, _)| !given(key)));
    }
    Ok(serde_json::from_value(merged)?)
}

/// What a scenario runs with: how to start peers, the options of the run,
/// and the results of the scenarios that ran before it.
pub struct Ctx<'a> {
    pub setup: &'a PeerSetup,
    pub global: &'a Global,
    pub results: &'a Results,
}

impl Ctx<'_> {
    /// The peers of the run that `S` runs, in the order given.
    pub fn peers<S: Scenario>(&self) -> Vec<PeerKind> {
        let peers = self.global.peers.iter().copied();
        peers.filter(|&k| S::runs(k)).collect()
    }
}

pub struct Record {
    id: &'static str,
    pub runs: ScenarioRuns,
}

impl Record {
    pub fn new(id: &'static str) -> Record {
        let runs = ScenarioRuns::default();
        Record { id, runs }
    }

    /// `peer`'s outcome of `part` ("" for a scenario of one part).
    pub fn add<T: Serialize>(&mut self, peer: PeerKind, part: &str, outcome: anyhow::Result<T>) {
        let (result, error) = match outcome.and_then(|t| Ok(serde_json::to_value(t)?)) {
            Ok(value) => (Some(value), None),
            Err(error) => (None, Some(format!("{error:#}"))),
        };
        let part_name = (!part.is_empty()).then(|| format!(" ({part})"));
        let how = error
            .as_ref()
            .map_or("done".into(), |e| format!("FAILED {e}"));
        let part_name = part_name.unwrap_or_default();
        eprintln!("== {} {}{part_name}: {how}", self.id, peer.id());
        let part = part.to_owned();
        self.runs.runs.push(Run {
            peer,
            part,
            result,
            error,
        });
    }

    /// A note beside the runs (e.g. how the two-CPU pass was pinned).
    pub fn note<T: Serialize>(&mut self, key: &str, value: &T) {
        if let Ok(value) = serde_json::to_value(value) {
            self.runs.info.insert(key.to_owned(), value);
        }
    }
}

/// Runs `attempt` until one is undisturbed (`noise` ≤ [`DISTURBED_PERCENT`]), at most
/// [`ATTEMPTS`] times; the least disturbed, and how many ran.
pub async fn settle<T>(
    label: &str,
    noise: impl Fn(&T) -> f64,
    mut attempt: impl AsyncFnMut() -> anyhow::Result<T>,
) -> anyhow::Result<(T, usize)> {
    let mut best: Option<T> = None;
    let mut ran = 0;
    for n in 1..=ATTEMPTS {
        let result = attempt().await?;
        ran = n;
        let level = noise(&result);
        if best.as_ref().is_none_or(|b| level < noise(b)) {
            best = Some(result);
        }
        if level <= DISTURBED_PERCENT {
            break;
        }
        eprintln!("[{label}] attempt {n} disturbed (others used {level:.0} % CPU)");
    }
    Ok((best.context("no attempt ran")?, ran))
}

/// How a pass on two server CPUs was pinned (noted as `two-cpus`), or why it was not run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TwoCpus {
    pub server_cpus: String,
    pub shares_generator_cpus: bool,
    pub skipped: Option<String>,
}

pub const TWO_CPUS: &str = "two-cpus";

/// Runs `run` again on Waymark and Java, each server on two CPUs ([`pin::two_server_cpus`]), as
/// part [`TWO_CPUS`]; not run unpinned, nor (with `unless_shared`) where the generator shares one.
pub async fn two_cpus<T: Serialize>(
    ctx: &Ctx<'_>,
    record: &mut Record,
    unless_shared: Option<&str>,
    run: impl AsyncFn(&PeerSetup, PeerKind) -> anyhow::Result<T>,
) {
    let cpus = ctx.results.machine.cpus;
    let chosen = match (&ctx.setup.server_cpus, ctx.global.no_pin) {
        (Some(server), false) => pin::two_server_cpus(server, &ctx.global.client_cpus, cpus)
            .ok_or_else(|| format!("the machine has {cpus} CPU")),
        _ => Err("the servers are not pinned (--no-pin, or no taskset)".to_owned()),
    };
    let chosen = match (chosen, unless_shared) {
        (Ok((_, true)), Some(why)) => Err(format!(
            "the machine has {cpus} CPUs, so one of the server's two would be the generator's, {why}"
        )),
        (chosen, _) => chosen,
    };
    let pass = match chosen {
        Ok((server_cpus, shares_generator_cpus)) => TwoCpus {
            server_cpus,
            shares_generator_cpus,
            skipped: None,
        },
        Err(why) => TwoCpus {
            skipped: Some(why),
            ..TwoCpus::default()
        },
    };
    if pass.skipped.is_none() {
        let mut setup = ctx.setup.clone();
        setup.server_cpus = Some(pass.server_cpus.clone());
        let peers = ctx.global.peers.iter();
        for &kind in peers.filter(|k| matches!(k, PeerKind::Waymark | PeerKind::Java)) {
            let (id, peer, cpus) = (record.id, kind.id(), &pass.server_cpus);
            eprintln!("[{id}] {peer} again with the server on CPUs {cpus}");
            record.add(kind, TWO_CPUS, run(&setup, kind).await);
        }
    }
    record.note(TWO_CPUS, &pass);
}

/// `compare`: each of `entries` in turn, with the parameters of `matches`
/// (one scenario's sub-command) or the defaults, into `results`.
pub async fn run_all(
    global: &Global,
    setup: &PeerSetup,
    entries: &[&dyn Entry],
    matches: Option<&ArgMatches>,
    results: &mut Results,
) -> anyhow::Result<()> {
    let started = tokio::time::Instant::now();
    for entry in entries {
        for kind in global.peers.iter().filter(|&&k| !entry.runs(k)) {
            let (id, peer) = (entry.id(), kind.id());
            eprintln!("[{id}] {peer} left out: the scenario does not run it");
        }
        let mut record = Record::new(entry.id());
        let ctx = Ctx {
            setup,
            global,
            results,
        };
        entry.run(&ctx, matches, &mut record).await?;
        results.scenarios.insert(entry.id().to_owned(), record.runs);
    }
    results.duration_s += started.elapsed().as_secs_f64();
    results.machine.load_at_end = pin::load_average();
    Ok(())
}

/// The guard of `mutex`, poisoned or not.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `(key, value)` settings of a peer.
pub fn settings(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    let owned = |&(k, v): &(&str, &str)| (k.to_owned(), v.to_owned());
    pairs.iter().map(owned).collect()
}

/// `response` if it is a success; else an error of `what`, its code and remark.
pub fn success(response: RemotingCommand, what: impl std::fmt::Display) -> anyhow::Result<()> {
    let remark = response.remark.as_deref().unwrap_or_default();
    let code = response.code;
    ensure!(
        response.response_code() == ResponseCode::Success,
        "{what}: code {code} {remark}"
    );
    Ok(())
}
