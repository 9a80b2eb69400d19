//! A peer host that can vanish: a network namespace joined to this one by a
//! veth pair, from which connections are opened to a server here, and whose
//! replies can then be dropped ([`PeerNamespace::blackhole`]) as if its
//! power had gone: no FIN, no RST, nothing. Loopback cannot do this (both
//! ends are one kernel, which answers every probe).
//!
//! Needs root (CAP_NET_ADMIN), iproute2's `ip` and `bash` (whose `/dev/tcp`
//! opens the peer's connections, so no helper binary has to exist in the
//! namespace). Without them [`PeerNamespace::create_or_skip`] prints why the
//! test is skipped, or under `CI=true` fails it ([`crate::skip`]); it never
//! installs anything.
//!
//! Owns the namespace, its veth pair and the peer processes; all go when
//! the value drops. Addresses come from 10.224.0.0/11, one /30 per
//! namespace chosen by process id and a counter (so up to four namespaces
//! of one process at a time), so that test processes running at once do
//! not collide.

use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A network namespace with a veth link to this one.
#[derive(Debug)]
pub struct PeerNamespace {
    name: String,
    /// This namespace's end of the veth pair.
    host_link: String,
    ip: PathBuf,
    host: Ipv4Addr,
    peer: Ipv4Addr,
    peers: Mutex<Vec<Child>>,
}

impl PeerNamespace {
    /// Creates a namespace, or, when it cannot, says what is missing (root,
    /// `ip`, `bash`, or a command that failed) through
    /// [`skip_or_fail`](crate::skip::skip_or_fail): outside CI a line on
    /// stderr that `test` is skipped and `None`, under `CI=true` a panic.
    ///
    /// # Panics
    /// Under `CI=true`, when the namespace cannot be made.
    #[track_caller]
    pub fn create_or_skip(test: &str) -> Option<PeerNamespace> {
        match PeerNamespace::create() {
            Ok(namespace) => Some(namespace),
            Err(missing) => {
                crate::skip::skip_or_fail(
                    test,
                    &format!(
                        "it needs a network namespace and cannot make one: {missing}. Run the \
                         tests as root (CAP_NET_ADMIN) with iproute2 (`ip`) and bash installed \
                         to run it"
                    ),
                );
                None
            }
        }
    }

    /// Creates a namespace and its veth link, both ends up and addressed.
    ///
    /// # Errors
    /// What is missing, or the command that failed and its output.
    pub fn create() -> Result<PeerNamespace, String> {
        if !has_net_admin() {
            return Err("this process lacks CAP_NET_ADMIN (not root)".into());
        }
        let ip = find_program("ip").ok_or("iproute2's `ip` is not installed")?;
        find_program("bash").ok_or("`bash` is not installed")?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let index = ((pid % (1 << 17)) << 2) | (n % 4);
        let base = u32::from(Ipv4Addr::new(10, 224, 0, 0)) + (index << 2);
        let (host, peer) = (Ipv4Addr::from(base + 1), Ipv4Addr::from(base + 2));
        let name = format!("waymark-{pid}-{n}");
        let (host_link, peer_link) = (format!("wk{pid}x{n}h"), format!("wk{pid}x{n}p"));
        run(&ip, &["netns", "add", &name])?;
        // From here the namespace exists: dropping removes it (and the veth
        // pair with it) whatever fails next.
        let namespace = PeerNamespace {
            name,
            host_link: host_link.clone(),
            ip,
            host,
            peer,
            peers: Mutex::new(Vec::new()),
        };
        let ns = namespace.name.as_str();
        let ip = namespace.ip.as_path();
        run(
            ip,
            &[
                "link", "add", &host_link, "type", "veth", "peer", "name", &peer_link, "netns", ns,
            ],
        )?;
        run(
            ip,
            &["addr", "add", &format!("{host}/30"), "dev", &host_link],
        )?;
        run(ip, &["link", "set", &host_link, "up"])?;
        let inside = |args: &[&str]| {
            let mut all = vec!["netns", "exec", ns, ip.to_str().unwrap_or("ip")];
            all.extend_from_slice(args);
            run(ip, &all)
        };
        inside(&["addr", "add", &format!("{peer}/30"), "dev", &peer_link])?;
        inside(&["link", "set", &peer_link, "up"])?;
        inside(&["link", "set", "lo", "up"])?;
        Ok(namespace)
    }

    /// This namespace's end of the link: bind a server here for the peer
    /// to reach.
    pub fn host_addr(&self) -> Ipv4Addr {
        self.host
    }

    /// The peer's end of the link, the address its connections come from.
    pub fn peer_addr(&self) -> Ipv4Addr {
        self.peer
    }

    /// Opens a TCP connection from the peer to `server`, sends `first`
    /// on it, and keeps it open (never reading) until the namespace drops.
    /// Returns once the bytes are handed to the peer's kernel.
    ///
    /// # Panics
    /// If the peer cannot connect within 10 s.
    pub fn connect(&self, server: SocketAddr, first: &[u8]) {
        let script = format!(
            "exec 3<>/dev/tcp/{}/{} || exit 1; cat >&3; echo connected; exec sleep 3600",
            server.ip(),
            server.port()
        );
        let mut child = Command::new(&self.ip)
            .args(["netns", "exec", &self.name, "bash", "-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("run bash in the peer namespace");
        let mut stdin = child.stdin.take().expect("the peer's stdin");
        let _ = stdin.write_all(first);
        drop(stdin);
        let stdout = child.stdout.take().expect("the peer's stdout");
        self.peers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(child);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(line) if line.trim() == "connected" => {}
            other => panic!(
                "the peer in {} did not connect to {server}: {other:?}",
                self.name
            ),
        }
    }

    /// From now on everything the peer sends to [`host_addr`] is dropped
    /// in the peer's own kernel (a blackhole route): this side's packets
    /// still arrive, nothing comes back, no error is reported here.
    ///
    /// # Panics
    /// If the route cannot be added.
    ///
    /// [`host_addr`]: PeerNamespace::host_addr
    pub fn blackhole(&self) {
        let ip = self.ip.to_str().unwrap_or("ip");
        let host = format!("{}/32", self.host);
        let args = [
            "netns",
            "exec",
            &self.name,
            ip,
            "route",
            "add",
            "blackhole",
            &host,
        ];
        if let Err(error) = run(&self.ip, &args) {
            panic!("blackhole in {}: {error}", self.name);
        }
    }
}

impl Drop for PeerNamespace {
    fn drop(&mut self) {
        let peers = self
            .peers
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        for peer in peers.iter_mut() {
            let _ = peer.kill();
            let _ = peer.wait();
        }
        // Deleted first, as the namespace may outlive its name: a peer
        // socket that closed into the blackhole keeps retransmitting its FIN,
        // and holds the namespace, and so the pair, for minutes.
        let _ = run(&self.ip, &["link", "del", &self.host_link]);
        let _ = run(&self.ip, &["netns", "del", &self.name]);
    }
}

/// Runs `program args`, its stderr in the error if it fails.
fn run(program: &Path, args: &[&str]) -> Result<(), String> {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|error| format!("cannot run {}: {error}", program.display()))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "`{} {}` failed ({}): {}",
        program.display(),
        args.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    ))
}

/// Whether CAP_NET_ADMIN (bit 12) is in this process's effective set.
fn has_net_admin() -> bool {
    const CAP_NET_ADMIN: u32 = 12;
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    status
        .lines()
        .find_map(|line| line.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << CAP_NET_ADMIN) != 0)
}

/// `name` on PATH, or in the sbin directories PATH often lacks.
fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}
