//! A controller group whose nodes take only TLS (`tls.server.mode=enforcing`):
//! the Raft traffic between them must use TLS too, as the connections a
//! Java server opens do when it enforces TLS. Three nodes in this process,
//! certificates made by the test.

use std::sync::Arc;
use std::time::Duration;

use rmq_controller::server::Security;
use rmq_controller::{ControllerConfig, ControllerNode};
use rmq_testkit::pki::{path, props, Pki};
use rmq_transport::tls::{ServerTls, TlsClient, TlsSettings};
use rmq_wire::SerializeType;
use tokio::net::TcpListener;

/// Starts `n` nodes enforcing TLS; `outgoing` is the TLS their own
/// connections use (`None`: plain).
async fn enforcing_group(
    pki: &Pki,
    n: usize,
    outgoing: Option<TlsClient>,
) -> (Vec<Arc<ControllerNode>>, Vec<tempfile::TempDir>) {
    let cert = pki.issue("node", "controller.test", &[]);
    let server_settings = TlsSettings::from_properties_with(
        &props(&[
            ("tls.server.mode", "enforcing"),
            ("tls.server.certPath", path(&cert.cert)),
            ("tls.server.keyPath", path(&cert.key)),
        ]),
        None,
    )
    .unwrap();
    let mut listeners = Vec::new();
    for _ in 0..n {
        listeners.push(TcpListener::bind("127.0.0.1:0").await.unwrap());
    }
    let peers = listeners
        .iter()
        .enumerate()
        .map(|(i, l)| format!("n{i}-{}", l.local_addr().unwrap()))
        .collect::<Vec<_>>()
        .join(";");
    let (mut nodes, mut stores) = (Vec::new(), Vec::new());
    for (i, listener) in listeners.into_iter().enumerate() {
        let store = tempfile::tempdir().unwrap();
        let mut config = ControllerConfig::defaults(store.path(), None);
        let config_path = store.path().join("controller.properties");
        for (key, value) in [
            ("controllerDLegerGroup", "group1"),
            ("controllerDLegerPeers", peers.as_str()),
            ("controllerDLegerSelfId", &format!("n{i}")),
            ("configStorePath", &config_path.to_string_lossy()),
        ] {
            assert!(config.set(key, value));
        }
        let node =
            ControllerNode::start_with_tls(config, &store.path().join("raft"), outgoing.clone())
                .await
                .unwrap();
        let (tls, _) = ServerTls::from_settings(&server_settings).unwrap();
        let security = Security {
            tls,
            ..Security::default()
        };
        let server = node.clone();
        tokio::spawn(async move {
            let limits = Default::default();
            let _ = rmq_controller::server::run(
                listener,
                server,
                SerializeType::Json,
                &limits,
                security,
                std::future::pending(),
            )
            .await;
        });
        nodes.push(node);
        stores.push(store);
    }
    (nodes, stores)
}

async fn leader_within(nodes: &[Arc<ControllerNode>], limit: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    while tokio::time::Instant::now() < deadline {
        if nodes.iter().any(|n| n.serving_since().is_some()) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raft_between_enforcing_nodes_runs_over_tls() {
    let pki = Pki::new("controller-raft");
    let settings = TlsSettings::from_properties_with(
        &props(&[("tls.client.trustCertPath", path(&pki.ca_path()))]),
        None,
    )
    .unwrap();
    let (client, _) = TlsClient::from_settings(&settings).unwrap();

    // Plain Raft traffic is refused by every peer: no leader can be elected.
    let (plain, _plain_stores) = enforcing_group(&pki, 3, None).await;
    assert!(
        !leader_within(&plain, Duration::from_secs(5)).await,
        "a leader was elected although every peer refuses plain connections"
    );
    for node in &plain {
        node.shutdown().await;
    }

    let (nodes, _stores) = enforcing_group(&pki, 3, Some(client)).await;
    assert!(
        leader_within(&nodes, Duration::from_secs(20)).await,
        "no leader within 20 s over TLS"
    );
}
