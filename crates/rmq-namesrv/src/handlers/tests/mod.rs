//! Handler tests through `dispatch`, without sockets: what each request is
//! answered with (code, remark, ext fields, body) and what it does to the
//! state. The same requests over real TCP against the binary are in
//! `tests/server/`.

mod broker_liveness_requests;
mod java_client_readiness;
mod java_differential;
mod java_request_processor;
mod register_broker_requests;
mod register_repeated;
mod route_requests;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use rmq_protocol::{
    body_crc32, DataVersion, Dialect, JavaJson, RegisterBrokerBody, TopicConfig,
    TopicConfigSerializeWrapper,
};
use rmq_transport::ConnectionInfo;
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode, SerializeType};

use crate::config::NamesrvConfig;
use crate::dispatch::respond;
use crate::housekeeping::Queues;
use crate::kv::KvStore;
use crate::limits::Limits;
use crate::state::Namesrv;

/// A state over a private temporary directory, a detached connection, and
/// the queues (kept, so unregistrations are accepted but not run).
pub(super) struct Fixture {
    pub state: Namesrv,
    pub queues: Queues,
    pub conn: ConnectionInfo,
    dir: PathBuf,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

static NEXT_DIR: AtomicU32 = AtomicU32::new(0);

impl Fixture {
    pub fn new() -> Fixture {
        Fixture::with(|_| {})
    }

    pub fn with(configure: impl FnOnce(&mut NamesrvConfig)) -> Fixture {
        Fixture::with_config_and_limits(configure, Limits::default())
    }

    pub fn with_limits(limits: Limits) -> Fixture {
        Fixture::with_config_and_limits(|_| {}, limits)
    }

    fn with_config_and_limits(
        configure: impl FnOnce(&mut NamesrvConfig),
        limits: Limits,
    ) -> Fixture {
        let dir = std::env::temp_dir().join(format!(
            "waymark-handlers-{}-{}",
            std::process::id(),
            NEXT_DIR.fetch_add(1, Ordering::Relaxed)
        ));
        let mut config = NamesrvConfig::defaults(&dir, Some("/opt/rocketmq".into()));
        configure(&mut config);
        let kv = KvStore::load(&config.kv_config_path).unwrap();
        let (state, queues) = Namesrv::with_limits(config, kv, limits);
        let addr: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let (conn, _outbox) = ConnectionInfo::detached(addr, addr, SerializeType::Json);
        Fixture {
            state,
            queues,
            conn,
            dir,
        }
    }

    /// The response to `request`, errors included, as the service sends it.
    pub fn call(&self, request: &RemotingCommand) -> RemotingCommand {
        respond(&self.state, &self.conn, request)
    }

    /// Registers a broker with a JSON body of `topics` and returns the response.
    pub fn register(&self, reg: &Reg<'_>) -> RemotingCommand {
        self.call(&reg.request())
    }
}

/// A request of `code` with the given ext fields.
pub(super) fn request(code: RequestCode, ext: &[(&str, &str)]) -> RemotingCommand {
    ext.iter()
        .fold(RemotingCommand::request(code, 1), |r, (k, v)| {
            r.with_ext(*k, *v)
        })
}

/// A REGISTER_BROKER request, as a 5.x broker sends it.
pub(super) struct Reg<'a> {
    pub cluster: &'a str,
    pub name: &'a str,
    pub addr: &'a str,
    pub id: i64,
    pub topics: Vec<TopicConfig>,
    pub version: DataVersion,
    pub extra: Vec<(&'a str, &'a str)>,
}

impl<'a> Reg<'a> {
    pub fn master(name: &'a str, addr: &'a str, topics: &[&str]) -> Reg<'a> {
        Reg {
            cluster: "DefaultCluster",
            name,
            addr,
            id: 0,
            topics: topics.iter().map(|t| TopicConfig::new(*t)).collect(),
            version: DataVersion::new(1, 0, 100),
            extra: Vec::new(),
        }
    }

    pub fn body(&self) -> Vec<u8> {
        RegisterBrokerBody {
            filter_server_list: Some(Vec::new()),
            topic_config_serialize_wrapper: TopicConfigSerializeWrapper {
                data_version: self.version,
                topic_config_table: self
                    .topics
                    .iter()
                    .map(|t| (t.topic_name.clone(), t.clone()))
                    .collect(),
                ..TopicConfigSerializeWrapper::default()
            },
        }
        .to_json(Dialect::Default)
    }

    pub fn request(&self) -> RemotingCommand {
        let body = self.body();
        let id = self.id.to_string();
        let crc = body_crc32(&body).to_string();
        let mut ext = vec![
            ("brokerName", self.name),
            ("brokerAddr", self.addr),
            ("clusterName", self.cluster),
            ("haServerAddr", "127.0.0.1:10912"),
            ("brokerId", id.as_str()),
            ("enableActingMaster", "false"),
            ("compressed", "false"),
            ("bodyCrc32", crc.as_str()),
        ];
        ext.extend(self.extra.iter().copied());
        request(RequestCode::RegisterBroker, &ext).with_body(body)
    }
}

/// The response code.
pub(super) fn code(response: &RemotingCommand) -> ResponseCode {
    response.response_code()
}

/// The body as text.
pub(super) fn body_text(response: &RemotingCommand) -> String {
    String::from_utf8(response.body.as_deref().unwrap_or_default().to_vec()).unwrap()
}
