//! Java's `tls.*` keys (`TlsSystemConfig`; what each means here is in the TLS
//! section of docs/security.md) read into
//! [`TlsSettings`]: from a map of properties, then from the properties file
//! `tls.config.file` names, whose values win, as in Java's `TlsHelper`.
//!
//! Only parsing and the checks that need no file: reading certificates and
//! keys is `keys`', what the settings mean for a listener is `server`'s, for
//! a connection `client`'s. A value Waymark cannot honour is either an error
//! (it would change what is protected) or a [`TlsWarning`] (it would not).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use rustls::CipherSuite;

use super::{TlsError, TlsWarning};

pub(crate) const MODE: &str = "tls.server.mode";
pub(crate) const ENABLE: &str = "tls.enable";
pub(crate) const CONFIG_FILE: &str = "tls.config.file";
pub(crate) const TEST_MODE: &str = "tls.test.mode.enable";
pub(crate) const NEED_CLIENT_AUTH: &str = "tls.server.need.client.auth";
pub(crate) const SERVER_KEY_PATH: &str = "tls.server.keyPath";
pub(crate) const SERVER_KEY_PASSWORD: &str = "tls.server.keyPassword";
pub(crate) const SERVER_CERT_PATH: &str = "tls.server.certPath";
pub(crate) const AUTH_CLIENT: &str = "tls.server.authClient";
pub(crate) const SERVER_TRUST_CERT_PATH: &str = "tls.server.trustCertPath";
pub(crate) const CLIENT_KEY_PATH: &str = "tls.client.keyPath";
pub(crate) const CLIENT_KEY_PASSWORD: &str = "tls.client.keyPassword";
pub(crate) const CLIENT_CERT_PATH: &str = "tls.client.certPath";
pub(crate) const AUTH_SERVER: &str = "tls.client.authServer";
pub(crate) const CLIENT_TRUST_CERT_PATH: &str = "tls.client.trustCertPath";
pub(crate) const CIPHERS: &str = "tls.ciphers";
pub(crate) const PROTOCOLS: &str = "tls.protocols";

/// Every key [`TlsSettings`] reads, spelt as Java spells them.
pub const KEYS: [&str; 17] = [
    MODE,
    ENABLE,
    CONFIG_FILE,
    TEST_MODE,
    NEED_CLIENT_AUTH,
    SERVER_KEY_PATH,
    SERVER_KEY_PASSWORD,
    SERVER_CERT_PATH,
    AUTH_CLIENT,
    SERVER_TRUST_CERT_PATH,
    CLIENT_KEY_PATH,
    CLIENT_KEY_PASSWORD,
    CLIENT_CERT_PATH,
    AUTH_SERVER,
    CLIENT_TRUST_CERT_PATH,
    CIPHERS,
    PROTOCOLS,
];

/// Keys Java reads from system properties only, never from `tls.config.file`.
const NOT_IN_FILE: [&str; 3] = [MODE, ENABLE, CONFIG_FILE];

/// The file Java reads when `tls.config.file` is not set (if it exists).
pub const DEFAULT_CONFIG_FILE: &str = "/etc/rocketmq/tls.properties";

/// `tls.server.mode`: whether the server's port takes TLS, plain, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TlsMode {
    /// Plain only; a TLS handshake closes the connection.
    Disabled,
    /// Both, told apart by the first byte. Java's and Waymark's default.
    #[default]
    Permissive,
    /// TLS only; a plain connection is closed.
    Enforcing,
}

impl TlsMode {
    /// Java's spelling, case-insensitive; `None` for anything else.
    pub fn parse(text: &str) -> Option<TlsMode> {
        match text.trim().to_ascii_lowercase().as_str() {
            "disabled" => Some(TlsMode::Disabled),
            "permissive" => Some(TlsMode::Permissive),
            "enforcing" => Some(TlsMode::Enforcing),
            _ => None,
        }
    }
}

/// `tls.server.need.client.auth`: whether the server asks for a client
/// certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientAuth {
    /// No certificate is requested.
    #[default]
    None,
    /// Requested; a client may connect without one (no identity then), but
    /// one it sends must verify.
    Optional,
    /// Required; the handshake fails without a certificate that verifies.
    Require,
}

impl ClientAuth {
    /// Java's spelling, case-insensitive; `None` for anything else.
    pub fn parse(text: &str) -> Option<ClientAuth> {
        match text.trim().to_ascii_lowercase().as_str() {
            "none" => Some(ClientAuth::None),
            "optional" => Some(ClientAuth::Optional),
            "require" => Some(ClientAuth::Require),
            _ => None,
        }
    }
}

/// A TLS version `tls.protocols` can ask for (Waymark speaks no older one;
/// nor does Java 17 by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsVersion {
    /// `TLSv1.2`.
    Tls12,
    /// `TLSv1.3`.
    Tls13,
}

impl TlsVersion {
    fn parse(text: &str) -> Option<TlsVersion> {
        match text.trim().to_ascii_lowercase().as_str() {
            "tlsv1.2" => Some(TlsVersion::Tls12),
            "tlsv1.3" => Some(TlsVersion::Tls13),
            _ => None,
        }
    }

    pub(crate) fn rustls(self) -> &'static rustls::SupportedProtocolVersion {
        match self {
            TlsVersion::Tls12 => &rustls::version::TLS12,
            TlsVersion::Tls13 => &rustls::version::TLS13,
        }
    }
}

/// The server's keys (`tls.server.*`).
#[derive(Clone, Default)]
pub struct ServerTlsSettings {
    /// `tls.server.certPath`: PEM certificate chain, end entity first.
    pub cert_path: Option<PathBuf>,
    /// `tls.server.keyPath`: PEM private key (PKCS#8 as Java wants it, or
    /// PKCS#1/SEC1; `ENCRYPTED PRIVATE KEY` with a password).
    pub key_path: Option<PathBuf>,
    /// `tls.server.keyPassword`: decrypts an encrypted PKCS#8 key.
    pub key_password: Option<String>,
    /// `tls.server.trustCertPath`: PEM CA certificates client certificates
    /// are verified against.
    pub trust_cert_path: Option<PathBuf>,
    /// `tls.server.need.client.auth`.
    pub need_client_auth: ClientAuth,
    /// `tls.server.authClient` as given (`None`: not set).
    pub auth_client: Option<bool>,
}

/// The client's keys (`tls.enable`, `tls.client.*`).
#[derive(Clone, Default)]
pub struct ClientTlsSettings {
    /// `tls.enable` as given (`None`: not set).
    pub enable: Option<bool>,
    /// `tls.client.certPath`: PEM chain of the client certificate, if any.
    pub cert_path: Option<PathBuf>,
    /// `tls.client.keyPath`: its PEM private key.
    pub key_path: Option<PathBuf>,
    /// `tls.client.keyPassword`: decrypts an encrypted PKCS#8 key.
    pub key_password: Option<String>,
    /// `tls.client.authServer` as given (`None`: not set).
    pub auth_server: Option<bool>,
    /// `tls.client.trustCertPath`: PEM CA certificates the server's
    /// certificate is verified against.
    pub trust_cert_path: Option<PathBuf>,
}

fn redacted(password: &Option<String>) -> Option<&'static str> {
    password.as_ref().map(|_| "<redacted>")
}

impl fmt::Debug for ServerTlsSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerTlsSettings")
            .field("cert_path", &self.cert_path)
            .field("key_path", &self.key_path)
            .field("key_password", &redacted(&self.key_password))
            .field("trust_cert_path", &self.trust_cert_path)
            .field("need_client_auth", &self.need_client_auth)
            .field("auth_client", &self.auth_client)
            .finish()
    }
}

impl fmt::Debug for ClientTlsSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientTlsSettings")
            .field("enable", &self.enable)
            .field("cert_path", &self.cert_path)
            .field("key_path", &self.key_path)
            .field("key_password", &redacted(&self.key_password))
            .field("auth_server", &self.auth_server)
            .field("trust_cert_path", &self.trust_cert_path)
            .finish()
    }
}

/// Everything the `tls.*` keys say, for a server ([`ServerTls`]) and for
/// outgoing connections ([`TlsClient`]).
///
/// [`ServerTls`]: super::ServerTls
/// [`TlsClient`]: super::TlsClient
#[derive(Debug, Clone)]
pub struct TlsSettings {
    /// `tls.server.mode`; default permissive.
    pub mode: TlsMode,
    /// The `tls.server.*` keys.
    pub server: ServerTlsSettings,
    /// `tls.enable` and the `tls.client.*` keys.
    pub client: ClientTlsSettings,
    /// `tls.protocols`: the versions offered, both sides; default both.
    pub protocols: Vec<TlsVersion>,
    /// `tls.ciphers`: the suites offered, both sides, if restricted.
    pub ciphers: Option<Vec<CipherSuite>>,
    /// `tls.test.mode.enable` as given. Waymark has no test mode.
    pub test_mode: Option<bool>,
    /// The `tls.config.file` that was read, if any.
    pub config_file: Option<PathBuf>,
    /// What was not honoured as written, for the caller to log.
    pub warnings: Vec<TlsWarning>,
    /// Whether `tls.server.mode` was given at all.
    pub(crate) mode_given: bool,
    /// Keys whose value came from `config_file`.
    pub(crate) from_file: BTreeSet<&'static str>,
}

impl Default for TlsSettings {
    fn default() -> TlsSettings {
        TlsSettings {
            mode: TlsMode::default(),
            server: ServerTlsSettings::default(),
            client: ClientTlsSettings::default(),
            protocols: vec![TlsVersion::Tls12, TlsVersion::Tls13],
            ciphers: None,
            test_mode: None,
            config_file: None,
            warnings: Vec::new(),
            mode_given: false,
            from_file: BTreeSet::new(),
        }
    }
}

impl TlsSettings {
    /// Reads the `tls.*` keys of `properties` (other keys are left alone),
    /// then the file `tls.config.file` names, or Java's default
    /// [`DEFAULT_CONFIG_FILE`] if that exists; the file's values win.
    /// `tls.server.mode`, `tls.enable` and `tls.config.file` are read from
    /// `properties` only, as Java reads them from system properties only.
    ///
    /// # Errors
    /// An unreadable or malformed `tls.config.file`; an unknown
    /// `tls.server.mode` or `tls.server.need.client.auth`; `tls.protocols`
    /// or `tls.ciphers` leaving nothing to offer. Each names the key.
    pub fn from_properties(properties: &BTreeMap<String, String>) -> Result<TlsSettings, TlsError> {
        TlsSettings::from_properties_with(properties, Some(Path::new(DEFAULT_CONFIG_FILE)))
    }

    /// [`from_properties`](TlsSettings::from_properties) with another default
    /// `tls.config.file` (`None`: read no file unless the key names one).
    ///
    /// # Errors
    /// As [`from_properties`](TlsSettings::from_properties).
    pub fn from_properties_with(
        properties: &BTreeMap<String, String>,
        default_config_file: Option<&Path>,
    ) -> Result<TlsSettings, TlsError> {
        let mut settings = TlsSettings::default();
        let mut values: BTreeMap<&'static str, String> = BTreeMap::new();
        for (key, value) in properties {
            match KEYS.iter().find(|known| **known == key) {
                Some(known) => {
                    values.insert(known, value.clone());
                }
                None if key.starts_with("tls.") => settings.warn(
                    key.clone(),
                    "not a TLS key Waymark or Java knows (keys are case-sensitive); ignored",
                ),
                None => {}
            }
        }
        settings.read_config_file(&mut values, default_config_file)?;
        settings.interpret(&values)?;
        Ok(settings)
    }

    /// Whether outgoing connections use TLS: `tls.enable`, or when that is
    /// not set, `tls.server.mode=enforcing` (Java's `NettyClientConfig`).
    pub fn client_enabled(&self) -> bool {
        self.client
            .enable
            .unwrap_or(self.mode == TlsMode::Enforcing)
    }

    /// `key` as errors and warnings show it: with the file it was set in.
    pub(crate) fn key_name(&self, key: &'static str) -> String {
        match (&self.config_file, self.from_file.contains(key)) {
            (Some(file), true) => format!("{key} (in {})", file.display()),
            _ => key.to_owned(),
        }
    }

    fn warn(&mut self, key: String, message: impl Into<String>) {
        self.warnings.push(TlsWarning {
            key,
            message: message.into(),
        });
    }

    fn read_config_file(
        &mut self,
        values: &mut BTreeMap<&'static str, String>,
        default_file: Option<&Path>,
    ) -> Result<(), TlsError> {
        let given = values
            .get(CONFIG_FILE)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty());
        let path = match (given, default_file) {
            (Some(path), _) => PathBuf::from(path),
            // Java skips a default file that is not there.
            (None, Some(default)) if default.is_file() => {
                self.warn(
                    CONFIG_FILE.to_owned(),
                    format!(
                        "not set; reading Java's default {}, which exists",
                        default.display()
                    ),
                );
                default.to_path_buf()
            }
            (None, _) => return Ok(()),
        };
        let bytes = std::fs::read(&path).map_err(|source| TlsError::Read {
            key: CONFIG_FILE.to_owned(),
            path: path.clone(),
            source,
        })?;
        // Java's Properties.load(InputStream) reads ISO-8859-1; UTF-8 is
        // taken when the file is valid UTF-8, so that non-ASCII paths work.
        let text = String::from_utf8(bytes)
            .unwrap_or_else(|error| error.into_bytes().iter().map(|b| char::from(*b)).collect());
        let parsed = rmq_protocol::properties::parse(&text).map_err(|error| TlsError::File {
            key: CONFIG_FILE.to_owned(),
            path: path.clone(),
            reason: format!("not a properties file: {error}"),
        })?;
        self.config_file = Some(path.clone());
        for (key, value) in parsed {
            let shown = format!("{key} (in {})", path.display());
            match KEYS.iter().find(|known| **known == key) {
                Some(known) if NOT_IN_FILE.contains(known) => self.warn(
                    shown,
                    "read from the main configuration only, as Java reads it from system properties only; ignored here",
                ),
                Some(known) => {
                    values.insert(known, value);
                    self.from_file.insert(known);
                }
                None => self.warn(
                    shown,
                    "not a TLS key Waymark or Java knows (keys are case-sensitive); ignored",
                ),
            }
        }
        Ok(())
    }

    fn interpret(&mut self, values: &BTreeMap<&'static str, String>) -> Result<(), TlsError> {
        let text = |key: &str| values.get(key).map(|v| v.trim()).filter(|v| !v.is_empty());
        let path = |key: &str| text(key).map(PathBuf::from);
        // A password is taken as written: blanks may be part of it.
        let password = |key: &str| values.get(key).filter(|v| !v.is_empty()).cloned();

        if let Some(mode) = text(MODE) {
            self.mode = TlsMode::parse(mode).ok_or_else(|| TlsError::Setting {
                key: self.key_name(MODE),
                reason: format!("{mode:?} is not disabled, permissive or enforcing"),
            })?;
            self.mode_given = true;
        }
        if let Some(auth) = text(NEED_CLIENT_AUTH) {
            self.server.need_client_auth =
                ClientAuth::parse(auth).ok_or_else(|| TlsError::Setting {
                    key: self.key_name(NEED_CLIENT_AUTH),
                    reason: format!("{auth:?} is not none, optional or require"),
                })?;
        }
        self.server.cert_path = path(SERVER_CERT_PATH);
        self.server.key_path = path(SERVER_KEY_PATH);
        self.server.key_password = password(SERVER_KEY_PASSWORD);
        self.server.trust_cert_path = path(SERVER_TRUST_CERT_PATH);
        self.server.auth_client = self.boolean(AUTH_CLIENT, text(AUTH_CLIENT));
        self.client.enable = self.boolean(ENABLE, text(ENABLE));
        self.client.cert_path = path(CLIENT_CERT_PATH);
        self.client.key_path = path(CLIENT_KEY_PATH);
        self.client.key_password = password(CLIENT_KEY_PASSWORD);
        self.client.trust_cert_path = path(CLIENT_TRUST_CERT_PATH);
        self.client.auth_server = self.boolean(AUTH_SERVER, text(AUTH_SERVER));
        self.test_mode = self.boolean(TEST_MODE, text(TEST_MODE));
        if self.test_mode == Some(true) {
            self.warn(
                self.key_name(TEST_MODE),
                "Waymark has no test mode: it never makes up a self-signed certificate and never \
                 trusts any peer because of this key; the certificate files configured are used, \
                 and without a server certificate the server takes plain connections only",
            );
        }
        if let Some(list) = text(PROTOCOLS) {
            self.protocols = self.protocols_from(list)?;
        }
        if let Some(list) = text(CIPHERS) {
            self.ciphers = Some(self.ciphers_from(list)?);
        }
        self.check_versions_have_suites()?;
        Ok(())
    }

    /// Java's `Boolean.parseBoolean`: "true" in any case is true, anything
    /// else false (with a warning here).
    fn boolean(&mut self, key: &'static str, value: Option<&str>) -> Option<bool> {
        let value = value?;
        if value.eq_ignore_ascii_case("true") {
            Some(true)
        } else {
            if !value.eq_ignore_ascii_case("false") {
                self.warn(
                    self.key_name(key),
                    format!("{value:?} is not true or false; read as false, as Java does"),
                );
            }
            Some(false)
        }
    }

    fn protocols_from(&mut self, list: &str) -> Result<Vec<TlsVersion>, TlsError> {
        let mut versions = Vec::new();
        let mut refused = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match TlsVersion::parse(name) {
                Some(version) if !versions.contains(&version) => versions.push(version),
                Some(_) => {}
                None => refused.push(name.to_owned()),
            }
        }
        versions.sort();
        if !refused.is_empty() {
            self.warn(
                self.key_name(PROTOCOLS),
                format!(
                    "{} not offered: Waymark speaks TLSv1.2 and TLSv1.3 only",
                    refused.join(", ")
                ),
            );
        }
        if versions.is_empty() {
            return Err(TlsError::Setting {
                key: self.key_name(PROTOCOLS),
                reason: format!("{list:?} names neither TLSv1.2 nor TLSv1.3"),
            });
        }
        Ok(versions)
    }

    fn ciphers_from(&mut self, list: &str) -> Result<Vec<CipherSuite>, TlsError> {
        let mut suites = Vec::new();
        let mut refused = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match suite_named(name) {
                Some(suite) if !suites.contains(&suite) => suites.push(suite),
                Some(_) => {}
                None => refused.push(name.to_owned()),
            }
        }
        if !refused.is_empty() {
            self.warn(
                self.key_name(CIPHERS),
                format!(
                    "{} not offered: Waymark has only ECDHE with AES-GCM or ChaCha20-Poly1305 \
                     (TLS 1.2) and the TLS 1.3 suites",
                    refused.join(", ")
                ),
            );
        }
        if suites.is_empty() {
            return Err(TlsError::Setting {
                key: self.key_name(CIPHERS),
                reason: format!("{list:?} names no cipher suite Waymark has"),
            });
        }
        Ok(suites)
    }

    fn check_versions_have_suites(&mut self) -> Result<(), TlsError> {
        let Some(ciphers) = self.ciphers.clone() else {
            return Ok(());
        };
        let suites: Vec<_> = rustls::crypto::ring::ALL_CIPHER_SUITES
            .iter()
            .filter(|s| ciphers.contains(&s.suite()))
            .collect();
        let mut usable = Vec::new();
        for version in self.protocols.clone() {
            if suites.iter().any(|s| s.version() == version.rustls()) {
                usable.push(version);
            } else {
                self.warn(
                    self.key_name(PROTOCOLS),
                    format!("{version:?} is offered but tls.ciphers has no suite for it: no peer can use it"),
                );
            }
        }
        if usable.is_empty() {
            return Err(TlsError::Setting {
                key: self.key_name(CIPHERS),
                reason: "no suite of it belongs to a version tls.protocols offers".into(),
            });
        }
        Ok(())
    }
}

/// OpenSSL's names of the TLS 1.2 suites Waymark has (Netty with OpenSSL
/// takes these too).
const OPENSSL_NAMES: [(CipherSuite, &str); 6] = [
    (
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        "ECDHE-ECDSA-AES128-GCM-SHA256",
    ),
    (
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        "ECDHE-ECDSA-AES256-GCM-SHA384",
    ),
    (
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        "ECDHE-RSA-AES128-GCM-SHA256",
    ),
    (
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        "ECDHE-RSA-AES256-GCM-SHA384",
    ),
    (
        CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        "ECDHE-ECDSA-CHACHA20-POLY1305",
    ),
    (
        CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
        "ECDHE-RSA-CHACHA20-POLY1305",
    ),
];

/// The suite of Waymark's provider that `name` means: its IANA/Java name
/// (`TLS_AES_128_GCM_SHA256`, `TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`),
/// rustls' (`TLS13_AES_128_GCM_SHA256`) or OpenSSL's, in any case.
pub(crate) fn suite_named(name: &str) -> Option<CipherSuite> {
    rustls::crypto::ring::ALL_CIPHER_SUITES
        .iter()
        .map(|s| s.suite())
        .find(|suite| {
            let rustls_name = suite.as_str().unwrap_or_default();
            let java_name = rustls_name.replacen("TLS13_", "TLS_", 1);
            let openssl = OPENSSL_NAMES
                .iter()
                .find(|(s, _)| s == suite)
                .map(|(_, n)| *n);
            rustls_name.eq_ignore_ascii_case(name)
                || java_name.eq_ignore_ascii_case(name)
                || openssl.is_some_and(|known| known.eq_ignore_ascii_case(name))
        })
}

#[cfg(test)]
mod tests;
