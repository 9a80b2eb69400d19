//! Everything that can happen in a run: messages on the network, timers of
//! nodes and brokers, and the fault schedule's steps. Timers carry the
//! incarnation of whoever set them, so a timer of a crashed life is
//! ignored after a restart.

use rmq_controller::core::driver::Timer;
use rmq_controller::Answer;
use rmq_wire::RemotingCommand;

use crate::simulation::broker::log::Log;
use crate::simulation::faults::Fault;
use crate::simulation::net::Endpoint;
use crate::simulation::raft;

/// A message between endpoints.
#[derive(Debug, Clone)]
pub enum Msg {
    /// Raft, node to node.
    Raft(raft::Message),
    /// A broker's two-way request to a controller node.
    Request { req: u64, cmd: RemotingCommand },
    /// A node's answer to it.
    Response { req: u64, answer: Answer },
    /// CONTROLLER_GET_METADATA_INFO: which node leads (any node answers).
    Metadata { req: u64 },
    /// Its answer: the leader the node knows of.
    MetadataReply { req: u64, leader: Option<usize> },
    /// BROKER_HEARTBEAT, one-way, on the broker's connection `conn` to
    /// this node.
    Heartbeat { cmd: RemotingCommand, conn: u64 },
    /// The broker's process died and its kernel closed connection `conn`.
    Closed { conn: u64 },
    /// NOTIFY_BROKER_ROLE_CHANGED, one-way, controller to broker.
    Notify { cmd: RemotingCommand },
    /// HA: a slave (controller id `id`) asks its master for the log past
    /// its own, reporting how far it has it.
    HaPull { id: i64, log: Log },
    /// HA: the master's log, at its master epoch.
    HaPush { epoch: i32, log: Log },
}

impl Msg {
    /// A short name for traces.
    pub fn describe(&self) -> String {
        match self {
            Msg::Raft(m) => match m {
                raft::Message::Vote {
                    term,
                    last_index,
                    last_term,
                } => format!("Vote(t{term} last {last_index}/t{last_term})"),
                raft::Message::VoteReply { term, granted } => {
                    format!("VoteReply(t{term} {granted})")
                }
                raft::Message::Append {
                    term,
                    prev_index,
                    entries,
                    commit,
                    ..
                } => format!(
                    "Append(t{term} prev {prev_index} +{} commit {commit})",
                    entries.len()
                ),
                raft::Message::AppendReply {
                    term,
                    success,
                    index,
                    ..
                } => format!("AppendReply(t{term} {success} {index})"),
            },
            Msg::Request { req, cmd } => {
                format!(
                    "Request#{req} {:?} {:?}",
                    cmd.request_code(),
                    cmd.ext_fields
                )
            }
            Msg::Response { req, answer } => format!(
                "Response#{req} {:?} {:?} {:?}",
                answer.code, answer.ext, answer.remark
            ),
            Msg::Metadata { req } => format!("Metadata#{req}"),
            Msg::MetadataReply { req, leader } => format!("MetadataReply#{req} {leader:?}"),
            Msg::Heartbeat { conn, .. } => format!("Heartbeat conn {conn}"),
            Msg::Closed { conn } => format!("Closed conn {conn}"),
            Msg::Notify { cmd } => format!("Notify {:?}", cmd.ext_fields),
            Msg::HaPull { id, log } => format!("HaPull id {id} {log}"),
            Msg::HaPush { epoch, log } => format!("HaPush epoch {epoch} {log}"),
        }
    }

    /// Whether the trace leaves it out: frequent, and its effects are
    /// traced anyway (entries as they are applied, HA as SSS changes).
    pub fn is_routine(&self) -> bool {
        matches!(
            self,
            Msg::Raft(raft::Message::Append { .. } | raft::Message::AppendReply { .. })
                | Msg::Heartbeat { .. }
                | Msg::HaPull { .. }
                | Msg::HaPush { .. }
        )
    }
}

/// A controller node's timer.
#[derive(Debug, Clone, Copy)]
pub enum NodeTimer {
    /// The Raft election timeout of generation `gen` (a newer reset wins).
    Election(u64),
    /// The leader's AppendEntries period.
    Tick,
    /// `scanNotActiveBrokerInterval`: expire silent replicas.
    Expiry,
    /// `scanInactiveMasterInterval`: elect for sets with a dead master.
    MasterScan,
    /// A timer the request driver asked for.
    Driver(Timer),
}

/// A broker's timer.
#[derive(Debug, Clone, Copy)]
pub enum BrokerTimer {
    /// Another attempt of the start-up sequence.
    Start,
    /// `brokerHeartbeatInterval`.
    Heartbeat,
    /// `syncBrokerMetadataPeriod`: GET_REPLICA_INFO.
    SyncReplica,
    /// `checkSyncStateSetPeriod`: the master's SSS shrink check.
    SssCheck,
    /// The HA loop: a slave pulls, a master takes writes.
    Ha,
    /// `syncControllerMetadataPeriod`: find the leader again.
    Metadata,
    /// Request `req` has had no answer within the invoke timeout.
    CallTimeout(u64),
}

/// Anything in the event queue.
#[derive(Debug, Clone)]
pub enum Happening {
    /// A message arrives.
    Deliver {
        from: Endpoint,
        to: Endpoint,
        msg: Msg,
    },
    /// A node's timer of incarnation `inc` fires.
    Node {
        node: usize,
        inc: u64,
        timer: NodeTimer,
    },
    /// A broker's timer of incarnation `inc` fires.
    Broker {
        broker: usize,
        inc: u64,
        timer: BrokerTimer,
    },
    /// A step of the fault schedule.
    Fault(Fault),
}
