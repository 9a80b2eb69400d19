//! Fuzzes the REGISTER_BROKER body decoders (JSON and zlib-compressed).
//!
//! The first input byte picks the path, bit 7 the request version (479 or
//! 401, i.e. with or without the compressed mapping section):
//!
//! * `0`: the rest is a JSON body;
//! * `1`: the rest is a compressed body as sent (the fuzzer may find real
//!   decompression bombs here; run with `-malloc_limit_mb` so that an
//!   allocation beyond the decoder's 64 MiB bound fails the run);
//! * `2`: the rest is zlib-compressed first, to reach the section parser;
//! * `3`: a claimed-large body: the rest repeated up to 64 times behind a
//!   fuzzer-chosen length prefix, compressed.
//!
//! Nothing may panic. Whatever decodes must re-encode and decode to the same
//! value, up to what the formats cannot carry (see `stable`). In JSON mode the
//! fast decoder for the common broker shape (`register::common`), whenever it
//! answers, must give the general decoder's answer.
//!
//! Run from `fuzz/`:
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run register_body_decode -- -max_total_time=60 -malloc_limit_mb=256`
//! (append `corpus/register_body_decode seeds/register_body_decode` to start
//! from a 5.x broker's one-topic body, as JSON and as Java compressed it).

#![no_main]

use std::io::Write;

use flate2::write::ZlibEncoder;
use flate2::Compression;
use libfuzzer_sys::fuzz_target;
use rmq_protocol::register::{common, RegisterDecodeError};
use rmq_protocol::{BodyFlavor, DecodedRegistration, JavaJson, RegisterBrokerBody};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let version = if mode & 0x80 != 0 { 479 } else { 401 };
    match mode & 3 {
        0 => json(rest),
        1 => compressed(rest, version),
        2 => compressed(&zlib(rest), version),
        _ => {
            let Some((prefix, tail)) = rest.split_first_chunk::<4>() else {
                return;
            };
            let mut raw = prefix.to_vec();
            for _ in 0..64 {
                raw.extend_from_slice(tail);
            }
            compressed(&zlib(&raw), version);
        }
    }
});

fn zlib(raw: &[u8]) -> Vec<u8> {
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::fast());
    encoder.write_all(raw).expect("writing into a Vec");
    encoder.finish().expect("writing into a Vec")
}

/// A version with the JSON body (3.0.11 and later).
const V5: i32 = 479;

/// Topic limit for the differential check: small, so the fuzzer reaches it.
const TOPIC_LIMIT: usize = 8;

fn json(bytes: &[u8]) {
    fast_matches_general(bytes);
    let Ok(mut body) = RegisterBrokerBody::from_json(bytes) else {
        return;
    };
    let again = RegisterBrokerBody::from_json(&body.to_json_flavor(BodyFlavor::V5))
        .expect("our JSON output decodes");
    // A null list is omitted on output, and a missing list reads as empty.
    body.filter_server_list.get_or_insert_with(Vec::new);
    assert_eq!(again, body);
    let _ = RegisterBrokerBody::from_json(&body.to_json_flavor(BodyFlavor::V4))
        .expect("4.x output decodes");
}

fn compressed(bytes: &[u8], version: i32) {
    let Ok(body) = RegisterBrokerBody::from_compressed(bytes, version) else {
        return;
    };
    let again = RegisterBrokerBody::from_compressed(&body.to_compressed(BodyFlavor::V5), 479)
        .expect("our compressed output decodes");
    if stable(&body) {
        assert_eq!(again, body);
    }
}

/// The text form splits on spaces, so attributes that decoded to text with a
/// space (from a `\u0020` escape) cannot survive re-encoding.
fn stable(body: &RegisterBrokerBody) -> bool {
    body.topic_config_serialize_wrapper
        .topic_config_table
        .values()
        .flat_map(|c| c.attributes.iter())
        .all(|(k, v)| !k.contains(' ') && !v.contains(' '))
}

/// The fast decoder may give up (`None`); when it answers, the general
/// decoder answers the same: the same registration (topics compared in
/// name order, as the fast decoder keeps the body's order) or the same
/// refusal for too many entries.
fn fast_matches_general(bytes: &[u8]) {
    let Some(fast) = common::decode(bytes, TOPIC_LIMIT) else {
        return;
    };
    let general = RegisterBrokerBody::decode_request_limited(Some(bytes), false, V5, TOPIC_LIMIT);
    match (fast, general) {
        (Ok(fast), Ok(general)) => assert_eq!(by_name(fast), by_name(general.into())),
        (
            Err(RegisterDecodeError::TooMany { what, limit }),
            Err(RegisterDecodeError::TooMany {
                what: general_what,
                limit: general_limit,
            }),
        ) => assert_eq!((what, limit), (general_what, general_limit)),
        (fast, general) => panic!("fast {fast:?}, general {general:?}"),
    }
}

fn by_name(mut decoded: DecodedRegistration) -> DecodedRegistration {
    decoded
        .topic_configs
        .sort_by(|a, b| a.topic_name.cmp(&b.topic_name));
    decoded
}
