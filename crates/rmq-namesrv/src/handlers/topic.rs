//! Topic lists, DELETE_TOPIC_IN_NAMESRV and REGISTER_TOPIC_IN_NAMESRV
//! (nameserver.md §2.9–2.14).

use rmq_protocol::headers::{
    DeleteTopicFromNamesrvRequestHeader, GetTopicsByClusterRequestHeader,
    RegisterTopicRequestHeader,
};
use rmq_protocol::{Dialect, JavaJson, TopicList, TopicRouteData};
use rmq_wire::{HeaderError, RemotingCommand};

use super::{success, validate};
use crate::error::{Error, HandlerResult};
use crate::route::UnitSelect;
use crate::state::Namesrv;

fn disabled() -> Error {
    Error::system("disable")
}

fn topic_list(request: &RemotingCommand, list: TopicList) -> RemotingCommand {
    success(request).with_body(list.to_json(Dialect::Default))
}

/// GET_ALL_TOPIC_LIST_FROM_NAMESERVER, if `enableAllTopicList`.
pub fn all(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    if !state.config.read().enable_all_topic_list {
        return Err(disabled());
    }
    let body = state.routes.all_topics_body(
        |table| table.all_topics(),
        |topics| {
            TopicList {
                broker_addr: None,
                topic_list: topics,
            }
            .to_json(Dialect::Default)
            .into()
        },
    );
    Ok(success(request).with_body(body))
}

/// GET_TOPICS_BY_CLUSTER, if `enableTopicList` (checked before decoding).
pub fn by_cluster(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    if !state.config.read().enable_topic_list {
        return Err(disabled());
    }
    // Java looks a missing cluster up as `null` and finds nothing.
    let topics = match request.header::<GetTopicsByClusterRequestHeader>() {
        Ok(header) => state.routes.read().topics_of_cluster(&header.cluster),
        Err(HeaderError::Missing(_)) => Vec::new(),
        Err(error) => return Err(error.into()),
    };
    Ok(topic_list(
        request,
        TopicList {
            broker_addr: None,
            topic_list: topics,
        },
    ))
}

/// GET_SYSTEM_TOPIC_LIST_FROM_NS: cluster and broker names, one broker address.
pub fn system(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    let (topics, broker_addr) = state.routes.read().system_topics();
    Ok(topic_list(
        request,
        TopicList {
            broker_addr,
            topic_list: topics,
        },
    ))
}

/// The three unit topic lists, if `enableTopicList`.
pub fn unit(state: &Namesrv, request: &RemotingCommand, select: UnitSelect) -> HandlerResult {
    if !state.config.read().enable_topic_list {
        return Err(disabled());
    }
    let topics = state.routes.read().unit_topics(select);
    Ok(topic_list(
        request,
        TopicList {
            broker_addr: None,
            topic_list: topics,
        },
    ))
}

/// DELETE_TOPIC_IN_NAMESRV.
pub fn delete(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    let header: DeleteTopicFromNamesrvRequestHeader = request.header()?;
    state
        .routes
        .write()
        .delete_topic(&header.topic, header.cluster_name.as_deref());
    tracing::info!(topic = %header.topic, cluster = ?header.cluster_name, "topic deleted");
    Ok(success(request))
}

/// REGISTER_TOPIC_IN_NAMESRV: only the body's `queueDatas` are used. Unlike
/// Java, a topic name or queue count `validate` refuses is answered with
/// SYSTEM_ERROR and changes nothing.
pub fn register(state: &Namesrv, request: &RemotingCommand) -> HandlerResult {
    let header: RegisterTopicRequestHeader = request.header()?;
    if let Some(body) = request.body.as_deref() {
        let route = TopicRouteData::from_json(body)?;
        if !route.queue_datas.is_empty() {
            validate::topic_name(&header.topic)?;
        }
        for queue in &route.queue_datas {
            validate::queue_nums(&header.topic, queue.read_queue_nums, queue.write_queue_nums)?;
        }
        if state
            .routes
            .write()
            .register_topic(&header.topic, route.queue_datas)
        {
            tracing::info!(topic = %header.topic, "topic registered");
        }
    }
    Ok(success(request))
}
