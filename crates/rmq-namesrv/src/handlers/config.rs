//! UPDATE_NAMESRV_CONFIG and GET_NAMESRV_CONFIG (nameserver.md §2.19–2.20, §9).

use rmq_protocol::properties;
use rmq_wire::{RemotingCommand, ResponseCode};

use super::success;
use crate::config::NamesrvConfig;
use crate::error::{Error, HandlerResult};
use crate::state::Namesrv;
use rmq_transport::durable::replace_file;

/// GET_NAMESRV_CONFIG: every option as sorted `key=value` lines.
pub fn get(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    let text = state.config.read().to_text();
    Ok(success(request).with_body(text.into_bytes()))
}

/// UPDATE_NAMESRV_CONFIG: refuses the whole update if an entry is invalid
/// (INVALID_PARAMETER naming the key: a control character, a value its
/// option does not take) or black-listed, else applies it and persists the
/// whole configuration, escaped, to `configStorePath` before answering.
pub fn update(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    let Some(body) = request.body.as_deref() else {
        return Ok(success(request));
    };
    let text = String::from_utf8_lossy(body);
    let updates = properties::parse(&text).map_err(|_| Error::system("string2Properties error"))?;
    for (key, value) in &updates {
        if let Err(why) = NamesrvConfig::check_update(key, value) {
            tracing::warn!(%why, "refused a configuration update");
            return Err(Error::new(ResponseCode::InvalidParameter, why));
        }
    }
    if let Some(key) = updates
        .keys()
        .find(|key| state.black_list.contains(key) || crate::security::is_security_key(key))
    {
        tracing::warn!(%key, "refused to update a black-listed config key");
        return Err(Error::new(
            ResponseCode::NoPermission,
            "Can not update config in black list.",
        ));
    }
    let _serialized = state.config_write.lock();
    let mut next = state.config.read().clone();
    next.apply_update(&updates);
    let path = next.config_store_path.clone();
    replace_file(std::path::Path::new(&path), next.to_file_text().as_bytes()).map_err(|error| {
        tracing::error!(%path, %error, "persisting the configuration failed");
        Error::system(format!("failed to persist {path}: {error}"))
    })?;
    tracing::info!(?updates, "configuration updated");
    *state.config.write() = next;
    // supportActingMaster and orderMessageEnable change what routes say.
    state.push.recheck();
    Ok(success(request))
}
