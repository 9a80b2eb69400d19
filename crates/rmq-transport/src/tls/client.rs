//! The client side: [`TlsClient`], a `rustls::ClientConfig` built from the
//! `tls.client.*` keys, and the two ways it checks a server: the chain
//! against `tls.client.trustCertPath` (the name never: Java connects by
//! address and checks no host name), or not at all when
//! `tls.client.authServer=false` says so.
//!
//! No SNI is sent: the server name given to rustls is the peer's IP
//! address, and SNI is off besides.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls13_signature_with_raw_key, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, SubjectPublicKeyInfoDer, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::sign::SingleCertAndKey;
use rustls::{
    CertificateError, DigitallySignedStruct, PeerMisbehaved, RootCertStore, SignatureScheme,
};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use super::keys::{self, Named, Password};
use super::settings::{
    TlsSettings, AUTH_SERVER, CLIENT_CERT_PATH, CLIENT_KEY_PASSWORD, CLIENT_KEY_PATH,
    CLIENT_TRUST_CERT_PATH,
};
use super::{TlsError, TlsWarning};

/// TLS for outgoing connections: [`ClientConfig::tls`].
///
/// [`ClientConfig::tls`]: crate::ClientConfig::tls
#[derive(Clone)]
pub struct TlsClient {
    config: Arc<rustls::ClientConfig>,
    verifies_server: bool,
}

impl TlsClient {
    /// What `settings` ask of a client, whether or not
    /// [`TlsSettings::client_enabled`] says to use it.
    ///
    /// The server is verified against `tls.client.trustCertPath` when that
    /// is set (chain only; a warning if `tls.client.authServer=false` too);
    /// without it, any server certificate is accepted only if
    /// `tls.client.authServer=false` is set explicitly (Java's default), with
    /// a warning. A client certificate is sent if `tls.client.certPath` and
    /// `keyPath` are set.
    ///
    /// # Errors
    /// No trust file and `tls.client.authServer` not `false`; a client
    /// certificate without its key or the other way round; the file errors of
    /// [`TlsServer::new`](super::TlsServer::new).
    pub fn from_settings(settings: &TlsSettings) -> Result<(TlsClient, Vec<TlsWarning>), TlsError> {
        let client = &settings.client;
        let mut warnings = Vec::new();
        let provider = keys::provider(settings);
        let verifier: Arc<dyn ServerCertVerifier> =
            match (&client.trust_cert_path, client.auth_server) {
                (Some(path), auth_server) => {
                    if auth_server == Some(false) {
                        warnings.push(TlsWarning {
                            key: settings.key_name(AUTH_SERVER),
                            message: "false, yet the server is verified against \
                                      tls.client.trustCertPath (Java would accept any server)"
                                .into(),
                        });
                    }
                    let roots = keys::roots(&Named::new(settings, CLIENT_TRUST_CERT_PATH, path))?;
                    Arc::new(ChainOnly::new(roots, provider.clone()).map_err(|reason| {
                        TlsError::File {
                            key: settings.key_name(CLIENT_TRUST_CERT_PATH),
                            path: path.clone(),
                            reason,
                        }
                    })?)
                }
                (None, Some(false)) => {
                    warnings.push(TlsWarning {
                        key: settings.key_name(AUTH_SERVER),
                        message: "false: the server's certificate is not verified, so anyone \
                                  who can intercept the connection can pose as the server"
                            .into(),
                    });
                    Arc::new(AnyServer {
                        provider: provider.clone(),
                    })
                }
                (None, _) => {
                    return Err(TlsError::Setting {
                        key: settings.key_name(CLIENT_TRUST_CERT_PATH),
                        reason: "not set: set it to the CA certificate(s) the server's \
                                 certificate chains to, or set tls.client.authServer=false to \
                                 accept any server certificate unverified (Java's default)"
                            .into(),
                    })
                }
            };
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&keys::versions(settings))
            .map_err(|error| TlsError::Setting {
                key: "tls.protocols, tls.ciphers".into(),
                reason: error.to_string(),
            })?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let mut config = match (&client.cert_path, &client.key_path) {
            (Some(cert), Some(key)) => {
                let cert = Named::new(settings, CLIENT_CERT_PATH, cert);
                let key = Named::new(settings, CLIENT_KEY_PATH, key);
                let chain = keys::certificates(&cert)?;
                let password = Password::new(settings, CLIENT_KEY_PASSWORD, &client.key_password);
                let private = keys::private_key(&key, &password)?;
                let certified = keys::certified_key(&cert, chain, &key, private, &provider)?;
                builder.with_client_cert_resolver(Arc::new(SingleCertAndKey::from(certified)))
            }
            (None, None) => builder.with_no_client_auth(),
            (Some(_), None) | (None, Some(_)) => {
                let (given, missing) = if client.cert_path.is_some() {
                    (CLIENT_CERT_PATH, CLIENT_KEY_PATH)
                } else {
                    (CLIENT_KEY_PATH, CLIENT_CERT_PATH)
                };
                return Err(TlsError::Setting {
                    key: settings.key_name(missing),
                    reason: format!("not set, but {given} is: both are needed"),
                });
            }
        };
        // Java sends no SNI; servers must not depend on it.
        config.enable_sni = false;
        let verifies_server = client.trust_cert_path.is_some();
        Ok((
            TlsClient {
                config: Arc::new(config),
                verifies_server,
            },
            warnings,
        ))
    }

    /// A client of a configuration made elsewhere (tests, special cases).
    /// [`verifies_server`](TlsClient::verifies_server) is taken as true.
    pub fn from_config(config: Arc<rustls::ClientConfig>) -> TlsClient {
        TlsClient {
            config,
            verifies_server: true,
        }
    }

    /// The rustls configuration connections are made with.
    pub fn config(&self) -> Arc<rustls::ClientConfig> {
        self.config.clone()
    }

    /// False when any server certificate is accepted
    /// (`tls.client.authServer=false` without a trust file).
    pub fn verifies_server(&self) -> bool {
        self.verifies_server
    }

    /// The TLS handshake over a connected `stream` to `peer`.
    pub(crate) async fn connect(
        &self,
        stream: TcpStream,
        peer: SocketAddr,
    ) -> io::Result<TlsStream<TcpStream>> {
        let name = ServerName::IpAddress(peer.ip().into());
        TlsConnector::from(self.config.clone())
            .connect(name, stream)
            .await
    }
}

impl fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsClient")
            .field("verifies_server", &self.verifies_server)
            .field(
                "client_certificate",
                &self.config.client_auth_cert_resolver.has_certs(),
            )
            .finish()
    }
}

/// Verifies the server's chain against the trust anchors, and not its name:
/// Java (with `tls.client.authServer=true`) checks the chain only.
///
/// Name checking is the last step of `WebPkiServerVerifier`, so rather than
/// turning its name errors into success this runs the chain check alone, and
/// leaves the handshake signatures to a `WebPkiServerVerifier`.
#[derive(Debug)]
struct ChainOnly {
    roots: Arc<RootCertStore>,
    webpki: Arc<WebPkiServerVerifier>,
    provider: Arc<CryptoProvider>,
}

impl ChainOnly {
    fn new(roots: RootCertStore, provider: Arc<CryptoProvider>) -> Result<ChainOnly, String> {
        let roots = Arc::new(roots);
        let webpki = WebPkiServerVerifier::builder_with_provider(roots.clone(), provider.clone())
            .build()
            .map_err(|error| error.to_string())?;
        Ok(ChainOnly {
            roots,
            webpki,
            provider,
        })
    }
}

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let cert = ParsedCertificate::try_from(end_entity)?;
        rustls::client::verify_server_cert_signed_by_trust_anchor(
            &cert,
            &self.roots,
            intermediates,
            now,
            self.provider.signature_verification_algorithms.all,
        )?;
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// Accepts any server certificate (`tls.client.authServer=false`, Java's
/// default). The handshake signatures are still checked, so the server
/// holds the key of the certificate it showed, whatever that is worth.
///
/// The public key is taken from the certificate with x509-parser rather than
/// webpki, which refuses X.509 v1 certificates: Java accepts them, and
/// `openssl x509 -req` without extensions (RocketMQ's TLS guide) makes them.
#[derive(Debug)]
struct AnyServer {
    provider: Arc<CryptoProvider>,
}

impl AnyServer {
    fn signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
        tls13: bool,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let bad = |_| rustls::Error::InvalidCertificate(CertificateError::BadEncoding);
        let (_, parsed) = x509_parser::parse_x509_certificate(cert).map_err(bad)?;
        let spki = SubjectPublicKeyInfoDer::from(parsed.public_key().raw);
        let algorithms = &self.provider.signature_verification_algorithms;
        if tls13 {
            return verify_tls13_signature_with_raw_key(message, &spki, dss, algorithms);
        }
        let key = webpki::RawPublicKeyEntity::try_from(&spki)
            .map_err(|_| rustls::Error::InvalidCertificate(CertificateError::BadEncoding))?;
        // As rustls' verify_tls12_signature: TLS 1.2 schemes map to several
        // algorithms; the first one for this key type decides.
        let candidates = algorithms
            .mapping
            .iter()
            .find(|(scheme, _)| *scheme == dss.scheme)
            .map(|(_, candidates)| *candidates)
            .ok_or(rustls::Error::PeerMisbehaved(
                PeerMisbehaved::SignedHandshakeWithUnadvertisedSigScheme,
            ))?;
        for algorithm in candidates {
            match key.verify_signature(*algorithm, message, dss.signature()) {
                Ok(()) => return Ok(HandshakeSignatureValid::assertion()),
                Err(webpki::Error::UnsupportedSignatureAlgorithmForPublicKeyContext(_)) => {}
                Err(_) => break,
            }
        }
        Err(rustls::Error::InvalidCertificate(
            CertificateError::BadSignature,
        ))
    }
}

impl ServerCertVerifier for AnyServer {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.signature(message, cert, dss, false)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.signature(message, cert, dss, true)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
