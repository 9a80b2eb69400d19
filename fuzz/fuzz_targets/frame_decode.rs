//! Fuzzes the frame layer and both header decoders.
//!
//! Arbitrary bytes go through `check` and `decode` as a frame, and (to reach
//! the header decoders without first guessing valid length words) the input
//! minus its first byte is also wrapped in a well-formed frame whose type is
//! the first byte's low bit. Nothing may panic; whatever decodes must encode to
//! a frame that `check` measures exactly and that decodes back to the same
//! command up to the losses `header::normalize` documents.
//!
//! Run from `fuzz/`: `RUSTC_BOOTSTRAP=1 cargo fuzz run frame_decode -- -max_total_time=60`.
//! Adding `corpus/frame_decode seeds/frame_decode` after the target name also
//! feeds in the frames Java wrote that are kept in `seeds/` (`java_*`; the
//! corpus itself is not committed).

#![no_main]

use bytes::{BufMut, Bytes, BytesMut};
use libfuzzer_sys::fuzz_target;
use rmq_wire::frame::{self, FrameStatus};
use rmq_wire::header::{self, normalize};

fuzz_target!(|data: &[u8]| {
    let _ = header::json::decode(data);
    let _ = header::binary::decode(data);

    if let Ok(FrameStatus::Complete { len }) = frame::check(data) {
        round_trip(Bytes::copy_from_slice(&data[..len]));
    } else {
        assert!(frame::decode(Bytes::copy_from_slice(data)).is_err());
    }

    if let Some((&mode, header)) = data.split_first() {
        let mut wrapped = BytesMut::with_capacity(8 + header.len());
        wrapped.put_u32(4 + header.len() as u32);
        wrapped.put_u32(u32::from(mode & 1) << 24 | header.len() as u32);
        wrapped.put_slice(header);
        round_trip(wrapped.freeze());
    }
});

/// Decodes one whole frame; if that works, checks encode → check → decode.
fn round_trip(frame_bytes: Bytes) {
    let Ok(command) = frame::decode(frame_bytes) else {
        return;
    };
    let encoded = frame::encode_to_bytes(&command);
    assert_eq!(
        frame::check(&encoded),
        Ok(FrameStatus::Complete { len: encoded.len() })
    );
    let again = frame::decode(encoded).expect("a re-encoded command decodes");
    assert_eq!(again, normalize(&command));
}
