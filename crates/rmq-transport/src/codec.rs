//! `RemotingCodec`: rmq-wire's frame layer as a tokio-util `Decoder`/`Encoder`.
//!
//! Owns nothing but the buffer discipline: check, reserve for an incomplete
//! frame, split the whole frame off and decode it, so a body shares the read
//! buffer's memory. Frame layout and limits belong to `rmq_wire::frame`.

use bytes::BytesMut;
use rmq_wire::frame::{self, FrameStatus};
use rmq_wire::RemotingCommand;
use tokio_util::codec::{Decoder, Encoder};

use crate::error::CodecError;

/// Frames of the remoting protocol, both directions.
///
/// Decoding yields one [`RemotingCommand`] per frame, in whichever serialize
/// type the frame carries. Encoding writes a command in its own
/// `serialize_type`. A [`CodecError::Frame`] means the stream is unusable.
#[derive(Debug, Clone, Copy, Default)]
pub struct RemotingCodec;

impl RemotingCodec {
    /// A codec; it keeps no state between frames.
    pub fn new() -> RemotingCodec {
        RemotingCodec
    }
}

impl Decoder for RemotingCodec {
    type Item = RemotingCommand;
    type Error = CodecError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<RemotingCommand>, CodecError> {
        match frame::check(src)? {
            FrameStatus::Incomplete { needed } => {
                // One allocation for the whole frame instead of doubling steps;
                // `check` has already bounded `needed` by the frame limit.
                src.reserve(needed.saturating_sub(src.len()));
                Ok(None)
            }
            FrameStatus::Complete { len } => {
                let whole = src.split_to(len).freeze();
                Ok(Some(frame::decode(whole)?))
            }
        }
    }
}

impl Encoder<RemotingCommand> for RemotingCodec {
    type Error = CodecError;

    fn encode(&mut self, item: RemotingCommand, dst: &mut BytesMut) -> Result<(), CodecError> {
        frame::encode(&item, dst);
        Ok(())
    }
}

impl Encoder<&RemotingCommand> for RemotingCodec {
    type Error = CodecError;

    fn encode(&mut self, item: &RemotingCommand, dst: &mut BytesMut) -> Result<(), CodecError> {
        frame::encode(item, dst);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmq_wire::FrameError;

    #[test]
    fn incomplete_frames_reserve_and_wait() {
        let mut codec = RemotingCodec::new();
        let mut buf = BytesMut::from(&[0u8, 0][..]);
        assert!(codec.decode(&mut buf).unwrap().is_none());
        buf.extend_from_slice(&[0, 100, 0, 0]);
        assert!(codec.decode(&mut buf).unwrap().is_none());
        assert!(buf.capacity() >= 104, "capacity {}", buf.capacity());
        assert_eq!(buf.len(), 6, "nothing consumed");
    }

    #[test]
    fn bad_length_and_type_are_frame_errors() {
        let mut codec = RemotingCodec::new();
        let mut buf = BytesMut::from(&16_777_213u32.to_be_bytes()[..]);
        match codec.decode(&mut buf) {
            Err(CodecError::Frame(FrameError::TooLong {
                length: 16_777_213, ..
            })) => {}
            other => panic!("unexpected {other:?}"),
        }
        let mut buf = BytesMut::from(&[0u8, 0, 0, 6, 7, 0, 0, 2, b'{', b'}'][..]);
        match codec.decode(&mut buf) {
            Err(CodecError::Frame(FrameError::UnknownSerializeType(7))) => {}
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn a_complete_frame_is_split_off_exactly() {
        // A frame with an unknown type byte still gets split off before decode
        // fails, so what follows it stays in the buffer untouched.
        let mut codec = RemotingCodec::new();
        let mut buf = BytesMut::from(&[0u8, 0, 0, 4, 9, 0, 0, 0, 0xAA, 0xBB][..]);
        assert!(codec.decode(&mut buf).is_err());
        assert_eq!(&buf[..], &[0xAA, 0xBB]);
    }
}
