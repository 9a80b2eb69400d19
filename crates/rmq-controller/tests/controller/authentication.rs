//! Authenticated controller requests (`authenticationEnabled=true`): broker
//! requests need an account, operators' writes an admin one, reads stay
//! open, and Raft traffic is taken from the group's peers only. One node in
//! this process, with the same guard the binary builds.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use rmq_auth::Credentials;
use rmq_controller::server::Security;
use rmq_controller::{ControllerConfig, ControllerNode};
use rmq_transport::auth::{AuthKeys, Guard};
use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::{RequestCode, ResponseCode, SerializeType};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket};

const ACCOUNTS: &str = "accounts:\n  - accessKey: broker-key\n    secretKey: broker-secret\n  - accessKey: admin-key\n    secretKey: admin-secret\n    admin: true\n";

struct Running {
    addr: String,
    _node: Arc<ControllerNode>,
    _store: tempfile::TempDir,
    _stop: tokio::sync::oneshot::Sender<()>,
}

async fn start() -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let store = tempfile::tempdir().unwrap();
    let mut config = ControllerConfig::defaults(store.path(), None);
    for (key, value) in [
        ("controllerDLegerGroup", "group1"),
        ("controllerDLegerPeers", &format!("n0-{addr}")),
        ("controllerDLegerSelfId", "n0"),
        (
            "configStorePath",
            &store.path().join("controller.properties").to_string_lossy(),
        ),
    ] {
        assert!(config.set(key, value));
    }
    let accounts = store.path().join("acl.yml");
    std::fs::write(&accounts, ACCOUNTS).unwrap();
    let mut keys = AuthKeys::new();
    keys.enabled = true;
    keys.accounts_file = accounts.to_string_lossy().into_owned();
    let (guard, _) = Guard::from_keys(&keys, rmq_auth::CONTROLLER_REQUIREMENTS).unwrap();
    let node = ControllerNode::start(config, &store.path().join("raft"))
        .await
        .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let security = Security {
        guard,
        tls: Default::default(),
    };
    let server = node.clone();
    tokio::spawn(async move {
        let _ = rmq_controller::server::run(
            listener,
            server,
            SerializeType::Json,
            &Default::default(),
            security,
            async {
                let _ = stopped.await;
            },
        )
        .await;
    });
    let running = Running {
        addr,
        _node: node,
        _store: store,
        _stop: stop,
    };
    // A leader first: the broker requests below are served by the leader.
    let probe = client(&running.addr).await;
    let serving = async {
        loop {
            let answer = call(
                &probe,
                request(RequestCode::ControllerGetMetadataInfo, &[], None),
            )
            .await;
            if ext(&answer, "isLeader") == Some("true") {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(20), serving)
        .await
        .expect("the node leads");
    running
}

async fn signing(addr: &str, key: &str, secret: &str) -> RpcClient {
    let config = ClientConfig {
        request_hook: Some(Arc::new(Credentials::new(key, secret))),
        ..ClientConfig::default()
    };
    RpcClient::connect(addr, config).await.unwrap()
}

fn next_id() -> rmq_wire::RemotingCommand {
    request(
        RequestCode::ControllerGetNextBrokerId,
        &[
            ("clusterName", "DefaultCluster"),
            ("brokerName", "broker-a"),
        ],
        None,
    )
}

#[tokio::test]
async fn broker_requests_need_an_account_and_operator_writes_an_admin() {
    let running = start().await;
    let anonymous = client(&running.addr).await;
    let refused = call(&anonymous, next_id()).await;
    assert_eq!(
        refused.response_code(),
        ResponseCode::NoPermission,
        "{refused:?}"
    );
    assert!(refused
        .remark
        .unwrap_or_default()
        .contains("request code 1012"));
    // Reads stay open.
    let metadata = call(
        &anonymous,
        request(RequestCode::ControllerGetMetadataInfo, &[], None),
    )
    .await;
    assert_eq!(metadata.response_code(), ResponseCode::Success);

    let broker = signing(&running.addr, "broker-key", "broker-secret").await;
    let replica = Replica::join(&broker, "broker-a", "127.0.0.1:30911").await;
    let elected = call(&broker, replica.elect()).await;
    assert_ne!(
        elected.response_code(),
        ResponseCode::NoPermission,
        "{elected:?}"
    );

    let designated = replica.elect().with_ext("designateElect", "true");
    let by_broker = call(&broker, designated.clone()).await;
    assert_eq!(by_broker.response_code(), ResponseCode::NoPermission);
    assert!(by_broker.remark.unwrap_or_default().contains("admin"));
    let clean = request(
        RequestCode::CleanBrokerData,
        &[
            ("clusterName", "DefaultCluster"),
            ("brokerName", "broker-a"),
            ("brokerControllerIdsToClean", "1"),
        ],
        None,
    );
    assert_eq!(
        call(&broker, clean.clone()).await.response_code(),
        ResponseCode::NoPermission
    );

    let admin = signing(&running.addr, "admin-key", "admin-secret").await;
    assert_ne!(
        call(&admin, designated).await.response_code(),
        ResponseCode::NoPermission
    );
    assert_ne!(
        call(&admin, clean).await.response_code(),
        ResponseCode::NoPermission
    );
}

#[tokio::test]
async fn raft_traffic_from_outside_the_group_is_refused() {
    let running = start().await;
    // Any address of 127/8 reaches the loopback listener; the group's peer
    // is 127.0.0.1, so 127.0.0.2 is a stranger.
    let socket = TcpSocket::new_v4().unwrap();
    socket
        .bind("127.0.0.2:0".parse::<SocketAddr>().unwrap())
        .unwrap();
    let mut stream = socket
        .connect(running.addr.parse::<SocketAddr>().unwrap())
        .await
        .unwrap();
    let vote =
        rmq_wire::RemotingCommand::request(rmq_controller::node::raft::network::RAFT_VOTE, 7)
            .with_body(b"{}".to_vec());
    stream
        .write_all(&rmq_wire::frame::encode_to_bytes(&vote))
        .await
        .unwrap();
    let mut length = [0u8; 4];
    tokio::time::timeout(Duration::from_secs(5), stream.read_exact(&mut length))
        .await
        .expect("an answer")
        .unwrap();
    let mut rest = vec![0u8; u32::from_be_bytes(length) as usize];
    stream.read_exact(&mut rest).await.unwrap();
    let mut frame = length.to_vec();
    frame.extend_from_slice(&rest);
    let answer = rmq_wire::frame::decode(frame.into()).unwrap();
    assert_eq!(
        answer.response_code(),
        ResponseCode::NoPermission,
        "{answer:?}"
    );
    assert!(answer
        .remark
        .unwrap_or_default()
        .contains("controllerDLegerPeers"));
}

#[tokio::test]
async fn not_even_an_admin_changes_security_keys_remotely() {
    let running = start().await;
    let admin = signing(&running.addr, "admin-key", "admin-secret").await;
    for body in ["authenticationEnabled=false", "tls.server.mode=disabled"] {
        let update = request(RequestCode::UpdateControllerConfig, &[], Some(body));
        let answer = call(&admin, update).await;
        assert_ne!(answer.response_code(), ResponseCode::Success, "{body}");
    }
    let allowed = request(
        RequestCode::UpdateControllerConfig,
        &[],
        Some("electMasterMaxRetryCount=5"),
    );
    assert_eq!(
        call(&admin, allowed).await.response_code(),
        ResponseCode::Success
    );
}
