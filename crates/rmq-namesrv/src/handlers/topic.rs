//! Topic lists, DELETE_TOPIC_IN_NAMESRV and REGISTER_TOPIC_IN_NAMESRV, as
//! Java's `DefaultRequestProcessor` answers them (getAllTopicListFromNameserver,
//! getTopicsByCluster, getSystemTopicListFromNs, the three unit topic lists,
//! deleteTopicInNamesrv, registerTopicToNamesrv).

use rmq_protocol::headers::{DeleteTopicFromNamesrvRequestHeader, GetTopicsByClusterRequestHeader};
use rmq_protocol::{Dialect, JavaJson, TopicList};

use crate::answer::Answer;
use crate::config::SharedConfig;
use crate::error::{Error, HandlerResult};
use crate::request::TopicRegistration;
use crate::route::{SharedRoutes, UnitSelect, TOMBSTONES_IN_ALL, TOMBSTONES_PER_GROUP};

fn disabled() -> Error {
    Error::system("disable")
}

fn topic_list(list: TopicList) -> Answer {
    Answer::success().with_body(list.to_json(Dialect::Default))
}

/// GET_ALL_TOPIC_LIST_FROM_NAMESERVER, if `enableAllTopicList`.
pub fn all(routes: &SharedRoutes, config: &SharedConfig) -> HandlerResult {
    if !config.read().enable_all_topic_list {
        return Err(disabled());
    }
    let body = routes.all_topics_body(
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
    Ok(Answer::success().with_body(body))
}

/// GET_TOPICS_BY_CLUSTER, if `enableTopicList`. Java looks a missing
/// cluster (`header` is `None`) up as `null` and finds nothing.
pub fn by_cluster(
    routes: &SharedRoutes,
    config: &SharedConfig,
    header: Option<GetTopicsByClusterRequestHeader>,
) -> HandlerResult {
    if !config.read().enable_topic_list {
        return Err(disabled());
    }
    let topics = header.map_or_else(Vec::new, |header| {
        routes.read().topics_of_cluster(&header.cluster)
    });
    Ok(topic_list(TopicList {
        broker_addr: None,
        topic_list: topics,
    }))
}

/// GET_SYSTEM_TOPIC_LIST_FROM_NS: cluster and broker names, one broker address.
pub fn system(routes: &SharedRoutes) -> HandlerResult {
    let (topics, broker_addr) = routes.read().system_topics();
    Ok(topic_list(TopicList {
        broker_addr,
        topic_list: topics,
    }))
}

/// The three unit topic lists, if `enableTopicList`.
pub fn unit(routes: &SharedRoutes, config: &SharedConfig, select: UnitSelect) -> HandlerResult {
    if !config.read().enable_topic_list {
        return Err(disabled());
    }
    let topics = routes.read().unit_topics(select);
    Ok(topic_list(TopicList {
        broker_addr: None,
        topic_list: topics,
    }))
}

/// DELETE_TOPIC_IN_NAMESRV.
pub fn delete(routes: &SharedRoutes, header: DeleteTopicFromNamesrvRequestHeader) -> HandlerResult {
    let dropped_marks = routes
        .write()
        .delete_topic(&header.topic, header.cluster_name.as_deref());
    tracing::info!(topic = %header.topic, cluster = ?header.cluster_name, "topic deleted");
    if dropped_marks > 0 {
        // A registration sent before those deletions can bring their topics back now.
        tracing::warn!(
            dropped_marks,
            per_group = TOMBSTONES_PER_GROUP,
            in_all = TOMBSTONES_IN_ALL,
            "oldest topic deletion marks dropped to stay within their bounds"
        );
    }
    Ok(Answer::success())
}

/// REGISTER_TOPIC_IN_NAMESRV: the topic gets the queue data of the request's
/// body, if it has one.
pub fn register(routes: &SharedRoutes, registration: TopicRegistration) -> HandlerResult {
    let TopicRegistration { topic, queue_datas } = registration;
    if let Some(queue_datas) = queue_datas {
        if routes.write().register_topic(&topic, queue_datas) {
            tracing::info!(%topic, "topic registered");
        }
    }
    Ok(Answer::success())
}
