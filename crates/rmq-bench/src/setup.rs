//! Before a run: how each peer is started (binaries, the Java classpaths
//! through Maven), what it is (versions), and the results a run starts from
//! (machine, git state, pinning, the NameServer peers).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

use crate::cli::Global;
use crate::peer::{self, JavaSetup, PeerKind, PeerOptions, PeerSetup};
use crate::pin::{self, Machine};
use crate::provenance::GitState;
use crate::results::{utc_now, PeerInfo, Pinning, Results};
use crate::scenario::{Entry, Starts};
use crate::workload::Layout;

/// The workspace this crate lives in (for `.bench/` and the Java poms).
pub fn workspace_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// Resolves how to start each of `global.peers` that `scenarios` run (and Waymark's NameServer,
/// where the controller's failover part registers).
pub fn peers(global: &Global, scenarios: &[&dyn Entry]) -> anyhow::Result<PeerSetup> {
    let bench_bin = std::env::current_exe()?;
    // Peers run in their own directories: a relative path would not resolve there.
    let path = |given: &Option<PathBuf>, default: PathBuf| {
        let path = given.clone().unwrap_or(default);
        path.canonicalize().unwrap_or(path)
    };
    let beside = |name: &str| bench_bin.with_file_name(name);
    let waymark_bin = path(&global.waymark_bin, beside("rmq-namesrv"));
    let waymark_controller_bin = path(&global.waymark_controller_bin, beside("rmq-controller"));
    let rust_port = workspace_root().join(".bench/rust-port/bin/rocketmq-namesrv-rust");
    let rust_port_bin = path(&global.rust_port_bin, rust_port);
    let wants = |starts: Starts, kind| {
        let started = |s: &&dyn Entry| s.starts() == starts && s.runs(kind);
        global.peers.contains(&kind) && scenarios.iter().any(started)
    };
    let controllers = scenarios.iter().any(|s| s.starts() == Starts::Controller);
    if (wants(Starts::NameServer, PeerKind::Waymark) || controllers) && !waymark_bin.is_file() {
        bail!(
            "Waymark's rmq-namesrv not found at {} (cargo build --release -p rmq-namesrv, or --waymark-bin)",
            waymark_bin.display()
        );
    }
    if wants(Starts::Controller, PeerKind::Waymark) && !waymark_controller_bin.is_file() {
        bail!(
            "Waymark's rmq-controller not found at {} (cargo build --release -p rmq-controller, \
             or --waymark-controller-bin)",
            waymark_controller_bin.display()
        );
    }
    if wants(Starts::NameServer, PeerKind::RustPort) && !rust_port_bin.is_file() {
        bail!(
            "the Rust port is not installed at {} (cargo install rocketmq-namesrv --version 1.0.0 \
             --locked --root .bench/rust-port, or --rust-port-bin, or leave rust-port out of --peers)",
            rust_port_bin.display()
        );
    }
    let java = wants(Starts::NameServer, PeerKind::Java).then(|| {
        let pom = Path::new(env!("CARGO_MANIFEST_DIR")).join("java/pom.xml");
        java_namesrv(&path(&global.java_pom, pom), &global.java_heap)
    });
    let java = java.transpose()?;
    let java_controller = wants(Starts::Controller, PeerKind::Java).then(|| {
        let pom = path(
            &global.java_controller_pom,
            workspace_root().join("interop/java/pom.xml"),
        );
        java_controller(&pom, &global.java_controller_heap)
    });
    let java_controller = java_controller.transpose()?;
    let server_cpus = (!global.no_pin).then(|| pin::usable(&global.server_cpus));
    let server_cpus = server_cpus.flatten();
    if !global.no_pin && server_cpus.is_none() {
        tracing::warn!(cpus = %global.server_cpus, "cannot pin servers; running them unpinned");
    }
    Ok(PeerSetup {
        waymark_bin,
        waymark_controller_bin,
        java_controller,
        rust_port_bin,
        java,
        bench_bin,
        server_cpus,
        keep_dirs: global.keep_dirs,
    })
}

/// A new result set for this process, with the NameServer peers that
/// `scenarios` run, as they are started.
pub fn results(
    global: &Global,
    setup: &PeerSetup,
    scenarios: &[&dyn Entry],
    command: String,
) -> anyhow::Result<Results> {
    let example = Layout::new(10, 100, 10);
    let mut peers = Vec::new();
    for &peer in &global.peers {
        let started = |s: &&dyn Entry| s.starts() == Starts::NameServer && s.runs(peer);
        if scenarios.iter().any(started) {
            let version = version(setup, peer, false);
            let command = peer::command_line(setup, peer, &example, &PeerOptions::default())?;
            peers.push(PeerInfo {
                peer,
                version,
                command,
            });
        }
    }
    let pinning = Pinning {
        client_cpus_requested: (!global.no_pin).then(|| global.client_cpus.clone()),
        client_cpus_allowed: pin::proc_status_field(None, "Cpus_allowed_list"),
        server_cpus: setup.server_cpus.clone(),
    };
    Ok(Results {
        command,
        started_at: utc_now(),
        quick: global.quick,
        machine: Machine::probe(),
        git: GitState::probe(&workspace_root()),
        pinning,
        peers,
        ..Results::default()
    })
}

/// Runs `mvn -B -q -ntp <flags> -f <pom> <goals>`, failing unless it succeeds (`for_peer`: the
/// Java peer it is needed for).
fn maven(flags: &[&str], pom: &Path, goals: &[&str], for_peer: &str) -> anyhow::Result<()> {
    let mut command = Command::new("mvn");
    command.args(["-B", "-q", "-ntp"]).args(flags);
    command.arg("-f").arg(pom).args(goals);
    let why = format!("cannot run mvn (Maven 3.6+ is needed for the Java {for_peer})");
    if !command.status().context(why)?.success() {
        let goals = goals.iter().filter(|g| !g.starts_with("-D"));
        let goals = goals.copied().collect::<Vec<_>>().join(" ");
        bail!("mvn {goals} failed for {}", pom.display());
    }
    Ok(())
}

/// Asks Maven for the Java NameServer's runtime classpath.
fn java_namesrv(pom: &Path, heap: &str) -> anyhow::Result<JavaSetup> {
    let out = format!("waymark-bench-classpath-{}.txt", std::process::id());
    let out = std::env::temp_dir().join(out);
    eprintln!("resolving the Java NameServer classpath (mvn dependency:build-classpath) ...");
    let output = format!("-Dmdep.outputFile={}", out.display());
    let goals = ["dependency:build-classpath", &output];
    maven(&[], pom, &goals, "NameServer")?;
    let classpath = std::fs::read_to_string(&out)?;
    let _ = std::fs::remove_file(&out);
    let what = format!("the classpath from {}", pom.display());
    java_setup(classpath, "rocketmq-namesrv", &what, heap)
}

/// Compiles interop/java's `rmq5` profile (`mvn -P rmq5 test-compile`) and reads its classpath.
fn java_controller(pom: &Path, heap: &str) -> anyhow::Result<JavaSetup> {
    let dir = pom.parent().unwrap_or(Path::new("."));
    let shown = dir.display();
    eprintln!("building the Java controller launcher (mvn -P rmq5 test-compile in {shown}) ...");
    let goals = ["-P", "rmq5", "test-compile"];
    maven(&["-Dstyle.color=never"], pom, &goals, "controller")?;
    let file = dir.join("target/rmq5/classpath.txt");
    let classpath = std::fs::read_to_string(&file);
    let classpath = classpath.with_context(|| format!("cannot read {}", file.display()))?;
    let what = format!("the classpath in {}", file.display());
    java_setup(classpath, "rocketmq-controller", &what, heap)
}

/// `java` on `classpath` (`what`), which must hold a jar of `jar`.
fn java_setup(classpath: String, jar: &str, what: &str, heap: &str) -> anyhow::Result<JavaSetup> {
    let classpath = classpath.trim().to_owned();
    if !classpath.contains(jar) {
        bail!("{what} has no {jar} jar");
    }
    let (java, heap) = ("java".into(), heap.to_owned());
    Ok(JavaSetup {
        java,
        classpath,
        heap,
    })
}

/// The version of `artifact` on `java`'s classpath (`…/artifact-5.5.1.jar` → `5.5.1`), else `?`.
fn jar_version(java: &Option<JavaSetup>, artifact: &str) -> String {
    let prefix = format!("{artifact}-");
    let jars = java.iter().flat_map(|j| j.classpath.split(':'));
    let version = jars
        .filter_map(|p| Path::new(p).file_name()?.to_str())
        .find_map(|name| Some(name.strip_prefix(&prefix)?.strip_suffix(".jar")?.to_owned()));
    version.unwrap_or_else(|| "?".into())
}

/// What a peer's NameServer (or, with `controller`, its controller) is, with versions.
pub fn version(setup: &PeerSetup, kind: PeerKind, controller: bool) -> String {
    let java = || {
        let mut jvm = first_line(Command::new("java").arg("-version")).unwrap_or_default();
        jvm.truncate(jvm.find(" OpenJDK Runtime").unwrap_or(jvm.len()));
        jvm
    };
    let waymark = |bin: &Path, name: &str| {
        let mut git = Command::new("git");
        git.arg("-C").arg(workspace_root());
        let git = first_line(git.args(["describe", "--always", "--dirty"])).unwrap_or_default();
        let version = first_line(Command::new(bin).arg("--version")).unwrap_or_else(|| name.into());
        format!("{version} (release build, git {git})")
    };
    match (kind, controller) {
        (PeerKind::Waymark, false) => waymark(&setup.waymark_bin, "rmq-namesrv"),
        (PeerKind::Waymark, true) => waymark(&setup.waymark_controller_bin, "rmq-controller"),
        (PeerKind::Java, false) => format!(
            "Apache RocketMQ NameServer {} (Maven Central), {}",
            jar_version(&setup.java, "rocketmq-namesrv"),
            java()
        ),
        (PeerKind::Java, true) => format!(
            "Apache RocketMQ controller {} (Maven Central; DLedger controller, interop/java's \
             ControllerLauncher), {}",
            jar_version(&setup.java_controller, "rocketmq-controller"),
            java()
        ),
        (PeerKind::RustPort, false) => {
            let mut port = Command::new(&setup.rust_port_bin);
            let version = first_line(port.arg("--version")).unwrap_or_default();
            format!("crates.io rocketmq-namesrv ({version})")
        }
        (PeerKind::Ceiling, false) => "rmq-bench ceiling-server (precomputed answers; each \
                                       registration decoded as Waymark decodes it and dropped)"
            .into(),
        (_, true) => format!("{} has no controller", kind.title()),
    }
}

/// What `command` prints (stdout, else stderr), its lines joined.
fn first_line(command: &mut Command) -> Option<String> {
    let out = command.output().ok()?;
    let text = if out.stdout.is_empty() {
        String::from_utf8_lossy(&out.stderr)
    } else {
        String::from_utf8_lossy(&out.stdout)
    };
    let lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    Some(lines.collect::<Vec<_>>().join(" "))
}
