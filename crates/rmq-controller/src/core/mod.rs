//! The controller's core, without I/O: nothing here reads a clock, touches
//! a file or a socket, or spawns a task (the driver logs through `tracing`,
//! nothing more). Time comes in as [`Millis`] arguments and side effects
//! leave as values.
//!
//! * [`Replicas`] is the replicated state: plain data, changed only by
//!   [`Replicas::apply`] of an [`Event`]. Every controller node applies the
//!   same events in the same order (Raft), so every node holds the same
//!   state.
//! * [`decide`] turns a typed request into an [`Answer`] and the events that
//!   carry it out, reading the state, the node's [`LiveTable`] and the time
//!   passed in; it never changes anything itself. [`request`] decodes a
//!   request and picks its decision.
//! * [`LiveTable`] is per node and not replicated: which broker replicas
//!   heartbeat this node in time, and how far their logs reach (the
//!   election order).
//! * [`elect`] is the election policy; [`notice`] builds the role-change
//!   notice an election sends.
//! * [`driver`] is the leader's loop around them: decisions one at a time,
//!   each answered once its events are committed, commit timeouts, the
//!   read barrier, the node's own expiry and elections. `crate::node` runs
//!   it over openraft and tokio, the simulation over a model Raft.

mod answer;
pub mod decide;
pub mod driver;
pub mod elect;
mod event;
mod liveness;
pub mod notice;
mod replicas;
pub mod request;

pub use answer::{Answer, Decision};
pub use event::Event;
pub use liveness::{Heartbeat, LiveInfo, LiveKey, LiveTable, Millis};
pub use replicas::{BrokerSet, Replica, Replicas, FIRST_BROKER_ID};
