//! Route state: the pure tables (`table`), registration (`register`),
//! unregistration and expiry (`liveness`), route assembly (`view`), the
//! table as the server shares it, with its encoded-route cache (`shared`),
//! and its snapshot format for warm restarts (`snapshot`).
//!
//! Nothing here does I/O or reads a clock. Time comes in as [`Millis`], a
//! monotonic millisecond count the caller owns; connections are [`ConnId`]s.
//! Mutations return what should happen next (notifications, evictions) as
//! values, so the caller can act after releasing its lock.

mod liveness;
mod register;
mod relay;
mod shared;
mod snapshot;
mod table;
#[cfg(test)]
mod tests;
mod tombstone;
mod view;

pub use liveness::{Expired, UnregisterOutcome, Unregistration};
pub use register::{
    BrokerRegistration, MinIdNotification, RegisterError, RegisterOutcome, RegistrationSource,
    TopicChanges, TopicWork,
};
pub use shared::{RouteVariant, SharedRoutes};
pub use snapshot::{SnapshotError, RESTORED_CONN, SNAPSHOT_VERSION};
pub use table::{
    BrokerGroup, BrokerKey, BrokerName, HeldBody, HeldTopics, LiveBroker, RouteTable, TableSizes,
    TopicQueue, TopicQueues, UnitSelect,
};
pub use tombstone::{TOMBSTONES_IN_ALL, TOMBSTONES_PER_GROUP};
pub use view::ZoneFilter;

/// Monotonic milliseconds since some origin chosen by the caller.
pub type Millis = u64;

/// Identifies one connection for the server's lifetime.
pub type ConnId = u64;

/// The connection of a relayed broker: none of this process (the
/// transport numbers connections from 1, and 0 marks a restored broker).
pub const RELAYED_CONN: ConnId = ConnId::MAX;

/// Default time a silent broker stays registered (`heartbeatTimeoutMillis`).
pub const DEFAULT_BROKER_TIMEOUT_MS: u64 = 120_000;

/// Broker id of a master.
pub const MASTER_ID: i64 = 0;

/// Permission bits (Java `PermName`).
pub mod perm {
    /// PERM_PRIORITY
    pub const PRIORITY: i32 = 8;
    /// PERM_READ
    pub const READ: i32 = 4;
    /// PERM_WRITE
    pub const WRITE: i32 = 2;
    /// PERM_INHERIT
    pub const INHERIT: i32 = 1;
}

/// Topic system flags (Java `TopicSysFlag`).
pub mod sys_flag {
    /// FLAG_UNIT
    pub const UNIT: i32 = 1;
    /// FLAG_UNIT_SUB
    pub const UNIT_SUB: i32 = 2;
}
