//! Seeds that broke an invariant, kept as named tests.
//!
//! Both show the controller node's first commit-timeout rule: after 5 s
//! without a commit the leader answered SYSTEM_ERROR and took the next
//! decision at once, while the timed-out entry stayed in its Raft log and could still
//! commit; the next decision was then taken on a state that lacked it, and
//! when the partition healed both entries committed, the second applied on
//! a state it was not decided on. The driver now keeps the turn until the
//! entry is applied or dropped; the old rule survives as
//! [`Flaw::DecideAfterCommitTimeout`] (the runner reports a timed-out
//! commit as failed), which these seeds still catch.
//!
//! A seed's run depends on every detail of the model and the driver; after
//! a change to either the seeds may need finding again:
//! `WAYMARK_SIM_FLAW=DecideAfterCommitTimeout scripts/simulate.sh 20000`
//! lists the seeds the old rule breaks (18 of seeds 0..20 000 when these
//! were chosen).

use crate::simulation::params::Flaw;
use crate::simulation::run_seed;

/// Seed 4526 (3 nodes): leader n1 (term 2) cannot reach a majority; its
/// own election of broker-a's replica 2 (entry 17) times out, and the retry
/// is decided on the state without it: replica 3 elected "at master epoch
/// 2" (entry 18) and notified so. Both committed when n0 restarted: epoch 2
/// belonged to replica 2, epoch 3 to replica 3 — and broker 3 believed it
/// was master of epoch 2.
#[test]
fn regression_commit_timeout_announces_an_epoch_another_master_holds() {
    check(4526);
}

/// Seed 18484 (3 nodes): leader n0 (term 1) is alone once n1 has crashed
/// and a partition cuts off n2; it elects broker-a's replica 3 for a master
/// it no longer hears (entry 8), and the commit times out. The old master,
/// replica 1, still proposes SSS {1, 2} at master epoch 1, and the leader
/// accepts it against its applied state (master 1, epoch 1) as entry 9.
/// Both committed when the partition ended and n0 led again: master 3, SSS
/// {1, 2} — the master outside its own SSS.
#[test]
fn regression_commit_timeout_lets_a_stale_alter_drop_the_master_from_its_sss() {
    check(18484);
}

/// The seed passes with the product's driver, and breaks an invariant when
/// its runner reports a timed-out commit as failed (the old rule).
fn check(seed: u64) {
    if let Err(failure) = run_seed(seed, |_| {}) {
        panic!("{failure}");
    }
    let old_rule = run_seed(seed, |p| p.flaw = Some(Flaw::DecideAfterCommitTimeout));
    assert!(
        old_rule.is_err(),
        "seed {seed} no longer shows the old commit-timeout rule's failure; find another with WAYMARK_SIM_FLAW=DecideAfterCommitTimeout scripts/simulate.sh 20000"
    );
}
