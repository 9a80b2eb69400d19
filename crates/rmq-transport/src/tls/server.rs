//! The server side: [`ServerTls`] (the mode and its certificate), the
//! reloadable [`TlsServer`], and [`accept`], which tells a TLS connection
//! from a plain one by its first byte and runs the handshake.
//!
//! The connection's life after the handshake is `session`'s, whichever the
//! stream.

use std::fmt;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::SystemTime;

use rustls::server::WebPkiClientVerifier;
use rustls::sign::SingleCertAndKey;
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use super::identity::TlsIdentity;
use super::keys::{self, Named, Password};
use super::settings::{
    self, ClientAuth, TlsMode, TlsSettings, MODE, NEED_CLIENT_AUTH, SERVER_CERT_PATH,
    SERVER_KEY_PASSWORD, SERVER_KEY_PATH, SERVER_TRUST_CERT_PATH,
};
use super::{TlsError, TlsWarning};

/// The first byte of a TLS handshake record. A plain frame starts with its
/// big-endian length, and one starting with 0x16 would be over 369 MB, far
/// above the frame limit: the test is unambiguous (Java's `TlsModeHandler`).
const HANDSHAKE_RECORD: u8 = 0x16;

/// What a server's port does with TLS: [`ServerConfig::tls`].
///
/// [`ServerConfig::tls`]: crate::ServerConfig::tls
#[derive(Debug, Clone, Default)]
pub enum ServerTls {
    /// Plain only. The first byte is not looked at: a TLS handshake fails as
    /// a frame far over the size limit and closes its connection. Also what
    /// `permissive` without a certificate comes to.
    #[default]
    Disabled,
    /// Plain and TLS on the same port.
    Permissive(Arc<TlsServer>),
    /// TLS only; a plain connection is closed (and logged).
    Enforcing(Arc<TlsServer>),
}

impl ServerTls {
    /// What `settings` ask of a server.
    ///
    /// `permissive` without `tls.server.certPath`/`keyPath` serves plain
    /// only ([`ServerTls::Disabled`]; a warning if the mode was set
    /// explicitly). Warnings also for a certificate a disabled server does
    /// not use, a trust file no client certificate is asked for, and client
    /// certificates being verified although `tls.server.authClient` is not
    /// true (Java would accept any).
    ///
    /// # Errors
    /// `enforcing` without a certificate; a certificate without a key or the
    /// other way round; `tls.server.need.client.auth` optional or require
    /// without `tls.server.trustCertPath` (Waymark cannot take an identity
    /// from a certificate it did not verify); every error of
    /// [`TlsServer::new`].
    pub fn from_settings(settings: &TlsSettings) -> Result<(ServerTls, Vec<TlsWarning>), TlsError> {
        let mut warnings = Vec::new();
        let mut warn = |key: &'static str, message: &str| {
            warnings.push(TlsWarning {
                key: settings.key_name(key),
                message: message.to_owned(),
            })
        };
        let server = &settings.server;
        let has_certificate = match (&server.cert_path, &server.key_path) {
            (Some(_), Some(_)) => true,
            (None, None) => false,
            (Some(_), None) | (None, Some(_)) => {
                let (given, missing) = if server.cert_path.is_some() {
                    (SERVER_CERT_PATH, SERVER_KEY_PATH)
                } else {
                    (SERVER_KEY_PATH, SERVER_CERT_PATH)
                };
                return Err(TlsError::Setting {
                    key: settings.key_name(missing),
                    reason: format!("not set, but {given} is: both are needed"),
                });
            }
        };
        match (settings.mode, has_certificate) {
            (TlsMode::Disabled, certificate) => {
                if certificate {
                    warn(
                        SERVER_CERT_PATH,
                        "set, but tls.server.mode is disabled: the server takes plain connections only",
                    );
                }
                return Ok((ServerTls::Disabled, warnings));
            }
            (TlsMode::Permissive, false) => {
                if settings.mode_given {
                    warn(
                        MODE,
                        "permissive without tls.server.certPath and tls.server.keyPath: Waymark \
                         makes up no certificate, so the server takes plain connections only",
                    );
                }
                return Ok((ServerTls::Disabled, warnings));
            }
            (TlsMode::Enforcing, false) => {
                return Err(TlsError::Setting {
                    key: settings.key_name(MODE),
                    reason: "enforcing needs tls.server.certPath and tls.server.keyPath".into(),
                })
            }
            (TlsMode::Permissive | TlsMode::Enforcing, true) => {}
        }
        match (server.need_client_auth, &server.trust_cert_path) {
            (ClientAuth::None, Some(_)) => warn(
                SERVER_TRUST_CERT_PATH,
                "set, but tls.server.need.client.auth is none: no client certificate is asked for",
            ),
            (ClientAuth::Optional | ClientAuth::Require, None) => {
                return Err(TlsError::Setting {
                    key: settings.key_name(NEED_CLIENT_AUTH),
                    reason: "optional and require need tls.server.trustCertPath: Waymark takes \
                             identities only from client certificates it verified (Java, with \
                             tls.server.authClient=false, accepts any)"
                        .into(),
                });
            }
            (ClientAuth::Optional | ClientAuth::Require, Some(_))
                if server.auth_client != Some(true) =>
            {
                warn(
                    settings::AUTH_CLIENT,
                    "not true, yet client certificates are verified against \
                     tls.server.trustCertPath (Java would accept any certificate)",
                )
            }
            _ => {}
        }
        let tls = Arc::new(TlsServer::new(settings)?);
        let policy = if settings.mode == TlsMode::Enforcing {
            ServerTls::Enforcing(tls)
        } else {
            ServerTls::Permissive(tls)
        };
        Ok((policy, warnings))
    }

    /// The certificate holder, to poll [`TlsServer::reload_if_changed`] on;
    /// `None` when disabled.
    pub fn server(&self) -> Option<&Arc<TlsServer>> {
        match self {
            ServerTls::Disabled => None,
            ServerTls::Permissive(tls) | ServerTls::Enforcing(tls) => Some(tls),
        }
    }
}

/// The files a server's TLS configuration is built from, and how.
struct Material {
    cert: Named,
    key: Named,
    password: Password,
    trust: Option<Named>,
    client_auth: ClientAuth,
    provider: Arc<rustls::crypto::CryptoProvider>,
    versions: Vec<&'static rustls::SupportedProtocolVersion>,
}

impl Material {
    fn files(&self) -> impl Iterator<Item = &Named> {
        [&self.cert, &self.key].into_iter().chain(&self.trust)
    }

    fn stamps(&self) -> Vec<Option<(SystemTime, u64)>> {
        self.files().map(Named::stamp).collect()
    }

    fn build(&self) -> Result<Arc<rustls::ServerConfig>, TlsError> {
        let chain = keys::certificates(&self.cert)?;
        let key = keys::private_key(&self.key, &self.password)?;
        let certified = keys::certified_key(&self.cert, chain, &self.key, key, &self.provider)?;
        let builder = rustls::ServerConfig::builder_with_provider(self.provider.clone())
            .with_protocol_versions(&self.versions)
            .map_err(|error| TlsError::Setting {
                key: "tls.protocols, tls.ciphers".into(),
                reason: error.to_string(),
            })?;
        let builder = match (&self.trust, self.client_auth) {
            (Some(trust), ClientAuth::Optional | ClientAuth::Require) => {
                let roots = Arc::new(keys::roots(trust)?);
                let verifier =
                    WebPkiClientVerifier::builder_with_provider(roots, self.provider.clone());
                let verifier = if self.client_auth == ClientAuth::Optional {
                    verifier.allow_unauthenticated()
                } else {
                    verifier
                };
                let verifier = verifier
                    .build()
                    .map_err(|error| trust.bad(error.to_string()))?;
                builder.with_client_cert_verifier(verifier)
            }
            _ => builder.with_no_client_auth(),
        };
        let config = builder.with_cert_resolver(Arc::new(SingleCertAndKey::from(certified)));
        Ok(Arc::new(config))
    }
}

/// A server's TLS configuration, rebuilt from its files when they change.
///
/// Each new connection takes the configuration current at its handshake;
/// connections already open keep the one they were made with.
pub struct TlsServer {
    material: Material,
    current: RwLock<Arc<rustls::ServerConfig>>,
    /// The files' (mtime, length) when last built, or tried.
    stamps: Mutex<Vec<Option<(SystemTime, u64)>>>,
}

impl TlsServer {
    /// Reads the server certificate, key and trust file of `settings`.
    /// Leaves the mode alone: see [`ServerTls::from_settings`], which also
    /// checks the keys against each other.
    ///
    /// # Errors
    /// No `tls.server.certPath` or `keyPath`; an unreadable file; bad PEM;
    /// no certificate; a key that is not a key, does not match the
    /// certificate, is encrypted without `tls.server.keyPassword` (or the
    /// password is wrong, or set for an unencrypted key).
    pub fn new(settings: &TlsSettings) -> Result<TlsServer, TlsError> {
        let server = &settings.server;
        let missing = |key| TlsError::Setting {
            key: settings.key_name(key),
            reason: "not set: a TLS server needs a certificate and its key".into(),
        };
        let cert = server
            .cert_path
            .as_deref()
            .ok_or_else(|| missing(SERVER_CERT_PATH))?;
        let key = server
            .key_path
            .as_deref()
            .ok_or_else(|| missing(SERVER_KEY_PATH))?;
        let material = Material {
            cert: Named::new(settings, SERVER_CERT_PATH, cert),
            key: Named::new(settings, SERVER_KEY_PATH, key),
            password: Password::new(settings, SERVER_KEY_PASSWORD, &server.key_password),
            trust: server
                .trust_cert_path
                .as_deref()
                .map(|path| Named::new(settings, SERVER_TRUST_CERT_PATH, path)),
            client_auth: server.need_client_auth,
            provider: keys::provider(settings),
            versions: keys::versions(settings),
        };
        let stamps = material.stamps();
        let config = material.build()?;
        Ok(TlsServer {
            material,
            current: RwLock::new(config),
            stamps: Mutex::new(stamps),
        })
    }

    /// The configuration new connections get now.
    pub fn config(&self) -> Arc<rustls::ServerConfig> {
        self.current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Rebuilds the configuration if the certificate, key or trust file
    /// changed (modification time or length) since the last build or try;
    /// `Ok(true)` if it was replaced. Meant to be polled from a timer.
    ///
    /// # Errors
    /// Those of [`TlsServer::new`] for the new files. The configuration in
    /// use stays; the same files are not tried again, so the error comes
    /// once per change (a file written in two steps is tried again after
    /// the second).
    pub fn reload_if_changed(&self) -> Result<bool, TlsError> {
        let now = self.material.stamps();
        {
            let mut last = self.stamps.lock().unwrap_or_else(PoisonError::into_inner);
            if *last == now {
                return Ok(false);
            }
            *last = now;
        }
        self.reload().map(|()| true)
    }

    /// Rebuilds the configuration from the files now, changed or not.
    ///
    /// # Errors
    /// As [`TlsServer::reload_if_changed`]; the configuration in use stays.
    pub fn reload(&self) -> Result<(), TlsError> {
        let config = self.material.build()?;
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = config;
        tracing::info!(cert = %self.material.cert.path.display(), "TLS certificate loaded");
        Ok(())
    }
}

impl fmt::Debug for TlsServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsServer")
            .field("cert", &self.material.cert.path)
            .field("key", &self.material.key.path)
            .field("trust", &self.material.trust.as_ref().map(|t| &t.path))
            .field("client_auth", &self.material.client_auth)
            .finish_non_exhaustive()
    }
}

/// What a TLS connection's handshake established.
#[derive(Debug)]
pub(crate) struct TlsSession {
    /// The client certificate's names; `None` without one.
    pub(crate) identity: Option<TlsIdentity>,
}

/// How an accepted connection goes on.
pub(crate) enum Accepted {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>, TlsSession),
    /// Refused, failed or gone; already logged.
    Closed,
}

/// Looks at the first byte (unless TLS is disabled) and runs the TLS
/// handshake if it starts one, both before `deadline` and until `stop`.
/// A PROXY protocol header has been taken off already: the first byte is
/// the one after it (`proxy_protocol`).
pub(crate) async fn accept(
    stream: TcpStream,
    peer: SocketAddr,
    tls: &ServerTls,
    deadline: Instant,
    stop: &CancellationToken,
) -> Accepted {
    let (server, enforcing) = match tls {
        ServerTls::Disabled => return Accepted::Plain(stream),
        ServerTls::Permissive(server) => (server, false),
        ServerTls::Enforcing(server) => (server, true),
    };
    let mut first = [0u8; 1];
    let peeked = tokio::select! {
        () = stop.cancelled() => return Accepted::Closed,
        peeked = tokio::time::timeout_at(deadline, stream.peek(&mut first)) => peeked,
    };
    match peeked {
        Err(_) => {
            tracing::debug!(%peer, "nothing received in time, closing connection");
            return Accepted::Closed;
        }
        Ok(Ok(0)) => return Accepted::Closed,
        Ok(Err(error)) => {
            tracing::debug!(%peer, %error, "connection failed before its first byte");
            return Accepted::Closed;
        }
        Ok(Ok(_)) => {}
    }
    if first[0] != HANDSHAKE_RECORD {
        if enforcing {
            tracing::warn!(%peer, "plain connection closed: the server is in TLS enforcing mode \
                (tls.server.mode) and does not take plain clients; the client needs -Dtls.enable=true");
            return Accepted::Closed;
        }
        return Accepted::Plain(stream);
    }
    let handshake = TlsAcceptor::from(server.config()).accept(stream);
    let stream = tokio::select! {
        () = stop.cancelled() => return Accepted::Closed,
        done = tokio::time::timeout_at(deadline, handshake) => match done {
            Ok(Ok(stream)) => stream,
            Ok(Err(error)) => {
                let hint = super::handshake_hint(&error);
                tracing::warn!(%peer, %error, "TLS handshake failed, closing connection{hint}");
                return Accepted::Closed;
            }
            Err(_) => {
                tracing::warn!(%peer, "TLS handshake not done in time, closing connection");
                return Accepted::Closed;
            }
        },
    };
    let (_, connection) = stream.get_ref();
    let identity = connection
        .peer_certificates()
        .and_then(|chain| chain.first())
        .and_then(|cert| match TlsIdentity::from_der(cert) {
            Ok(identity) => Some(identity),
            Err(error) => {
                tracing::warn!(%peer, %error, "client certificate verified but its names cannot be read");
                None
            }
        });
    tracing::debug!(%peer, version = ?connection.protocol_version(),
        suite = ?connection.negotiated_cipher_suite().map(|s| s.suite()),
        identity = ?identity, "TLS handshake done");
    Accepted::Tls(Box::new(stream), TlsSession { identity })
}
