//! Choosing the queue of a send (Java `MQFaultStrategy`, `TopicPublishInfo`).
//!
//! [`index`] is the per-thread round-robin counter, [`fault`] the latency
//! fault table with Java's duration bands, [`strategy`] the per-attempt
//! choice that combines them over a [`PublishInfo`](crate::PublishInfo).

pub mod fault;
pub mod index;
pub mod strategy;

pub use fault::{not_available_duration, FaultItem, LatencyFaultTolerance};
pub use index::SendIndex;
pub use strategy::{FaultStrategy, SendOutcome};
