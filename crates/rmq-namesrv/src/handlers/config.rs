//! UPDATE_NAMESRV_CONFIG and GET_NAMESRV_CONFIG (Java's
//! `DefaultRequestProcessor.updateConfig` and `getConfig`).

use std::collections::BTreeMap;

use rmq_wire::ResponseCode;

use crate::answer::Answer;
use crate::config::{SharedConfig, UpdateRefusal};
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

/// UPDATE_NAMESRV_CONFIG: `updates` (`None`: the request had no body)
/// refused whole if one names a black-listed key, has a value start-up
/// would refuse, or is one of Waymark's start-up keys; else applied and the
/// whole configuration persisted, escaped, to `configStorePath` before the
/// answer. Route subscribers are owed routes again: `supportActingMaster`
/// and `orderMessageEnable` change them.
///
/// # Errors
/// NO_PERMISSION for a black-listed key (Java's remark); INVALID_PARAMETER
/// naming the key and the rule for a bad value, or the key and the restart
/// it needs; SYSTEM_ERROR when the file could not be written. Nothing
/// changes then.
pub fn update(
    config: &SharedConfig,
    push: &RoutePush,
    updates: Option<BTreeMap<String, String>>,
) -> HandlerResult {
    let Some(updates) = updates else {
        return Ok(Answer::success());
    };
    config.update(&updates).map_err(|refusal| match refusal {
        UpdateRefusal::BlackListed { key } => {
            tracing::warn!(%key, "refused to update a black-listed config key");
            Error::new(
                ResponseCode::NoPermission,
                "Can not update config in black list.",
            )
        }
        UpdateRefusal::Invalid(_) | UpdateRefusal::NeedsRestart { .. } => {
            tracing::warn!(why = %refusal, "refused a configuration update");
            Error::new(ResponseCode::InvalidParameter, refusal.to_string())
        }
        UpdateRefusal::Write(error) => {
            tracing::error!(path = %error.path, error = %error.source, "persisting the configuration failed");
            Error::system(error.to_string())
        }
    })?;
    tracing::info!(?updates, "configuration updated");
    push.recheck();
    Ok(Answer::success())
}
