//! `--access-key`/`--secret-key` and `--tls`/`--tls-trust`/`--tls-insecure`
//! turned into what every simulated broker's NameServer and controller
//! connections use: the 5.3+ broker's `innerClientAuthenticationCredentials`
//! and `useTLS` (read by `rmq_broker_client::security`, as from a
//! broker.conf). Built once, shared by every broker, as one Java broker
//! process uses one setting for all of its outgoing connections.

use std::collections::BTreeMap;

use anyhow::Context;
use rmq_broker_client::security::{tls_from_properties, Credentials, TlsClient};
use rmq_broker_client::{BrokerConfig, ControllerModeConfig};

use crate::Args;

/// The Java key `--tls-insecure` sets; its warning is replaced by one that
/// names the flag.
const AUTH_SERVER_KEY: &str = "tls.client.authServer";

/// How the simulated brokers sign and encrypt.
#[derive(Debug, Clone, Default)]
pub struct Security {
    credentials: Option<Credentials>,
    tls: Option<TlsClient>,
}

impl Security {
    /// Reads the flags; TLS warnings (and the one of `--tls-insecure`) go
    /// to stderr. Flag combinations clap cannot check are checked in
    /// `main` before this.
    ///
    /// # Errors
    /// TLS files that cannot be used (unreadable, not PEM, ...).
    pub fn from_args(args: &Args) -> anyhow::Result<Security> {
        let credentials = match (&args.access_key, &args.secret_key) {
            (Some(access_key), Some(secret_key)) => {
                Some(Credentials::new(access_key.clone(), secret_key.clone()))
            }
            _ => None,
        };
        if !args.tls {
            return Ok(Security {
                credentials,
                tls: None,
            });
        }
        let mut properties = BTreeMap::from([("useTLS".to_owned(), "true".to_owned())]);
        if let Some(trust) = &args.tls_trust {
            properties.insert(
                "tls.client.trustCertPath".to_owned(),
                trust.to_string_lossy().into_owned(),
            );
        }
        if args.tls_insecure {
            properties.insert(AUTH_SERVER_KEY.to_owned(), "false".to_owned());
        }
        let (tls, warnings) = tls_from_properties(&properties)
            .context("--tls")?
            .context("--tls: TLS stayed off")?;
        for warning in warnings {
            if !(args.tls_insecure && warning.key == AUTH_SERVER_KEY) {
                eprintln!("warning: TLS {warning}");
            }
        }
        if args.tls_insecure {
            eprintln!(
                "warning: --tls-insecure: NameServer and controller certificates are not \
                 verified; anyone who can intercept a connection can pose as them"
            );
        }
        Ok(Security {
            credentials,
            tls: Some(tls),
        })
    }

    /// Sets a broker's NameServer connections to sign and encrypt.
    pub fn apply_to_broker(&self, config: &mut BrokerConfig) {
        config.inner_client_authentication_credentials = self.credentials.clone();
        config.tls = self.tls.clone();
    }

    /// Sets a replica's controller connections to sign and encrypt.
    pub fn apply_to_controller(&self, config: &mut ControllerModeConfig) {
        config.inner_client_authentication_credentials = self.credentials.clone();
        config.tls = self.tls.clone();
    }
}
