//! What a seed fixes before the run starts: the size of the controller
//! group, the broker sets, the timeouts, and how long faults last. Every
//! other choice is drawn while the run goes, from the same generator.

use fastrand::Rng;

use crate::queue::Time;

/// How the leader treats a decision whose entry does not commit in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitWait {
    /// The answer waits for the commit, however long, and the next decision
    /// waits with it; an answer whose entry never commits is lost.
    Forever,
    /// `node.rs`: after `COMMIT_TIMEOUT` the requester is told SYSTEM_ERROR;
    /// the entry may still commit later, so the next decision waits until it
    /// is applied (or leadership is lost).
    Timeout(Time),
}

/// A defect put into the model on purpose, to show that the invariants
/// catch what they claim to catch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flaw {
    /// Raft grants votes without comparing logs, so a node missing
    /// committed entries can lead.
    VoteWithoutLogCheck,
    /// The leader answers as soon as it has decided, before the commit.
    AnswerBeforeCommit,
    /// The leader decides the next request while earlier decisions are
    /// still being committed, on a state that lacks them.
    DecideWhileCommitting,
    /// After a commit timeout the leader moves on to the next decision,
    /// although the timed-out entry may still commit (what `node.rs` did
    /// before it kept its turn until the entry resolved).
    DecideAfterCommitTimeout,
}

/// One run's fixed parameters.
#[derive(Debug, Clone)]
pub struct Params {
    /// The seed everything is drawn from.
    pub seed: u64,
    /// Controller nodes: 3 or 5.
    pub nodes: usize,
    /// Replicas of each broker set (one or two sets, 2–4 replicas each).
    pub sets: Vec<usize>,
    /// `heartbeatTimeoutMills` the brokers announce.
    pub heartbeat_timeout: Time,
    /// `enableElectUncleanMaster`.
    pub elect_unclean: bool,
    /// Raft election timeout range (each timeout drawn afresh).
    pub election_timeout: (Time, Time),
    /// The leader's AppendEntries period.
    pub raft_tick: Time,
    /// `scanNotActiveBrokerInterval`.
    pub scan_not_active: Time,
    /// `scanInactiveMasterInterval`.
    pub scan_inactive_master: Time,
    /// `electMasterMaxRetryCount`.
    pub elect_retries: u32,
    /// How the leader waits for commits.
    pub commit_wait: CommitWait,
    /// A deliberate defect (never in a normal run).
    pub flaw: Option<Flaw>,
    /// Faults start.
    pub faults_from: Time,
    /// Faults stop and every one of them heals.
    pub faults_until: Time,
    /// The run ends and liveness is judged.
    pub end: Time,
}

impl Params {
    /// The parameters of `seed`, drawn from `rng` (seeded with it).
    pub fn draw(seed: u64, rng: &mut Rng) -> Params {
        let nodes = if rng.bool() { 3 } else { 5 };
        let sets = (0..rng.usize(1..=2)).map(|_| rng.usize(2..=4)).collect();
        // Timeouts are shorter than Java's defaults (10 s heartbeat timeout,
        // 5 s scans) so that a run of a couple of simulated minutes sees
        // many failovers; what matters is their order: Raft elections well
        // inside a heartbeat timeout, scans well inside it too.
        Params {
            seed,
            nodes,
            sets,
            heartbeat_timeout: rng.u64(3_000..=6_000),
            elect_unclean: rng.u8(0..5) == 0,
            election_timeout: (500, 1_000),
            raft_tick: 150,
            scan_not_active: 1_000,
            scan_inactive_master: 2_000,
            elect_retries: 3,
            // node.rs's COMMIT_TIMEOUT.
            commit_wait: CommitWait::Timeout(5_000),
            flaw: None,
            // A minute of healing is several heartbeat timeouts, leader
            // lookups (10 s) and replica-info syncs (5 s) long.
            faults_from: 5_000,
            faults_until: 80_000,
            end: 140_000,
        }
    }

    /// The broker set names, by set index.
    pub fn set_name(set: usize) -> String {
        format!("broker-{}", (b'a' + set as u8) as char)
    }
}
