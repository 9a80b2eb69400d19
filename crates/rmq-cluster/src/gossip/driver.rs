//! Runs a core over gossip: reads members' changes into the core every
//! poll, ticks it, hands its publications to gossip in order, and carries
//! out its other effects through the [`Host`] (the NameServer), which pulls
//! registrations and applies or drops relayed brokers in its route table.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::{mpsc, Notify};

use super::Gossip;
use crate::core::{
    BrokerDigest, BrokerRef, ClusterCore, Effect, MemberId, Millis, PullFailure, PullId,
    PullRequest, RelayedGone,
};

/// A pulled registration: the digest the holder answered with, and the
/// registration itself, applied only if the core says so.
#[derive(Debug)]
pub struct PullAnswer<R> {
    /// The holder's digest of what it sent.
    pub digest: BrokerDigest,
    /// The registration.
    pub registration: R,
}

/// What the driver needs of the NameServer.
pub trait Host: Send + Sync + 'static {
    /// A pulled registration, as the host decodes it.
    type Registration: Send + 'static;

    /// The core's clock.
    fn now(&self) -> Millis;

    /// Pulls a registration from a member.
    fn pull(
        &self,
        request: PullRequest,
    ) -> impl Future<Output = Result<PullAnswer<Self::Registration>, PullFailure>> + Send + 'static;

    /// Applies a pulled registration as a relayed broker.
    fn apply_pulled(&self, broker: &BrokerRef, from: &MemberId, registration: Self::Registration);

    /// Drops a relayed broker.
    fn remove_relayed(&self, broker: &BrokerRef, why: &RelayedGone);

    /// Any other effect (refusals, failed pulls, readiness): logs and
    /// metrics.
    fn observe(&self, effect: &Effect);
}

/// How often a node not yet ready gossips with every node it knows of
/// ([`Gossip::gossip_with_all_known`]), beside the library's rounds.
pub const BOOTSTRAP_GOSSIP: Duration = Duration::from_millis(100);

/// Drives `core` over `gossip` until `shutdown` resolves or gossip stops
/// by itself (the error is returned then). `published` wakes the loop when
/// the host changed the core's publications outside it (a direct
/// registration), so they go out at once rather than at the next poll.
///
/// # Errors
/// The gossip task stopped (its socket failed, or it panicked on a message).
pub async fn run<H: Host>(
    core: Arc<Mutex<ClusterCore>>,
    mut gossip: Gossip,
    host: Arc<H>,
    published: Arc<Notify>,
    poll: Duration,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let (answers_tx, mut answers) = mpsc::unbounded_channel();
    let mut held: HashMap<PullId, H::Registration> = HashMap::new();
    let mut bootstrap_gossip_at = tokio::time::Instant::now();
    let mut ticks = tokio::time::interval(poll);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let terminated = gossip.terminated();
    tokio::pin!(shutdown);
    tokio::pin!(terminated);
    loop {
        let effects = tokio::select! {
            () = &mut shutdown => break,
            result = &mut terminated => {
                return Err(result.err().unwrap_or_else(|| anyhow::anyhow!("the gossip task stopped")));
            }
            _ = ticks.tick() => {
                let changes = gossip.changes().await;
                let mut core = core.lock();
                let now = host.now();
                let mut effects = Vec::new();
                for update in changes.updates {
                    effects.extend(core.member_changed(update, now));
                }
                for id in &changes.gone {
                    core.member_gone(id);
                }
                effects.extend(core.tick(now));
                effects
            }
            () = published.notified() => Vec::new(),
            Some((id, result)) = answers.recv() => {
                let digest = match result {
                    Ok(PullAnswer { digest, registration }) => {
                        held.insert(id, registration);
                        Ok(digest)
                    }
                    Err(failure) => Err(failure),
                };
                let mut core = core.lock();
                let now = host.now();
                core.pull_done(id, digest, now)
            }
        };
        let (publications, ready) = {
            let mut core = core.lock();
            (core.take_publications(), core.is_ready())
        };
        gossip.apply(&publications).await;
        if !ready && bootstrap_gossip_at.elapsed() >= BOOTSTRAP_GOSSIP {
            bootstrap_gossip_at = tokio::time::Instant::now();
            gossip.gossip_with_all_known().await;
        }
        for effect in effects {
            match effect {
                Effect::Pull(request) => {
                    let (host, answers) = (host.clone(), answers_tx.clone());
                    tokio::spawn(async move {
                        let id = request.id;
                        let result = host.pull(request).await;
                        let _ = answers.send((id, result));
                    });
                }
                Effect::ApplyPulled { id, broker, from } => {
                    if let Some(registration) = held.remove(&id) {
                        host.apply_pulled(&broker, &from, registration);
                    }
                }
                Effect::DiscardPulled { id, .. } => {
                    held.remove(&id);
                }
                Effect::RemoveRelayed { broker, why } => host.remove_relayed(&broker, &why),
                Effect::Publish { .. } | Effect::Delete { .. } | Effect::GossipNow => {}
                other => host.observe(&other),
            }
        }
    }
    gossip.shutdown();
    Ok(())
}
