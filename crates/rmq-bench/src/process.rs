//! A server process as every peer runs it (fresh directory, pinned, output to
//! a log, killed when dropped), started on fresh ports until none was taken.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use anyhow::{bail, Context};
use rmq_testkit::ports;

use crate::peer::{PeerKind, PeerSetup};
use crate::pin;

/// Starts with fresh ports before a peer that cannot bind is given up.
const PORT_ATTEMPTS: usize = 5;

/// One running server process.
#[derive(Debug)]
pub struct Process {
    child: Child,
    /// Held open: the Java controller launcher stops when its stdin closes,
    /// so a node cannot outlive the harness.
    _stdin: Option<ChildStdin>,
    dir: PathBuf,
    keep_dir: bool,
}

impl Process {
    /// Spawns `inner` in `dir`, pinned, its output to `dir/server.log` (stdin kept open if
    /// asked).
    pub fn spawn(
        setup: &PeerSetup,
        inner: Command,
        dir: PathBuf,
        stdin: bool,
    ) -> anyhow::Result<Process> {
        let mut command = pinned(setup, inner, &dir);
        let log = File::create(dir.join("server.log"))?;
        let input = if stdin { Stdio::piped() } else { Stdio::null() };
        command.stdin(input).stdout(log.try_clone()?).stderr(log);
        let shown = show_command(&command, "<classpath>");
        let mut child = command
            .spawn()
            .with_context(|| format!("cannot start {shown}"))?;
        let stdin = child.stdin.take();
        Ok(Process {
            child,
            _stdin: stdin,
            dir,
            keep_dir: setup.keep_dirs,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its resident memory now, KiB.
    pub fn rss_kib(&self) -> Option<u64> {
        pin::rss_kib(self.pid())
    }

    /// The CPUs it may run on, as the kernel reports them.
    pub fn cpus_allowed(&self) -> Option<String> {
        pin::proc_status_field(Some(self.pid()), "Cpus_allowed_list")
    }

    /// How it exited, if it did.
    pub fn exit_status(&mut self) -> Option<String> {
        self.child.try_wait().ok().flatten().map(|s| s.to_string())
    }

    /// Its directory (logs, data).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The last lines of its log, for error messages.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(8).collect();
        match tail.is_empty() {
            true => "(empty)".to_owned(),
            false => tail.into_iter().rev().collect::<Vec<_>>().join(" | "),
        }
    }

    /// Whether it exited saying that its address was in use.
    pub fn lost_its_port(&mut self) -> bool {
        let log = std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
        self.exit_status().is_some() && ports::is_bind_failure(&log)
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !self.keep_dir {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A fresh directory for one process of `kind`.
pub fn dir_for(kind: PeerKind) -> anyhow::Result<PathBuf> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "waymark-bench-{}-{}-{n}",
        std::process::id(),
        kind.id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("home"))
        .with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

/// Why one start did not give a running server: one of its processes lost
/// its port (which one, and its log), or anything else.
pub enum Start {
    PortTaken(u16, String),
    Failed(anyhow::Error),
}

impl<E: Into<anyhow::Error>> From<E> for Start {
    fn from(error: E) -> Start {
        Start::Failed(error.into())
    }
}

/// `start` on `count` fresh ports, again on fresh ones while a port was
/// taken, at most [`PORT_ATTEMPTS`] times.
pub async fn on_fresh_ports<T>(
    what: &str,
    count: usize,
    mut start: impl AsyncFnMut(&[u16]) -> Result<T, Start>,
) -> anyhow::Result<T> {
    let mut tried = Vec::new();
    for attempt in 1..=PORT_ATTEMPTS {
        let mut chosen: Vec<u16> = Vec::with_capacity(count);
        while chosen.len() < count {
            let port = ports::choose().with_context(|| {
                let (low, high) = ports::candidate_range();
                format!("no free port in {low}..={high}")
            })?;
            if !chosen.contains(&port) {
                chosen.push(port);
            }
        }
        match start(&chosen).await {
            Ok(started) => return Ok(started),
            Err(Start::PortTaken(port, log)) => {
                tried.push(format!(
                    "attempt {attempt}: {} ({log})",
                    ports::holder(port)
                ));
            }
            Err(Start::Failed(error)) => return Err(error),
        }
    }
    bail!(
        "{what} could not bind in {PORT_ATTEMPTS} attempts with fresh ports: {}",
        tried.join("; ")
    )
}

/// `inner` under `taskset -c <server cpus>`, if servers are pinned.
pub fn pinned(setup: &PeerSetup, inner: Command, dir: &Path) -> Command {
    let Some(cpus) = &setup.server_cpus else {
        return inner;
    };
    let mut command = Command::new("taskset");
    command
        .arg("-c")
        .arg(cpus)
        .arg(inner.get_program())
        .args(inner.get_args());
    for (key, value) in inner.get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    command.current_dir(dir);
    command
}

/// A command line as one shell-like string, its environment first, the
/// classpath shown as `classpath`.
pub fn show_command(command: &Command, classpath: &str) -> String {
    let mut parts: Vec<String> = command
        .get_envs()
        .filter_map(|(k, v)| Some(format!("{}={}", k.to_string_lossy(), v?.to_string_lossy())))
        .collect();
    parts.reverse();
    parts.push(command.get_program().to_string_lossy().into_owned());
    let mut after_cp = false;
    for arg in command.get_args() {
        let arg = arg.to_string_lossy();
        parts.push(if after_cp {
            classpath.to_owned()
        } else {
            arg.to_string()
        });
        after_cp = arg == "-cp";
    }
    parts.join(" ")
}
