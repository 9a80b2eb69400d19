//! The error of route operations, split as Java splits it: transport
//! failures (`RemotingException`, which propagate out of a route update)
//! versus answers the NameServer gave (`MQClientException`, which leave the
//! cached route alone and make the update report "not updated").

use rmq_protocol::BodyError;
use rmq_transport::ClientError;
use rmq_wire::ResponseCode;

use crate::view::ViewError;

/// Java `ClientErrorCode.NO_NAME_SERVER_EXCEPTION`.
pub const NO_NAME_SERVER_EXCEPTION: i32 = 10004;
/// Java `ClientErrorCode.NOT_FOUND_TOPIC_EXCEPTION`.
pub const NOT_FOUND_TOPIC_EXCEPTION: i32 = 10005;

/// Why a route operation failed.
#[derive(Debug, thiserror::Error)]
pub enum RouteError {
    /// The NameServer address list is empty.
    #[error("No name server address, please set it")]
    NoNameServer,
    /// Connecting, writing or waiting for the answer failed. The channel is
    /// closed (timeouts: when enough time was left), so the next request
    /// goes to the next NameServer.
    #[error(transparent)]
    Transport(#[from] ClientError),
    /// The NameServer channel lock could not be had in time (Java's 3 s
    /// `namesrvChannelLock`).
    #[error("timed out waiting for the name server channel lock")]
    ChannelLockTimeout,
    /// The NameServer said GO_AWAY twice (it is shutting down).
    #[error("name server {addr} is going away")]
    GoAway {
        /// The NameServer.
        addr: String,
    },
    /// The NameServer answered with a non-success code, or SUCCESS without a
    /// body (Java `MQClientException(code, remark)`).
    #[error("name server answered {} ({code}): {}", ResponseCode::from(*code).java_name(), remark.as_deref().unwrap_or(""))]
    Response {
        /// The response code (17 = TOPIC_NOT_EXIST).
        code: i32,
        /// The remark.
        remark: Option<String>,
    },
    /// The route body is not valid fastjson.
    #[error("bad route body: {0}")]
    Body(#[from] BodyError),
    /// The route's order configuration is malformed.
    #[error(transparent)]
    View(#[from] ViewError),
    /// No queue to send to (Java "No route info of this topic", 10005).
    #[error("No route info of this topic: {topic}")]
    NoRouteInfo {
        /// The topic.
        topic: String,
    },
}

impl RouteError {
    /// A transport-class failure: Java's `RemotingException` family, which
    /// propagates out of a route update and aborts a refresh round.
    pub fn is_transport(&self) -> bool {
        matches!(
            self,
            RouteError::NoNameServer
                | RouteError::Transport(_)
                | RouteError::ChannelLockTimeout
                | RouteError::GoAway { .. }
        )
    }

    /// The NameServer does not know the topic (TOPIC_NOT_EXIST, 17).
    pub fn is_topic_not_exist(&self) -> bool {
        matches!(self, RouteError::Response { code, .. } if *code == i32::from(ResponseCode::TopicNotExist))
    }

    /// Java's client error code where one exists: the response code, 10004
    /// or 10005.
    pub fn code(&self) -> Option<i32> {
        match self {
            RouteError::Response { code, .. } => Some(*code),
            RouteError::NoNameServer => Some(NO_NAME_SERVER_EXCEPTION),
            RouteError::NoRouteInfo { .. } => Some(NOT_FOUND_TOPIC_EXCEPTION),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification() {
        let not_exist = RouteError::Response {
            code: 17,
            remark: Some("No topic route info".into()),
        };
        assert!(not_exist.is_topic_not_exist() && !not_exist.is_transport());
        assert_eq!(not_exist.code(), Some(17));
        assert_eq!(
            not_exist.to_string(),
            "name server answered TOPIC_NOT_EXIST (17): No topic route info"
        );
        assert!(RouteError::NoNameServer.is_transport());
        assert_eq!(RouteError::NoNameServer.code(), Some(10004));
        let none = RouteError::NoRouteInfo { topic: "T".into() };
        assert_eq!((none.code(), none.is_transport()), (Some(10005), false));
        assert!(RouteError::GoAway { addr: "x".into() }.is_transport());
    }
}
