//! One `match` from request code to handler, and the transport-facing
//! service that runs it and turns errors into responses. Heavy requests run
//! in bounded pools (`dispatch/heavy.rs`).

mod heavy;

use std::sync::Arc;

use rmq_transport::{ConnectionInfo, DisconnectReason, Reply, Service};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};
use tokio::sync::OwnedSemaphorePermit;

pub use heavy::OVERLOAD_REMARK;
use heavy::{Admission, HeavyPool};

use crate::error::{Error, HandlerResult};
use crate::handlers::{broker, cluster, config, kv, route, topic};
use crate::route::UnitSelect;
use crate::state::Namesrv;

/// Serves one request against the state.
pub fn dispatch(
    state: &Namesrv,
    conn: &ConnectionInfo,
    request: &RemotingCommand,
) -> HandlerResult {
    use RequestCode as C;
    match request.request_code() {
        C::GetRouteInfoByTopic => route::topic_route(state, request),
        C::RegisterBroker => broker::register(state, request, conn),
        C::UnregisterBroker => broker::unregister(state, request),
        C::BrokerHeartbeat => broker::heartbeat(state, request),
        C::QueryDataVersion => broker::query_data_version(state, request),
        C::GetBrokerClusterInfo => cluster::cluster_info(state, request),
        C::GetBrokerMemberGroup => cluster::member_group(state, request),
        C::WipeWritePermOfBroker => cluster::wipe_write_perm(state, request),
        C::AddWritePermOfBroker => cluster::add_write_perm(state, request),
        C::GetAllTopicListFromNameserver => topic::all(state, request),
        C::GetTopicsByCluster => topic::by_cluster(state, request),
        C::GetSystemTopicListFromNs => topic::system(state, request),
        C::GetUnitTopicList => topic::unit(state, request, UnitSelect::Unit),
        C::GetHasUnitSubTopicList => topic::unit(state, request, UnitSelect::HasUnitSub),
        C::GetHasUnitSubUnunitTopicList => {
            topic::unit(state, request, UnitSelect::HasUnitSubNotUnit)
        }
        C::DeleteTopicInNamesrv => topic::delete(state, request),
        C::RegisterTopicInNamesrv => topic::register(state, request),
        C::PutKvConfig => kv::put(state, request),
        C::GetKvConfig => kv::get(state, request),
        C::DeleteKvConfig => kv::delete(state, request),
        C::GetKvlistByNamespace => kv::list(state, request),
        C::UpdateNamesrvConfig => config::update(state, request),
        C::GetNamesrvConfig => config::get(state, request),
        // NOTIFY_MIN_BROKER_ID_CHANGE is sent by NameServers; the controller codes are served
        // by the controller, on its own port.
        _ => Err(Error::new(
            ResponseCode::RequestCodeNotSupported,
            format!(" request type {} not supported", request.code),
        )),
    }
}

/// The NameServer as a transport service.
#[derive(Debug, Clone)]
pub struct NamesrvService {
    state: Arc<Namesrv>,
    /// Registrations (REGISTER_BROKER, REGISTER_TOPIC_IN_NAMESRV).
    registrations: Arc<HeavyPool>,
    /// Writes that wait for an fsync (KV put and delete, config update).
    disk_writes: Arc<HeavyPool>,
}

/// Slots of the disk-write pool: one per store (KV, configuration), whose
/// writers are serialized by their own locks anyway.
const DISK_WRITE_WORKERS: usize = 2;

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
            disk_writes: HeavyPool::new("disk write", DISK_WRITE_WORKERS, capacity),
        }
    }

    /// The pool of a heavy request; `None` for a request answered inline.
    fn pool(&self, code: RequestCode) -> Option<&Arc<HeavyPool>> {
        match code {
            RequestCode::RegisterBroker | RequestCode::RegisterTopicInNamesrv => {
                Some(&self.registrations)
            }
            RequestCode::PutKvConfig
            | RequestCode::DeleteKvConfig
            | RequestCode::UpdateNamesrvConfig => Some(&self.disk_writes),
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
    match dispatch(state, conn, request) {
        Ok(response) => response,
        Err(error) => {
            if error.code == ResponseCode::SystemError {
                tracing::warn!(peer = %conn.peer(), code = request.code, remark = ?error.remark, "request failed");
            }
            error.into_response(request)
        }
    }
}

/// Runs a heavy request on the blocking pool once it holds `slot`.
async fn run_heavy(
    state: Arc<Namesrv>,
    conn: ConnectionInfo,
    request: RemotingCommand,
    slot: OwnedSemaphorePermit,
) -> Option<RemotingCommand> {
    let work = tokio::task::spawn_blocking(move || {
        let response = answer(&state, &conn, &request);
        drop(slot);
        response
    });
    match work.await {
        Ok(response) => Some(response),
        Err(error) => {
            tracing::error!(%error, "request handler failed");
            None
        }
    }
}

impl Service for NamesrvService {
    fn call(&self, conn: &ConnectionInfo, request: RemotingCommand) -> Reply {
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
                Reply::ready(
                    Error::new(ResponseCode::SystemBusy, OVERLOAD_REMARK).into_response(&request),
                )
            }
        }
    }

    fn on_connect(&self, conn: &ConnectionInfo) {
        self.state
            .connections
            .lock()
            .insert(conn.id().0, conn.handle().clone());
    }

    fn on_disconnect(&self, conn: &ConnectionInfo, reason: DisconnectReason) {
        self.state.connections.lock().remove(&conn.id().0);
        let unregistrations = self.state.routes.read().connection_closed(conn.id().0);
        for unregistration in unregistrations {
            tracing::info!(
                peer = %conn.peer(),
                broker = %unregistration.key.addr,
                cluster = %unregistration.key.cluster,
                ?reason,
                "broker connection closed, unregistering"
            );
            self.state.submit_unregistration(unregistration);
        }
    }
}
