//! Room-aware strategies: `MACHINE_ROOM` (queues of configured rooms only,
//! broker names `room@name`) and `MACHINE_ROOM_NEARBY-<inner>` (consume in
//! your own room first, share rooms that have no consumer): Java
//! `AllocateMessageQueueByMachineRoom` and `AllocateMachineRoomNearby`.
//!
//! Owns the room grouping; where a broker or consumer is deployed is the
//! caller's [`MachineRoomResolver`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::{precheck, AllocateError, AllocateStrategy};
use crate::message_queue::JavaString;
use crate::view::publish::java_split;
use crate::MessageQueue;

/// Java `AllocateMessageQueueByMachineRoom` (`MACHINE_ROOM`).
#[derive(Debug, Clone, Default)]
pub struct AllocateByMachineRoom {
    /// Java `consumeridcs`: the rooms whose queues are consumed.
    pub consumer_idcs: BTreeSet<String>,
}

impl AllocateByMachineRoom {
    /// A strategy consuming the queues of `rooms`.
    pub fn new<S: Into<String>>(rooms: impl IntoIterator<Item = S>) -> Self {
        AllocateByMachineRoom {
            consumer_idcs: rooms.into_iter().map(Into::into).collect(),
        }
    }
}

impl AllocateStrategy for AllocateByMachineRoom {
    fn name(&self) -> String {
        "MACHINE_ROOM".into()
    }

    fn allocate(
        &self,
        _group: &str,
        current: &str,
        queues: &[MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<MessageQueue>, AllocateError> {
        let Some(i) = precheck(current, queues, consumers)? else {
            return Ok(Vec::new());
        };
        let pre: Vec<&MessageQueue> = queues
            .iter()
            .filter(|mq| {
                let parts = java_split(&mq.broker_name, '@');
                parts.len() == 2 && self.consumer_idcs.contains(parts[0])
            })
            .collect();
        let k = consumers.len();
        let (q, rem) = (pre.len() / k, pre.len() % k);
        let mut out: Vec<MessageQueue> = pre[q * i..q * i + q]
            .iter()
            .map(|mq| (*mq).clone())
            .collect();
        if rem > i {
            out.push(pre[i + q * k].clone());
        }
        Ok(out)
    }
}

/// Where brokers and consumers are deployed (Java `MachineRoomResolver`).
/// An empty answer is an error for the allocation.
pub trait MachineRoomResolver: Send + Sync {
    /// The room of the broker serving `mq`.
    fn broker_deploy_in(&self, mq: &MessageQueue) -> String;
    /// The room of consumer `client_id`.
    fn consumer_deploy_in(&self, client_id: &str) -> String;
}

/// One function for both: it gets the broker name or the client id.
impl<F: Fn(&str) -> String + Send + Sync> MachineRoomResolver for F {
    fn broker_deploy_in(&self, mq: &MessageQueue) -> String {
        self(&mq.broker_name)
    }

    fn consumer_deploy_in(&self, client_id: &str) -> String {
        self(client_id)
    }
}

/// Java `AllocateMachineRoomNearby` (`MACHINE_ROOM_NEARBY-<inner name>`).
#[derive(Clone)]
pub struct AllocateMachineRoomNearby {
    inner: Arc<dyn AllocateStrategy>,
    resolver: Arc<dyn MachineRoomResolver>,
}

impl AllocateMachineRoomNearby {
    /// Wraps `inner`, with rooms from `resolver`.
    pub fn new(inner: Arc<dyn AllocateStrategy>, resolver: Arc<dyn MachineRoomResolver>) -> Self {
        AllocateMachineRoomNearby { inner, resolver }
    }
}

impl std::fmt::Debug for AllocateMachineRoomNearby {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AllocateMachineRoomNearby")
            .field("inner", &self.inner.name())
            .finish_non_exhaustive()
    }
}

impl AllocateStrategy for AllocateMachineRoomNearby {
    fn name(&self) -> String {
        format!("MACHINE_ROOM_NEARBY-{}", self.inner.name())
    }

    fn allocate(
        &self,
        group: &str,
        current: &str,
        queues: &[MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<MessageQueue>, AllocateError> {
        if precheck(current, queues, consumers)?.is_none() {
            return Ok(Vec::new());
        }
        // TreeMaps in Java: rooms in String.compareTo order.
        let mut room_queues: BTreeMap<JavaString, Vec<MessageQueue>> = BTreeMap::new();
        for mq in queues {
            let room = self.resolver.broker_deploy_in(mq);
            if room.is_empty() {
                return Err(AllocateError::NoMachineRoom {
                    what: mq.to_string(),
                });
            }
            room_queues
                .entry(JavaString(room))
                .or_default()
                .push(mq.clone());
        }
        let mut room_consumers: BTreeMap<JavaString, Vec<String>> = BTreeMap::new();
        for cid in consumers {
            let room = self.resolver.consumer_deploy_in(cid);
            if room.is_empty() {
                return Err(AllocateError::NoMachineRoom { what: cid.clone() });
            }
            room_consumers
                .entry(JavaString(room))
                .or_default()
                .push(cid.clone());
        }
        let mine = JavaString(self.resolver.consumer_deploy_in(current));
        let mut out = Vec::new();
        if let Some(local) = room_queues.remove(&mine).filter(|q| !q.is_empty()) {
            let local_consumers = room_consumers.get(&mine).map_or(&[][..], Vec::as_slice);
            out.extend(
                self.inner
                    .allocate(group, current, &local, local_consumers)?,
            );
        }
        for (room, mqs) in &room_queues {
            if !room_consumers.contains_key(room) {
                out.extend(self.inner.allocate(group, current, mqs, consumers)?);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::allocate::tests::{all, eight, ids, short};
    use crate::allocate::{AllocateAveragely, AllocateAveragelyByCircle};

    fn room_queues(rooms: &[(&str, i32)]) -> Vec<MessageQueue> {
        let mut out: Vec<MessageQueue> = rooms
            .iter()
            .flat_map(|(b, n)| (0..*n).map(move |i| MessageQueue::new("T", *b, i)))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn machine_room_serves_configured_rooms_only() {
        let q = room_queues(&[("room1@a", 4), ("room2@b", 4)]);
        let c = ids(&["c1", "c2", "c3"]);
        let got = all(&AllocateByMachineRoom::new(["room1"]), &q, &c);
        assert_eq!(
            got,
            [
                vec!["room1@a0", "room1@a3"],
                vec!["room1@a1"],
                vec!["room1@a2"]
            ]
        );
        // All eight match: q = 2, rem = 2.
        let got = all(&AllocateByMachineRoom::new(["room1", "room2"]), &q, &c);
        assert_eq!(
            got,
            [
                vec!["room1@a0", "room1@a1", "room2@b2"],
                vec!["room1@a2", "room1@a3", "room2@b3"],
                vec!["room2@b0", "room2@b1"],
            ]
        );
    }

    #[test]
    fn machine_room_needs_exactly_room_at_name() {
        // `broker-a` (no @), `x@y@z` (3 parts) and `r@b@` (Java: 2 parts) cases.
        let q = room_queues(&[
            ("broker-a", 2),
            ("room1@x@z", 2),
            ("room1@b@", 1),
            ("room9@c", 1),
        ]);
        let got = all(
            &AllocateByMachineRoom::new(["room1"]),
            &q,
            &ids(&["c1", "c2"]),
        );
        assert_eq!(got, [vec!["room1@b@0"], vec![]]);
        let none = all(&AllocateByMachineRoom::default(), &eight(), &ids(&["c1"]));
        assert_eq!(none, [Vec::<String>::new()]);
    }

    fn rooms(name: &str) -> String {
        match name {
            "broker-a" | "c1" | "c2" => "R1",
            "broker-b" | "c3" => "R2",
            "broker-x" => "R3",
            _ => "",
        }
        .to_string()
    }

    #[test]
    fn nearby_consumes_its_own_room_and_shares_rooms_without_consumers() {
        let q = room_queues(&[("broker-a", 4), ("broker-b", 2), ("broker-x", 2)]);
        let strategy = AllocateMachineRoomNearby::new(Arc::new(AllocateAveragely), Arc::new(rooms));
        let got = all(&strategy, &q, &ids(&["c1", "c2", "c3"]));
        assert_eq!(
            got,
            [
                vec!["a0", "a1", "x0"],
                vec!["a2", "a3", "x1"],
                vec!["b0", "b1"]
            ]
        );
        let circle =
            AllocateMachineRoomNearby::new(Arc::new(AllocateAveragelyByCircle), Arc::new(rooms));
        assert_eq!(circle.name(), "MACHINE_ROOM_NEARBY-AVG_BY_CIRCLE");
        let got = all(&circle, &q, &ids(&["c1", "c2", "c3"]));
        assert_eq!(
            got,
            [
                vec!["a0", "a2", "x0"],
                vec!["a1", "a3", "x1"],
                vec!["b0", "b1"]
            ]
        );
    }

    #[test]
    fn nearby_rejects_an_unknown_room() {
        let q = room_queues(&[("broker-a", 1), ("broker-q", 1)]);
        let strategy = AllocateMachineRoomNearby::new(Arc::new(AllocateAveragely), Arc::new(rooms));
        let err = strategy.allocate("G", "c1", &q, &ids(&["c1"])).unwrap_err();
        assert_eq!(
            err,
            AllocateError::NoMachineRoom {
                what: "MessageQueue [topic=T, brokerName=broker-q, queueId=0]".into()
            }
        );
        let q = room_queues(&[("broker-a", 1)]);
        assert!(strategy
            .allocate("G", "c1", &q, &ids(&["c1", "zz"]))
            .is_err());
        assert_eq!(
            short(&strategy.allocate("G", "c1", &q, &ids(&["c1"])).unwrap()),
            ["a0"]
        );
    }
}
