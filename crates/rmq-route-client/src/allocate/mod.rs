//! Splitting a topic's queues among the consumers of a group (Java
//! `AllocateMessageQueueStrategy` and its implementations).
//!
//! Owns the strategy contract, the shared pre-check and the six strategies:
//! [`AllocateAveragely`], [`AllocateAveragelyByCircle`], [`AllocateByConfig`]
//! ([`average`]), [`AllocateByMachineRoom`], [`AllocateMachineRoomNearby`]
//! ([`machine_room`]) and [`AllocateConsistentHash`] ([`consistent_hash`]).
//! Inputs must be sorted as Java's rebalance sorts them
//! ([`sort_for_allocation`](crate::sort_for_allocation)); [`rebalance`] does
//! that sorting and the call for one topic of a clustering consumer.
//! Fetching the consumer list and running the rebalance loop are a
//! consumer's job.

pub mod average;
pub mod consistent_hash;
pub mod machine_room;

pub use average::{AllocateAveragely, AllocateAveragelyByCircle, AllocateByConfig};
pub use consistent_hash::{md5_hash, AllocateConsistentHash};
pub use machine_room::{AllocateByMachineRoom, AllocateMachineRoomNearby, MachineRoomResolver};

use std::collections::BTreeSet;

use crate::{sort_for_allocation, MessageQueue};

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

/// One topic of a clustering consumer's rebalance (Java
/// `RebalanceImpl.rebalanceByTopic`): the topic's
/// subscribe set (e.g. [`TopicView::subscribe`](crate::TopicView::subscribe))
/// and the group's consumer ids as a broker reported them, in any order,
/// are sorted the way Java sorts them, then `strategy` allocates for
/// `current`. The result is a set, as Java's: a strategy that names a queue
/// twice (a `CONFIG` list) still processes it once.
///
/// Every Java consumer of a group runs this with the same inputs; a Rust
/// consumer that calls it with them gets the queues its Java peers leave
/// to it.
///
/// # Errors
/// The strategy's [`AllocateError`]; Java then skips the topic's rebalance
/// and keeps processing what it had.
pub fn rebalance<'a>(
    strategy: &dyn AllocateStrategy,
    group: &str,
    current: &str,
    subscribe: impl IntoIterator<Item = &'a MessageQueue>,
    consumer_ids: &[String],
) -> Result<BTreeSet<MessageQueue>, AllocateError> {
    let mut queues: Vec<MessageQueue> = subscribe.into_iter().cloned().collect();
    let mut consumers = consumer_ids.to_vec();
    sort_for_allocation(&mut queues, &mut consumers);
    Ok(strategy
        .allocate(group, current, &queues, &consumers)?
        .into_iter()
        .collect())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `a0..a3, b0..b3` of `TopicTest`, sorted: the queues most tests
    /// allocate.
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

    #[test]
    fn rebalance_sorts_both_inputs_as_java_before_allocating() {
        // Unsorted queues (broker-b first, queue ids 10 before 2) and ids in
        // reverse: the result must be what the strategy gives on the sorted
        // lists, where queue id 10 sorts after 2 (an int, not a string).
        let queues = vec![
            MessageQueue::new("T", "broker-b", 0),
            MessageQueue::new("T", "broker-a", 10),
            MessageQueue::new("T", "broker-a", 2),
            MessageQueue::new("T", "broker-b", 1),
            MessageQueue::new("T", "broker-a", 0),
        ];
        let consumers = ids(&["c3", "c1", "c2"]);
        let got: Vec<Vec<String>> = ["c1", "c2", "c3"]
            .iter()
            .map(|c| {
                rebalance(&AllocateAveragely, "G", c, &queues, &consumers)
                    .unwrap()
                    .iter()
                    .map(|q| format!("{}:{}", q.broker_name, q.queue_id))
                    .collect()
            })
            .collect();
        assert_eq!(
            got,
            [
                vec!["broker-a:0", "broker-a:2"],
                vec!["broker-a:10", "broker-b:0"],
                vec!["broker-b:1"],
            ]
        );
    }

    #[test]
    fn rebalance_gives_a_set_and_passes_errors_on() {
        let q = queues(3);
        let twice = AllocateByConfig::new(vec![q[1].clone(), q[0].clone(), q[1].clone()]);
        let got = rebalance(&twice, "G", "c1", &q, &ids(&["c1"])).unwrap();
        assert_eq!(
            got.into_iter().collect::<Vec<_>>(),
            [q[0].clone(), q[1].clone()]
        );
        assert_eq!(
            rebalance(&AllocateAveragely, "G", "c1", &[], &ids(&["c1"])),
            Err(AllocateError::EmptyQueues)
        );
        assert_eq!(
            rebalance(&AllocateAveragely, "G", "c9", &q, &ids(&["c1"])),
            Ok(BTreeSet::new())
        );
    }
}
