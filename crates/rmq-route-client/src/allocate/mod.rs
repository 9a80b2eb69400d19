//! Splitting a topic's queues among the consumers of a group (Java
//! `AllocateMessageQueueStrategy` and its implementations,
//! client-routing.md §10).
//!
//! Owns the strategy contract, the shared pre-check and the six strategies:
//! [`AllocateAveragely`], [`AllocateAveragelyByCircle`], [`AllocateByConfig`]
//! ([`average`]), [`AllocateByMachineRoom`], [`AllocateMachineRoomNearby`]
//! ([`machine_room`]) and [`AllocateConsistentHash`] ([`consistent_hash`]).
//! Inputs must be sorted as Java's rebalance sorts them
//! ([`sort_for_allocation`](crate::sort_for_allocation)); fetching the
//! consumer list and running the rebalance loop are a consumer's job.

pub mod average;
pub mod consistent_hash;
pub mod machine_room;

pub use average::{AllocateAveragely, AllocateAveragelyByCircle, AllocateByConfig};
pub use consistent_hash::{md5_hash, AllocateConsistentHash};
pub use machine_room::{AllocateByMachineRoom, AllocateMachineRoomNearby, MachineRoomResolver};

use crate::MessageQueue;

/// Why a strategy refused to allocate (Java `IllegalArgumentException`;
/// the rebalance of that topic is skipped, nothing is released).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllocateError {
    /// `currentCID` is empty.
    #[error("currentCID is empty")]
    EmptyCurrentId,
    /// No queues.
    #[error("mqAll is null or mqAll empty")]
    EmptyQueues,
    /// No consumers.
    #[error("cidAll is null or cidAll empty")]
    EmptyConsumers,
    /// The machine-room resolver gave no room for a queue or a consumer.
    #[error("Machine room is null for {what}")]
    NoMachineRoom {
        /// The queue (Java `toString`) or consumer id.
        what: String,
    },
}

/// Java `AllocateMessageQueueStrategy`.
pub trait AllocateStrategy: Send + Sync {
    /// The strategy's Java name (`AVG`, `CONSISTENT_HASH`, ...), reported to
    /// brokers in consumer running info.
    fn name(&self) -> String;

    /// The queues `current` should consume. `queues` and `consumers` are
    /// sorted; `consumers` includes `current` (otherwise the result is empty).
    ///
    /// # Errors
    /// [`AllocateError`] when the pre-check fails (empty id, no queues, no
    /// consumers) or the strategy's own inputs are missing.
    fn allocate(
        &self,
        group: &str,
        current: &str,
        queues: &[MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<MessageQueue>, AllocateError>;
}

/// Java `AbstractAllocateMessageQueueStrategy.check`: errors for empty
/// inputs; `Ok(None)` when `current` is not among `consumers` (the caller
/// returns an empty allocation); `Ok(Some(index))` otherwise.
///
/// # Errors
/// See [`AllocateError`].
pub fn precheck(
    current: &str,
    queues: &[MessageQueue],
    consumers: &[String],
) -> Result<Option<usize>, AllocateError> {
    if current.is_empty() {
        return Err(AllocateError::EmptyCurrentId);
    }
    if queues.is_empty() {
        return Err(AllocateError::EmptyQueues);
    }
    if consumers.is_empty() {
        return Err(AllocateError::EmptyConsumers);
    }
    let index = consumers.iter().position(|c| c == current);
    if index.is_none() {
        tracing::info!(current, ?consumers, "consumer id not in the consumer list");
    }
    Ok(index)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `a0..a3, b0..b3` of `TopicTest`, sorted: the spec's running example.
    pub fn eight() -> Vec<MessageQueue> {
        ["broker-a", "broker-b"]
            .iter()
            .flat_map(|b| (0..4).map(move |i| MessageQueue::new("TopicTest", *b, i)))
            .collect()
    }

    /// `n` queues `q0..` on one broker.
    pub fn queues(n: i32) -> Vec<MessageQueue> {
        (0..n)
            .map(|i| MessageQueue::new("T", "broker-a", i))
            .collect()
    }

    pub fn ids(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    /// `a0`-style short names.
    pub fn short(queues: &[MessageQueue]) -> Vec<String> {
        queues
            .iter()
            .map(|q| {
                let broker = q.broker_name.rsplit('-').next().unwrap_or_default();
                format!("{broker}{}", q.queue_id)
            })
            .collect()
    }

    /// Allocates for every consumer in turn.
    pub fn all(
        strategy: &dyn AllocateStrategy,
        queues: &[MessageQueue],
        consumers: &[String],
    ) -> Vec<Vec<String>> {
        consumers
            .iter()
            .map(|c| short(&strategy.allocate("G", c, queues, consumers).unwrap()))
            .collect()
    }

    #[test]
    fn precheck_of_the_abstract_strategy() {
        let q = queues(2);
        let c = ids(&["c1", "c2"]);
        assert_eq!(precheck("", &q, &c), Err(AllocateError::EmptyCurrentId));
        assert_eq!(precheck("c1", &[], &c), Err(AllocateError::EmptyQueues));
        assert_eq!(precheck("c1", &q, &[]), Err(AllocateError::EmptyConsumers));
        assert_eq!(precheck("c9", &q, &c), Ok(None));
        assert_eq!(precheck("c2", &q, &c), Ok(Some(1)));
    }

    #[test]
    fn every_strategy_but_config_runs_the_precheck_and_skips_strangers() {
        let strategies: Vec<Box<dyn AllocateStrategy>> = vec![
            Box::new(AllocateAveragely),
            Box::new(AllocateAveragelyByCircle),
            Box::new(AllocateByMachineRoom::new(["room1"])),
            Box::new(AllocateConsistentHash::default()),
            Box::new(AllocateMachineRoomNearby::new(
                std::sync::Arc::new(AllocateAveragely),
                std::sync::Arc::new(|_: &str| "r".to_string()),
            )),
        ];
        for s in &strategies {
            let name = s.name();
            assert_eq!(
                s.allocate("G", "c1", &[], &ids(&["c1"])),
                Err(AllocateError::EmptyQueues),
                "{name}"
            );
            assert_eq!(
                s.allocate("G", "c1", &eight(), &[]),
                Err(AllocateError::EmptyConsumers),
                "{name}"
            );
            assert_eq!(
                s.allocate("G", "", &eight(), &ids(&["c1"])),
                Err(AllocateError::EmptyCurrentId),
                "{name}"
            );
            assert_eq!(
                s.allocate("G", "x", &eight(), &ids(&["c1"])),
                Ok(vec![]),
                "{name}"
            );
        }
        let names: Vec<_> = strategies.iter().map(|s| s.name()).collect();
        assert_eq!(
            names,
            [
                "AVG",
                "AVG_BY_CIRCLE",
                "MACHINE_ROOM",
                "CONSISTENT_HASH",
                "MACHINE_ROOM_NEARBY-AVG"
            ]
        );
    }
}
