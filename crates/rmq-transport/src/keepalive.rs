//! Dead-peer detection on accepted connections: TCP keepalive (SO_KEEPALIVE
//! with its idle time, probe interval and probe count) and TCP_USER_TIMEOUT.
//!
//! A peer that vanishes without FIN or RST (power loss, a cut link) leaves
//! an idle connection that nothing reads or writes, so without these the
//! kernel never notices; a NameServer would keep such a broker's routes
//! until its heartbeat timeout (120 s). With them the kernel closes the
//! connection within seconds, the reader sees the error, and whoever
//! watches connections (the NameServer unregisters a broker whose
//! registration connection closed) acts at once. The peer needs nothing:
//! probes are answered by its kernel, so unchanged Java brokers and clients
//! are covered.
//!
//! Owns only the socket options. The application-level idle close
//! (`serverChannelMaxIdleTimeSeconds`, [`ServerConfig::idle_timeout`]) is
//! `session`'s and unaffected: probes carry no data, so they neither read
//! nor write as far as it is concerned. The keys are `limits`'.
//!
//! [`ServerConfig::idle_timeout`]: crate::ServerConfig::idle_timeout

use std::time::Duration;

use socket2::SockRef;
use tokio::net::TcpStream;

/// How an accepted connection finds out that its peer is gone.
///
/// On Linux, when both are set, TCP_USER_TIMEOUT also ends keepalive
/// probing: an idle connection is closed at the first probe at least
/// `user_timeout` after the peer was last heard from, whatever `probes`
/// says. Elsewhere `idle + interval × probes` bounds it. The defaults make
/// the two agree (15 s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keepalive {
    /// Silence from the peer after which the first probe is sent;
    /// `None` leaves SO_KEEPALIVE off, as Java's server does. Default 5 s.
    pub idle: Option<Duration>,
    /// Time between unanswered probes. Default 2 s.
    pub interval: Duration,
    /// Unanswered probes after which the connection is closed. Default 5.
    pub probes: u32,
    /// TCP_USER_TIMEOUT: how long sent data may stay unacknowledged
    /// (retransmitted, or window-probed while the peer's window is full)
    /// before the connection is closed. It covers what keepalive cannot:
    /// keepalive probes only idle connections, and a connection with a
    /// response in flight to a dead peer would otherwise retransmit for
    /// about 15 minutes (Linux's `tcp_retries2`). `None` leaves the
    /// kernel's behaviour. Linux only; ignored elsewhere. Default 15 s.
    pub user_timeout: Option<Duration>,
}

impl Keepalive {
    /// Neither keepalive nor a user timeout: the socket as Java's server
    /// leaves it.
    pub const DISABLED: Keepalive = Keepalive {
        idle: None,
        interval: Duration::from_secs(2),
        probes: 5,
        user_timeout: None,
    };

    /// From the key values (`tcpKeepaliveIdleSeconds`,
    /// `tcpKeepaliveIntervalSeconds`, `tcpKeepaliveProbes`,
    /// `tcpUserTimeoutMillis`): an idle time or user timeout of 0 (or
    /// less) turns that part off; interval and count are at least 1.
    pub fn from_settings(
        idle_seconds: i64,
        interval_seconds: i64,
        probes: i64,
        user_timeout_millis: i64,
    ) -> Keepalive {
        let positive = |value: i64| u64::try_from(value).ok().filter(|value| *value > 0);
        Keepalive {
            idle: positive(idle_seconds).map(Duration::from_secs),
            interval: Duration::from_secs(positive(interval_seconds).unwrap_or(1)),
            probes: u32::try_from(probes.max(1)).unwrap_or(u32::MAX),
            user_timeout: positive(user_timeout_millis).map(Duration::from_millis),
        }
    }

    /// Sets the options on `stream`. A failure (an old kernel, a platform
    /// without the option, a value it refuses) is logged at debug and
    /// otherwise ignored: the connection is served as it would have been
    /// without the option.
    pub fn apply(&self, stream: &TcpStream) {
        let socket = SockRef::from(stream);
        if let Some(idle) = self.idle {
            let params = socket2::TcpKeepalive::new().with_time(idle);
            // Platforms outside this list can set only the idle time; their
            // own interval and count apply.
            #[cfg(any(
                target_os = "linux",
                target_os = "android",
                target_os = "macos",
                target_os = "ios",
                target_os = "freebsd",
                target_os = "netbsd",
                target_os = "windows",
            ))]
            let params = params
                .with_interval(self.interval)
                .with_retries(self.probes);
            if let Err(error) = socket.set_tcp_keepalive(&params) {
                log_failure("TCP keepalive", stream, &error);
            }
        }
        self.apply_user_timeout(&socket, stream);
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn apply_user_timeout(&self, socket: &SockRef<'_>, stream: &TcpStream) {
        if self.user_timeout.is_some() {
            if let Err(error) = socket.set_tcp_user_timeout(self.user_timeout) {
                log_failure("TCP_USER_TIMEOUT", stream, &error);
            }
        }
    }

    // Other systems have no TCP_USER_TIMEOUT (macOS's TCP_RXT_CONNDROPTIME
    // and Windows' TCP_MAXRT are near but not the same, and socket2 offers
    // neither): keepalive alone bounds an idle connection there, and a
    // connection with data in flight waits out the system's retransmissions.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    fn apply_user_timeout(&self, _socket: &SockRef<'_>, _stream: &TcpStream) {}
}

impl Default for Keepalive {
    /// Dead peers found within 15 s: the first probe after 5 s of silence,
    /// then one every 2 s, closed after 5 unanswered (5 + 2 × 5 = 15 s) or
    /// after 15 s of unacknowledged data.
    fn default() -> Keepalive {
        Keepalive {
            idle: Some(Duration::from_secs(5)),
            interval: Duration::from_secs(2),
            probes: 5,
            user_timeout: Some(Duration::from_secs(15)),
        }
    }
}

fn log_failure(option: &str, stream: &TcpStream, error: &std::io::Error) {
    let peer = stream.peer_addr().ok();
    tracing::debug!(?peer, %error, "cannot set {option}; the connection is served without it");
}
