//! Java's frame limits (`NettyDecoder`: at most 16,777,216 bytes with the
//! length word, a header no longer than the frame, a type byte of 0 or 1) and
//! what happens at and past them: the
//! length word, the header length, the type byte, and malformed headers,
//! each of which must be an error (Java closes the connection), never a panic.

use bytes::{BufMut, Bytes, BytesMut};
use rmq_wire::frame::{self, FrameError, FrameStatus, MAX_LENGTH_FIELD};
use rmq_wire::header::HeaderDecodeError;
use rmq_wire::{RemotingCommand, SerializeType};

/// A frame with the given type byte, header and body, lengths computed.
fn frame_of(type_byte: u8, header: &[u8], body: &[u8]) -> Bytes {
    let mut dst = BytesMut::new();
    dst.put_u32((4 + header.len() + body.len()) as u32);
    dst.put_u32(u32::from(type_byte) << 24 | header.len() as u32);
    dst.put_slice(header);
    dst.put_slice(body);
    dst.freeze()
}

#[test]
fn length_16_777_212_is_accepted_and_16_777_213_rejected() {
    assert_eq!(MAX_LENGTH_FIELD, 16_777_212);
    assert_eq!(
        frame::check(&16_777_212u32.to_be_bytes()),
        Ok(FrameStatus::Incomplete { needed: 16_777_216 })
    );
    assert_eq!(
        frame::check(&16_777_213u32.to_be_bytes()),
        Err(FrameError::TooLong {
            length: 16_777_213,
            max: MAX_LENGTH_FIELD
        })
    );
    assert_eq!(
        frame::check(&u32::MAX.to_be_bytes()),
        Err(FrameError::TooLong {
            length: u32::MAX as usize,
            max: MAX_LENGTH_FIELD
        })
    );

    // A frame of exactly the maximum size decodes, body included.
    let command = RemotingCommand::request(105, 1).with_body(vec![7u8; 1]);
    let header_len = frame::encode_to_bytes(&command).len() - 9;
    let body = vec![b'x'; MAX_LENGTH_FIELD - 4 - header_len];
    let encoded = frame::encode_to_bytes(&command.with_body(body));
    assert_eq!(encoded.len(), 16_777_216);
    assert_eq!(
        frame::check(&encoded),
        Ok(FrameStatus::Complete { len: 16_777_216 })
    );
    assert_eq!(
        frame::decode(encoded).unwrap().body.unwrap().len(),
        16_777_212 - 4 - header_len
    );
}

#[test]
fn header_longer_than_the_frame_is_rejected() {
    let mut bytes = frame_of(0, b"{}", b"").to_vec();
    bytes[7] = 3; // H = 3 > length - 4 = 2
    assert_eq!(
        frame::decode(bytes.into()),
        Err(FrameError::HeaderTooLong {
            header: 3,
            frame: 6
        })
    );
    // H = length - 4 exactly: a header with no body.
    assert!(frame::decode(frame_of(0, b"{}", b"")).is_ok());
}

#[test]
fn serialize_type_byte_must_be_0_or_1() {
    for type_byte in [2u8, 3, 0x16, 0x80, 0xff] {
        assert_eq!(
            frame::decode(frame_of(type_byte, b"{}", b"")),
            Err(FrameError::UnknownSerializeType(type_byte))
        );
    }
}

#[test]
fn malformed_headers_are_frame_errors() {
    match frame::decode(frame_of(0, br#"{"code":"#, b"body")) {
        Err(FrameError::Header {
            kind: "JSON",
            source: HeaderDecodeError::Json(_),
        }) => {}
        other => panic!("{other:?}"),
    }
    match frame::decode(frame_of(1, &[0; 20], b"")) {
        Err(FrameError::Header {
            kind: "ROCKETMQ",
            source: HeaderDecodeError::Truncated { .. },
        }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_binary_header_must_end_where_its_map_ends() {
    let command = RemotingCommand::request(105, 1)
        .with_ext("topic", "TopicTest")
        .with_serialize_type(SerializeType::RocketMq);
    let encoded = frame::encode_to_bytes(&command);
    let header = &encoded[8..];
    // Claim one body byte as header: Java would still read the map and then
    // take a body shifted by one; we refuse.
    let mut longer = header.to_vec();
    longer.push(b'!');
    assert_eq!(
        frame::decode(frame_of(1, &longer, b"")),
        Err(FrameError::Header {
            kind: "ROCKETMQ",
            source: HeaderDecodeError::Trailing(1)
        })
    );
    // Claim one byte less: the value runs past the header.
    let shorter = &header[..header.len() - 1];
    assert!(matches!(
        frame::decode(frame_of(1, shorter, b"t")),
        Err(FrameError::Header {
            source: HeaderDecodeError::Truncated {
                field: "extFields",
                ..
            },
            ..
        })
    ));
}

#[test]
fn an_empty_body_is_no_body_and_a_short_buffer_is_not_an_error() {
    let command = RemotingCommand::request(105, 1).with_body(Bytes::new());
    let decoded = frame::decode(frame::encode_to_bytes(&command)).unwrap();
    assert_eq!(decoded.body, None);
    let encoded = frame::encode_to_bytes(&RemotingCommand::request(105, 1));
    for cut in 0..encoded.len() {
        assert!(matches!(
            frame::check(&encoded[..cut]),
            Ok(FrameStatus::Incomplete { .. })
        ));
    }
}
