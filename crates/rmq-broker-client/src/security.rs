//! How a broker's outgoing connections are secured, as a Java broker's one
//! remoting client is: requests signed with the 5.3+ broker's
//! `innerClientAuthenticationCredentials`, and TLS switched on by `useTLS`
//! (broker.conf) or `tls.enable` (which `NettyClientConfig.useTLS` starts
//! from; docs/security.md says what to configure on each Java peer).
//!
//! Owns reading those Java settings into what [`BrokerConfig`] and
//! [`ControllerModeConfig`] carry (`Option<Credentials>`,
//! `Option<TlsClient>`) and turning the pair into the transport's
//! [`ClientConfig`]. Java applies one switch to *all* of a broker's outgoing
//! traffic (NameServers, controllers): give both configs the same values.
//! Signing itself is `rmq_auth`'s, TLS `rmq_transport::tls`'; their types
//! are re-exported here, as they appear in this crate's configs.
//!
//! [`BrokerConfig`]: crate::BrokerConfig
//! [`ControllerModeConfig`]: crate::ControllerModeConfig

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

pub use rmq_auth::Credentials;
pub use rmq_transport::tls::{TlsClient, TlsWarning};

use rmq_transport::tls::TlsSettings;
use rmq_transport::{ClientConfig, RequestHook};

use crate::error::ConfigError;

/// The broker.conf key (Java `AuthConfig`) whose JSON value makes a 5.3+
/// broker sign every request it sends.
pub const INNER_CLIENT_CREDENTIALS_KEY: &str = "innerClientAuthenticationCredentials";

/// The broker.conf key (Java `NettyClientConfig.useTLS`) that overrides
/// `tls.enable` for the broker's outgoing connections.
pub const USE_TLS_KEY: &str = "useTLS";

/// Reads `innerClientAuthenticationCredentials`:
/// `{"accessKey":"..","secretKey":"..","securityToken":".."}` (the token is
/// optional), as Java's `BrokerOuterAPI.newAclRPCHook` parses it into
/// `SessionCredentials`. A blank value is `Ok(None)`: no signing, as Java.
///
/// # Errors
/// [`ConfigError::Value`] for text that is not a JSON object, or a missing
/// or blank `accessKey`/`secretKey`: Java would then send unsigned requests
/// without a word, which an operator who wrote the line never wants. The
/// error never shows the value (it holds the secret).
pub fn credentials_from_json(text: &str) -> Result<Option<Credentials>, ConfigError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let bad = |reason: &str| ConfigError::Value {
        key: INNER_CLIENT_CREDENTIALS_KEY.to_owned(),
        value: format!("<hidden: {reason}>"),
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(|_| bad("not JSON"))?;
    let object = value.as_object().ok_or_else(|| bad("not a JSON object"))?;
    let field = |name: &str| -> Option<String> {
        match object.get(name)? {
            serde_json::Value::String(text) if !text.trim().is_empty() => Some(text.clone()),
            serde_json::Value::Number(number) => Some(number.to_string()),
            _ => None,
        }
    };
    let (Some(access_key), Some(secret_key)) = (field("accessKey"), field("secretKey")) else {
        return Err(bad(
            "accessKey and secretKey must both be non-blank strings",
        ));
    };
    let mut credentials = Credentials::new(access_key, secret_key);
    credentials.security_token = field("securityToken");
    Ok(Some(credentials))
}

/// The TLS client a broker with these properties uses for its outgoing
/// connections, or `None` for plain ones: `useTLS` when set, else
/// `tls.enable`, else whether `tls.server.mode` is `enforcing` (Java's
/// `NettyClientConfig` default). The `tls.client.*` keys and
/// `tls.config.file` say how the server is checked and which client
/// certificate is shown; the warnings are for the caller to log.
///
/// Unlike Java, a server certificate is verified unless
/// `tls.client.authServer=false` is set explicitly (see
/// `rmq_transport::tls`).
///
/// # Errors
/// [`ConfigError::Value`] for a `useTLS` that is not `true`/`false`, and
/// [`ConfigError::Tls`] when the TLS keys cannot be used (no trust file and
/// no `tls.client.authServer=false`, unreadable files, ...).
pub fn tls_from_properties(
    properties: &BTreeMap<String, String>,
) -> Result<Option<(TlsClient, Vec<TlsWarning>)>, ConfigError> {
    let settings = TlsSettings::from_properties(properties).map_err(ConfigError::Tls)?;
    let enabled = match properties.get(USE_TLS_KEY).map(|v| v.trim()) {
        None | Some("") => settings.client_enabled(),
        Some(value) if value.eq_ignore_ascii_case("true") => true,
        Some(value) if value.eq_ignore_ascii_case("false") => false,
        Some(value) => {
            return Err(ConfigError::Value {
                key: USE_TLS_KEY.to_owned(),
                value: value.to_owned(),
            })
        }
    };
    if !enabled {
        return Ok(None);
    }
    let (client, mut warnings) = TlsClient::from_settings(&settings).map_err(ConfigError::Tls)?;
    warnings.extend(settings.warnings);
    Ok(Some((client, warnings)))
}

/// The transport settings of one of the broker's clients: `connect_timeout`,
/// server requests dropped (nothing the broker client handles arrives on
/// these connections), and the two security options.
pub(crate) fn client_config(
    connect_timeout: Duration,
    credentials: Option<&Credentials>,
    tls: Option<&TlsClient>,
) -> ClientConfig {
    ClientConfig {
        connect_timeout,
        inbound_capacity: 0,
        tls: tls.cloned(),
        request_hook: credentials.map(|c| Arc::new(c.clone()) as Arc<dyn RequestHook>),
        ..ClientConfig::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_json_java_brokers_take() {
        let credentials =
            credentials_from_json(r#"{"accessKey":"rocketmq","secretKey":"12345678"}"#)
                .unwrap()
                .unwrap();
        assert_eq!(credentials, Credentials::new("rocketmq", "12345678"));
        let with_token = credentials_from_json(
            r#" {"accessKey":"ak-broker","secretKey":"sk-broker","securityToken":"t-1"} "#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(with_token.security_token.as_deref(), Some("t-1"));
        assert_eq!(credentials_from_json("  ").unwrap(), None);
    }

    #[test]
    fn half_credentials_are_refused_without_showing_the_secret() {
        for text in [
            r#"{"accessKey":"rocketmq"}"#,
            r#"{"accessKey":" ","secretKey":"very-secret"}"#,
            r#"["rocketmq","very-secret"]"#,
            r#"{"accessKey":"rocketmq","secretKey":"very-secret""#,
        ] {
            let error = credentials_from_json(text).unwrap_err().to_string();
            assert!(error.contains(INNER_CLIENT_CREDENTIALS_KEY), "{error}");
            assert!(!error.contains("very-secret"), "{error}");
        }
    }

    #[test]
    fn use_tls_overrides_tls_enable() {
        let props = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let insecure = ("tls.client.authServer", "false");
        assert!(tls_from_properties(&props(&[insecure])).unwrap().is_none());
        assert!(
            tls_from_properties(&props(&[insecure, ("tls.enable", "true")]))
                .unwrap()
                .is_some()
        );
        assert!(tls_from_properties(&props(&[
            insecure,
            ("tls.enable", "true"),
            ("useTLS", "false")
        ]))
        .unwrap()
        .is_none());
        let (client, _) = tls_from_properties(&props(&[insecure, ("useTLS", "TRUE")]))
            .unwrap()
            .unwrap();
        assert!(!client.verifies_server());
        assert!(tls_from_properties(&props(&[("useTLS", "yes")])).is_err());
        let no_trust = tls_from_properties(&props(&[("useTLS", "true")])).unwrap_err();
        assert!(no_trust.to_string().contains("trustCertPath"), "{no_trust}");
    }
}
