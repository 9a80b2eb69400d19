//! GET_CONTROLLER_CONFIG and UPDATE_CONTROLLER_CONFIG: served by every
//! node, like Java's (`ControllerRequestProcessor`), with the NameServer's
//! semantics for the same pair of requests (a `key=value` body, a black
//! list, the file persisted before the answer).

use rmq_protocol::properties;
use rmq_transport::durable::replace_file;
use rmq_wire::{RemotingCommand, ResponseCode};

use crate::config::ControllerConfig;
use crate::node::ControllerNode;
use crate::Answer;

/// GET_CONTROLLER_CONFIG: every option as sorted `key=value` lines, named
/// as Java prints them.
pub fn get(node: &ControllerNode) -> Answer {
    Answer {
        body: Some(node.config().java_text().into_bytes()),
        ..Answer::ok()
    }
}

/// UPDATE_CONTROLLER_CONFIG: refuses the whole update if an entry is
/// invalid (INVALID_PARAMETER naming the key: a control character, a value
/// its option does not take) or black-listed (the black list includes the
/// node's identity and files, and the authentication and TLS keys are never
/// changed remotely), else applies it and persists the whole
/// configuration, escaped, to `configStorePath` before answering.
pub fn update(node: &ControllerNode, request: &RemotingCommand) -> Answer {
    let Some(body) = request.body.as_deref() else {
        return Answer::ok();
    };
    let text = String::from_utf8_lossy(body);
    let Ok(updates) = properties::parse(&text) else {
        return Answer::error(ResponseCode::SystemError, "string2Properties error");
    };
    for (key, value) in &updates {
        if let Err(why) = ControllerConfig::check_update(key, value) {
            tracing::warn!(%why, "refused a controller configuration update");
            return Answer::error(ResponseCode::InvalidParameter, why);
        }
    }
    let mut next = node.config().clone();
    let black_list = next.black_list();
    if let Some(key) = updates
        .keys()
        .find(|key| black_list.contains(key) || rmq_transport::auth::is_security_key(key))
    {
        tracing::warn!(%key, "refused to update a black-listed controller config key");
        return Answer::error(
            ResponseCode::NoPermission,
            "Can not update config in black list.",
        );
    }
    next.apply_update(&updates);
    let path = next.config_store_path.clone();
    if let Err(error) = replace_file(std::path::Path::new(&path), next.to_file_text().as_bytes()) {
        tracing::error!(%path, %error, "persisting the controller configuration failed");
        return Answer::error(
            ResponseCode::SystemError,
            format!("failed to persist {path}: {error}"),
        );
    }
    tracing::info!(?updates, "controller configuration updated");
    node.update_config(|config| *config = next);
    Answer::ok()
}
