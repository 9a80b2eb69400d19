//! One `match` from request code to handler: each arm decodes the request
//! into its type (`crate::request`) and hands the handler the parts of the
//! state it uses. [`respond`] turns the handler's answer or error into the
//! response, the one place errors become responses. The transport-facing
//! service runs it, heavy requests in bounded pools (`dispatch/heavy.rs`).

mod heavy;

use std::sync::Arc;

use rmq_transport::{ConnectionInfo, DisconnectReason, Reply, Service};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};
use tokio::sync::OwnedSemaphorePermit;

pub use heavy::OVERLOAD_REMARK;
use heavy::{Admission, HeavyPool};

use crate::error::{Error, HandlerResult};
use crate::handlers::{broker, cluster, config, kv, route, topic};
use crate::metrics::{refusal, RemovalReason};
use crate::request::{self, optional_header, DataVersionQuery, RouteQuery, TopicRegistration};
use crate::route::UnitSelect;
use crate::security::Verdict;
use crate::state::Namesrv;

/// Serves one request against the state.
pub fn dispatch(
    state: &Namesrv,
    conn: &ConnectionInfo,
    request: &RemotingCommand,
) -> HandlerResult {
    use RequestCode as C;
    let Namesrv {
        routes,
        kv,
        config,
        clock,
        limits,
        push,
        ..
    } = state;
    match request.request_code() {
        C::GetRouteInfoByTopic => route::topic_route(
            routes,
            kv,
            config,
            state.cluster.as_deref(),
            clock.now(),
            RouteQuery::decode(request)?,
        ),
        C::RegisterBroker => broker::register(
            routes,
            kv,
            config,
            &state.notifier,
            state.cluster.as_deref(),
            &request::RegisterRequest::read(request, conn, limits)?,
            clock.now(),
        ),
        C::UnregisterBroker => {
            broker::unregister(routes, &state.unregistrations, optional_header(request)?)
        }
        C::BrokerHeartbeat => broker::heartbeat(
            routes,
            state.cluster.as_deref(),
            request.header()?,
            clock.now(),
        ),
        C::QueryDataVersion => broker::query_data_version(
            routes,
            state.cluster.as_deref(),
            DataVersionQuery::decode(request)?,
            clock.now(),
        ),
        C::GetBrokerClusterInfo => cluster::cluster_info(routes),
        C::GetBrokerMemberGroup => cluster::member_group(routes, request.header()?),
        C::WipeWritePermOfBroker => cluster::wipe_write_perm(routes, optional_header(request)?),
        C::AddWritePermOfBroker => cluster::add_write_perm(routes, optional_header(request)?),
        C::GetAllTopicListFromNameserver => topic::all(routes, config),
        C::GetTopicsByCluster => topic::by_cluster(routes, config, optional_header(request)?),
        C::GetSystemTopicListFromNs => topic::system(routes),
        C::GetUnitTopicList => topic::unit(routes, config, UnitSelect::Unit),
        C::GetHasUnitSubTopicList => topic::unit(routes, config, UnitSelect::HasUnitSub),
        C::GetHasUnitSubUnunitTopicList => {
            topic::unit(routes, config, UnitSelect::HasUnitSubNotUnit)
        }
        C::DeleteTopicInNamesrv => topic::delete(routes, request.header()?),
        C::RegisterTopicInNamesrv => topic::register(routes, TopicRegistration::decode(request)?),
        C::PutKvConfig => kv::put(kv, limits, push, request::kv_put(request)?),
        C::GetKvConfig => kv::get(kv, request.header()?),
        C::DeleteKvConfig => kv::delete(kv, limits, push, optional_header(request)?),
        C::GetKvlistByNamespace => kv::list(kv, limits, request.header()?),
        C::UpdateNamesrvConfig => config::update(config, push, request::config_update(request)?),
        C::GetNamesrvConfig => config::get(config),
        C::WaymarkSubscribeRoutes => push.subscribe(conn.handle(), request::subscription(request)?),
        C::WaymarkUnsubscribeRoutes => {
            push.unsubscribe(conn.id(), &request::unsubscription(request)?)
        }
        C::WaymarkPullRegistration => {
            crate::cluster::pull::answer(state.cluster.as_deref(), routes, request.header()?)
        }
        C::WaymarkGetClusterStatus => {
            crate::cluster::status::answer(state.cluster.as_deref(), routes)
        }
        // NOTIFY_MIN_BROKER_ID_CHANGE is sent by NameServers; the controller codes are served
        // by the controller, on its own port.
        _ => Err(Error::new(
            ResponseCode::RequestCodeNotSupported,
            format!(" request type {} not supported", request.code),
        )),
    }
}

/// The response to `request`: [`dispatch`]'s answer, or its error (counted
/// when it is a refusal of one of Waymark's limits, logged when it is a
/// SYSTEM_ERROR).
pub fn respond(
    state: &Namesrv,
    conn: &ConnectionInfo,
    request: &RemotingCommand,
) -> RemotingCommand {
    match dispatch(state, conn, request) {
        Ok(answer) => answer.into_response(request),
        Err(error) => error_response(state, conn, request, error),
    }
}

/// The response to `request` for `error`, counted when it is a refusal.
fn error_response(
    state: &Namesrv,
    conn: &ConnectionInfo,
    request: &RemotingCommand,
    error: Error,
) -> RemotingCommand {
    if let Some(kind) = error.refusal {
        state.metrics.refusals.refused(kind);
    }
    if error.code == ResponseCode::SystemError {
        tracing::warn!(peer = %conn.peer(), code = request.code, remark = ?error.remark, "request failed");
    }
    error.into_response(request)
}

/// The NameServer as a transport service.
#[derive(Debug, Clone)]
pub struct NamesrvService {
    state: Arc<Namesrv>,
    /// Registrations (REGISTER_BROKER, REGISTER_TOPIC_IN_NAMESRV).
    registrations: Arc<HeavyPool>,
    /// Answers to other NameServers' pulls (WAYMARK_PULL_REGISTRATION).
    pull_answers: Arc<HeavyPool>,
    /// KV puts and deletes, which wait for the journal's fsync.
    kv_writes: Arc<HeavyPool>,
    /// Configuration updates, which rewrite and fsync the config store.
    config_writes: Arc<HeavyPool>,
}

/// Slots of the KV-write pool. KV writers share the journal's fsyncs (group
/// commit, `kv/shared.rs`): every writer waiting when an fsync starts is
/// covered by the next one, so more slots make larger groups, not more disk
/// work. A slot is a blocking thread parked while its fsync runs.
const KV_WRITE_WORKERS: usize = 16;

/// Slots of the config-write pool: its writers are serialized by the
/// configuration's own lock anyway.
const CONFIG_WRITE_WORKERS: usize = 1;

impl NamesrvService {
    /// Serves `state`.
    ///
    /// Registrations run at most `defaultThreadPoolNums` at once (as Java's
    /// default processor pool), but never more than the cores this process
    /// may run on: more only takes CPU time away from the runtime's workers,
    /// which answer route queries (the cores count honours the process's CPU
    /// affinity). Each pool queues at most `defaultThreadPoolQueueCapacity`
    /// requests (Java's queue of that pool; 0 or less queues nothing);
    /// beyond, SYSTEM_BUSY.
    pub fn new(state: Arc<Namesrv>) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let (workers, capacity) = {
            let config = state.config.read();
            (
                usize::try_from(config.default_thread_pool_nums)
                    .unwrap_or(1)
                    .clamp(1, cores),
                usize::try_from(config.default_thread_pool_queue_capacity).unwrap_or(0),
            )
        };
        NamesrvService {
            state,
            registrations: HeavyPool::new("registration", workers, capacity),
            pull_answers: HeavyPool::new("cluster pull answer", workers, capacity),
            kv_writes: HeavyPool::new("kv write", KV_WRITE_WORKERS, capacity),
            config_writes: HeavyPool::new("config write", CONFIG_WRITE_WORKERS, capacity),
        }
    }

    /// The pool of a heavy request; `None` for a request answered inline.
    fn pool(&self, code: RequestCode) -> Option<&Arc<HeavyPool>> {
        match code {
            // Route subscriptions wait for the subscriptions' lock, which a
            // pass over every subscribed route may hold for a while.
            // Heartbeats and QUERY_DATA_VERSION take the table's write lock
            // (liveness only), which waits for a registration's slice or the
            // route snapshot's encoding: on a worker that wait held up every
            // route query queued behind it. Java runs them on the pool of
            // registrations too.
            RequestCode::RegisterBroker
            | RequestCode::BrokerHeartbeat
            | RequestCode::QueryDataVersion
            | RequestCode::RegisterTopicInNamesrv
            | RequestCode::WaymarkSubscribeRoutes
            | RequestCode::WaymarkUnsubscribeRoutes => Some(&self.registrations),
            // A pull answer collects the broker's topics from the whole
            // topic map (the table keeps no list per broker) unless the
            // list is kept from an earlier answer, and the first pull of
            // each re-registration finds none kept: a millisecond with
            // 10,000 topics, and a gossip round brings pulls of many
            // brokers at once. On a worker, route queries queued behind
            // them by the ten. Its own pool, so that pulls and the
            // brokers' registrations do not wait for each other.
            RequestCode::WaymarkPullRegistration => Some(&self.pull_answers),
            RequestCode::PutKvConfig | RequestCode::DeleteKvConfig => Some(&self.kv_writes),
            RequestCode::UpdateNamesrvConfig => Some(&self.config_writes),
            _ => None,
        }
    }
}

// Heavy requests are those whose work is large (decoding a registration
// body, rewriting thousands of queue datas) or waits for the disk (KV and
// config writes). They run on the blocking pool so that the runtime's workers
// stay free for route queries: a registration storm must not queue reads
// behind it, as Java keeps route queries on their own pool.

fn answer(state: &Namesrv, conn: &ConnectionInfo, request: &RemotingCommand) -> RemotingCommand {
    // Checked here, not before a heavy request is queued: verifying a
    // signature hashes the whole body, work for the pool, not for the
    // runtime's workers.
    if let Verdict::Refuse(refusal) = state.auth.check(conn, request) {
        return refusal;
    }
    respond(state, conn, request)
}

/// Runs a heavy request on the blocking pool once it holds `slot`.
async fn run_heavy(
    state: Arc<Namesrv>,
    conn: ConnectionInfo,
    request: RemotingCommand,
    slot: OwnedSemaphorePermit,
) -> Option<RemotingCommand> {
    let (peer, code) = (conn.peer(), request.code);
    let work = tokio::task::spawn_blocking(move || {
        let response = answer(&state, &conn, &request);
        drop(slot);
        response
    });
    Some(joined_answer(work.await, peer, code))
}

/// The answer of a heavy request's blocking task: a handler that panicked
/// there gets SYSTEM_ERROR naming the panic, never silence (the transport
/// only catches panics on its own tasks).
fn joined_answer(
    joined: Result<RemotingCommand, tokio::task::JoinError>,
    peer: std::net::SocketAddr,
    code: i32,
) -> RemotingCommand {
    match joined {
        Ok(response) => response,
        Err(error) => {
            let message = match error.try_into_panic() {
                Ok(panic) => rmq_transport::panic_message(panic.as_ref()),
                Err(error) => error.to_string(),
            };
            tracing::error!(%peer, code, %message, "request handler panicked");
            RemotingCommand::request(ResponseCode::SystemError, 0)
                .with_remark(format!("request handler panicked: {message}"))
        }
    }
}

impl Service for NamesrvService {
    fn call(&self, conn: &ConnectionInfo, request: RemotingCommand) -> Reply {
        let started = std::time::Instant::now();
        let code = request.request_code();
        if code == RequestCode::RegisterBroker {
            let body = request.body.as_ref().map_or(0, |body| body.len());
            self.state.metrics.registration(body);
        }
        match self.reply(conn, request) {
            Reply::Ready(response) => {
                let answered = response.as_ref().map(RemotingCommand::response_code);
                self.state
                    .metrics
                    .requests
                    .observe(code, answered, started.elapsed());
                Reply::Ready(response)
            }
            Reply::Pending(future) => {
                let state = self.state.clone();
                Reply::later(async move {
                    let response = future.await;
                    let answered = response.as_ref().map(RemotingCommand::response_code);
                    state
                        .metrics
                        .requests
                        .observe(code, answered, started.elapsed());
                    response
                })
            }
        }
    }

    fn on_connect(&self, conn: &ConnectionInfo) {
        self.state
            .connections
            .opened(conn.id().0, conn.handle().clone());
    }

    fn on_disconnect(&self, conn: &ConnectionInfo, reason: DisconnectReason) {
        self.state.connections.closed(conn.id().0);
        self.state.push.disconnected(conn.id());
        let unregistrations = self
            .state
            .routes
            .read_briefly()
            .connection_closed(conn.id().0);
        for unregistration in unregistrations {
            tracing::info!(
                peer = %conn.peer(),
                broker = %unregistration.key.addr,
                cluster = %unregistration.key.cluster,
                ?reason,
                "broker connection closed, unregistering"
            );
            self.state
                .unregistrations
                .submit(unregistration, RemovalReason::Close);
        }
    }
}

impl NamesrvService {
    /// The answer to one request: inline, or from a pool.
    fn reply(&self, conn: &ConnectionInfo, request: RemotingCommand) -> Reply {
        let Some(pool) = self.pool(request.request_code()) else {
            return Reply::ready(answer(&self.state, conn, &request));
        };
        let (state, conn) = (self.state.clone(), conn.clone());
        match pool.admit() {
            Admission::Run(slot) => Reply::later(run_heavy(state, conn, request, slot)),
            Admission::Wait(ticket) => {
                let pool = pool.name();
                Reply::later(async move {
                    let slot = ticket.slot().await?;
                    // A registration applied after its connection closed would
                    // re-add a broker whose connection-close unregistration
                    // already ran; nobody waits for any of these answers.
                    if conn.handle().is_closed() {
                        tracing::debug!(peer = %conn.peer(), code = request.code, pool, "requester gone while queued, dropping the request");
                        return None;
                    }
                    run_heavy(state, conn, request, slot).await
                })
            }
            Admission::Busy => {
                // The first refusal of a burst and every 1000th after it.
                let rejected = pool.rejected();
                if rejected % 1000 == 1 {
                    tracing::warn!(
                        peer = %conn.peer(),
                        code = request.code,
                        pool = pool.name(),
                        waiting = pool.waiting(),
                        rejected,
                        "too many requests and system thread pool busy, answering SYSTEM_BUSY"
                    );
                }
                let busy = Error::new(ResponseCode::SystemBusy, OVERLOAD_REMARK)
                    .counted_as(refusal::POOL_BUSY);
                Reply::ready(error_response(&state, &conn, &request, busy))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmq_protocol::{
        DataVersion, Dialect, JavaJson, RegisterBrokerBody, TopicConfig,
        TopicConfigSerializeWrapper,
    };
    use rmq_wire::SerializeType;

    use crate::{KvStore, NamesrvConfig};

    fn register_request() -> RemotingCommand {
        let topics = ["TopicA", "TopicB"]
            .map(|t| (t.to_owned(), TopicConfig::new(t)))
            .into_iter()
            .collect();
        let body = RegisterBrokerBody {
            filter_server_list: Some(Vec::new()),
            topic_config_serialize_wrapper: TopicConfigSerializeWrapper {
                data_version: DataVersion::new(1, 0, 100),
                topic_config_table: topics,
                ..TopicConfigSerializeWrapper::default()
            },
        };
        [
            ("brokerName", "broker-a"),
            ("brokerAddr", "127.0.0.1:10911"),
            ("clusterName", "DefaultCluster"),
            ("haServerAddr", "127.0.0.1:10912"),
            ("brokerId", "0"),
            ("bodyCrc32", "0"),
        ]
        .iter()
        .fold(
            RemotingCommand::request(RequestCode::RegisterBroker, 1),
            |r, (k, v)| r.with_ext(*k, *v),
        )
        .with_body(body.to_json(Dialect::Default))
    }

    #[tokio::test]
    async fn a_queued_registration_whose_connection_closed_is_dropped() {
        let dir = std::env::temp_dir().join(format!("waymark-dispatch-{}", std::process::id()));
        let mut config = NamesrvConfig::defaults(&dir, None);
        config.default_thread_pool_nums = 1;
        let kv = KvStore::load(&config.kv_config_path).unwrap();
        let state = Arc::new(Namesrv::new(config, kv).0);
        let service = NamesrvService::new(state.clone());
        let Admission::Run(slot) = service.registrations.admit() else {
            panic!("the only slot is free");
        };
        let addr = "127.0.0.1:1".parse().unwrap();
        let (gone, outbox) = ConnectionInfo::detached(addr, addr, SerializeType::Json);
        drop(outbox);
        let Reply::Pending(queued) = service.call(&gone, register_request()) else {
            panic!("a registration waits for its slot");
        };
        let queued = tokio::spawn(queued);
        drop(slot);
        assert!(queued.await.unwrap().is_none(), "nobody to answer");
        assert!(state.routes.read().all_topics().is_empty(), "not applied");

        // The same request from a live connection is applied.
        let (live, _outbox) = ConnectionInfo::detached(addr, addr, SerializeType::Json);
        let Reply::Pending(answer) = service.call(&live, register_request()) else {
            panic!("registrations run on the blocking pool");
        };
        let response = answer.await.expect("answered");
        assert_eq!(response.response_code(), ResponseCode::Success);
        assert_eq!(state.routes.read().all_topics().len(), 2);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_panic_on_the_blocking_pool_is_answered_system_error() {
        let joined = tokio::task::spawn_blocking(|| -> RemotingCommand {
            panic!("table invariant broken");
        })
        .await;
        let peer = "127.0.0.1:1".parse().unwrap();
        let response = joined_answer(joined, peer, 103);
        assert_eq!(response.response_code(), ResponseCode::SystemError);
        let remark = response.remark.unwrap_or_default();
        assert!(remark.contains("table invariant broken"), "{remark}");
    }
}
