//! Request authentication for servers: the keys that switch it on
//! (`authenticationEnabled`, the accounts file, ...), and the [`Guard`] a
//! server asks about every request before serving it, with `rmq-auth`'s
//! policy and the server's table of what each request code needs. Shared by
//! the NameServer and the controller (docs/security.md).

mod guard;
mod keys;
mod log_limit;
mod startup;

pub use guard::{Guard, Verdict};
pub use keys::AuthKeys;
pub use log_limit::LogLimit;
pub use startup::ServerSecurity;

use std::sync::Arc;
use std::time::Duration;

use crate::tls::{ServerTls, TlsError, TlsServer, TlsSettings};

/// How often [`reload_files`] looks at the certificate and accounts files.
pub const RELOAD_CHECK_PERIOD: Duration = Duration::from_secs(2);

/// Every [`RELOAD_CHECK_PERIOD`], reloads the server certificate when its
/// files changed, and calls `reload_accounts` (a [`Guard::reload_if_changed`]).
/// A broken new file keeps what is in use; its error is logged once per
/// change. Runs until dropped.
pub async fn reload_files(tls: Option<Arc<TlsServer>>, reload_accounts: impl Fn()) {
    let mut ticker = tokio::time::interval(RELOAD_CHECK_PERIOD);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await;
    loop {
        ticker.tick().await;
        if let Some(tls) = &tls {
            match tls.reload_if_changed() {
                Ok(true) => tracing::info!("TLS certificate reloaded"),
                Ok(false) => {}
                Err(error) => {
                    tracing::error!(%error, "TLS certificate not reloaded, the previous one stays in use")
                }
            }
        }
        reload_accounts();
    }
}

/// Whether `key` is one of the security keys (authentication or TLS). They
/// are read from the `-c` file and `--set` only: UPDATE_NAMESRV_CONFIG may
/// never change them (a remote request must not switch authentication off
/// or point the server at another certificate).
pub fn is_security_key(key: &str) -> bool {
    AuthKeys::KEYS.contains(&key) || crate::tls::KEYS.contains(&key) || key.starts_with("tls.")
}

/// The listener's TLS from the `tls.*` settings (read from the properties
/// and the `tls.config.file` they name), with every warning to log at
/// start-up.
pub fn server_tls(settings: &TlsSettings) -> Result<(ServerTls, Vec<String>), TlsError> {
    let (tls, more) = ServerTls::from_settings(settings)?;
    let warnings = settings
        .warnings
        .iter()
        .chain(&more)
        .map(ToString::to_string)
        .collect();
    Ok((tls, warnings))
}

/// What the start-up log says about TLS.
pub fn describe_tls(tls: &ServerTls) -> &'static str {
    match tls {
        ServerTls::Disabled => "TLS disabled: plain connections only (tls.server.mode=disabled, or permissive without tls.server.certPath)",
        ServerTls::Permissive(_) => "TLS permissive: TLS and plain connections on the same port",
        ServerTls::Enforcing(_) => "TLS enforcing: plain connections are refused",
    }
}
