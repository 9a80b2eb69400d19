//! Writes frames encoded by rmq-wire for the Java decode test
//! (`interop/java`, `RustFramesDecodeTest`): `cargo run -p rmq-wire --example emit_frames -- DIR`.
//!
//! For every frame it writes `DIR/<name>.bin` (the whole frame, length prefix
//! included) and `DIR/<name>.expect`, a Java `.properties` file stating what the
//! real `RemotingCommand.decode` must see:
//!
//! ```text
//! serializeType=JSON|ROCKETMQ   code= flag= opaque= version= language=<Java enum name>
//! remark=<text>                 only when Java must see a non-null remark
//! ext.map=null|present|absent   null: no map; present: a map; absent: null, or only null values
//! ext.count=<n>                 entries Java must see with a non-null value
//! ext.<key>=<value>             each of them
//! ext.nulls=<k1>,<k2>           keys that must be missing or null
//! body.length=<n>  body.fnv1a32=<hex>
//! ```
//!
//! The expectations follow Java's decoders, not ours: in a ROCKETMQ header an
//! empty string (remark, ext value) reads back as null.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rmq_wire::frame;
use rmq_wire::{
    ExtFields, LanguageCode, RemotingCommand, RequestCode, ResponseCode, SerializeType,
};

/// Quotes, backslash, slash, every named control escape, NUL and other C0
/// controls, DEL, C1 controls, U+2028/9, BMP and astral non-ASCII.
const STRANGE: &str = "q\"uote b\\ack s/lash \u{e9}\u{4e2d}\u{1f600} \u{8}\t\n\u{c}\r\u{0}\u{1}\u{1f}\u{7f}\u{85}\u{9f}\u{2028}\u{2029} <tag>&'()";

/// The RegisterBrokerBody of one topic as a 5.x Java broker writes it (449
/// bytes, the body of the `103_register_broker` Java vectors).
const REGISTER_BODY: &str = r#"{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":3,"stateVersion":0,"timestamp":1700000000000},"mappingDataVersion":{"counter":0,"stateVersion":0,"timestamp":1700000000000},"topicConfigTable":{"TopicTest":{"attributes":{},"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":4}},"topicQueueMappingDetailMap":{},"topicQueueMappingInfoMap":{}}}"#;

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: emit_frames DIR");
        return ExitCode::from(2);
    };
    if let Err(err) = run(&dir) {
        eprintln!("emit_frames: {}: {err}", dir.display());
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

fn run(dir: &Path) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    let frames = frames();
    for (name, command) in &frames {
        for form in [SerializeType::Json, SerializeType::RocketMq] {
            if form == SerializeType::RocketMq && !fits_binary(command) {
                continue;
            }
            let command = command.clone().with_serialize_type(form);
            let stem = format!("{name}_{}", form.name().to_ascii_lowercase());
            fs::write(
                dir.join(format!("{stem}.bin")),
                frame::encode_to_bytes(&command),
            )?;
            fs::write(
                dir.join(format!("{stem}.expect")),
                expectation(&stem, &command),
            )?;
        }
    }
    eprintln!(
        "emit_frames: wrote {} frames to {}",
        frames.len(),
        dir.display()
    );
    Ok(())
}

/// The binary header carries code and version as 16 bits.
fn fits_binary(command: &RemotingCommand) -> bool {
    i16::try_from(command.code).is_ok() && i16::try_from(command.version).is_ok()
}

fn frames() -> Vec<(&'static str, RemotingCommand)> {
    let route = RemotingCommand::request(RequestCode::GetRouteInfoByTopic, 1)
        .with_ext("topic", "TopicTest");
    let register = RemotingCommand::request(RequestCode::RegisterBroker, 2)
        .with_ext("brokerId", "0")
        .with_ext("bodyCrc32", "1779474218")
        .with_ext("clusterName", "DefaultCluster")
        .with_ext("brokerAddr", "127.0.0.1:10911")
        .with_ext("enableActingMaster", "false")
        .with_ext("haServerAddr", "127.0.0.1:10912")
        .with_ext("compressed", "false")
        .with_ext("brokerName", "broker-a")
        .with_body(REGISTER_BODY.as_bytes().to_vec());
    let mut master_response = RemotingCommand::response_to(&register, ResponseCode::Success);
    master_response.ext_fields = Some(ExtFields::new());
    let not_found = RemotingCommand::response_to(&route, ResponseCode::TopicNotExist).with_remark(
        "No topic route info in name server for the topic: TopicTest\n\
         See https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.",
    );
    let heartbeat = RemotingCommand::request(RequestCode::BrokerHeartbeat, 43)
        .with_ext("clusterName", "DefaultCluster")
        .with_ext("brokerAddr", "127.0.0.1:10911")
        .with_ext("brokerName", "broker-a")
        .oneway();
    let put_strange = RemotingCommand::request(RequestCode::PutKvConfig, 404)
        .with_ext("namespace", "ORDER_TOPIC_CONFIG")
        .with_ext(
            "key",
            "n/\u{e9}\u{4e2d}\u{1f600}\"\\\t\u{1}\u{7f}\u{2028}<&>",
        )
        .with_ext("value", STRANGE);
    let put_empty = RemotingCommand::request(RequestCode::PutKvConfig, 405)
        .with_ext("namespace", "ORDER_TOPIC_CONFIG")
        .with_ext("key", "TopicOrder")
        .with_ext("value", "");
    let large: Vec<u8> = (0..65536u32)
        .map(|i| (i.wrapping_mul(31) + 7) as u8)
        .collect();
    let mut cpp = RemotingCommand::request(RequestCode::GetRouteInfoByTopic, -2)
        .with_ext("topic", "TopicTest");
    cpp.language = LanguageCode::Cpp;
    cpp.version = 0;
    let mut rust = RemotingCommand::request(RequestCode::GetBrokerClusterInfo, i32::MAX);
    rust.language = LanguageCode::Rust;
    let mut unknown_request = RemotingCommand::request(RequestCode::Unknown(99999), 7);
    unknown_request.version = 401;

    vec![
        ("105_get_routeinfo_by_topic", route.clone()),
        ("103_register_broker_with_body", register.clone()),
        ("103_register_broker_response_master_empty_ext", master_response),
        (
            "103_register_broker_response_slave",
            RemotingCommand::response_to(&register, ResponseCode::Success)
                .with_ext("haServerAddr", "127.0.0.1:10912")
                .with_ext("masterAddr", "127.0.0.1:10911")
                .with_body(br#"{"table":{"TopicOrder":"broker-a:4;broker-b:4"}}"#.to_vec()),
        ),
        ("105_response_topic_not_exist", not_found),
        (
            "105_response_route_body",
            RemotingCommand::response_to(&route, ResponseCode::Success).with_body(
                br#"{"brokerDatas":[{"brokerAddrs":{"0":"127.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}"#.to_vec(),
            ),
        ),
        (
            "1_response_strange_remark",
            RemotingCommand::response_to(&route, ResponseCode::SystemError).with_remark(STRANGE),
        ),
        (
            "1_response_non_ascii_remark",
            RemotingCommand::response_to(&route, ResponseCode::SystemError).with_remark("\u{9519}\u{8bef}/x"),
        ),
        ("0_response_empty_remark", RemotingCommand::response_to(&route, ResponseCode::Success).with_remark("")),
        (
            "3_response_request_code_not_supported",
            RemotingCommand::response_to(&unknown_request, ResponseCode::RequestCodeNotSupported)
                .with_remark(" request type 99999 not supported"),
        ),
        ("99999_unknown_request", unknown_request),
        ("904_broker_heartbeat_oneway", heartbeat),
        ("100_put_kv_config_strange", put_strange),
        ("100_put_kv_config_empty_value", put_empty),
        ("0_response_large_body", RemotingCommand::response_to(&route, ResponseCode::Success).with_body(large)),
        ("105_language_cpp_negative_opaque", cpp),
        ("106_language_rust_max_opaque", rust),
    ]
}

/// What Java's decoder must produce for `command` in its serialize type.
fn expectation(stem: &str, command: &RemotingCommand) -> String {
    let binary = command.serialize_type == SerializeType::RocketMq;
    let mut out = String::new();
    let mut line = |key: &str, value: &str| {
        out.push_str(&escape(key, true));
        out.push('=');
        out.push_str(&escape(value, false));
        out.push('\n');
    };
    line("name", stem);
    line("serializeType", command.serialize_type.name());
    line("code", &java_short_if(binary, command.code).to_string());
    line("flag", &command.flag.to_string());
    line("opaque", &command.opaque.to_string());
    line(
        "version",
        &java_short_if(binary, command.version).to_string(),
    );
    line("language", command.language.name());
    match command.remark.as_deref() {
        Some(remark) if !(binary && remark.is_empty()) => line("remark", remark),
        _ => {}
    }
    let carried: Vec<(&String, &String)> = command
        .ext_fields
        .iter()
        .flatten()
        .filter(|(_, value)| !(binary && value.is_empty()))
        .collect();
    let nulls: Vec<&str> = command
        .ext_fields
        .iter()
        .flatten()
        .filter(|(_, value)| binary && value.is_empty())
        .map(|(key, _)| key.as_str())
        .collect();
    let map = match (&command.ext_fields, binary) {
        (None, false) => "null",
        (Some(_), false) => "present",
        (_, true) if carried.is_empty() => "absent",
        (_, true) => "present",
    };
    line("ext.map", map);
    line("ext.count", &carried.len().to_string());
    for (key, value) in &carried {
        line(&format!("ext.{key}"), value);
    }
    if !nulls.is_empty() {
        line("ext.nulls", &nulls.join(","));
    }
    let body = command.body.as_deref().unwrap_or_default();
    line("body.length", &body.len().to_string());
    line("body.fnv1a32", &format!("{:08x}", fnv1a32(body)));
    out
}

/// Java reads code and version of a binary header as signed 16-bit values.
fn java_short_if(binary: bool, value: i32) -> i32 {
    if binary {
        i32::from(value as i16)
    } else {
        value
    }
}

/// 32-bit FNV-1a, recomputed by the Java side.
fn fnv1a32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash, &byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

/// `java.util.Properties` escaping: ASCII printable as is (with `\`, `=`, `:`,
/// `#`, `!` escaped, and spaces in keys or leading spaces), named escapes for
/// tab, LF, CR, FF, and `\uXXXX` UTF-16 units for everything else.
fn escape(text: &str, key: bool) -> String {
    let mut out = String::new();
    for (index, ch) in text.chars().enumerate() {
        match ch {
            '\\' | '=' | ':' | '#' | '!' => {
                out.push('\\');
                out.push(ch);
            }
            ' ' if key || index == 0 => out.push_str("\\ "),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(ch),
            _ => {
                let mut units = [0u16; 2];
                for unit in ch.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04X}"));
                }
            }
        }
    }
    out
}
