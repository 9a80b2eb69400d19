//! A server's security settings as its binary reads them at start-up: the
//! guard and the listener's TLS from the properties, the `-p` lines that
//! show them, and the log lines that say what they mean.

use std::collections::BTreeMap;

use rmq_auth::RequirementTable;

use super::{describe_tls, server_tls, AuthKeys, Guard};
use crate::tls::ServerTls;

/// Authentication and TLS of one server, as configured.
#[derive(Debug)]
pub struct ServerSecurity {
    /// The authentication keys.
    pub keys: AuthKeys,
    /// The guard they make, with the server's table.
    pub guard: Guard,
    /// TLS on the listening port.
    pub tls: ServerTls,
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
        let (tls, tls_warnings) =
            server_tls(properties).map_err(|error| format!("TLS configuration: {error}"))?;
        let warnings = tls_warnings
            .into_iter()
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
