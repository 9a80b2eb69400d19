//! One `match` from request code to handler, and the transport-facing
//! service that runs it and turns errors into responses.

use std::sync::Arc;

use rmq_transport::{ConnectionInfo, DisconnectReason, Reply, Service};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode};

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
        C::RegisterBroker => broker::register(state, request, conn.id().0),
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
    /// Bounds the heavy requests running on the blocking pool at once
    /// (`defaultThreadPoolNums`, as Java's default processor pool, but never
    /// more than the cores this process may run on).
    heavy: Arc<tokio::sync::Semaphore>,
}

impl NamesrvService {
    /// Serves `state`.
    pub fn new(state: Arc<Namesrv>) -> Self {
        // More heavy requests at once than cores only takes CPU time away from
        // the runtime's workers, which answer route queries; the cores count
        // honours the process's CPU affinity.
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let workers = usize::try_from(state.config.read().default_thread_pool_nums)
            .unwrap_or(1)
            .clamp(1, cores);
        NamesrvService {
            state,
            heavy: Arc::new(tokio::sync::Semaphore::new(workers)),
        }
    }
}

/// Requests whose work is large (decoding a registration body, rewriting
/// thousands of queue datas) or waits for the disk (KV and config writes).
/// They run on the blocking pool so that the runtime's workers stay free for
/// route queries: a registration storm must not queue reads behind it, as
/// Java keeps route queries on their own pool.
fn is_heavy(code: RequestCode) -> bool {
    matches!(
        code,
        RequestCode::RegisterBroker
            | RequestCode::RegisterTopicInNamesrv
            | RequestCode::PutKvConfig
            | RequestCode::DeleteKvConfig
            | RequestCode::UpdateNamesrvConfig
    )
}

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

impl Service for NamesrvService {
    fn call(&self, conn: &ConnectionInfo, request: RemotingCommand) -> Reply {
        if !is_heavy(request.request_code()) {
            return Reply::ready(answer(&self.state, conn, &request));
        }
        let (state, heavy, conn) = (self.state.clone(), self.heavy.clone(), conn.clone());
        Reply::later(async move {
            let _slot = heavy.acquire_owned().await.ok()?;
            let work = tokio::task::spawn_blocking(move || answer(&state, &conn, &request));
            match work.await {
                Ok(response) => Some(response),
                Err(error) => {
                    tracing::error!(%error, "request handler failed");
                    None
                }
            }
        })
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
