//! Seeds that broke an invariant, kept as named tests.
//!
//! Both broke under the first commit-timeout rule of `node.rs`: after
//! `COMMIT_TIMEOUT` (5 s) `ControllerNode::decide_and_commit` answered
//! SYSTEM_ERROR and took the next decision at once, while the timed-out
//! entry stayed in the leader's Raft log and could still commit; the next
//! decision was then taken on a state that lacked it, and when the
//! partition healed both entries committed, the second applied on a state
//! it was not decided on. `node.rs` now keeps its turn until the entry is
//! applied or fails ([`CommitWait::Timeout`] models that), and the old rule
//! survives as [`Flaw::DecideAfterCommitTimeout`], which these seeds still
//! catch.
//!
//! A seed's run depends on every detail of the model; after a change to it
//! the seeds may need finding again, by running `scripts/simulate.sh` on a
//! build whose default flaw is `Flaw::DecideAfterCommitTimeout`.

use crate::params::{CommitWait, Flaw};
use crate::{run_seed, NODE_COMMIT_TIMEOUT};

/// Seed 2858 (3 nodes): leader n2 (term 2) cannot reach a majority; its
/// controller-triggered election of broker-a's replica 2 (entry 14) times
/// out, and the retry decided on the state without it: replica 4 elected
/// "at master epoch 2", notified to the brokers with epoch 2. Both entries
/// committed when n0 returned: epoch 2 belonged to replica 2, epoch 3 to
/// replica 4 — and broker 4 believed it was master of epoch 2.
#[test]
fn regression_commit_timeout_announces_an_epoch_another_master_holds() {
    check(2858);
}

/// Seed 3289 (3 nodes): leader n2 (term 21), alone after n1 and n0 crash,
/// elects broker-b's replica 3 for a master it no longer hears (entry 19);
/// the commit times out. The old master, replica 2, still proposes SSS {2}
/// at master epoch 1, and the leader accepted it against its applied state
/// (master 2, epoch 1) as entry 20. Both committed when n0 restarted:
/// master 3, SSS {2} — the master outside its own SSS.
#[test]
fn regression_commit_timeout_lets_a_stale_alter_drop_the_master_from_its_sss() {
    check(3289);
}

/// The seed passes with the leader keeping its turn through a commit
/// timeout, and breaks an invariant with the old rule.
fn check(seed: u64) {
    let timeout =
        |p: &mut crate::params::Params| p.commit_wait = CommitWait::Timeout(NODE_COMMIT_TIMEOUT);
    if let Err(failure) = run_seed(seed, timeout) {
        panic!("{failure}");
    }
    let old_rule = run_seed(seed, |p| {
        timeout(p);
        p.flaw = Some(Flaw::DecideAfterCommitTimeout);
    });
    assert!(
        old_rule.is_err(),
        "seed {seed} no longer shows the old commit-timeout rule's failure; find another with scripts/simulate.sh"
    );
}
