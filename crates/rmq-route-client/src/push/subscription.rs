//! One route subscription: a connection to one NameServer that subscribes
//! to topics and reads the pushes (docs/protocol-extensions.md).
//!
//! Owns the client half of the cursor rule: a cursor is adopted only from
//! a push that carries one, or from a subscribe answer once every push
//! queued before that answer has been read, so that the cursor held never
//! claims a route that was not read. A push lost on the way (the inbound
//! queue overflowed) shows as a gap in `seq`, and the subscription ends
//! with [`PushError::Lost`] rather than carry on without it.

use std::time::Duration;

use rmq_auth::Credentials;
use rmq_protocol::headers::{
    RouteChangedHeader, SubscribeRoutesRequestHeader, SubscribeRoutesResponseHeader,
    UnsubscribeRoutesRequestHeader,
};
use rmq_protocol::route_push::{join_topics, Cursor, PushKind};
use rmq_protocol::{BodyError, ClusterInfo, JavaJson, TopicRouteData};
use rmq_transport::tls::TlsClient;
use rmq_transport::{ClientConfig, ClientError, RequestHook, RpcClient};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};
use tokio::sync::mpsc;

/// Pushes read off the socket and not yet taken by [`RouteSubscription::next`];
/// beyond that they are dropped, which the sequence numbers reveal.
const INBOUND_CAPACITY: usize = 16_384;

/// How a subscription connects.
#[derive(Debug, Clone)]
pub struct PushConfig {
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// How long a subscribe or unsubscribe request waits for its answer.
    pub request_timeout: Duration,
    /// Ask for routes in the standard JSON dialect whatever the version.
    pub accept_standard_json_only: bool,
    /// TLS, as for route queries.
    pub tls: Option<TlsClient>,
    /// Signs the subscription requests, as route queries are signed.
    pub credentials: Option<Credentials>,
}

impl Default for PushConfig {
    fn default() -> Self {
        PushConfig {
            connect_timeout: Duration::from_secs(3),
            request_timeout: Duration::from_secs(3),
            accept_standard_json_only: false,
            tls: None,
            credentials: None,
        }
    }
}

/// What a push said.
#[derive(Debug, Clone, PartialEq)]
pub enum PushEvent {
    /// A topic's route as the NameServer now answers it; `None`: it answers
    /// TOPIC_NOT_EXIST.
    Route {
        /// The topic.
        topic: String,
        /// The route.
        route: Option<TopicRouteData>,
    },
    /// Cluster membership as GET_BROKER_CLUSTER_INFO now answers it.
    Cluster(ClusterInfo),
    /// Every change owed has been sent; the cursor moved.
    Synced,
}

/// Why a subscription failed or ended.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// The NameServer does not know route push (a Java NameServer):
    /// REQUEST_CODE_NOT_SUPPORTED. Poll instead.
    #[error("name server {addr} does not support route push")]
    NotSupported {
        /// The NameServer.
        addr: String,
    },
    /// The NameServer refused the subscription (a limit, a bad topic name).
    #[error("name server refused the subscription: {} ({code}): {remark}", ResponseCode::from(*code).java_name())]
    Refused {
        /// The response code.
        code: i32,
        /// The remark, naming the limit or topic.
        remark: String,
    },
    /// Connecting, sending or waiting failed, or the connection closed.
    #[error(transparent)]
    Transport(#[from] ClientError),
    /// The connection closed.
    #[error("route subscription connection closed")]
    Closed,
    /// A push was lost between the socket and this subscription.
    #[error("route push {expected} was lost (next read was {got}); subscribe again")]
    Lost {
        /// The sequence number expected.
        expected: i64,
        /// The one that came.
        got: i64,
    },
    /// A push that does not parse.
    #[error("bad route push: {0}")]
    Malformed(String),
    /// A pushed body that does not parse.
    #[error("bad route push body: {0}")]
    Body(#[from] BodyError),
}

/// A subscription on one connection.
#[derive(Debug)]
pub struct RouteSubscription {
    addr: String,
    client: RpcClient,
    inbound: mpsc::Receiver<RemotingCommand>,
    config: PushConfig,
    /// The sequence number of the last push read.
    last_seq: i64,
    cursor: Option<Cursor>,
    /// A subscribe answer's cursor, waiting for its push to be read.
    pending_cursor: Option<(i64, Cursor)>,
}

impl RouteSubscription {
    /// Connects to `addr`; nothing is subscribed yet.
    ///
    /// # Errors
    /// [`PushError::Transport`] when the connection cannot be made.
    pub async fn connect(addr: &str, config: PushConfig) -> Result<RouteSubscription, PushError> {
        let client_config = ClientConfig {
            connect_timeout: config.connect_timeout,
            inbound_capacity: INBOUND_CAPACITY,
            tls: config.tls.clone(),
            request_hook: config.credentials.clone().map(|credentials| {
                std::sync::Arc::new(credentials) as std::sync::Arc<dyn RequestHook>
            }),
            ..ClientConfig::default()
        };
        let client = RpcClient::connect(addr, client_config).await?;
        let inbound = client.take_inbound().ok_or(PushError::Closed)?;
        Ok(RouteSubscription {
            addr: addr.to_owned(),
            client,
            inbound,
            config,
            last_seq: 0,
            cursor: None,
            pending_cursor: None,
        })
    }

    /// The NameServer's address.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// The cursor to resume from: every change of the topics read so far
    /// up to it has been read.
    pub fn cursor(&self) -> Option<Cursor> {
        self.cursor
    }

    /// Subscribes to `topics` (and cluster membership when `cluster`). With
    /// `since`, a cursor from an earlier subscription under which these
    /// topics' routes were read, only routes changed after it are sent;
    /// without, all of them. The routes arrive through [`next`](Self::next).
    ///
    /// # Errors
    /// [`PushError::NotSupported`] from a NameServer without route push,
    /// [`PushError::Refused`], [`PushError::Transport`].
    pub async fn subscribe<'a>(
        &mut self,
        topics: impl IntoIterator<Item = &'a str>,
        cluster: bool,
        since: Option<Cursor>,
    ) -> Result<(), PushError> {
        let header = SubscribeRoutesRequestHeader {
            topics: join_topics(topics),
            cluster,
            cursor: since.map(|cursor| cursor.to_string()),
            accept_standard_json_only: self.config.accept_standard_json_only.then_some(true),
        };
        let request =
            RemotingCommand::request(RequestCode::WaymarkSubscribeRoutes, 0).with_header(&header);
        let response = self.answer(request).await?;
        let answer: SubscribeRoutesResponseHeader = response
            .header()
            .map_err(|error| PushError::Malformed(error.to_string()))?;
        if let Some(cursor) = answer.cursor.as_deref() {
            let cursor = Cursor::parse(cursor)
                .ok_or_else(|| PushError::Malformed(format!("cursor {cursor:?}")))?;
            self.pending_cursor = Some((answer.seq, cursor));
            self.adopt_pending();
        }
        Ok(())
    }

    /// Leaves `topics` (and cluster membership when `cluster`).
    ///
    /// # Errors
    /// As [`subscribe`](Self::subscribe).
    pub async fn unsubscribe<'a>(
        &mut self,
        topics: impl IntoIterator<Item = &'a str>,
        cluster: bool,
    ) -> Result<(), PushError> {
        let header = UnsubscribeRoutesRequestHeader {
            topics: join_topics(topics),
            cluster,
        };
        let request =
            RemotingCommand::request(RequestCode::WaymarkUnsubscribeRoutes, 0).with_header(&header);
        self.answer(request).await.map(drop)
    }

    async fn answer(&self, request: RemotingCommand) -> Result<RemotingCommand, PushError> {
        let response = self
            .client
            .invoke(request, self.config.request_timeout)
            .await?;
        match response.response_code() {
            ResponseCode::Success => Ok(response),
            ResponseCode::RequestCodeNotSupported => Err(PushError::NotSupported {
                addr: self.addr.clone(),
            }),
            _ => Err(PushError::Refused {
                code: response.code,
                remark: response.remark.unwrap_or_default(),
            }),
        }
    }

    /// The next push.
    ///
    /// # Errors
    /// [`PushError::Closed`] once the connection is gone, [`PushError::Lost`]
    /// on a gap in the sequence, [`PushError::Malformed`] / [`PushError::Body`]
    /// for a push that does not parse. After any error, subscribe again on
    /// a new connection, from [`cursor`](Self::cursor).
    pub async fn next(&mut self) -> Result<PushEvent, PushError> {
        loop {
            let Some(command) = self.inbound.recv().await else {
                return Err(PushError::Closed);
            };
            if command.request_code() != RequestCode::WaymarkRouteChanged {
                tracing::debug!(
                    code = command.code,
                    "unexpected request on a route subscription, ignored"
                );
                continue;
            }
            let header: RouteChangedHeader = command
                .header()
                .map_err(|error| PushError::Malformed(error.to_string()))?;
            if header.seq != self.last_seq + 1 {
                return Err(PushError::Lost {
                    expected: self.last_seq + 1,
                    got: header.seq,
                });
            }
            self.last_seq = header.seq;
            let event = match PushKind::parse(&header.kind) {
                Some(PushKind::Route) => PushEvent::Route {
                    topic: push_topic(&header)?,
                    route: Some(TopicRouteData::from_json(body(&command)?)?),
                },
                Some(PushKind::Gone) => PushEvent::Route {
                    topic: push_topic(&header)?,
                    route: None,
                },
                Some(PushKind::Cluster) => {
                    PushEvent::Cluster(ClusterInfo::from_json(body(&command)?)?)
                }
                Some(PushKind::Synced) => PushEvent::Synced,
                None => {
                    tracing::debug!(kind = header.kind, "unknown route push kind, skipped");
                    self.adopt_pending();
                    continue;
                }
            };
            if let Some(cursor) = header.cursor.as_deref() {
                let cursor = Cursor::parse(cursor)
                    .ok_or_else(|| PushError::Malformed(format!("cursor {cursor:?}")))?;
                self.advance(cursor);
            }
            self.adopt_pending();
            return Ok(event);
        }
    }

    fn advance(&mut self, cursor: Cursor) {
        if self
            .cursor
            .is_none_or(|held| held.instance != cursor.instance || held.version < cursor.version)
        {
            self.cursor = Some(cursor);
        }
    }

    fn adopt_pending(&mut self) {
        if let Some((seq, cursor)) = self.pending_cursor {
            if self.last_seq >= seq {
                self.pending_cursor = None;
                self.advance(cursor);
            }
        }
    }

    /// Closes the connection.
    pub fn close(&self) {
        self.client.close();
    }
}

impl Drop for RouteSubscription {
    fn drop(&mut self) {
        self.client.close();
    }
}

fn push_topic(header: &RouteChangedHeader) -> Result<String, PushError> {
    header
        .topic
        .clone()
        .ok_or_else(|| PushError::Malformed(format!("a {} push without a topic", header.kind)))
}

fn body(command: &RemotingCommand) -> Result<&[u8], PushError> {
    command
        .body
        .as_deref()
        .filter(|body| !body.is_empty())
        .ok_or_else(|| PushError::Malformed("a route push without a body".to_owned()))
}
