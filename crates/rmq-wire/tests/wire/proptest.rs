//! Property tests: arbitrary commands survive encode → check → decode in both
//! header formats (exactly when they are in the format's normal form, as
//! [`normalize`] otherwise), and no byte sequence makes a decoder panic.

use bytes::{BufMut, Bytes, BytesMut};
use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use rmq_wire::frame::{self, FrameStatus};
use rmq_wire::header::{binary, json, normalize};
use rmq_wire::{ExtFields, LanguageCode, RemotingCommand, SerializeType};

/// Any string, with the characters the JSON escaper treats specially made
/// likely (plain `any::<String>()` rarely hits them).
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[\"\\\\\u{0}-\u{1f}\u{7f}-\u{a0}\u{2027}-\u{202a}a/é中😀]{0,12}",
    ]
}

fn non_empty_text() -> impl Strategy<Value = String> {
    text().prop_filter("non-empty", |s| !s.is_empty())
}

fn body() -> impl Strategy<Value = Option<Bytes>> {
    option::of(vec(any::<u8>(), 1..64).prop_map(Bytes::from))
}

fn command(
    code: impl Strategy<Value = i32> + Clone,
    language: impl Strategy<Value = LanguageCode>,
    remark: impl Strategy<Value = Option<String>>,
    ext_fields: impl Strategy<Value = Option<ExtFields>>,
    serialize_type: SerializeType,
) -> impl Strategy<Value = RemotingCommand> {
    (
        code.clone(),
        language,
        code,
        any::<i32>(),
        any::<i32>(),
        remark,
        ext_fields,
        body(),
    )
        .prop_map(
            move |(code, language, version, opaque, flag, remark, ext_fields, body)| {
                RemotingCommand {
                    code,
                    language,
                    version,
                    opaque,
                    flag,
                    remark,
                    ext_fields,
                    serialize_type,
                    body,
                }
            },
        )
}

/// Commands JSON carries without loss: any ints, any strings, any map; only
/// languages with a name.
fn json_command() -> impl Strategy<Value = RemotingCommand> {
    command(
        any::<i32>(),
        (0u8..14).prop_map(LanguageCode::from_code),
        option::of(text()),
        option::of(btree_map(text(), text(), 0..6)),
        SerializeType::Json,
    )
}

/// Commands the binary header carries without loss: 16-bit code and version,
/// non-empty strings, non-empty maps; any language byte.
fn binary_command() -> impl Strategy<Value = RemotingCommand> {
    command(
        any::<i16>().prop_map(i32::from),
        any::<u8>().prop_map(LanguageCode::from_code),
        option::of(non_empty_text()),
        option::of(btree_map(non_empty_text(), non_empty_text(), 1..6)),
        SerializeType::RocketMq,
    )
}

/// Anything at all, including what a format must normalise.
fn any_command() -> impl Strategy<Value = RemotingCommand> {
    let body = option::of(vec(any::<u8>(), 0..8).prop_map(Bytes::from));
    (
        command(
            any::<i32>(),
            any::<u8>().prop_map(LanguageCode::from_code),
            option::of(text()),
            option::of(btree_map(text(), text(), 0..4)),
            SerializeType::Json,
        ),
        prop_oneof![Just(SerializeType::Json), Just(SerializeType::RocketMq)],
        body,
    )
        .prop_map(|(command, serialize_type, body)| RemotingCommand {
            serialize_type,
            body,
            ..command
        })
}

/// encode → check → decode, asserting the frame is measured exactly.
fn round_trip(command: &RemotingCommand) -> RemotingCommand {
    let encoded = frame::encode_to_bytes(command);
    assert_eq!(
        frame::check(&encoded),
        Ok(FrameStatus::Complete { len: encoded.len() })
    );
    assert!(matches!(
        frame::check(&encoded[..encoded.len() - 1]),
        Ok(FrameStatus::Incomplete { .. })
    ));
    // A following frame in the same buffer must not disturb the first.
    let mut two = BytesMut::from(&encoded[..]);
    two.put_slice(&encoded);
    assert_eq!(
        frame::check(&two),
        Ok(FrameStatus::Complete { len: encoded.len() })
    );
    frame::decode(encoded).expect("our own frame decodes")
}

proptest! {
    #[test]
    fn json_round_trip_is_exact(command in json_command()) {
        prop_assert_eq!(round_trip(&command), command);
    }

    #[test]
    fn binary_round_trip_is_exact(command in binary_command()) {
        prop_assert_eq!(round_trip(&command), command);
    }

    #[test]
    fn any_command_round_trips_to_its_normal_form(command in any_command()) {
        let normal = normalize(&command);
        prop_assert_eq!(&normalize(&normal), &normal);
        prop_assert_eq!(round_trip(&command), normal);
    }

    #[test]
    fn encoding_is_deterministic(command in any_command()) {
        prop_assert_eq!(frame::encode_to_bytes(&command), frame::encode_to_bytes(&command.clone()));
    }

    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in vec(any::<u8>(), 0..256)) {
        let _ = frame::check(&bytes);
        let _ = frame::decode(Bytes::from(bytes.clone()));
        let _ = json::decode(&bytes);
        let _ = binary::decode(&bytes);
    }

    #[test]
    fn decoding_arbitrary_headers_in_valid_frames_never_panics(
        type_byte in 0u8..2,
        header in prop_oneof![
            vec(any::<u8>(), 0..128),
            "[{}\\[\\]\":,.0-9a-zA-Z\\\\ -]{0,64}".prop_map(String::into_bytes),
        ],
        body in vec(any::<u8>(), 0..8),
    ) {
        let mut dst = BytesMut::new();
        dst.put_u32((4 + header.len() + body.len()) as u32);
        dst.put_u32(u32::from(type_byte) << 24 | header.len() as u32);
        dst.put_slice(&header);
        dst.put_slice(&body);
        let _ = frame::decode(dst.freeze());
    }

    #[test]
    fn decoding_mutated_frames_never_panics(
        command in any_command(),
        flips in vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mut bytes = frame::encode_to_bytes(&command).to_vec();
        for (index, byte) in flips {
            let at = index.index(bytes.len());
            bytes[at] = byte;
        }
        if let Ok(decoded) = frame::decode(Bytes::from(bytes)) {
            // Whatever decodes must survive its own round trip.
            prop_assert_eq!(round_trip(&decoded), normalize(&decoded));
        }
    }
}
