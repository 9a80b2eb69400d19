//! A server's security settings as its binary reads them at start-up: the
//! guard and the listener's TLS from the properties, the `-p` lines that
//! show them, and the log lines that say what they mean.

use std::collections::BTreeMap;

use rmq_auth::RequirementTable;

use super::{describe_tls, server_tls, AuthKeys, Guard};
use crate::tls::{ServerTls, TlsClient, TlsSettings};

/// Authentication and TLS of one server, as configured.
#[derive(Debug)]
pub struct ServerSecurity {
    /// The authentication keys.
    pub keys: AuthKeys,
    /// The guard they make, with the server's table.
    pub guard: Guard,
    /// TLS on the listening port.
    pub tls: ServerTls,
    /// TLS for the connections the server opens itself (notices to brokers,
    /// Raft traffic to peer controllers): `Some` when `tls.enable=true`, or
    /// when `tls.enable` is unset and the server is enforcing, as Java's
    /// `NettyClientConfig` decides; the `tls.client.*` keys say how.
    pub outgoing_tls: Option<TlsClient>,
    /// What to warn about at start-up (TLS settings, the accounts file).
    pub warnings: Vec<String>,
}

impl ServerSecurity {
    /// Reads the authentication and `tls.*` keys of `properties`; an error
    /// says why the server cannot start with them.
    pub fn from_properties(
        properties: &BTreeMap<String, String>,
        table: RequirementTable,
    ) -> Result<ServerSecurity, String> {
        let keys = AuthKeys::from_properties(properties);
        let (guard, account_warnings) = Guard::from_keys(&keys, table)?;
        let settings = TlsSettings::from_properties(properties)
            .map_err(|error| format!("TLS configuration: {error}"))?;
        let (tls, tls_warnings) =
            server_tls(&settings).map_err(|error| format!("TLS configuration: {error}"))?;
        let (outgoing_tls, outgoing_warnings) = outgoing_tls(&settings)?;
        let warnings = tls_warnings
            .into_iter()
            .chain(outgoing_warnings)
            .map(|warning| format!("TLS: {warning}"))
            .chain(
                account_warnings
                    .into_iter()
                    .map(|warning| format!("authenticationAccountsFile: {warning}")),
            )
            .collect();
        Ok(ServerSecurity {
            keys,
            guard,
            tls,
            outgoing_tls,
            warnings,
        })
    }

    /// `-p`'s lines for these settings: a comment saying what TLS does, the
    /// authentication keys, and the `tls.*` keys given (passwords redacted).
    pub fn print_lines(&self, properties: &BTreeMap<String, String>) -> String {
        let mut text = format!(
            "# authentication and TLS (docs/security.md); {}\n",
            describe_tls(&self.tls)
        );
        let tls_given = properties.iter().filter(|(key, _)| key.starts_with("tls."));
        for (key, value) in self.keys.to_properties().iter().chain(tls_given) {
            let shown = if key.to_ascii_lowercase().contains("password") {
                "<redacted>"
            } else {
                value.as_str()
            };
            text.push_str(&format!("{key}={shown}\n"));
        }
        text
    }

    /// Logs the warnings, what TLS does, and whether requests are
    /// authenticated; `exposed` says what anyone can do when they are not
    /// (the server's own words: "register, unregister and wipe brokers").
    pub fn log_start(&self, exposed: &str) {
        for warning in &self.warnings {
            tracing::warn!("{warning}");
        }
        tracing::info!("{}", describe_tls(&self.tls));
        if self.outgoing_tls.is_some() {
            tracing::info!(
                "connections this server opens (to brokers, to peer controllers) use TLS"
            );
        }
        if self.guard.is_enabled() {
            tracing::info!(
                accounts = self.guard.account_count(),
                file = %self.keys.accounts_file,
                "authentication on: writes need an account (docs/security.md)"
            );
        } else {
            tracing::warn!("AUTHENTICATION IS OFF: any host that reaches this port can {exposed}; set authenticationEnabled=true and authenticationAccountsFile (docs/security.md)");
        }
    }
}

/// The client TLS of the connections a server opens, with its warnings.
/// `tls.enable=true` that cannot be honoured stops the start; TLS only
/// implied by `tls.server.mode=enforcing` that cannot be built (no trust
/// file and no `tls.client.authServer=false`) leaves those connections
/// plain, with a warning that says how to fix it.
fn outgoing_tls(settings: &TlsSettings) -> Result<(Option<TlsClient>, Vec<String>), String> {
    if !settings.client_enabled() {
        return Ok((None, Vec::new()));
    }
    match TlsClient::from_settings(settings) {
        Ok((client, warnings)) => Ok((
            Some(client),
            warnings.iter().map(ToString::to_string).collect(),
        )),
        Err(error) if settings.client.enable.is_none() => Ok((
            None,
            vec![format!(
                "connections this server opens (to brokers, to peer controllers) stay plain although \
                 tls.server.mode=enforcing asks for TLS: {error}; set tls.client.trustCertPath, or \
                 tls.client.authServer=false to accept any certificate as Java does"
            )],
        )),
        Err(error) => Err(format!("TLS configuration: tls.enable=true: {error}")),
    }
}
