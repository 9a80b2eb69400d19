//! Loopback ports for test and benchmark servers on a busy machine.
//!
//! A server that can bind port 0 and report the port it got is started
//! that way and needs nothing from here. For a server that must be told its
//! port (the Java NameServer in a benchmark, the Rust port), [`choose`]
//! picks one below the kernel's ephemeral range, where outgoing connections
//! never land, so only another listener can take it before the server
//! binds; the caller retries a failed bind with a fresh port and, when it
//! gives up, names each port tried and what held it ([`holder`]).
//!
//! [`refused_addr`] is the other need of tests: an address where a connect
//! is refused, held so that no other process can start listening there.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener};
use std::path::Path;
use std::sync::Mutex;

const LOWEST: u16 = 10_000;

/// A port that could be bound on all interfaces just now, chosen at random
/// below the ephemeral range ([`candidate_range`]); `None` if 200 probes
/// found none free.
pub fn choose() -> Option<u16> {
    let (low, high) = candidate_range();
    (0..200)
        .map(|_| fastrand::u16(low..=high))
        .find(|&port| TcpListener::bind((Ipv4Addr::UNSPECIFIED, port)).is_ok())
}

/// Ports to choose from: 10000 up to just below the kernel's ephemeral
/// range (`/proc/sys/net/ipv4/ip_local_port_range`), or 10000–32767 when
/// that cannot be read or leaves too little room.
pub fn candidate_range() -> (u16, u16) {
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse::<u16>().ok());
    match ephemeral_low {
        Some(low) if low.saturating_sub(1).saturating_sub(LOWEST) >= 2_000 => (LOWEST, low - 1),
        _ => (LOWEST, 32_767),
    }
}

/// Whether an error text says that the address was in use (Rust's
/// `AddrInUse`, Java's `BindException`, netty's "Failed to bind").
pub fn is_bind_failure(text: &str) -> bool {
    text.contains("Address already in use")
        || text.contains("address already in use")
        || text.contains("BindException")
        || text.contains("Failed to bind")
}

/// What holds `port` now, as one line: `port 20911: LISTEN by pid 4242
/// (java -cp …)`, `port 20911: TIME_WAIT (no visible process)` or `port
/// 20911: free now`. Read from `/proc/net/tcp{,6}` and the processes' `fd`
/// directories.
pub fn holder(port: u16) -> String {
    let mut sockets = BTreeMap::new(); // inode -> state
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = match std::fs::read_to_string(table) {
            Ok(text) => text,
            Err(error) => return format!("port {port}: unknown holder ({table}: {error})"),
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state), Some(inode)) =
                (fields.get(1), fields.get(3), fields.get(9))
            else {
                continue;
            };
            let local_port = local
                .rsplit_once(':')
                .and_then(|(_, hex)| u16::from_str_radix(hex, 16).ok());
            if local_port == Some(port) {
                sockets.insert(inode.parse::<u64>().unwrap_or(0), tcp_state(state));
            }
        }
    }
    if sockets.is_empty() {
        return format!("port {port}: free now");
    }
    let found: Vec<String> = sockets
        .into_iter()
        .map(|(inode, state)| match owner(inode) {
            Some(owner) => format!("{state} by {owner}"),
            None => format!("{state} (no visible process)"),
        })
        .collect();
    format!("port {port}: {}", found.join(" and "))
}

fn tcp_state(hex: &str) -> &'static str {
    match hex {
        "01" => "ESTABLISHED",
        "02" => "SYN_SENT",
        "03" => "SYN_RECV",
        "04" => "FIN_WAIT1",
        "05" => "FIN_WAIT2",
        "06" => "TIME_WAIT",
        "07" => "CLOSE",
        "08" => "CLOSE_WAIT",
        "09" => "LAST_ACK",
        "0A" => "LISTEN",
        "0B" => "CLOSING",
        _ => "unknown state",
    }
}

/// `pid N (command line)` of a process with socket `inode` open.
fn owner(inode: u64) -> Option<String> {
    if inode == 0 {
        return None;
    }
    let link = format!("socket:[{inode}]");
    for process in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = process.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(process.path().join("fd")) else {
            continue; // gone, or not ours to look at
        };
        let holds = fds
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == Path::new(&link)));
        if holds {
            return Some(format!("pid {pid} ({})", command_line(&process.path())));
        }
    }
    None
}

fn command_line(process: &Path) -> String {
    let raw = std::fs::read(process.join("cmdline")).unwrap_or_default();
    let text = String::from_utf8_lossy(&raw).replace('\0', " ");
    let text = text.trim();
    match text.char_indices().nth(160) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// An address on 127.0.0.1 where a TCP connect is refused, for as long as
/// this process runs: a socket is bound there but never listens, so the
/// port cannot be taken by a listener of another process (which a port
/// that was merely closed again can).
///
/// # Panics
/// If no socket can be bound on loopback (test code).
pub fn refused_addr() -> SocketAddr {
    static HELD: Mutex<Vec<socket2::Socket>> = Mutex::new(Vec::new());
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)
        .expect("create a TCP socket");
    socket
        .bind(&SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0).into())
        .expect("bind a loopback socket");
    let addr = socket
        .local_addr()
        .ok()
        .and_then(|addr| addr.as_socket())
        .expect("the bound socket's address");
    HELD.lock().unwrap_or_else(|e| e.into_inner()).push(socket);
    addr
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::ErrorKind;
    use std::net::TcpStream;

    #[test]
    fn a_refused_addr_refuses_connections_and_cannot_be_listened_on() {
        let addr = refused_addr();
        let error = TcpStream::connect(addr).expect_err("nothing listens there");
        assert_eq!(error.kind(), ErrorKind::ConnectionRefused, "{error}");
        assert!(
            TcpListener::bind(addr).is_err(),
            "the port is held, so no other socket binds it"
        );
    }

    #[test]
    fn a_chosen_port_is_below_the_ephemeral_range() {
        let (low, high) = candidate_range();
        assert!(low >= LOWEST && high > low, "{low}..={high}");
        let port = choose().expect("a free port on this machine");
        assert!((low..=high).contains(&port), "{port} not in {low}..={high}");
    }

    #[test]
    fn the_holder_of_a_listening_port_is_this_process() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let line = holder(port);
        let pid = std::process::id();
        assert!(
            line.starts_with(&format!("port {port}: LISTEN by pid {pid} (")),
            "{line}"
        );
        drop(listener);
        let after = holder(port);
        assert!(!after.contains(&format!("by pid {pid} (")), "{after}");
    }

    #[test]
    fn bind_failures_are_recognised_in_rust_and_java_words() {
        assert!(is_bind_failure(
            "cannot listen on 127.0.0.1:9876: Address already in use (os error 98)"
        ));
        assert!(is_bind_failure(
            "java.lang.IllegalStateException: Failed to bind to 127.0.0.1:9876"
        ));
        assert!(is_bind_failure("Caused by: java.net.BindException: x"));
        assert!(!is_bind_failure("Connection refused"));
    }
}
