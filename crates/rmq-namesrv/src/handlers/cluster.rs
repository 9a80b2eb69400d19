//! GET_BROKER_CLUSTER_INFO, GET_BROKER_MEMBER_GROUP and the write-permission
//! requests (nameserver.md §2.6–2.8).

use rmq_protocol::headers::{
    AddWritePermOfBrokerRequestHeader, AddWritePermOfBrokerResponseHeader,
    GetBrokerMemberGroupRequestHeader, WipeWritePermOfBrokerRequestHeader,
    WipeWritePermOfBrokerResponseHeader,
};
use rmq_protocol::{BrokerMemberGroup, Dialect, GetBrokerMemberGroupResponseBody, JavaJson};
use rmq_wire::{RemotingCommand, ResponseCode};

use super::{header_if_complete, success};
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
    // Java builds this response from createResponseCommand's default and sets only the
    // code, so its "not set any response code" remark stays on a SUCCESS.
    Ok(success(request)
        .with_remark(JAVA_DEFAULT_RESPONSE_REMARK)
        .with_body(body.to_json(Dialect::Default)))
}

/// The remark of Java's `RemotingCommand.createResponseCommand` before a handler sets one.
pub(crate) const JAVA_DEFAULT_RESPONSE_REMARK: &str = "not set any response code";

/// WIPE_WRITE_PERM_OF_BROKER; the count is always in the response.
pub fn wipe_write_perm(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    // Java does not require brokerName: without one no queue data matches, the count is 0.
    let header = header_if_complete::<WipeWritePermOfBrokerRequestHeader>(request)?;
    let broker = header.as_ref().map(|header| header.broker_name.as_str());
    let count = broker.map_or(0, |broker| state.routes.write().wipe_write_perm(broker));
    tracing::info!(broker, topics = count, "write permission wiped");
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
    // As WIPE_WRITE_PERM_OF_BROKER: without a brokerName the count is 0.
    let header = header_if_complete::<AddWritePermOfBrokerRequestHeader>(request)?;
    let broker = header.as_ref().map(|header| header.broker_name.as_str());
    let count = broker.map_or(0, |broker| state.routes.write().add_write_perm(broker));
    tracing::info!(broker, topics = count, "write permission added");
    Ok(
        RemotingCommand::response_to(request, ResponseCode::Success).with_header(
            &AddWritePermOfBrokerResponseHeader {
                add_topic_count: count,
            },
        ),
    )
}
