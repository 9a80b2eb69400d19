//! UPDATE_NAMESRV_CONFIG and GET_NAMESRV_CONFIG (Java's
//! `DefaultRequestProcessor.updateConfig` and `getConfig`).

use std::collections::BTreeMap;

use rmq_wire::ResponseCode;

use crate::answer::Answer;
use crate::config::SharedConfig;
use crate::error::{Error, HandlerResult};
use crate::push::RoutePush;

/// GET_NAMESRV_CONFIG: every option as sorted `key=value` lines, a secret's
/// value (`clusterSecretKey`, say) shown as `***` as the start-up log and
/// the HTTP API show it: anyone allowed to read the configuration would
/// otherwise hold the cluster's credentials.
pub fn get(config: &SharedConfig) -> HandlerResult {
    let text: String = config
        .read()
        .to_properties()
        .iter()
        .map(|(key, value)| {
            let shown = if crate::http::is_secret(key) && !value.is_empty() {
                "***"
            } else {
                value.as_str()
            };
            format!("{key}={shown}\n")
        })
        .collect();
    Ok(Answer::success().with_body(text.into_bytes()))
}

/// UPDATE_NAMESRV_CONFIG: `updates` (each already checked; `None`: the
/// request had no body) refused whole if one names a black-listed key, else
/// applied and the whole configuration persisted, escaped, to
/// `configStorePath` before the answer. Route subscribers are owed routes
/// again: `supportActingMaster` and `orderMessageEnable` change them.
///
/// # Errors
/// NO_PERMISSION for a black-listed key; SYSTEM_ERROR when the file could
/// not be written (nothing changed then).
pub fn update(
    config: &SharedConfig,
    push: &RoutePush,
    updates: Option<BTreeMap<String, String>>,
) -> HandlerResult {
    let Some(updates) = updates else {
        return Ok(Answer::success());
    };
    if let Some(key) = updates.keys().find(|key| config.is_black_listed(key)) {
        tracing::warn!(%key, "refused to update a black-listed config key");
        return Err(Error::new(
            ResponseCode::NoPermission,
            "Can not update config in black list.",
        ));
    }
    config.update(&updates).map_err(|error| {
        tracing::error!(path = %error.path, error = %error.source, "persisting the configuration failed");
        Error::system(error.to_string())
    })?;
    tracing::info!(?updates, "configuration updated");
    push.recheck();
    Ok(Answer::success())
}
