//! Sans-IO codec for the Apache RocketMQ remoting protocol.
//!
//! Owns bytes only: frame layout and limits (`frame`), the command value
//! (`command`), both header serializations (`header`), the ext-field map and
//! typed-header conversion (`ext_fields`), the code tables (`code`), and
//! fastjson's value coercions for the JSON header and bodies (`lenient`). It
//! knows nothing of sockets, runtimes or NameServer semantics; `rmq-protocol`
//! builds typed headers and bodies on top, `rmq-transport` moves frames.

pub mod code;
pub mod command;
pub mod ext_fields;
pub mod frame;
pub mod header;
pub mod lenient;

pub use code::{LanguageCode, RequestCode, ResponseCode, SerializeType};
pub use command::{RemotingCommand, CURRENT_VERSION, FLAG_ONEWAY, FLAG_RESPONSE};
pub use ext_fields::{ExtFields, ExtReader, ExtWriter, FromExtFields, HeaderError, ToExtFields};
pub use frame::{FrameError, FrameStatus, DEFAULT_MAX_FRAME_BYTES, MAX_LENGTH_FIELD};
