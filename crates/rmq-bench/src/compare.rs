//! Running scenarios on peers: resolving how each peer is started (binaries,
//! the Java classpaths through Maven, versions), then every selected scenario
//! on every selected peer in order, collecting [`Results`].
//!
//! A peer that fails a scenario is recorded with its error and the run goes
//! on. The ceiling is skipped where it has nothing to measure (failover,
//! hostile, route-change-latency), and the controller and security
//! scenarios, and register's second pass on two server CPUs, run only
//! Waymark and Java.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};
use tokio::time::Instant;

use crate::cli::{Global, ScenarioName};
use crate::group;
use crate::peer::{self, JavaControllerSetup, JavaSetup, PeerKind, PeerSetup};
use crate::pin::{self, Machine};
use crate::provenance::GitState;
use crate::results::{of_peer, utc_now, PeerInfo, PeerOutcome, Pinning, Results, TwoCores};
use crate::scenario::{
    self, controller, failover, hostile, register, route_change, route_qps, route_sweep, security,
    startup, storm,
};
use crate::workload::{Layout, Registration};

/// The workspace this crate lives in (for `.bench/` and the Java pom).
fn workspace_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// Resolves how to start each of `global.peers` for `scenarios`: the
/// NameServers for the NameServer scenarios; for `controller`, the
/// controllers of the peers that have one and Waymark's NameServer (the
/// failover part registers its brokers there, whichever controller runs).
///
/// # Errors
/// A selected peer cannot be run: missing binary, no Java, Maven failing.
pub fn setup(
    global: &Global,
    scenarios: &[ScenarioName],
) -> anyhow::Result<(PeerSetup, Vec<PeerInfo>)> {
    let bench_bin = std::env::current_exe()?;
    let beside = |name: &str| {
        bench_bin
            .parent()
            .map_or_else(|| PathBuf::from(name), |d| d.join(name))
    };
    let waymark_bin = global
        .waymark_bin
        .clone()
        .unwrap_or_else(|| beside("rmq-namesrv"));
    let waymark_controller_bin = global
        .waymark_controller_bin
        .clone()
        .unwrap_or_else(|| beside("rmq-controller"));
    let rust_port_bin = global
        .rust_port_bin
        .clone()
        .unwrap_or_else(|| workspace_root().join(".bench/rust-port/bin/rocketmq-namesrv-rust"));
    // Peers run in their own directories: a relative path would not resolve there.
    let absolute = |path: PathBuf| path.canonicalize().unwrap_or(path);
    let (waymark_bin, waymark_controller_bin, rust_port_bin) = (
        absolute(waymark_bin),
        absolute(waymark_controller_bin),
        absolute(rust_port_bin),
    );
    let nameservers = scenarios.iter().any(|s| s.is_nameserver());
    let controllers = scenarios.contains(&ScenarioName::Controller);
    let runs = |kind| scenarios.iter().any(|s| s.runs_nameserver(kind));
    let wants = |kind| runs(kind) && global.peers.contains(&kind);
    let wants_controller = |kind| controllers && global.peers.contains(&kind);
    if (wants(PeerKind::Waymark) || controllers) && !waymark_bin.is_file() {
        bail!(
            "Waymark's rmq-namesrv not found at {} (cargo build --release -p rmq-namesrv, or --waymark-bin)",
            waymark_bin.display()
        );
    }
    if wants_controller(PeerKind::Waymark) && !waymark_controller_bin.is_file() {
        bail!(
            "Waymark's rmq-controller not found at {} (cargo build --release -p rmq-controller, \
             or --waymark-controller-bin)",
            waymark_controller_bin.display()
        );
    }
    if wants(PeerKind::RustPort) && !rust_port_bin.is_file() {
        bail!(
            "the Rust port is not installed at {} (cargo install rocketmq-namesrv --version 1.0.0 \
             --locked --root .bench/rust-port, or --rust-port-bin, or leave rust-port out of --peers)",
            rust_port_bin.display()
        );
    }
    let java = if wants(PeerKind::Java) {
        let pom = global
            .java_pom
            .clone()
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("java/pom.xml"));
        Some(java_setup(&pom, &global.java_heap)?)
    } else {
        None
    };
    let java_controller = if wants_controller(PeerKind::Java) {
        let pom = global
            .java_controller_pom
            .clone()
            .unwrap_or_else(|| workspace_root().join("interop/java/pom.xml"));
        Some(java_controller_setup(&pom, &global.java_controller_heap)?)
    } else {
        None
    };
    let server_cpus = if global.no_pin {
        None
    } else {
        let usable = pin::usable(&global.server_cpus);
        if usable.is_none() {
            tracing::warn!(cpus = %global.server_cpus, "cannot pin servers; running them unpinned");
        }
        usable
    };
    let setup = PeerSetup {
        waymark_bin,
        waymark_controller_bin,
        java_controller,
        rust_port_bin,
        java,
        bench_bin,
        server_cpus,
        keep_dirs: global.keep_dirs,
    };
    let example = Layout {
        brokers: 10,
        topics_per_broker: 100,
        spread: 10,
        queues: 8,
    };
    let mut infos = Vec::new();
    for &kind in global.peers.iter().filter(|&&k| nameservers && runs(k)) {
        infos.push(PeerInfo {
            peer: kind,
            version: version_of(&setup, kind),
            command: peer::command_line(&setup, kind, &example)?,
        });
    }
    Ok((setup, infos))
}

/// Asks Maven for the Java NameServer's runtime classpath.
fn java_setup(pom: &Path, heap: &str) -> anyhow::Result<JavaSetup> {
    let out = std::env::temp_dir().join(format!(
        "waymark-bench-classpath-{}.txt",
        std::process::id()
    ));
    eprintln!("resolving the Java NameServer classpath (mvn dependency:build-classpath) ...");
    let status = Command::new("mvn")
        .args(["-B", "-q", "-ntp", "-f"])
        .arg(pom)
        .arg("dependency:build-classpath")
        .arg(format!("-Dmdep.outputFile={}", out.display()))
        .status()
        .context("cannot run mvn (Maven 3.6+ is needed for the Java NameServer)")?;
    if !status.success() {
        bail!(
            "mvn dependency:build-classpath failed for {}",
            pom.display()
        );
    }
    let classpath = std::fs::read_to_string(&out)?.trim().to_owned();
    let _ = std::fs::remove_file(&out);
    if !classpath.contains("rocketmq-namesrv") {
        bail!(
            "the classpath from {} has no rocketmq-namesrv jar",
            pom.display()
        );
    }
    Ok(JavaSetup {
        java: PathBuf::from("java"),
        classpath,
        heap: heap.to_owned(),
    })
}

/// Compiles the interop project's `rmq5` profile (`mvn -P rmq5
/// test-compile`, which also writes `target/rmq5/classpath.txt`) and reads
/// the classpath that runs its `ControllerLauncher`.
fn java_controller_setup(pom: &Path, heap: &str) -> anyhow::Result<JavaControllerSetup> {
    eprintln!(
        "building the Java controller launcher (mvn -P rmq5 test-compile in {}) ...",
        pom.parent().unwrap_or(pom).display()
    );
    let status = Command::new("mvn")
        .args(["-B", "-q", "-ntp", "-Dstyle.color=never", "-f"])
        .arg(pom)
        .args(["-P", "rmq5", "test-compile"])
        .status()
        .context("cannot run mvn (Maven 3.6+ is needed for the Java controller)")?;
    if !status.success() {
        bail!("mvn -P rmq5 test-compile failed for {}", pom.display());
    }
    let file = pom
        .parent()
        .unwrap_or(Path::new("."))
        .join("target/rmq5/classpath.txt");
    let classpath = std::fs::read_to_string(&file)
        .with_context(|| format!("cannot read {}", file.display()))?
        .trim()
        .to_owned();
    if !classpath.contains("rocketmq-controller") {
        bail!(
            "the classpath in {} has no rocketmq-controller jar",
            file.display()
        );
    }
    Ok(JavaControllerSetup {
        java: PathBuf::from("java"),
        classpath,
        heap: heap.to_owned(),
    })
}

/// The version of `artifact` on `classpath` (`…/artifact-5.5.1.jar` → `5.5.1`).
fn jar_version(classpath: &str, artifact: &str) -> Option<String> {
    let prefix = format!("{artifact}-");
    classpath.split(':').find_map(|p| {
        let name = Path::new(p).file_name()?.to_str()?;
        name.strip_prefix(&prefix)?
            .strip_suffix(".jar")
            .map(str::to_owned)
    })
}

fn java_version() -> String {
    let jvm = first_line(Command::new("java").arg("-version")).unwrap_or_default();
    jvm.split(" OpenJDK Runtime")
        .next()
        .unwrap_or(&jvm)
        .to_owned()
}

fn git_revision() -> String {
    first_line(
        Command::new("git")
            .arg("-C")
            .arg(workspace_root())
            .args(["describe", "--always", "--dirty"]),
    )
    .unwrap_or_default()
}

/// What a peer's controller is, with versions.
fn controller_version_of(setup: &PeerSetup, kind: PeerKind) -> String {
    match kind {
        PeerKind::Waymark => {
            let version = first_line(Command::new(&setup.waymark_controller_bin).arg("--version"))
                .unwrap_or_else(|| "rmq-controller".into());
            format!("{version} (release build, git {})", git_revision())
        }
        PeerKind::Java => {
            let release = setup
                .java_controller
                .as_ref()
                .and_then(|j| jar_version(&j.classpath, "rocketmq-controller"))
                .unwrap_or_else(|| "?".into());
            format!(
                "Apache RocketMQ controller {release} (Maven Central; DLedger controller, \
                 interop/java's ControllerLauncher), {}",
                java_version()
            )
        }
        PeerKind::RustPort | PeerKind::Ceiling => format!("{} has no controller", kind.title()),
    }
}

fn first_line(command: &mut Command) -> Option<String> {
    let out = command.output().ok()?;
    let text = if out.stdout.is_empty() {
        out.stderr
    } else {
        out.stdout
    };
    let text = String::from_utf8_lossy(&text).into_owned();
    Some(
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// What a peer is, with versions.
fn version_of(setup: &PeerSetup, kind: PeerKind) -> String {
    match kind {
        PeerKind::Waymark => {
            let version = first_line(Command::new(&setup.waymark_bin).arg("--version"))
                .unwrap_or_else(|| "rmq-namesrv".into());
            format!("{version} (release build, git {})", git_revision())
        }
        PeerKind::Java => {
            let release = setup
                .java
                .as_ref()
                .and_then(|j| jar_version(&j.classpath, "rocketmq-namesrv"))
                .unwrap_or_else(|| "?".into());
            format!(
                "Apache RocketMQ NameServer {release} (Maven Central), {}",
                java_version()
            )
        }
        PeerKind::RustPort => {
            let version =
                first_line(Command::new(&setup.rust_port_bin).arg("--version")).unwrap_or_default();
            format!("crates.io rocketmq-namesrv ({version})")
        }
        PeerKind::Ceiling => "rmq-bench ceiling-server (precomputed answers; each registration \
                              decoded as Waymark decodes it and dropped)"
            .into(),
    }
}

/// A new result set for this process.
pub fn new_results(
    global: &Global,
    infos: Vec<PeerInfo>,
    setup: &PeerSetup,
    command: String,
) -> Results {
    Results {
        command,
        started_at: utc_now(),
        quick: global.quick,
        machine: Machine::probe(),
        git: GitState::probe(&workspace_root()),
        pinning: Pinning {
            client_cpus_requested: (!global.no_pin).then(|| global.client_cpus.clone()),
            client_cpus_allowed: pin::proc_status_field(None, "Cpus_allowed_list"),
            server_cpus: setup.server_cpus.clone(),
        },
        peers: infos,
        ..Results::default()
    }
}

fn summarize<T>(scenario: &str, outcome: &PeerOutcome<T>, line: impl Fn(&T) -> String) {
    match (&outcome.result, &outcome.error) {
        (Some(result), _) => eprintln!("== {scenario} {}: {}", outcome.peer.id(), line(result)),
        (None, error) => eprintln!(
            "== {scenario} {}: FAILED {}",
            outcome.peer.id(),
            error.as_deref().unwrap_or("")
        ),
    }
}

/// Runs `scenarios` on every peer of `global`, in order, into `results`.
pub async fn run(
    global: &Global,
    setup: &PeerSetup,
    scenarios: &[ScenarioName],
    results: &mut Results,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let quick = global.quick;
    for scenario in scenarios {
        match scenario {
            ScenarioName::RouteQps => {
                let params = route_qps::Params::defaults(quick);
                for &kind in &global.peers {
                    let outcome =
                        PeerOutcome::of(kind, route_qps_settled(setup, kind, &params).await);
                    summarize("route-qps", &outcome, |r| {
                        format!(
                            "{:.0} qps, p99 {:.0} µs, errors {}, {} µs CPU per query",
                            r.qps,
                            r.latency.p99_us,
                            r.errors,
                            r.cpu_us_per_query
                                .map_or("n/a".into(), |v| format!("{v:.2}"))
                        )
                    });
                    results.route_qps.push(outcome);
                }
                results.route_qps_two_cores =
                    Some(route_qps_two_cores(global, setup, &params, results.machine.cpus).await);
            }
            ScenarioName::RouteSweep => {
                let params = route_sweep::Params::defaults(quick);
                for &kind in &global.peers {
                    let outcome =
                        PeerOutcome::of(kind, route_sweep::run(setup, kind, &params).await);
                    summarize("route-sweep", &outcome, |r| match r.highest_held() {
                        Some((rate, bound)) => format!(
                            "held {}{rate:.0}/s of {} rates run",
                            if bound { "≥ " } else { "" },
                            r.steps.len()
                        ),
                        None => format!("held none of {} rates run", r.steps.len()),
                    });
                    results.route_sweep.push(outcome);
                }
            }
            ScenarioName::RouteUnderStorm => {
                let params = storm::Params::defaults(quick);
                for &kind in &global.peers {
                    let mut outcome =
                        PeerOutcome::of(kind, storm_settled(setup, kind, &params).await);
                    if let Some(storm) = outcome.result.as_mut() {
                        // Queries' CPU at the rate this server showed alone, if it ran.
                        let query_us =
                            of_peer(&results.route_qps, kind).and_then(|q| q.cpu_us_per_query);
                        storm.attribute_cpu(query_us);
                    }
                    summarize("route-under-storm", &outcome, |r| {
                        format!(
                            "query p99 {:.0} µs, {:.0} registrations/s, {} µs CPU per registration",
                            r.queries.p99_us,
                            r.registrations_per_s,
                            r.cpu_us_per_registration
                                .map_or("n/a".into(), |v| format!("{v:.0}"))
                        )
                    });
                    results.route_under_storm.push(outcome);
                }
            }
            ScenarioName::Register => {
                let params = register::Params::defaults(quick);
                run_register(global, setup, &params, results).await?;
            }
            ScenarioName::Failover => {
                let params = failover::Params::defaults(quick);
                for &kind in global.peers.iter().filter(|k| k.is_real()) {
                    let outcome = PeerOutcome::of(kind, failover::run(setup, kind, &params).await);
                    summarize("failover", &outcome, |r| {
                        format!(
                            "close {:?} ms, silent {:?} ms after timeout",
                            r.close_median_ms, r.silent_median_lag_ms
                        )
                    });
                    results.failover.push(outcome);
                }
            }
            ScenarioName::Controller => {
                let params = controller::Params::defaults(quick);
                run_controller(global, setup, &params, results).await?;
            }
            ScenarioName::Hostile => {
                let params = hostile::Params::defaults(quick);
                run_hostile(global, setup, &params, results).await?;
            }
            ScenarioName::Security => {
                let params = security::Params::defaults(quick);
                run_security(global, setup, &params, results).await;
            }
            ScenarioName::RouteChangeLatency => {
                let params = route_change::Params::defaults(quick);
                run_route_change(global, setup, &params, results).await;
            }
            ScenarioName::Startup => {
                let params = startup::Params::defaults(quick);
                for &kind in &global.peers {
                    let outcome = PeerOutcome::of(kind, startup::run(setup, kind, &params).await);
                    summarize("startup", &outcome, |r| {
                        format!("{:?} ms, idle RSS {:?} KiB", r.median_ms, r.median_rss_kib)
                    });
                    results.startup.push(outcome);
                }
            }
        }
    }
    results.duration_s += started.elapsed().as_secs_f64();
    results.machine.load_at_end = pin::load_average();
    Ok(())
}

/// Other processes' CPU (% of one CPU) above which a throughput or latency
/// measurement counts as disturbed and is repeated.
pub const DISTURBED_PERCENT: f64 = 15.0;
/// Runs of a disturbed measurement at most.
const ATTEMPTS: usize = 3;

/// `route-qps` on `kind`, repeated while disturbed (see [`DISTURBED_PERCENT`]);
/// the least disturbed run is kept.
///
/// # Errors
/// The scenario's.
pub async fn route_qps_settled(
    setup: &PeerSetup,
    kind: PeerKind,
    params: &route_qps::Params,
) -> anyhow::Result<route_qps::RouteQps> {
    let mut best: Option<route_qps::RouteQps> = None;
    for attempt in 1..=ATTEMPTS {
        let result = route_qps::run(setup, kind, params).await?;
        let noise = result.others_cpu_percent.unwrap_or(0.0);
        if best
            .as_ref()
            .is_none_or(|b| noise < b.others_cpu_percent.unwrap_or(0.0))
        {
            best = Some(result);
        }
        if noise <= DISTURBED_PERCENT {
            break;
        }
        eprintln!(
            "[route-qps {}] attempt {attempt} disturbed (others used {noise:.0} % CPU)",
            kind.id()
        );
    }
    best.context("no attempt ran")
}

/// `route-under-storm` on `kind`, repeated while disturbed; the least
/// disturbed run is kept.
///
/// # Errors
/// The scenario's.
pub async fn storm_settled(
    setup: &PeerSetup,
    kind: PeerKind,
    params: &storm::Params,
) -> anyhow::Result<storm::Storm> {
    let mut best: Option<storm::Storm> = None;
    for attempt in 1..=ATTEMPTS {
        let result = storm::run(setup, kind, params).await?;
        let noise = result.others_cpu_percent.unwrap_or(0.0);
        if best
            .as_ref()
            .is_none_or(|b| noise < b.others_cpu_percent.unwrap_or(0.0))
        {
            best = Some(result);
        }
        if noise <= DISTURBED_PERCENT {
            break;
        }
        eprintln!(
            "[route-under-storm {}] attempt {attempt} disturbed (others used {noise:.0} % CPU)",
            kind.id()
        );
    }
    best.context("no attempt ran")
}

/// `register` on every peer, building the bodies once.
pub async fn run_register(
    global: &Global,
    setup: &PeerSetup,
    params: &register::Params,
    results: &mut Results,
) -> anyhow::Result<()> {
    params.layout.validate()?;
    let built = Instant::now();
    let registrations = scenario::registrations(&params.layout)?;
    eprintln!(
        "[register] built {} bodies of {} topics in {:.1} s",
        registrations.len(),
        params.layout.topics_per_broker,
        built.elapsed().as_secs_f64()
    );
    for &kind in &global.peers {
        let outcome = PeerOutcome::of(
            kind,
            register::run(setup, kind, params, registrations.clone()).await,
        );
        summarize("register", &outcome, |r| {
            format!(
                "first round {:.2} s, steady {:.1}/s, {} µs CPU per steady registration, RSS {:?} KiB",
                r.first_round_s,
                r.steady_per_s,
                r.steady_cpu_us_per_registration
                    .map_or("n/a".into(), |v| format!("{v:.0}")),
                r.rss_kib
            )
        });
        results.register.push(outcome);
    }
    results.register_two_cores =
        Some(register_two_cores(global, setup, params, &registrations, results.machine.cpus).await);
    Ok(())
}

/// Two CPUs for the servers of a second pass (see [`pin::two_server_cpus`]):
/// the setup with them, their list, and whether the generator shares one.
///
/// # Errors
/// Why there are none: servers unpinned, or a machine of one CPU.
fn two_core_setup(
    global: &Global,
    setup: &PeerSetup,
    cpus: usize,
) -> Result<(PeerSetup, String, bool), String> {
    let (server_cpus, shared) = match (&setup.server_cpus, global.no_pin) {
        (Some(server), false) => pin::two_server_cpus(server, &global.client_cpus, cpus)
            .ok_or_else(|| format!("the machine has {cpus} CPU"))?,
        _ => return Err("the servers are not pinned (--no-pin, or no taskset)".to_owned()),
    };
    let two = PeerSetup {
        server_cpus: Some(server_cpus.clone()),
        ..setup.clone()
    };
    Ok((two, server_cpus, shared))
}

/// The peers of a second pass on two CPUs.
fn two_core_peers(global: &Global) -> impl Iterator<Item = PeerKind> + '_ {
    global
        .peers
        .iter()
        .copied()
        .filter(|k| matches!(k, PeerKind::Waymark | PeerKind::Java))
}

/// `register` again on Waymark and Java, each server on two CPUs: whether
/// registrations of different brokers go faster with a second core. On a
/// machine without two CPUs besides the generator's, one of the two is the
/// generator's (said in the result): a registration costs the generator a
/// fraction of what it costs the server, so the pass still shows how much
/// of the second CPU a server puts to use.
async fn register_two_cores(
    global: &Global,
    setup: &PeerSetup,
    params: &register::Params,
    registrations: &[Registration],
    cpus: usize,
) -> TwoCores<register::Register> {
    let (two, server_cpus, shares_generator_cpus) = match two_core_setup(global, setup, cpus) {
        Ok(chosen) => chosen,
        Err(why) => return TwoCores::skipped(why),
    };
    let mut runs = Vec::new();
    for kind in two_core_peers(global) {
        eprintln!(
            "[register {}] again with the server on CPUs {server_cpus}",
            kind.id()
        );
        let outcome = PeerOutcome::of(
            kind,
            register::run(&two, kind, params, registrations.to_vec()).await,
        );
        summarize("register (two cores)", &outcome, |r| {
            format!(
                "steady {:.1}/s, {} µs CPU per steady registration, server CPU {}",
                r.steady_per_s,
                r.steady_cpu_us_per_registration
                    .map_or("n/a".into(), |v| format!("{v:.0}")),
                r.steady_server_cpu
                    .as_ref()
                    .map_or("n/a".into(), |c| format!("{:.0} %", c.server_cpu_percent))
            )
        });
        runs.push(outcome);
    }
    TwoCores {
        server_cpus,
        shares_generator_cpus,
        skipped: None,
        runs,
    }
}

/// `route-qps` again on Waymark and Java, each server on two CPUs of its
/// own. Not run where the generator would share one: a route query costs
/// the generator about what it costs the server, so on a shared CPU the
/// rate would be the generator's. To give the generator more than one CPU,
/// pin it to more (`--client-cpus 0,1 --server-cpus 2` on four CPUs).
async fn route_qps_two_cores(
    global: &Global,
    setup: &PeerSetup,
    params: &route_qps::Params,
    cpus: usize,
) -> TwoCores<route_qps::RouteQps> {
    let (two, server_cpus, shared) = match two_core_setup(global, setup, cpus) {
        Ok(chosen) => chosen,
        Err(why) => return TwoCores::skipped(why),
    };
    if shared {
        return TwoCores::skipped(format!(
            "the machine has {cpus} CPUs, so one of the server's two would be the generator's, \
             which needs about as much CPU per query as the server"
        ));
    }
    let mut runs = Vec::new();
    for kind in two_core_peers(global) {
        eprintln!(
            "[route-qps {}] again with the server on CPUs {server_cpus}",
            kind.id()
        );
        let outcome = PeerOutcome::of(kind, route_qps_settled(&two, kind, params).await);
        summarize("route-qps (two cores)", &outcome, |r| {
            format!(
                "{:.0} qps, {} µs CPU per query",
                r.qps,
                r.cpu_us_per_query
                    .map_or("n/a".into(), |v| format!("{v:.2}"))
            )
        });
        runs.push(outcome);
    }
    TwoCores {
        server_cpus,
        shares_generator_cpus: false,
        skipped: None,
        runs,
    }
}

/// `hostile` on every real NameServer of `global` (the ceiling keeps no
/// state to attack), building the topic-flood registration once.
///
/// # Errors
/// The topic-flood registration cannot be built (its frame would be over
/// 16 MiB).
pub async fn run_hostile(
    global: &Global,
    setup: &PeerSetup,
    params: &hostile::Params,
    results: &mut Results,
) -> anyhow::Result<()> {
    let flood = if params.attacks.contains(&hostile::Attack::TopicFlood) {
        let built = Instant::now();
        let topics = params.flood_topics;
        let flood = tokio::task::spawn_blocking(move || hostile::topic_flood_request(topics))
            .await
            .context("building the topic-flood registration panicked")??;
        eprintln!(
            "[hostile] built the topic-flood registration: {} topics, {:.1} MB compressed, in {:.1} s",
            flood.topics,
            flood.body_bytes as f64 / 1e6,
            built.elapsed().as_secs_f64()
        );
        Some(flood)
    } else {
        None
    };
    for &kind in global.peers.iter().filter(|k| k.is_real()) {
        let outcome = PeerOutcome::of(
            kind,
            hostile::run(setup, kind, params, flood.as_ref()).await,
        );
        summarize("hostile", &outcome, |r| {
            let alive = r.attacks.iter().filter(|a| a.alive_after).count();
            format!(
                "alive after {alive} of {} attacks, {:.0} s",
                r.attacks.len(),
                r.duration_s
            )
        });
        results.hostile.push(outcome);
    }
    Ok(())
}

/// `security` on the peers of `global` it runs: the signing part on
/// Waymark (Java has no NameServer authentication), the TLS part on
/// Waymark and Java; the others are left out with a line saying so.
pub async fn run_security(
    global: &Global,
    setup: &PeerSetup,
    params: &security::Params,
    results: &mut Results,
) {
    for &kind in global
        .peers
        .iter()
        .filter(|k| !ScenarioName::Security.runs_nameserver(**k))
    {
        eprintln!(
            "[security] {} left out: the security scenario runs Waymark and Java",
            kind.id()
        );
    }
    if global.peers.contains(&PeerKind::Waymark) {
        let outcome = PeerOutcome::of(
            PeerKind::Waymark,
            security::run_signing(setup, params).await,
        );
        summarize("security signing", &outcome, |r| {
            format!(
                "{:?} µs CPU per unsigned registration, {:?} µs signed: {:?} % extra",
                r.unsigned.cpu_us_per_request,
                r.signed.cpu_us_per_request,
                r.extra_percent()
            )
        });
        results.security_signing.push(outcome);
    } else {
        eprintln!("[security] signing part not run: waymark is not among --peers");
    }
    for &kind in global
        .peers
        .iter()
        .filter(|k| ScenarioName::Security.runs_nameserver(**k))
    {
        let outcome = PeerOutcome::of(kind, security::run_tls(setup, kind, params).await);
        summarize("security TLS", &outcome, |r| {
            format!(
                "{:?} µs CPU per plain query, {:?} µs over TLS: {:?}×",
                r.plain.cpu_us_per_request,
                r.tls.cpu_us_per_request,
                r.tls_ratio()
            )
        });
        results.security_tls.push(outcome);
    }
}

/// `route-change-latency` on every real NameServer of `global` with the
/// client's route push on (its default), and on Waymark once more with it
/// off, so that push and polling are compared on the same server.
pub async fn run_route_change(
    global: &Global,
    setup: &PeerSetup,
    params: &route_change::Params,
    results: &mut Results,
) {
    let line = |r: &route_change::RouteChangeLatency| match &r.latency_ms {
        Some(l) => format!(
            "{:?}: {} samples, p50 {:.3} ms, max {:.3} ms, mean {:.3} ms, {} missed",
            r.followed_by, l.count, l.p50, l.max, l.mean, r.missed
        ),
        None => format!("{:?}: no sample seen of {}", r.followed_by, r.samples.len()),
    };
    for &kind in &global.peers {
        if !kind.is_real() {
            eprintln!(
                "[route-change-latency] {} left out: it keeps no brokers",
                kind.id()
            );
            continue;
        }
        let outcome = PeerOutcome::of(kind, route_change::run(setup, kind, params, true).await);
        summarize("route-change-latency", &outcome, line);
        results.route_change_latency.push(outcome);
        if kind == PeerKind::Waymark {
            let outcome =
                PeerOutcome::of(kind, route_change::run(setup, kind, params, false).await);
            summarize("route-change-latency (route push off)", &outcome, line);
            results.route_change_latency_push_off.push(outcome);
        }
    }
}

/// `controller` on every peer that has a controller: first the heartbeat
/// measurement of each, then, with one Waymark NameServer for all of them,
/// the failover samples of each.
///
/// # Errors
/// A peer's command line cannot be shown (its setup is missing).
pub async fn run_controller(
    global: &Global,
    setup: &PeerSetup,
    params: &controller::Params,
    results: &mut Results,
) -> anyhow::Result<()> {
    let kinds: Vec<PeerKind> = global
        .peers
        .iter()
        .copied()
        .filter(|k| k.has_controller())
        .collect();
    if kinds.is_empty() {
        eprintln!("[controller] none of --peers has a controller (waymark, java): skipped");
        return Ok(());
    }
    for &kind in &kinds {
        results.controller_peers.push(PeerInfo {
            peer: kind,
            version: controller_version_of(setup, kind),
            command: group::command_line(setup, kind, params.nodes)?,
        });
    }
    let addrs = controller::refused_broker_addrs(params.replica_count());
    for &kind in &kinds {
        let outcome = PeerOutcome::of(
            kind,
            controller::run_heartbeats(setup, kind, params, &addrs).await,
        );
        summarize("controller heartbeats", &outcome, |r| {
            format!(
                "{:.0} heartbeats/s, {:?} µs CPU per heartbeat, RSS sum {:?} KiB, {}/{} alive",
                r.heartbeats_per_s,
                r.cpu_us_per_heartbeat,
                r.rss_sum_kib,
                r.alive_replicas,
                params.replica_count()
            )
        });
        results.controller_heartbeats.push(outcome);
    }
    let tiny = Layout {
        brokers: 1,
        topics_per_broker: 2,
        spread: 1,
        queues: 8,
    };
    let namesrv = scenario::start_peer(setup, PeerKind::Waymark, &tiny).await;
    match namesrv {
        Ok(namesrv) => {
            results.controller_namesrv = Some(peer::command_line(setup, PeerKind::Waymark, &tiny)?);
            for &kind in &kinds {
                let outcome = PeerOutcome::of(
                    kind,
                    controller::run_failover(
                        setup,
                        kind,
                        params,
                        namesrv.addr,
                        Some(namesrv.pid()),
                    )
                    .await,
                );
                summarize("controller failover", &outcome, |r| {
                    format!("median {:?} ms, samples {:?}", r.median_ms, r.samples_ms)
                });
                results.controller_failover.push(outcome);
            }
            namesrv.stop();
        }
        Err(error) => {
            let error = format!("the NameServer of the failover part did not start: {error:#}");
            for &kind in &kinds {
                results.controller_failover.push(PeerOutcome {
                    peer: kind,
                    result: None,
                    error: Some(error.clone()),
                });
            }
        }
    }
    Ok(())
}
