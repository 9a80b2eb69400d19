//! Frame codec cost for the NameServer's hottest exchange, GET_ROUTEINFO_BY_TOPIC:
//! the request as a Java client sends it (one `topic` ext field) and its
//! success response (a header with neither ext fields nor remark, as Java
//! sends it, and a two-broker route body, opaque bytes here), each decoded
//! from and encoded to both header forms.
//!
//! Run: `cargo bench -p rmq-wire --bench codec -- --quick`.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rmq_wire::frame;
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode, SerializeType};

/// A standard-dialect route of two broker groups, each a master and a slave.
const ROUTE_BODY: &str = concat!(
    r#"{"brokerDatas":[{"brokerAddrs":{"0":"10.10.1.11:10911","1":"10.10.1.12:10911"},"#,
    r#""brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false},"#,
    r#"{"brokerAddrs":{"0":"10.10.2.11:10911","1":"10.10.2.12:10911"},"brokerName":"broker-b","#,
    r#""cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"#,
    r#""queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":8,"topicSysFlag":0,"writeQueueNums":8},"#,
    r#"{"brokerName":"broker-b","perm":6,"readQueueNums":8,"topicSysFlag":0,"writeQueueNums":8}]}"#
);

fn request(serialize_type: SerializeType) -> RemotingCommand {
    RemotingCommand::request(RequestCode::GetRouteInfoByTopic, 1)
        .with_ext("topic", "TopicTest")
        .with_serialize_type(serialize_type)
}

fn response(serialize_type: SerializeType) -> RemotingCommand {
    RemotingCommand::response_to(&request(serialize_type), ResponseCode::Success)
        .with_body(Bytes::from_static(ROUTE_BODY.as_bytes()))
        .with_serialize_type(serialize_type)
}

fn bench_command(c: &mut Criterion, name: &str, command: &RemotingCommand) {
    let encoded = frame::encode_to_bytes(command);
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes(encoded.len() as u64));
    group.bench_function("decode", |b| {
        b.iter(|| frame::decode(black_box(encoded.clone())).unwrap())
    });
    let mut dst = BytesMut::with_capacity(1024);
    group.bench_function("encode", |b| {
        b.iter(|| {
            dst.clear();
            frame::encode(black_box(command), &mut dst);
            black_box(dst.len())
        })
    });
    group.finish();
}

fn codec(c: &mut Criterion) {
    assert!(
        (450..=550).contains(&ROUTE_BODY.len()),
        "body is {} bytes",
        ROUTE_BODY.len()
    );
    bench_command(c, "route_request_json", &request(SerializeType::Json));
    bench_command(
        c,
        "route_request_rocketmq",
        &request(SerializeType::RocketMq),
    );
    bench_command(c, "route_response_json", &response(SerializeType::Json));
    bench_command(
        c,
        "route_response_rocketmq",
        &response(SerializeType::RocketMq),
    );
}

criterion_group!(benches, codec);
criterion_main!(benches);
