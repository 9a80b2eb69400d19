//! Hostile and malformed requests: every one gets an answer (never a
//! panic), and a broken frame closes only its own connection while other
//! brokers keep being served.

use std::time::Duration;

use crate::common::{call, client, group, leader, request};
use proptest::prelude::*;
use rmq_controller::core::decide::View;
use rmq_controller::core::request;
use rmq_controller::{LiveTable, Millis, Replicas};
use rmq_wire::{ExtFields, RemotingCommand, RequestCode};
use tokio::io::AsyncWriteExt;

const KEYS: &[&str] = &[
    "clusterName",
    "brokerName",
    "brokerId",
    "brokerAddress",
    "brokerAddr",
    "appliedBrokerId",
    "registerCheckCode",
    "masterBrokerId",
    "masterEpoch",
    "designateElect",
    "brokerControllerIdsToClean",
    "isCleanLivingBroker",
    "heartbeatTimeoutMills",
    "epoch",
    "maxOffset",
];

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("broker-a".to_owned()),
        Just("DefaultCluster".to_owned()),
        any::<i64>().prop_map(|n| n.to_string()),
        (0i64..4).prop_map(|n| n.to_string()),
        Just("1;2;x".to_owned()),
        Just("true".to_owned()),
        ".{0,40}",
    ]
}

fn requests() -> impl Strategy<Value = RemotingCommand> {
    (
        prop_oneof![(1001i32..=1013), Just(904)],
        prop::collection::btree_map(prop::sample::select(KEYS), value(), 0..10),
        prop::option::of(prop_oneof![
            Just(br#"{"syncStateSet":[1,2],"syncStateSetEpoch":1}"#.to_vec()),
            Just(br#"["broker-a"]"#.to_vec()),
            prop::collection::vec(any::<u8>(), 0..64),
        ]),
        prop_oneof![Just(0), Just(433), Just(515)],
    )
        .prop_map(|(code, ext, body, version)| {
            let mut command = RemotingCommand::request(code, 1);
            command.version = version;
            command.ext_fields = Some(
                ext.into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect::<ExtFields>(),
            );
            command.body = body.map(Into::into);
            command
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Sequences of arbitrary requests, applied as a leader would apply
    /// them: every one is answered, and the state stays consistent (every
    /// master registered and in its SSS).
    #[test]
    fn arbitrary_requests_are_answered_and_keep_the_state_consistent(sequence in prop::collection::vec(requests(), 1..30)) {
        let mut replicas = Replicas::new();
        let mut live = LiveTable::new();
        for (i, command) in sequence.iter().enumerate() {
            let now = Millis(i as u64 * 100);
            if command.request_code() == RequestCode::BrokerHeartbeat {
                let _ = request::heartbeat(&mut live, &mut command.clone(), Some(1), now);
                continue;
            }
            let decision = request::decide(
                View { replicas: &replicas, live: &live, now, elect_unclean: i % 2 == 0 },
                command,
            );
            prop_assert!(decision.answer.is_success() || decision.answer.remark.is_some() || decision.answer.code == rmq_wire::ResponseCode::ControllerMasterStillExist);
            for event in &decision.events {
                replicas.apply(event);
            }
            for set in replicas.sets() {
                if let Some(master) = set.master {
                    prop_assert!(set.replicas.contains_key(&master), "{set:?}");
                    prop_assert!(set.sync_state_set.contains(&master), "{set:?}");
                }
                prop_assert!(set.replicas.keys().all(|id| *id < set.next_id), "{set:?}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_frame_closes_only_its_connection() {
    let nodes = group(1, &[]).await;
    leader(&nodes, Duration::from_secs(10)).await;
    let healthy = client(&nodes[0].addr).await;
    let mut raw = tokio::net::TcpStream::connect(nodes[0].addr.as_str())
        .await
        .unwrap();
    // A length word no frame can have.
    raw.write_all(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0])
        .await
        .unwrap();
    let mut buf = [0u8; 16];
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        use tokio::io::AsyncReadExt;
        matches!(raw.read(&mut buf).await, Ok(0) | Err(_))
    })
    .await;
    assert_eq!(closed, Ok(true), "the broken connection is closed");
    let answer = call(
        &healthy,
        request(
            RequestCode::ControllerGetNextBrokerId,
            &[("clusterName", "c"), ("brokerName", "b")],
            None,
        ),
    )
    .await;
    assert_eq!(answer.ext("nextBrokerId"), Some("1"));
}

/// UPDATE_CONTROLLER_CONFIG with a line break in a value (`\n` in the
/// properties text) or a value its option does not take is refused as a
/// whole, naming the key; nothing changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_update_with_a_line_break_or_a_bad_value_is_refused() {
    let nodes = group(1, &[]).await;
    leader(&nodes, Duration::from_secs(10)).await;
    let admin = client(&nodes[0].addr).await;
    for (body, names) in [
        (
            r"enableElectUncleanMaster=true\ncontrollerStorePath=/tmp/evil",
            "enableElectUncleanMaster",
        ),
        (
            "scanInactiveMasterInterval=soon",
            "scanInactiveMasterInterval",
        ),
        ("notifyBrokerRoleChanged=maybe", "notifyBrokerRoleChanged"),
    ] {
        let answer = call(
            &admin,
            request(RequestCode::UpdateControllerConfig, &[], Some(body)),
        )
        .await;
        assert_eq!(
            answer.code,
            i32::from(rmq_wire::ResponseCode::InvalidParameter),
            "{body}: {answer:?}"
        );
        let remark = answer.remark.clone().unwrap_or_default();
        assert!(remark.contains(names), "{body}: {remark}");
    }
    let config = nodes[0].node().config().clone();
    assert!(!config.enable_elect_unclean_master);
    assert!(config.notify_broker_role_changed);
}
