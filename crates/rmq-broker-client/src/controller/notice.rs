//! Receiving NOTIFY_BROKER_ROLE_CHANGED (1008): the controller sends it
//! one-way, on a new connection, to the broker's own address after every
//! election, to every live member of the set (a Java broker's
//! `AdminBrokerProcessor` applies it). [`NoticeService`] is the transport
//! service for that address; [`serve_notices`] runs it on a listener.
//!
//! A broker that misses a notice converges through the periodic replica
//! sync, so a notice is only a shortcut: one that does not decode is
//! logged and dropped.

use std::future::Future;
use std::io;

use rmq_protocol::headers::NotifyBrokerRoleChangedRequestHeader;
use rmq_protocol::{JavaJson, SyncStateSet};
use rmq_transport::{ConnectionInfo, Reply, ServerConfig, Service};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};
use tokio::net::TcpListener;

use super::agent::WeakInner;
use super::state::{RoleDecision, Source};
use crate::error::ControllerError;

/// Reads a NOTIFY_BROKER_ROLE_CHANGED request: header `masterBrokerId`,
/// `masterAddress`, `masterEpoch`, `syncStateSetEpoch`, body `SyncStateSet`.
///
/// # Errors
/// [`ControllerError::BadResponse`] for an unreadable header or body.
pub fn decode_notice(request: &RemotingCommand) -> Result<RoleDecision, ControllerError> {
    let header: NotifyBrokerRoleChangedRequestHeader = request
        .header()
        .map_err(|e| ControllerError::BadResponse(e.to_string()))?;
    let mut set = match request.body.as_deref() {
        None | Some([]) => SyncStateSet::default(),
        Some(bytes) => SyncStateSet::from_json(bytes)
            .map_err(|e| ControllerError::BadResponse(e.to_string()))?,
    };
    if let Some(epoch) = header.sync_state_set_epoch {
        set.sync_state_set_epoch = epoch;
    }
    Ok(RoleDecision {
        master_id: header.master_broker_id,
        master_addr: header.master_address,
        master_epoch: header.master_epoch.unwrap_or(0),
        sync_state_set: set,
    })
}

/// Answers NOTIFY_BROKER_ROLE_CHANGED by handing it to its agent; every
/// other request gets REQUEST_CODE_NOT_SUPPORTED.
#[derive(Debug, Clone)]
pub struct NoticeService {
    agent: WeakInner,
}

impl NoticeService {
    pub(super) fn new(agent: WeakInner) -> NoticeService {
        NoticeService { agent }
    }
}

impl Service for NoticeService {
    fn call(&self, conn: &ConnectionInfo, request: RemotingCommand) -> Reply {
        if request.request_code() != RequestCode::NotifyBrokerRoleChanged {
            return RemotingCommand::response_to(&request, ResponseCode::RequestCodeNotSupported)
                .with_remark(format!(" request type {} not supported", request.code))
                .into();
        }
        match (decode_notice(&request), self.agent.upgrade()) {
            (Ok(decision), Some(agent)) => {
                tracing::debug!(peer = %conn.peer(), ?decision, "role change notice");
                agent.apply(&decision, Source::Notify);
            }
            (Ok(_), None) => {}
            (Err(error), _) => {
                tracing::warn!(peer = %conn.peer(), %error, "unreadable role change notice");
            }
        }
        RemotingCommand::response_to(&request, ResponseCode::Success).into()
    }
}

/// Serves `service` on `listener` (the broker's own address) until
/// `shutdown` resolves.
///
/// # Errors
/// As [`rmq_transport::run`].
pub async fn serve_notices(
    listener: TcpListener,
    service: NoticeService,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    rmq_transport::run(listener, service, ServerConfig::default(), shutdown).await
}
