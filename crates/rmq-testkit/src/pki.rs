//! Certificates for the TLS tests, made with rcgen: a CA, server and client
//! certificates it signs, written as PEM files into a directory of their own;
//! and the settings maps that point Waymark at them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use rcgen::{
    BasicConstraints, Certificate, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose,
    SanType,
};

static NEXT_DIR: AtomicUsize = AtomicUsize::new(0);

/// A CA and a directory to write certificates into (removed on drop).
pub struct Pki {
    /// Where the PEM files go.
    pub dir: PathBuf,
    ca: Certificate,
    ca_key: KeyPair,
}

/// The files of one certificate and its key.
#[derive(Debug, Clone)]
pub struct Issued {
    /// The certificate (PEM).
    pub cert: PathBuf,
    /// Its private key (PKCS#8 PEM).
    pub key: PathBuf,
}

impl Pki {
    /// A new CA named after `name`, in a new directory.
    pub fn new(name: &str) -> Pki {
        let dir = std::env::temp_dir().join(format!(
            "waymark-tls-{name}-{}-{}",
            std::process::id(),
            NEXT_DIR.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let ca_key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, format!("Waymark test CA {name}"));
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca = params.self_signed(&ca_key).unwrap();
        let pki = Pki { dir, ca, ca_key };
        std::fs::write(pki.ca_path(), pki.ca.pem()).unwrap();
        pki
    }

    /// The CA certificate's PEM file.
    pub fn ca_path(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// A certificate with common name `cn` and the given SANs (DNS names,
    /// or `uri:`/`email:` prefixed), signed by the CA, written as
    /// `<file>.pem` and `<file>.key`.
    pub fn issue(&self, file: &str, cn: &str, sans: &[&str]) -> Issued {
        let key = KeyPair::generate().unwrap();
        let cert = self.sign(cn, sans, &key);
        let issued = Issued {
            cert: self.dir.join(format!("{file}.pem")),
            key: self.dir.join(format!("{file}.key")),
        };
        std::fs::write(&issued.cert, cert.pem()).unwrap();
        std::fs::write(&issued.key, key.serialize_pem()).unwrap();
        issued
    }

    /// Overwrites `issued` with a new certificate and key.
    pub fn reissue(&self, issued: &Issued, cn: &str) {
        let key = KeyPair::generate().unwrap();
        let cert = self.sign(cn, &[], &key);
        std::fs::write(&issued.key, key.serialize_pem()).unwrap();
        std::fs::write(&issued.cert, cert.pem()).unwrap();
    }

    /// A certificate for a new key, without the key (to break a pair).
    pub fn stray_certificate_pem(&self, cn: &str) -> String {
        self.sign(cn, &[], &KeyPair::generate().unwrap()).pem()
    }

    fn sign(&self, cn: &str, sans: &[&str], key: &KeyPair) -> Certificate {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(DnType::CommonName, cn);
        for san in sans {
            let san = if let Some(uri) = san.strip_prefix("uri:") {
                SanType::URI(uri.try_into().unwrap())
            } else if let Some(email) = san.strip_prefix("email:") {
                SanType::Rfc822Name(email.try_into().unwrap())
            } else {
                SanType::DnsName((*san).try_into().unwrap())
            };
            params.subject_alt_names.push(san);
        }
        params.signed_by(key, &self.ca, &self.ca_key).unwrap()
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A properties map from pairs.
pub fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `p` as the text a settings map holds.
pub fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}
