//! `RouteClient`: the routing half of a Java `MQClientInstance`.
//!
//! Owns the instance's NameServer channel, its route cache and the watchers
//! of it (behind one lock), the update lock that serialises route updates
//! (Java's `lockNamesrv`), the producer lookup with the `TBW102` fallback
//! (`tryToFindTopicPublishInfo`), the send
//! fault strategy, and the background refresh ([`refresh`]). Request and
//! response shapes are [`fetch`]'s; every decision about what a route means
//! is in `route` and `view`.

mod fetch;
mod push;
mod refresh;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use rmq_protocol::TopicRouteData;
use tokio::sync::watch;

pub use fetch::{route_from_response, route_request};

use crate::config::RouteClientConfig;
use crate::error::RouteError;
use crate::nameserver::{ListUpdate, NameServerChannel, NameServerList};
use crate::push::PushState;
use crate::route::{cap_default_route, Applied, FoundBroker, RouteCache};
use crate::select::FaultStrategy;
use crate::view::TopicView;
use crate::MessageQueue;

/// What a watcher sees: the current view of a topic, `None` until the first
/// route arrives.
pub type RouteWatch = watch::Receiver<Option<Arc<TopicView>>>;

/// A handle on one client instance's routing. Clones share everything. The
/// background refresh (if [`started`](RouteClient::start)) ends when the
/// last clone is dropped or on [`shutdown`](RouteClient::shutdown).
#[derive(Clone)]
pub struct RouteClient {
    inner: Arc<Inner>,
}

struct Inner {
    config: RouteClientConfig,
    channel: NameServerChannel,
    state: Mutex<State>,
    update_lock: tokio::sync::Mutex<()>,
    fault: FaultStrategy,
    stop: watch::Sender<bool>,
    /// How route changes are followed (route push or polling).
    push_state: watch::Sender<PushState>,
    /// Bumped whenever the set of followed topics grows or shrinks, for
    /// the route push task.
    topics: watch::Sender<u64>,
}

/// The cache and its watchers: one aggregate, one lock.
#[derive(Default)]
struct State {
    cache: RouteCache,
    watchers: HashMap<String, watch::Sender<Option<Arc<TopicView>>>>,
}

impl State {
    fn notify(&mut self, topic: &str, view: &Arc<TopicView>) {
        if let Some(sender) = self.watchers.get(topic) {
            sender.send_replace(Some(view.clone()));
            if sender.receiver_count() == 0 {
                self.watchers.remove(topic);
            }
        }
    }
}

impl RouteClient {
    /// A client without background tasks: routes are fetched only when
    /// asked for (`update_route`, `publish_view`, `watch`, `refresh_all`).
    pub fn new(config: RouteClientConfig) -> RouteClient {
        let channel = NameServerChannel::new(config.channel.clone(), NameServerList::new())
            .secured(config.tls.clone(), config.credentials.clone());
        channel.update_list(config.namesrv_addrs.clone());
        RouteClient {
            inner: Arc::new(Inner {
                fault: FaultStrategy::new(config.send_latency_fault_enable),
                config,
                channel,
                state: Mutex::default(),
                update_lock: tokio::sync::Mutex::new(()),
                stop: watch::Sender::new(false),
                push_state: watch::Sender::new(PushState::Off),
                topics: watch::Sender::new(0),
            }),
        }
    }

    /// A client that also refreshes every subscribed and published topic
    /// every `poll_name_server_interval` (first after `poll_initial_delay`)
    /// and cleans offline brokers every `heartbeat_broker_interval`; with
    /// `route_push` (the default, not in zone mode) it also subscribes to
    /// those topics where the NameServer offers route push, so changes
    /// arrive as they happen.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub fn start(config: RouteClientConfig) -> RouteClient {
        let client = RouteClient::new(config);
        tokio::spawn(refresh::run(
            Arc::downgrade(&client.inner),
            client.inner.stop.subscribe(),
            client.inner.config.clone(),
        ));
        let config = &client.inner.config;
        if config.route_push && config.zone_mode != Some(true) {
            client.inner.push_state.send_replace(PushState::Connecting);
            tokio::spawn(push::run(
                Arc::downgrade(&client.inner),
                client.inner.stop.subscribe(),
                client.inner.topics.subscribe(),
            ));
        }
        client
    }

    /// How route changes are followed now, and as it changes.
    pub fn push_state(&self) -> watch::Receiver<PushState> {
        self.inner.push_state.subscribe()
    }

    /// Tells the route push task that the followed topics changed.
    fn topics_changed(&self) {
        self.inner.topics.send_modify(|count| *count += 1);
    }

    /// Stops the background refresh; the cache stays usable.
    pub fn shutdown(&self) {
        self.inner.stop.send_replace(true);
    }

    /// The options the client runs with.
    pub fn config(&self) -> &RouteClientConfig {
        &self.inner.config
    }

    /// Installs a new NameServer list (ignored if empty or the same set, else
    /// shuffled, as Java's `updateNameServerAddressList`).
    pub fn update_name_server_list(&self, addrs: Vec<String>) -> ListUpdate {
        self.inner.channel.update_list(addrs)
    }

    /// The NameServer list in its shuffled order.
    pub fn name_servers(&self) -> Vec<String> {
        self.inner.channel.addrs()
    }

    /// The NameServer currently chosen, if any.
    pub fn chosen_name_server(&self) -> Option<String> {
        self.inner.channel.chosen()
    }

    /// Java `getTopicRouteInfoFromNameServer`: one query, no caching.
    ///
    /// # Errors
    /// Transport errors, [`RouteError::Response`] for any non-success answer
    /// (TOPIC_NOT_EXIST: [`RouteError::is_topic_not_exist`]), [`RouteError::Body`].
    pub async fn fetch_route(&self, topic: &str) -> Result<TopicRouteData, RouteError> {
        let request = route_request(topic, &self.inner.config);
        let response = self
            .inner
            .channel
            .invoke(request, self.inner.config.mq_client_api_timeout)
            .await?;
        route_from_response(topic, &response)
    }

    /// Java `updateTopicRouteInfoFromNameServer(topic)`: fetches the route
    /// and stores it if it changed (or a producer/consumer lacks it).
    /// `Ok(true)` when the cache was updated. A non-success answer
    /// (TOPIC_NOT_EXIST included) keeps the cached route and gives
    /// `Ok(false)`, as does a busy update lock.
    ///
    /// # Errors
    /// Transport errors propagate ([`RouteError::is_transport`]); so do an
    /// unparsable body and a malformed order conf. The cache is unchanged.
    pub async fn update_route(&self, topic: &str) -> Result<bool, RouteError> {
        self.update(topic, false).await
    }

    async fn update(&self, topic: &str, borrow_default: bool) -> Result<bool, RouteError> {
        let inner = &*self.inner;
        let Ok(_guard) =
            tokio::time::timeout(inner.config.lock_timeout, inner.update_lock.lock()).await
        else {
            tracing::warn!(topic, "route update lock timed out");
            return Ok(false);
        };
        let fetched = if borrow_default {
            self.fetch_route(&inner.config.create_topic_key)
                .await
                .map(|r| cap_default_route(r, inner.config.default_topic_queue_nums))
        } else {
            self.fetch_route(topic).await
        };
        let route = match fetched {
            Ok(route) => route,
            Err(error @ RouteError::Response { .. }) => {
                if !topic.starts_with("%RETRY%") && topic != inner.config.create_topic_key {
                    tracing::warn!(topic, %error, "route not updated");
                }
                return Ok(false);
            }
            Err(error) => return Err(error),
        };
        self.store(topic, route)
    }

    /// A pushed route, stored as a fetched one is, under the update lock.
    async fn store_pushed(&self, topic: &str, route: TopicRouteData) -> Result<bool, RouteError> {
        let _guard = self.inner.update_lock.lock().await;
        self.store(topic, route)
    }

    /// Stores `route` if it changed (or a producer/consumer lacks it) and
    /// tells the topic's watchers.
    fn store(&self, topic: &str, route: TopicRouteData) -> Result<bool, RouteError> {
        let mut state = self.inner.state.lock();
        let applied = state.cache.apply(topic, route)?;
        if let Applied::Changed(view) = &applied {
            tracing::info!(topic, route = ?view.route, "topic route changed");
            state.notify(topic, view);
        }
        Ok(applied.updated())
    }

    /// One periodic round: [`update_route`](Self::update_route) for every
    /// subscribed and published topic, in order; the first error aborts the
    /// round, as in Java.
    ///
    /// # Errors
    /// The first error of the round.
    pub async fn refresh_all(&self) -> Result<(), RouteError> {
        let topics = self.inner.state.lock().cache.refresh_topics();
        for topic in topics {
            self.update_route(&topic).await?;
        }
        Ok(())
    }

    /// The cached view of `topic`, without fetching.
    pub fn route(&self, topic: &str) -> Option<Arc<TopicView>> {
        self.inner.state.lock().cache.view(topic)
    }

    /// Java `tryToFindTopicPublishInfo`: the cached view if it has
    /// queues; else the topic joins the refresh set and is fetched; if the
    /// NameServer does not know it, the `TBW102` route is borrowed (queue
    /// counts capped) and stored under `topic`.
    ///
    /// # Errors
    /// [`RouteError::NoRouteInfo`] when no view with queues results;
    /// transport errors of the fetches.
    pub async fn publish_view(&self, topic: &str) -> Result<Arc<TopicView>, RouteError> {
        {
            let mut state = self.inner.state.lock();
            match state.cache.view(topic) {
                Some(view) if view.publish.ok() => return Ok(view),
                _ => state.cache.add_published(topic),
            }
        }
        self.topics_changed();
        self.update(topic, false).await?;
        let view = match self.route(topic) {
            Some(view) => Some(view),
            None => {
                self.update(topic, true).await?;
                self.route(topic)
            }
        };
        match view {
            Some(view) if view.publish.ok() => Ok(view),
            _ => Err(RouteError::NoRouteInfo {
                topic: topic.to_owned(),
            }),
        }
    }

    /// Subscribes to `topic`'s route: the topic joins the refresh set (as a
    /// consumer subscription), and the receiver sees every *changed* route
    /// (unchanged refreshes are not signalled): pushed by the NameServer as
    /// it applies the change when the client was started with route push
    /// and the NameServer offers it, else at the next poll. Fetches once now if nothing
    /// is cached; a failure of that fetch is only logged.
    pub async fn watch(&self, topic: &str) -> RouteWatch {
        let receiver = {
            let mut state = self.inner.state.lock();
            state.cache.add_subscribed(topic);
            let current = state.cache.view(topic);
            state
                .watchers
                .entry(topic.to_owned())
                .or_insert_with(|| watch::Sender::new(current))
                .subscribe()
        };
        self.topics_changed();
        if receiver.borrow().is_none() {
            if let Err(error) = self.update_route(topic).await {
                tracing::warn!(topic, %error, "first route fetch of a watched topic failed");
            }
        }
        receiver
    }

    /// Drops the subscription of `topic`: it leaves the refresh set (unless
    /// published) and its watchers see the channel close. The route stays
    /// cached.
    pub fn unsubscribe(&self, topic: &str) {
        {
            let mut state = self.inner.state.lock();
            state.cache.remove_subscribed(topic);
            state.watchers.remove(topic);
        }
        self.topics_changed();
    }

    /// Picks the queue of one send attempt (Java
    /// `MQFaultStrategy.selectOneMessageQueue`) with the client's fault
    /// strategy. `None` only for a view without queues.
    pub fn select_queue(
        &self,
        view: &TopicView,
        last_broker: Option<&str>,
        reset_index: bool,
    ) -> Option<MessageQueue> {
        self.inner
            .fault
            .select(&view.publish, last_broker, reset_index, Instant::now())
    }

    /// The send fault strategy (to record outcomes or switch it on).
    pub fn fault_strategy(&self) -> &FaultStrategy {
        &self.inner.fault
    }

    /// Java `findBrokerAddressInPublish`: the master address of a broker.
    pub fn broker_addr_in_publish(&self, broker_name: &str) -> Option<String> {
        self.inner
            .state
            .lock()
            .cache
            .broker_addr_in_publish(broker_name)
    }

    /// Java `findBrokerAddressInSubscribe`: `broker_id`, else for a slave id
    /// the next id, else (unless `only_this`) the lowest id.
    pub fn broker_addr_in_subscribe(
        &self,
        broker_name: &str,
        broker_id: i64,
        only_this: bool,
    ) -> Option<FoundBroker> {
        self.inner
            .state
            .lock()
            .cache
            .broker_addr_in_subscribe(broker_name, broker_id, only_this)
    }

    /// Java `cleanOfflineBroker`, under the update lock (a busy lock skips
    /// the round). Returns the removed `(broker, address)` pairs.
    pub async fn clean_offline_brokers(&self) -> Vec<(String, String)> {
        let inner = &*self.inner;
        let Ok(_guard) =
            tokio::time::timeout(inner.config.lock_timeout, inner.update_lock.lock()).await
        else {
            return Vec::new();
        };
        let removed = inner.state.lock().cache.clean_offline_brokers();
        for (broker, addr) in &removed {
            tracing::info!(broker, addr, "offline broker address removed");
        }
        removed
    }
}

impl std::fmt::Debug for RouteClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RouteClient")
            .field("name_servers", &self.name_servers())
            .field("chosen", &self.chosen_name_server())
            .finish_non_exhaustive()
    }
}
