//! GET_BROKER_CLUSTER_INFO, GET_BROKER_MEMBER_GROUP and the write-permission
//! requests (Java's `DefaultRequestProcessor`: getBrokerClusterInfo,
//! getBrokerMemberGroup, wipeWritePermOfBroker, addWritePermOfBroker).

use rmq_protocol::headers::{
    AddWritePermOfBrokerRequestHeader, AddWritePermOfBrokerResponseHeader,
    GetBrokerMemberGroupRequestHeader, WipeWritePermOfBrokerRequestHeader,
    WipeWritePermOfBrokerResponseHeader,
};
use rmq_protocol::{BrokerMemberGroup, Dialect, GetBrokerMemberGroupResponseBody, JavaJson};

use crate::answer::Answer;
use crate::error::HandlerResult;
use crate::route::SharedRoutes;

/// GET_BROKER_CLUSTER_INFO, always in the default dialect.
pub fn cluster_info(routes: &SharedRoutes) -> HandlerResult {
    let info = routes.read().cluster_info();
    Ok(Answer::success().with_body(info.to_json(Dialect::Default)))
}

/// GET_BROKER_MEMBER_GROUP: the group's id → address map, or `{}`.
pub fn member_group(
    routes: &SharedRoutes,
    header: GetBrokerMemberGroupRequestHeader,
) -> HandlerResult {
    let broker_addrs = routes
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
    Ok(Answer::success()
        .with_remark(JAVA_DEFAULT_RESPONSE_REMARK)
        .with_body(body.to_json(Dialect::Default)))
}

/// The remark of Java's `RemotingCommand.createResponseCommand` before a handler sets one.
pub(crate) const JAVA_DEFAULT_RESPONSE_REMARK: &str = "not set any response code";

/// WIPE_WRITE_PERM_OF_BROKER; the count is always in the response. Java
/// does not require brokerName: without one (`header` is `None`) no queue
/// data matches, and the count is 0.
pub fn wipe_write_perm(
    routes: &SharedRoutes,
    header: Option<WipeWritePermOfBrokerRequestHeader>,
) -> HandlerResult {
    let broker = header.as_ref().map(|header| header.broker_name.as_str());
    let count = broker.map_or(0, |broker| routes.write().wipe_write_perm(broker));
    tracing::info!(broker, topics = count, "write permission wiped");
    Ok(
        Answer::success().with_header(&WipeWritePermOfBrokerResponseHeader {
            wipe_topic_count: count,
        }),
    )
}

/// ADD_WRITE_PERM_OF_BROKER; the count is always in the response. As
/// WIPE_WRITE_PERM_OF_BROKER: without a brokerName the count is 0.
pub fn add_write_perm(
    routes: &SharedRoutes,
    header: Option<AddWritePermOfBrokerRequestHeader>,
) -> HandlerResult {
    let broker = header.as_ref().map(|header| header.broker_name.as_str());
    let count = broker.map_or(0, |broker| routes.write().add_write_perm(broker));
    tracing::info!(broker, topics = count, "write permission added");
    Ok(
        Answer::success().with_header(&AddWritePermOfBrokerResponseHeader {
            add_topic_count: count,
        }),
    )
}
