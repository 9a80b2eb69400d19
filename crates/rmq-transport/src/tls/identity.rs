//! The names a verified client certificate carries: its subject's common
//! name and its DNS, URI and e-mail subject alternative names. Which account
//! a name stands for is the auth layer's business.

use x509_parser::extensions::GeneralName;

use super::TlsError;

/// Who a TLS client proved to be: the names in its (verified) certificate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsIdentity {
    /// The subject's first common name (CN), if it has one.
    pub common_name: Option<String>,
    /// The DNS names, URIs and e-mail addresses of the subject alternative
    /// name extension, in certificate order, as written.
    pub subject_alt_names: Vec<String>,
}

impl TlsIdentity {
    /// The names of a DER certificate.
    ///
    /// # Errors
    /// [`TlsError::Certificate`] if it cannot be parsed.
    pub fn from_der(certificate: &[u8]) -> Result<TlsIdentity, TlsError> {
        let (_, cert) = x509_parser::parse_x509_certificate(certificate)
            .map_err(|error| TlsError::Certificate(error.to_string()))?;
        // A CN in a string type that is not text (BMPString, ...) is skipped
        // rather than guessed at.
        let common_name = cert
            .subject()
            .iter_common_name()
            .find_map(|cn| cn.as_str().ok())
            .map(str::to_owned);
        let san = cert
            .subject_alternative_name()
            .map_err(|error| TlsError::Certificate(error.to_string()))?;
        let subject_alt_names = san
            .map(|san| {
                san.value
                    .general_names
                    .iter()
                    .filter_map(|name| match name {
                        GeneralName::DNSName(name)
                        | GeneralName::URI(name)
                        | GeneralName::RFC822Name(name) => Some((*name).to_owned()),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(TlsIdentity {
            common_name,
            subject_alt_names,
        })
    }

    /// The names an account may be looked up by, in order: the common name
    /// first, then the subject alternative names.
    pub fn names(&self) -> impl Iterator<Item = &str> + '_ {
        self.common_name
            .as_deref()
            .into_iter()
            .chain(self.subject_alt_names.iter().map(String::as_str))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{CertificateParams, DnType, KeyPair, SanType};

    #[test]
    fn common_name_then_dns_uri_and_email_names() {
        let mut params = CertificateParams::new(vec!["broker-a.example".to_owned()]).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, "broker-a");
        params.subject_alt_names.push(SanType::URI(
            "spiffe://waymark/broker-a".try_into().unwrap(),
        ));
        params
            .subject_alt_names
            .push(SanType::Rfc822Name("ops@example.org".try_into().unwrap()));
        params
            .subject_alt_names
            .push(SanType::IpAddress("10.0.0.1".parse().unwrap()));
        let cert = params.self_signed(&KeyPair::generate().unwrap()).unwrap();
        let identity = TlsIdentity::from_der(cert.der()).unwrap();
        assert_eq!(identity.common_name.as_deref(), Some("broker-a"));
        assert_eq!(
            identity.names().collect::<Vec<_>>(),
            [
                "broker-a",
                "broker-a.example",
                "spiffe://waymark/broker-a",
                "ops@example.org"
            ]
        );
    }

    #[test]
    fn no_common_name_and_garbage() {
        let params = CertificateParams::new(vec!["only-san".to_owned()]).unwrap();
        let mut params = params;
        params.distinguished_name = rcgen::DistinguishedName::new();
        let cert = params.self_signed(&KeyPair::generate().unwrap()).unwrap();
        let identity = TlsIdentity::from_der(cert.der()).unwrap();
        assert_eq!(identity.common_name, None);
        assert_eq!(identity.names().collect::<Vec<_>>(), ["only-san"]);
        assert!(TlsIdentity::from_der(b"not a certificate").is_err());
    }
}
