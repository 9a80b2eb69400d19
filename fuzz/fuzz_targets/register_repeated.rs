//! Fuzzes the REGISTER_BROKER shortcut for a body that repeats the broker's
//! last one but for its DataVersion (`rmq_namesrv::request::RepeatedBody`):
//! two registrations of one master, applied by a NameServer that takes the
//! shortcut where it can and by one that decodes every body in full, must
//! leave the same table and get the same responses.
//!
//! Input: a mode byte, a big-endian u16 length, the first body (that many
//! bytes), then what makes the second body:
//!
//! * mode `0`: the rest is the second body;
//! * mode `1`: the first body with its DataVersion's object (where the
//!   shortcut finds one) replaced by the rest, so that the shortcut is taken
//!   whenever the first body is of the shape it recognises;
//! * mode `2`: the first body with the byte at the rest's first two bytes
//!   (big-endian, modulo the length) xored with its third byte;
//! * mode `3`: the first body again, unchanged.
//!
//! Bit 7 of the mode sends the second registration under another broker
//! name, bit 6 under another HA address, bit 5 with
//! `deleteTopicWithBrokerRegistration`.
//!
//! Run from `fuzz/`:
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run register_repeated -- -max_total_time=60`
//! (append `corpus/register_repeated seeds/register_repeated` to start from a
//! 5.x broker's body and a new DataVersion).

#![no_main]

use std::net::SocketAddr;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rmq_namesrv::config::NamesrvConfig;
use rmq_namesrv::handlers::broker;
use rmq_namesrv::kv::KvStore;
use rmq_namesrv::request::RegisterRequest;
use rmq_namesrv::state::Namesrv;
use rmq_protocol::body_crc32;
use rmq_protocol::register::common;
use rmq_transport::ConnectionInfo;
use rmq_wire::{RemotingCommand, RequestCode, SerializeType};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Some((len, rest)) = rest.split_first_chunk::<2>() else {
        return;
    };
    let len = usize::from(u16::from_be_bytes(*len)).min(rest.len());
    let (first, rest) = rest.split_at(len);
    let second = match mode & 3 {
        0 => rest.to_vec(),
        1 => match common::head(first, usize::MAX) {
            Some(head) => [
                &first[..head.data_version_at.start],
                rest,
                &first[head.data_version_at.end..],
            ]
            .concat(),
            None => rest.to_vec(),
        },
        2 => {
            let mut second = first.to_vec();
            if let ([high, low, flip, ..], false) = (rest, second.is_empty()) {
                let at = usize::from(u16::from_be_bytes([*high, *low])) % second.len();
                second[at] ^= flip;
            }
            second
        }
        _ => first.to_vec(),
    };
    let delete_missing = mode & 0x20 != 0;
    let (shortcut, oracle) = (server(delete_missing), server(delete_missing));
    let requests = [
        request(first, "broker-a", "10.0.0.7:1"),
        request(
            &second,
            if mode & 0x80 != 0 {
                "broker-b"
            } else {
                "broker-a"
            },
            if mode & 0x40 != 0 {
                "10.0.0.8:1"
            } else {
                "10.0.0.7:1"
            },
        ),
    ];
    for (now, request) in (1..).zip(&requests) {
        let answered = register(&shortcut, request, now * 1_000, false);
        let expected = register(&oracle, request, now * 1_000, true);
        assert_eq!(answered, expected);
        assert_eq!(state_of(&shortcut), state_of(&oracle));
    }
});

fn server(delete_missing: bool) -> Namesrv {
    let dir = std::env::temp_dir().join("waymark-fuzz-register-repeated-unused");
    let mut config = NamesrvConfig::defaults(&dir, None);
    config.delete_topic_with_broker_registration = delete_missing;
    // No file there: the store starts empty, and a registration writes none.
    let kv = KvStore::load(&config.kv_config_path).expect("an absent store loads empty");
    Namesrv::new(config, kv).0
}

fn conn() -> &'static ConnectionInfo {
    static CONN: OnceLock<ConnectionInfo> = OnceLock::new();
    CONN.get_or_init(|| {
        let addr: SocketAddr = "127.0.0.1:1".parse().expect("an address");
        ConnectionInfo::detached(addr, addr, SerializeType::Json).0
    })
}

fn request(body: &[u8], name: &str, ha: &str) -> RemotingCommand {
    let crc = body_crc32(body).to_string();
    let mut request = RemotingCommand::request(RequestCode::RegisterBroker, 1)
        .with_ext("brokerName", name)
        .with_ext("brokerAddr", "10.0.0.1:10911")
        .with_ext("clusterName", "c")
        .with_ext("haServerAddr", ha)
        .with_ext("brokerId", "0")
        .with_ext("enableActingMaster", "false")
        .with_ext("compressed", "false")
        .with_ext("bodyCrc32", crc)
        .with_body(body.to_vec());
    request.version = 500;
    request
}

fn register(
    server: &Namesrv,
    request: &RemotingCommand,
    now: u64,
    in_full: bool,
) -> RemotingCommand {
    let answered = RegisterRequest::read(request, conn(), &server.limits).and_then(|read| {
        let (routes, kv, config, notifier) =
            (&server.routes, &server.kv, &server.config, &server.notifier);
        if in_full {
            broker::register_in_full(routes, kv, config, notifier, None, &read, now)
        } else {
            broker::register(routes, kv, config, notifier, None, &read, now)
        }
    });
    match answered {
        Ok(answer) => answer.into_response(request),
        Err(error) => error.into_response(request),
    }
}

/// The table but the fingerprints, which are seeded per table.
fn state_of(server: &Namesrv) -> String {
    let table = server.routes.read();
    let mut live: Vec<_> = table
        .live_brokers()
        .map(|(key, live)| {
            let mut live = live.clone();
            live.held_topics = None;
            (key.clone(), live)
        })
        .collect();
    live.sort_by(|a, b| a.0.cmp(&b.0));
    format!(
        "{:?} {live:?} {} {} {}",
        String::from_utf8_lossy(&table.snapshot()),
        table.generation(),
        table.topic_edits(),
        server.routes.changes(),
    )
}
