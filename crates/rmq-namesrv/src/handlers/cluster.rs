//! GET_BROKER_CLUSTER_INFO, GET_BROKER_MEMBER_GROUP and the write-permission
//! requests (nameserver.md §2.6–2.8).

use rmq_protocol::headers::{
    AddWritePermOfBrokerRequestHeader, AddWritePermOfBrokerResponseHeader,
    GetBrokerMemberGroupRequestHeader, WipeWritePermOfBrokerRequestHeader,
    WipeWritePermOfBrokerResponseHeader,
};
use rmq_protocol::{BrokerMemberGroup, Dialect, GetBrokerMemberGroupResponseBody, JavaJson};
use rmq_wire::{RemotingCommand, ResponseCode};

use super::success;
use crate::error::HandlerResult;
use crate::state::Namesrv;

/// GET_BROKER_CLUSTER_INFO, always in the default dialect.
pub fn cluster_info(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    let info = state.routes.read().cluster_info();
    Ok(success(request).with_body(info.to_json(Dialect::Default)))
}

/// GET_BROKER_MEMBER_GROUP: the group's id → address map, or `{}`.
pub fn member_group(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    let header: GetBrokerMemberGroupRequestHeader = request.header()?;
    let broker_addrs = state
        .routes
        .read()
        .group(&header.broker_name)
        .map(|group| group.addrs.clone())
        .unwrap_or_default();
    let body = GetBrokerMemberGroupResponseBody {
        broker_member_group: BrokerMemberGroup {
            broker_addrs,
            broker_name: header.broker_name,
            cluster: header.cluster_name,
        },
    };
    Ok(success(request).with_body(body.to_json(Dialect::Default)))
}

/// WIPE_WRITE_PERM_OF_BROKER; the count is always in the response.
pub fn wipe_write_perm(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    let header: WipeWritePermOfBrokerRequestHeader = request.header()?;
    let count = state.routes.write().wipe_write_perm(&header.broker_name);
    tracing::info!(broker = %header.broker_name, topics = count, "write permission wiped");
    Ok(
        RemotingCommand::response_to(request, ResponseCode::Success).with_header(
            &WipeWritePermOfBrokerResponseHeader {
                wipe_topic_count: count,
            },
        ),
    )
}

/// ADD_WRITE_PERM_OF_BROKER; the count is always in the response.
pub fn add_write_perm(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    let header: AddWritePermOfBrokerRequestHeader = request.header()?;
    let count = state.routes.write().add_write_perm(&header.broker_name);
    tracing::info!(broker = %header.broker_name, topics = count, "write permission added");
    Ok(
        RemotingCommand::response_to(request, ResponseCode::Success).with_header(
            &AddWritePermOfBrokerResponseHeader {
                add_topic_count: count,
            },
        ),
    )
}
