//! Who may change routes: request authentication (`guard`, over
//! `rmq-auth`'s verifier and policy, switched by `keys`) and TLS on the
//! listening port (`rmq_transport::tls`, Java's `tls.*` keys). Both reload
//! their files while the server runs ([`reload_files`]).

mod guard;
mod keys;
mod log_limit;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rmq_transport::tls::{ServerTls, TlsServer, TlsSettings};

pub use guard::{Guard, Verdict};
pub use keys::AuthKeys;
pub use log_limit::LogLimit;

/// How often the certificate and accounts files are checked for changes.
pub const RELOAD_CHECK_PERIOD: Duration = Duration::from_secs(2);

/// Whether `key` is one of the security keys (authentication or TLS). They
/// are read from the `-c` file and `--set` only: UPDATE_NAMESRV_CONFIG may
/// never change them (a remote request must not switch authentication off
/// or point the server at another certificate).
pub fn is_security_key(key: &str) -> bool {
    AuthKeys::KEYS.contains(&key)
        || rmq_transport::tls::KEYS.contains(&key)
        || key.starts_with("tls.")
}

/// The listener's TLS from the `tls.*` keys of `properties` (and the
/// `tls.config.file` they name), with every warning to log at start-up.
pub fn server_tls(
    properties: &BTreeMap<String, String>,
) -> Result<(ServerTls, Vec<String>), rmq_transport::tls::TlsError> {
    let settings = TlsSettings::from_properties(properties)?;
    let (tls, more) = ServerTls::from_settings(&settings)?;
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

/// Every [`RELOAD_CHECK_PERIOD`], reloads the server certificate and the
/// accounts file when their files changed. A broken new file keeps what is
/// in use; its error is logged once per change.
pub async fn reload_files(tls: Option<Arc<TlsServer>>, state: Arc<crate::state::Namesrv>) {
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
        state.auth.reload_if_changed();
    }
}
