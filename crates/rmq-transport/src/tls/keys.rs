//! Reading what the `tls.*` keys name: PEM certificate chains, private keys
//! (encrypted PKCS#8 ones with their password), trust files; and the crypto
//! provider and versions the settings allow. Every error names the key and
//! the file.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use pkcs8::EncryptedPrivateKeyInfo;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::sign::CertifiedKey;
use rustls::RootCertStore;

use super::settings::TlsSettings;
use super::TlsError;

/// A file a key names, with the key as errors show it.
#[derive(Debug, Clone)]
pub(crate) struct Named {
    pub(crate) key: String,
    pub(crate) path: PathBuf,
}

impl Named {
    pub(crate) fn new(settings: &TlsSettings, key: &'static str, path: &Path) -> Named {
        Named {
            key: settings.key_name(key),
            path: path.to_path_buf(),
        }
    }

    fn read(&self) -> Result<Vec<u8>, TlsError> {
        std::fs::read(&self.path).map_err(|source| TlsError::Read {
            key: self.key.clone(),
            path: self.path.clone(),
            source,
        })
    }

    pub(crate) fn bad(&self, reason: impl Into<String>) -> TlsError {
        TlsError::File {
            key: self.key.clone(),
            path: self.path.clone(),
            reason: reason.into(),
        }
    }

    /// (modification time, length) of the file, `None` if it cannot be read:
    /// what tells a reload that the file changed.
    pub(crate) fn stamp(&self) -> Option<(SystemTime, u64)> {
        let meta = std::fs::metadata(&self.path).ok()?;
        Some((meta.modified().ok()?, meta.len()))
    }
}

/// A key password (if given) with its key's name.
#[derive(Clone)]
pub(crate) struct Password {
    pub(crate) key: String,
    pub(crate) secret: Option<String>,
}

impl Password {
    pub(crate) fn new(
        settings: &TlsSettings,
        key: &'static str,
        secret: &Option<String>,
    ) -> Password {
        Password {
            key: settings.key_name(key),
            secret: secret.clone(),
        }
    }
}

/// rustls' `ring` provider, its suites cut down to `tls.ciphers` if set.
pub(crate) fn provider(settings: &TlsSettings) -> Arc<CryptoProvider> {
    let mut provider = rustls::crypto::ring::default_provider();
    if let Some(ciphers) = &settings.ciphers {
        provider
            .cipher_suites
            .retain(|suite| ciphers.contains(&suite.suite()));
    }
    Arc::new(provider)
}

/// The versions `tls.protocols` allows.
pub(crate) fn versions(settings: &TlsSettings) -> Vec<&'static rustls::SupportedProtocolVersion> {
    settings.protocols.iter().map(|v| v.rustls()).collect()
}

/// The certificates of a PEM file, in order; at least one.
pub(crate) fn certificates(file: &Named) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bytes = file.read()?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| file.bad(format!("not valid PEM: {error}")))?;
    if certs.is_empty() {
        return Err(file.bad("no PEM CERTIFICATE section in it"));
    }
    Ok(certs)
}

/// The trust anchors of a PEM file of CA certificates; at least one.
pub(crate) fn roots(file: &Named) -> Result<RootCertStore, TlsError> {
    let mut roots = RootCertStore::empty();
    for cert in certificates(file)? {
        roots
            .add(cert)
            .map_err(|error| file.bad(format!("not a usable CA certificate: {error}")))?;
    }
    Ok(roots)
}

/// The certificate chain with its key, checked to belong together.
///
/// Not rustls' `CertifiedKey::from_der`: it parses the certificate with
/// webpki, which refuses X.509 v1 certificates, and `openssl x509 -req`
/// without extensions (as in RocketMQ's TLS guide) makes v1 ones, which Java
/// peers accept. Whoever verifies this certificate decides about v1.
pub(crate) fn certified_key(
    cert: &Named,
    chain: Vec<CertificateDer<'static>>,
    key_file: &Named,
    key: PrivateKeyDer<'static>,
    provider: &CryptoProvider,
) -> Result<CertifiedKey, TlsError> {
    let signing = provider
        .key_provider
        .load_private_key(key)
        .map_err(|error| key_file.bad(format!("unusable private key: {error}")))?;
    let (_, parsed) = x509_parser::parse_x509_certificate(&chain[0])
        .map_err(|error| cert.bad(format!("first certificate unreadable: {error}")))?;
    match signing.public_key() {
        Some(spki) if spki.as_ref() != parsed.public_key().raw => {
            return Err(key_file.bad(format!(
                "does not match the certificate in {} ({})",
                cert.path.display(),
                cert.key
            )))
        }
        // A key type that cannot tell its public key: rustls does not
        // check such either.
        _ => {}
    }
    Ok(CertifiedKey::new(chain, signing))
}

const ENCRYPTED_BEGIN: &str = "-----BEGIN ENCRYPTED PRIVATE KEY-----";
const ENCRYPTED_END: &str = "-----END ENCRYPTED PRIVATE KEY-----";

/// The private key of a PEM file: PKCS#8 (what Java wants), PKCS#1 or SEC1;
/// an `ENCRYPTED PRIVATE KEY` (PKCS#8 with PBES2) is decrypted with
/// `password`, which must be given then and only then.
pub(crate) fn private_key(
    file: &Named,
    password: &Password,
) -> Result<PrivateKeyDer<'static>, TlsError> {
    let bytes = file.read()?;
    let text = String::from_utf8_lossy(&bytes);
    if text.contains("Proc-Type: 4,ENCRYPTED") {
        return Err(file.bad(
            "holds a key encrypted the legacy OpenSSL way (Proc-Type: 4,ENCRYPTED), which Java \
             cannot read either; convert it to encrypted PKCS#8: \
             openssl pkcs8 -topk8 -v2 aes-256-cbc -in old.pem -out key.pem",
        ));
    }
    if let Some(start) = text.find(ENCRYPTED_BEGIN) {
        let Some(secret) = &password.secret else {
            return Err(file.bad(format!(
                "holds an encrypted key; set {} to its password",
                password.key
            )));
        };
        return decrypt(file, &password.key, secret, &text[start..]);
    }
    let key = PrivateKeyDer::from_pem_slice(&bytes).map_err(|error| match error {
        rustls::pki_types::pem::Error::NoItemsFound => file.bad(
            "no PEM private key in it (PRIVATE KEY, as Java wants; RSA PRIVATE KEY and EC PRIVATE \
             KEY are taken too)",
        ),
        other => file.bad(format!("not valid PEM: {other}")),
    })?;
    if password.secret.is_some() {
        return Err(TlsError::Setting {
            key: password.key.clone(),
            reason: format!(
                "is set but {} holds an unencrypted key; remove the password or encrypt the key",
                file.path.display()
            ),
        });
    }
    Ok(key)
}

fn decrypt(
    file: &Named,
    password_key: &str,
    secret: &str,
    from_begin: &str,
) -> Result<PrivateKeyDer<'static>, TlsError> {
    let end = from_begin
        .find(ENCRYPTED_END)
        .ok_or_else(|| file.bad(format!("{ENCRYPTED_BEGIN} without {ENCRYPTED_END}")))?;
    let pem = &from_begin[..end + ENCRYPTED_END.len()];
    let (_, der) = pkcs8::der::pem::decode_vec(pem.as_bytes())
        .map_err(|error| file.bad(format!("not valid PEM: {error}")))?;
    let info = EncryptedPrivateKeyInfo::try_from(der.as_slice()).map_err(|error| {
        file.bad(format!(
            "not an encrypted PKCS#8 key Waymark can read ({error}); only PBES2 is \
                 (openssl pkcs8 -topk8 -v2 aes-256-cbc), not the PKCS#12 schemes of -v1"
        ))
    })?;
    let plain = info
        .decrypt(secret.as_bytes())
        .map_err(|error| match error {
            pkcs8::Error::EncryptedPrivateKey(pkcs5::Error::UnsupportedAlgorithm { oid }) => file
                .bad(format!(
                    "encrypted with an algorithm Waymark lacks ({oid}); PBES2 with PBKDF2 or scrypt \
                     and AES-CBC or 3DES is supported: \
                     openssl pkcs8 -topk8 -v2 aes-256-cbc -in plain.pem -out key.pem"
                )),
            pkcs8::Error::EncryptedPrivateKey(
                error @ pkcs5::Error::AlgorithmParametersInvalid { .. },
            ) => file.bad(format!("cannot decrypt: {error}")),
            // A wrong password shows as bad padding (which pkcs5 0.7 calls
            // an encryption failure) or, by chance, as garbage DER.
            _ => TlsError::Setting {
                key: password_key.to_owned(),
                reason: format!(
                    "does not decrypt {} (wrong password, or a damaged key)",
                    file.path.display()
                ),
            },
        })?;
    Ok(PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        plain.as_bytes().to_vec(),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pkcs8::pkcs5::pbes2;
    use pkcs8::PrivateKeyInfo;

    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir = std::env::temp_dir().join(format!(
                "rmq-transport-tls-keys-{}-{name}",
                std::process::id()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }

        fn file(&self, name: &str, contents: &[u8]) -> Named {
            let path = self.0.join(name);
            std::fs::write(&path, contents).unwrap();
            Named {
                key: "tls.server.keyPath".into(),
                path,
            }
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn password(secret: Option<&str>) -> Password {
        Password {
            key: "tls.server.keyPassword".into(),
            secret: secret.map(str::to_owned),
        }
    }

    /// A PKCS#8 key as PEM, and encrypted the way `openssl pkcs8 -topk8
    /// -v2 aes-256-cbc` does (PBES2, PBKDF2-HMAC-SHA256, AES-256-CBC).
    fn key_pems(secret: &str) -> (String, String, Vec<u8>) {
        let key = rcgen::KeyPair::generate().unwrap();
        let der = key.serialize_der();
        let params = pbes2::Parameters::pbkdf2_sha256_aes256cbc(2048, &[7; 16], &[9; 16]).unwrap();
        let encrypted = PrivateKeyInfo::try_from(der.as_slice())
            .unwrap()
            .encrypt_with_params(params, secret)
            .unwrap();
        let encrypted_pem = encrypted
            .to_pem("ENCRYPTED PRIVATE KEY", pkcs8::LineEnding::LF)
            .unwrap();
        (key.serialize_pem(), encrypted_pem.to_string(), der)
    }

    #[test]
    fn an_encrypted_pkcs8_key_is_decrypted_with_its_password() {
        let dir = Scratch::new("decrypt");
        let (_, encrypted, der) = key_pems("s3cret");
        let file = dir.file("key.pem", format!("junk before\n{encrypted}").as_bytes());
        let key = private_key(&file, &password(Some("s3cret"))).unwrap();
        assert_eq!(key.secret_der(), der.as_slice());

        let error = private_key(&file, &password(Some("wrong")))
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("tls.server.keyPassword: "), "{error}");
        assert!(error.contains("key.pem"), "{error}");

        let error = private_key(&file, &password(None)).unwrap_err().to_string();
        assert!(error.contains("set tls.server.keyPassword"), "{error}");
    }

    #[test]
    fn a_password_for_an_unencrypted_key_is_refused_not_ignored() {
        let dir = Scratch::new("unencrypted");
        let (plain, _, der) = key_pems("x");
        let file = dir.file("key.pem", plain.as_bytes());
        assert_eq!(
            private_key(&file, &password(None)).unwrap().secret_der(),
            der.as_slice()
        );
        let error = private_key(&file, &password(Some("x")))
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("tls.server.keyPassword: is set but"),
            "{error}"
        );
    }

    #[test]
    fn unusable_files_name_key_and_file() {
        let dir = Scratch::new("unusable");
        let file = dir.file("cert.pem", b"hello");
        let error = certificates(&file).unwrap_err().to_string();
        assert!(error.starts_with("tls.server.keyPath: "), "{error}");
        assert!(error.contains("cert.pem: no PEM CERTIFICATE"), "{error}");
        let error = private_key(&file, &password(None)).unwrap_err().to_string();
        assert!(error.contains("no PEM private key"), "{error}");
        let legacy = dir.file(
            "legacy.pem",
            b"-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n",
        );
        let error = private_key(&legacy, &password(Some("x")))
            .unwrap_err()
            .to_string();
        assert!(error.contains("legacy OpenSSL way"), "{error}");
        let missing = Named {
            key: "tls.server.certPath".into(),
            path: dir.0.join("absent.pem"),
        };
        let error = certificates(&missing).unwrap_err().to_string();
        assert!(
            error.starts_with("tls.server.certPath: cannot read "),
            "{error}"
        );
        assert!(missing.stamp().is_none());
    }
}
