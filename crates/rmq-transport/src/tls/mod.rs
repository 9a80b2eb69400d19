//! TLS as Java's remoting layer does it, with rustls: one port for plain and
//! TLS connections (a first byte of `0x16` starts a TLS handshake), the modes
//! `disabled | permissive | enforcing`, Java's `tls.*` keys and
//! `tls.config.file`, mutual TLS, and a server certificate that is reloaded
//! when its files change.
//!
//! * [`TlsSettings`] reads the keys (`settings`);
//! * [`ServerTls`] is what [`ServerConfig::tls`](crate::ServerConfig::tls)
//!   holds: the mode and the [`TlsServer`] that owns the current
//!   `rustls::ServerConfig` and rebuilds it on
//!   [`reload_if_changed`](TlsServer::reload_if_changed) (`server`);
//! * [`TlsClient`] is what [`ClientConfig::tls`](crate::ClientConfig::tls)
//!   holds (`client`);
//! * [`TlsIdentity`] is the name(s) a client certificate carries, for the
//!   auth layer to map to an account (`identity`).
//!
//! Where Waymark departs from Java, and why:
//! * no self-signed test certificate: `permissive` without a certificate
//!   serves plain connections only (Java's `tls.test.mode.enable`, on by
//!   default, makes one up; asking for it here gives a warning);
//! * a client certificate is always verified against
//!   `tls.server.trustCertPath` and mTLS without that file is a start-up
//!   error: an unverified certificate cannot name an identity (Java with
//!   `tls.server.authClient=false` accepts any);
//! * the client verifies the server unless `tls.client.authServer=false` is
//!   set explicitly (Java trusts any server by default); like Java it checks
//!   the chain only, never the host name, and sends no SNI;
//! * unknown values (`tls.server.mode=enforcng`) are errors, not Java's
//!   silent fallback to a default.
//!
//! Not here: the PROXY protocol header that may come before the first
//! byte (`proxy_protocol`'s), and which account an identity maps to (the
//! auth layer's).
//!
//! The crypto provider is rustls' `ring`: `aws-lc-rs`, rustls' default, builds
//! C with cmake (and nasm on some targets), which the project's machines and
//! CI do not otherwise need.

mod client;
mod identity;
mod keys;
mod server;
mod settings;

use std::fmt;
use std::io;
use std::path::PathBuf;

pub use client::TlsClient;
pub use identity::TlsIdentity;
pub(crate) use server::{accept, Accepted, TlsSession};
pub use server::{ServerTls, TlsServer};
pub use settings::{
    ClientAuth, ClientTlsSettings, ServerTlsSettings, TlsMode, TlsSettings, TlsVersion,
    DEFAULT_CONFIG_FILE, KEYS,
};

/// Why TLS cannot be set up as configured. Each names the key at fault (and
/// the `tls.config.file` it was set in, if any) and the file concerned.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A key has a value Waymark cannot use, or keys contradict each other.
    #[error("{key}: {reason}")]
    Setting {
        /// The key, with where it was set.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// A file named by a key cannot be read.
    #[error("{key}: cannot read {}: {source}", path.display())]
    Read {
        /// The key, with where it was set.
        key: String,
        /// The file.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: io::Error,
    },
    /// A file named by a key has contents Waymark cannot use (not PEM, no
    /// certificate, a wrong password, a key that does not match the
    /// certificate, ...).
    #[error("{key}: {}: {reason}", path.display())]
    File {
        /// The key, with where it was set.
        key: String,
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A peer's certificate cannot be parsed for its names.
    #[error("peer certificate: {0}")]
    Certificate(String),
}

/// What to add to a failed handshake's error: webpki verifies X.509 v3
/// certificates only, while `openssl x509 -req` without extensions (RocketMQ's
/// TLS guide) makes v1 ones, which Java accepts.
pub(crate) fn handshake_hint(error: &io::Error) -> &'static str {
    if error.to_string().contains("UnsupportedCertVersion") {
        " (an X.509 v1 certificate: Waymark verifies v3 certificates only; issue it again \
         with an extension, e.g. openssl x509 -req ... -extfile with basicConstraints=CA:FALSE)"
    } else {
        ""
    }
}

/// Something in the TLS keys that Waymark does not do as asked (or does
/// differently from Java). The caller logs it; nothing is ignored silently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsWarning {
    /// The key concerned, with where it was set.
    pub key: String,
    /// What Waymark does instead, and why.
    pub message: String,
}

impl fmt::Display for TlsWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}
