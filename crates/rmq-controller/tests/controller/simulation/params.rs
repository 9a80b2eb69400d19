//! What a seed fixes before the run starts: the size of the controller
//! group, the broker sets, the timeouts, and how long faults last. Every
//! other choice is drawn while the run goes, from the same generator.

use fastrand::Rng;
use rmq_controller::core::driver::Settings;

use crate::simulation::queue::Time;

/// A defect put into the model on purpose, to show that the invariants
/// catch what they claim to catch. The driver is the product's and has no
/// defects to switch on; the last three are lies its runner tells it about
/// commits, which is how a broken Raft adapter would break it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flaw {
    /// Raft grants votes without comparing logs, so a node missing
    /// committed entries can lead.
    VoteWithoutLogCheck,
    /// Every proposal is reported applied at once: the leader answers
    /// before the commit, and decides the next request on a state that
    /// lacks the entry.
    AnswerBeforeCommit,
    /// As `AnswerBeforeCommit`, but the answer is held until the entry is
    /// really applied: only the next decisions are taken too early.
    DecideWhileCommitting,
    /// A proposal whose commit timed out is reported failed, although its
    /// entry may still commit: the leader moves on to the next decision
    /// (the controller node's rule before the turn was kept until the
    /// entry resolved).
    DecideAfterCommitTimeout,
}

impl Flaw {
    /// Every flaw.
    pub const ALL: [Flaw; 4] = [
        Flaw::VoteWithoutLogCheck,
        Flaw::AnswerBeforeCommit,
        Flaw::DecideWhileCommitting,
        Flaw::DecideAfterCommitTimeout,
    ];
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
    /// `processReadEvent`: a read barrier before every decision.
    pub process_read_event: bool,
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
            process_read_event: rng.u8(0..3) == 0,
            election_timeout: (500, 1_000),
            raft_tick: 150,
            scan_not_active: 1_000,
            scan_inactive_master: 2_000,
            elect_retries: 3,
            flaw: None,
            // A minute of healing is several heartbeat timeouts, leader
            // lookups (10 s) and replica-info syncs (5 s) long.
            faults_from: 5_000,
            faults_until: 80_000,
            end: 140_000,
        }
    }

    /// The driver's settings: these parameters, with role-change notices
    /// on (Java's default).
    pub fn settings(&self) -> Settings {
        Settings {
            process_read_event: self.process_read_event,
            elect_unclean: self.elect_unclean,
            elect_attempts: self.elect_retries,
            notify_role_changed: true,
        }
    }

    /// The broker set names, by set index.
    pub fn set_name(set: usize) -> String {
        format!("broker-{}", (b'a' + set as u8) as char)
    }
}
