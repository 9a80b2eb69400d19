//! Finding and talking to a NameServer.
//!
//! [`list`] is the address list and the sticky round-robin choice as plain
//! data; [`channel`] is the one live connection built on it, with failover
//! to the next address once the channel breaks.

pub mod channel;
pub mod list;

pub use channel::{ChannelConfig, NameServerChannel};
pub use list::{parse_namesrv_addr, ListUpdate, NameServerList};
