//! One NameServer process: start on a loopback port it binds itself (port
//! 0, read back from its ready line), stop (SIGKILL, so the port is free at
//! once and nothing is unregistered gracefully), start again on the same
//! address with the same KV file.
//!
//! Owns the process and its temporary directory (KV file, config file, the
//! Java NameServer's home and logs, stderr); both go when the value drops.
//! The Java NameServer's stdin is a pipe held open: if the test process dies
//! without dropping, the pipe closes and the JVM stops by itself.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use crate::ports;

/// The environment variable naming a file that holds the Java class path of
/// `interop/java` (profile `rmq5`: `interop/java/target/rmq5/classpath.txt`,
/// written by `mvn -P rmq5 test-compile`). Set and non-empty: tests run
/// against the Java NameServer.
pub const JAVA_CLASSPATH_ENV: &str = "WAYMARK_JAVA_NAMESRV_CLASSPATH";

/// Set (to anything): a dropped [`Namesrv`] leaves its directory (KV file,
/// stderr, the Java NameServer's logs under `home/logs`) for a post-mortem.
pub const KEEP_DIR_ENV: &str = "WAYMARK_TESTKIT_KEEP";

const JAVA_LAUNCHER: &str = "dev.waymark.interop.harness.NamesrvLauncher";
const WAYMARK_BOOT: &str = "The Name Server boot success";
const JAVA_READY: &str = "NAMESRV READY ";

/// Which NameServer implementation a [`Namesrv`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Waymark's `rmq-namesrv` binary (built on demand).
    Waymark,
    /// The Java NameServer of `interop/java`'s class path.
    Java,
}

impl Kind {
    /// [`Kind::Java`] when [`JAVA_CLASSPATH_ENV`] is set and non-empty,
    /// else [`Kind::Waymark`].
    pub fn from_env() -> Kind {
        match std::env::var_os(JAVA_CLASSPATH_ENV) {
            Some(value) if !value.is_empty() => Kind::Java,
            _ => Kind::Waymark,
        }
    }

    /// `waymark` or `java`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Waymark => "waymark",
            Kind::Java => "java",
        }
    }

    fn ready_timeout(self) -> Duration {
        match self {
            Kind::Waymark => Duration::from_secs(20),
            // JVM start and class loading on a loaded two-core machine.
            Kind::Java => Duration::from_secs(90),
        }
    }
}

/// A running NameServer on `127.0.0.1`; killed when dropped.
///
/// `options` are NamesrvConfig / NettyServerConfig settings by their Java
/// names (`scanNotActiveBrokerInterval=200`), which both implementations
/// read. Start-up failures panic with the process's stderr: this is test
/// code.
#[derive(Debug)]
pub struct Namesrv {
    /// `127.0.0.1:<port>`; unchanged by [`Namesrv::start_again`].
    pub addr: String,
    /// Waymark's HTTP port (`127.0.0.1:<port>`, chosen by the system at
    /// each start); `None` for Java's NameServer.
    pub http: Option<String>,
    kind: Kind,
    options: Vec<String>,
    dir: PathBuf,
    process: Option<Process>,
}

#[derive(Debug)]
struct Process {
    child: Child,
    /// Held open: end of input stops the Java launcher.
    _stdin: Option<ChildStdin>,
}

/// A spawned process not yet known to be ready.
struct Pending {
    process: Process,
    lines: mpsc::Receiver<String>,
}

impl Namesrv {
    /// Starts the NameServer the environment selects ([`Kind::from_env`]).
    pub fn start(options: &[&str]) -> Namesrv {
        Namesrv::start_kind(Kind::from_env(), options)
    }

    /// Starts a Waymark NameServer whatever the environment says: for tests
    /// of Waymark-only behaviour (the caller says which).
    pub fn waymark(options: &[&str]) -> Namesrv {
        Namesrv::start_kind(Kind::Waymark, options)
    }

    /// Starts a NameServer of `kind`.
    pub fn start_kind(kind: Kind, options: &[&str]) -> Namesrv {
        let mut namesrv = Namesrv::unstarted(kind, options);
        let pending = namesrv.launch(None);
        namesrv.finish(pending);
        namesrv
    }

    /// Starts `N` NameServers of the environment's kind side by side (a
    /// JVM start takes seconds; they overlap):
    /// `let [a, b] = Namesrv::start_many(&[]);`.
    pub fn start_many<const N: usize>(options: &[&str]) -> [Namesrv; N] {
        let kind = Kind::from_env();
        let pending: [(Namesrv, Pending); N] = std::array::from_fn(|_| {
            let namesrv = Namesrv::unstarted(kind, options);
            let pending = namesrv.launch(None);
            (namesrv, pending)
        });
        pending.map(|(mut namesrv, pending)| {
            namesrv.finish(pending);
            namesrv
        })
    }

    /// Which implementation this is.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Whether the process is running (not [`stopped`](Namesrv::stop)).
    pub fn is_running(&self) -> bool {
        self.process.is_some()
    }

    /// Kills the process (SIGKILL) and waits for it; the port is free
    /// afterwards. Brokers are not unregistered: their connections break.
    pub fn stop(&mut self) {
        if let Some(mut process) = self.process.take() {
            let _ = process.child.kill();
            let _ = process.child.wait();
        }
    }

    /// Starts a stopped NameServer again on the same address with the same
    /// KV and config files: the route table is empty, the KV store is kept.
    ///
    /// # Panics
    /// If it is running, or does not come up: a bind failure is retried for
    /// up to 20 s in case the old socket lingers, and the panic then names
    /// what holds the port; other failures are retried a few times.
    pub fn start_again(&mut self) {
        assert!(
            self.process.is_none(),
            "start_again on a running NameServer"
        );
        let port: u16 = self
            .addr
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("addr ends in a port");
        let bind_deadline = std::time::Instant::now() + Duration::from_secs(20);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let pending = self.launch(Some(port));
            match self.try_finish(pending) {
                Ok(addr) => {
                    assert_eq!(addr, self.addr, "restarted on another address");
                    return;
                }
                Err(error)
                    if attempt < 5
                        || (ports::is_bind_failure(&error)
                            && std::time::Instant::now() < bind_deadline) =>
                {
                    eprintln!(
                        "{} restart on port {port} failed (attempt {attempt}), retrying: {error}",
                        self.kind.name()
                    );
                    std::thread::sleep(Duration::from_millis(300));
                }
                Err(error) => panic!("{error}\nafter {attempt} attempts; {}", ports::holder(port)),
            }
        }
    }

    /// [`stop`](Namesrv::stop) then [`start_again`](Namesrv::start_again).
    pub fn restart(&mut self) {
        self.stop();
        self.start_again();
    }

    fn unstarted(kind: Kind, options: &[&str]) -> Namesrv {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "rmq-testkit-{}-{}-{}",
            kind.name(),
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("create the NameServer's temp dir");
        Namesrv {
            addr: String::new(),
            http: None,
            kind,
            options: options.iter().map(|o| o.to_string()).collect(),
            dir,
            process: None,
        }
    }

    /// Every setting: the caller's plus the files in the temp dir.
    fn settings(&self) -> Vec<String> {
        let mut settings = vec![
            format!("kvConfigPath={}", self.dir.join("kv.json").display()),
            format!(
                "configStorePath={}",
                self.dir.join("ns.properties").display()
            ),
        ];
        settings.extend(self.options.iter().cloned());
        settings
    }

    fn launch(&self, port: Option<u16>) -> Pending {
        let stderr = std::fs::File::create(self.stderr_path()).expect("create stderr file");
        let mut command = match self.kind {
            Kind::Waymark => {
                let mut command = Command::new(waymark_binary());
                command
                    .arg("--listen")
                    .arg(format!("127.0.0.1:{}", port.unwrap_or(0)))
                    // No route snapshot unless the options ask for one: its default is
                    // under the shared HOME, and a restart here starts with no routes,
                    // as Java's NameServer does.
                    .arg("--set")
                    .arg("routeSnapshotPath=")
                    // Never the operator's default port: tests run side by side.
                    .arg("--set")
                    .arg("httpListenAddr=127.0.0.1:0");
                for setting in self.settings() {
                    command.arg("--set").arg(setting);
                }
                command.env("RUST_LOG", "warn").stdin(Stdio::null());
                command
            }
            Kind::Java => {
                let home = self.dir.join("home");
                let tmp = self.dir.join("tmp");
                std::fs::create_dir_all(&home).expect("create java home dir");
                std::fs::create_dir_all(&tmp).expect("create java tmp dir");
                let mut command = Command::new(java_binary());
                command
                    .arg("-Xmx256m")
                    // Logs and the launcher's temporary files stay in our dir.
                    .arg(format!("-Duser.home={}", home.display()))
                    .arg(format!("-Djava.io.tmpdir={}", tmp.display()))
                    .arg("-cp")
                    .arg(java_classpath())
                    .arg(JAVA_LAUNCHER)
                    .args(self.settings());
                if let Some(port) = port {
                    command.arg(format!("listenPort={port}"));
                }
                command.stdin(Stdio::piped());
                command
            }
        };
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start the {} NameServer: {e}", self.kind.name()));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        // Drains stdout for the process's whole life.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let _ = tx.send(line);
            }
        });
        Pending {
            process: Process {
                child,
                _stdin: stdin,
            },
            lines,
        }
    }

    fn finish(&mut self, pending: Pending) {
        match self.try_finish(pending) {
            Ok(addr) => self.addr = addr,
            Err(error) => panic!("{error}"),
        }
    }

    /// Waits for the ready line; on success the process is ours.
    fn try_finish(&mut self, pending: Pending) -> Result<String, String> {
        let Pending { mut process, lines } = pending;
        let deadline = std::time::Instant::now() + self.kind.ready_timeout();
        let addr = loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(addr) = ready_addr(self.kind, &line) {
                        break Ok(addr);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => break Err("not ready in time"),
                Err(mpsc::RecvTimeoutError::Disconnected) => break Err("exited before ready"),
            }
        };
        match addr {
            Ok(addr) => {
                // Waymark names its HTTP port right after the boot line.
                self.http = None;
                if self.kind == Kind::Waymark {
                    while let Ok(line) = lines.recv_timeout(Duration::from_secs(2)) {
                        if let Some(url) = line.strip_prefix("Waymark HTTP listening on http://") {
                            self.http = Some(url.trim().to_owned());
                            break;
                        }
                    }
                }
                self.process = Some(process);
                Ok(addr)
            }
            Err(what) => {
                let _ = process.child.kill();
                let _ = process.child.wait();
                Err(format!(
                    "the {} NameServer {what}; stderr:\n{}",
                    self.kind.name(),
                    tail(&self.stderr_path(), 40)
                ))
            }
        }
    }

    fn stderr_path(&self) -> PathBuf {
        self.dir.join("stderr.log")
    }
}

impl Drop for Namesrv {
    fn drop(&mut self) {
        self.stop();
        if std::env::var_os(KEEP_DIR_ENV).is_some() {
            eprintln!(
                "{} NameServer files kept in {}",
                self.kind.name(),
                self.dir.display()
            );
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn ready_addr(kind: Kind, line: &str) -> Option<String> {
    match kind {
        Kind::Waymark if line.contains(WAYMARK_BOOT) => {
            line.rsplit("address ").next().map(|a| a.trim().to_owned())
        }
        Kind::Java => line.strip_prefix(JAVA_READY).map(|a| a.trim().to_owned()),
        Kind::Waymark => None,
    }
}

fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

fn java_binary() -> PathBuf {
    match std::env::var_os("JAVA_HOME") {
        Some(home) if !home.is_empty() => Path::new(&home).join("bin").join("java"),
        _ => PathBuf::from("java"),
    }
}

fn java_classpath() -> String {
    let file = std::env::var_os(JAVA_CLASSPATH_ENV).expect("JAVA_CLASSPATH_ENV is set");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| {
        panic!(
            "{JAVA_CLASSPATH_ENV}={}: {e} (build it with \
             `mvn -B -q -ntp -f interop/java/pom.xml -P rmq5 test-compile`)",
            Path::new(&file).display()
        )
    });
    text.trim().to_owned()
}

/// `target/<profile>/rmq-namesrv` next to the running test executable,
/// built with `cargo build -p rmq-namesrv` (same target directory and
/// profile) if it is missing.
pub(crate) fn waymark_binary() -> PathBuf {
    workspace_binary("rmq-namesrv")
}

/// The workspace binary `name` (whose package has the same name) next to
/// the running test executable, built with `cargo build -p <name>` (same
/// target directory and profile) if it is missing.
pub(crate) fn workspace_binary(name: &str) -> PathBuf {
    static BUILD: Mutex<()> = Mutex::new(());
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test> → target/<profile>
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("test executable lives in target/<profile>/deps");
    let binary = profile_dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    let _guard = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    if !binary.exists() {
        let target_dir = profile_dir.parent().expect("target dir");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        build
            .args(["build", "-p", name, "--target-dir"])
            .arg(target_dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            build.arg("--release");
        }
        let status = build
            .status()
            .unwrap_or_else(|e| panic!("run cargo build -p {name}: {e}"));
        assert!(status.success(), "cargo build -p {name} failed");
    }
    binary
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_lines_of_both_kinds() {
        let boot = "The Name Server boot success. serializeType=JSON, address 127.0.0.1:40001";
        assert_eq!(
            ready_addr(Kind::Waymark, boot).as_deref(),
            Some("127.0.0.1:40001")
        );
        assert_eq!(ready_addr(Kind::Waymark, "NAMESRV READY 127.0.0.1:1"), None);
        assert_eq!(
            ready_addr(Kind::Java, "NAMESRV READY 127.0.0.1:40002\r").as_deref(),
            Some("127.0.0.1:40002")
        );
        assert_eq!(ready_addr(Kind::Java, boot), None);
    }
}
