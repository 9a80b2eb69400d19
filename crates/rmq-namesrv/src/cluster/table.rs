//! What the cluster does to the route table, as plain functions over the
//! table and the core: the server's tasks call them, and so does the
//! cluster simulation (crates/rmq-namesrv/tests/cluster_sim), which thus
//! runs the same code between core and table, not a copy of it.

use parking_lot::Mutex;
use rmq_cluster::core::{BrokerDigest, ClusterCore, MemberId, RemovalCause, Removing, Version};

use super::broker_ref;
use super::held_topics::HeldTopicLists;
use crate::metrics::RemovalReason;
use crate::route::{
    BrokerKey, BrokerRegistration, Millis, RegisterError, RegisterOutcome, SharedRoutes,
    UnregisterOutcome, Unregistration, DEFAULT_BROKER_TIMEOUT_MS,
};

/// What a direct registration says of its broker, taken before the
/// registration is handed to the table.
#[derive(Debug, Clone)]
pub struct Registered {
    /// The broker.
    pub key: BrokerKey,
    /// Its name.
    pub name: String,
    /// Its id.
    pub id: i64,
    /// Its DataVersion.
    pub version: rmq_protocol::DataVersion,
    /// How many topics it sent.
    pub topic_count: usize,
    /// Its heartbeat timeout, if it sent one.
    pub timeout_ms: Option<u64>,
}

impl Registered {
    /// What `registration` says of its broker.
    pub fn of(registration: &BrokerRegistration) -> Registered {
        Registered {
            key: BrokerKey::new(&registration.cluster, &registration.broker_addr),
            name: registration.broker_name.clone(),
            id: registration.broker_id,
            version: registration.data_version,
            topic_count: registration.topic_configs.len(),
            timeout_ms: registration.heartbeat_timeout_ms,
        }
    }

    /// The digest to publish for it: `topics_fingerprint` as the table took
    /// it (0 where it took none), `changed_at` the wall clock now.
    pub fn digest(&self, topics_fingerprint: Option<u64>, changed_at: u64) -> BrokerDigest {
        BrokerDigest {
            name: self.name.clone(),
            id: self.id,
            version: Version {
                state_version: self.version.state_version,
                counter: self.version.counter,
                timestamp: self.version.timestamp,
            },
            topics: topics_fingerprint.unwrap_or(0),
            topic_count: u32::try_from(self.topic_count).unwrap_or(u32::MAX),
            changed_at,
            timeout_ms: self.timeout_ms.unwrap_or(DEFAULT_BROKER_TIMEOUT_MS),
            silent_ms: None,
        }
    }
}

/// What [`remove_batch`] did besides the table's outcome.
#[derive(Debug, Default)]
pub struct BatchOutcome {
    /// The table's outcome for the brokers removed.
    pub removed: UnregisterOutcome,
    /// Direct brokers kept as relayed from another member, with why they
    /// were to go.
    pub demoted: Vec<(BrokerKey, RemovalReason, MemberId)>,
}

/// A batch of removals on a cluster node: a direct broker that another
/// member also holds directly stays, as relayed from it, instead of leaving
/// (its connection here closed, or it expired here, but it is alive
/// there); the rest is removed as on a lone node. The core learns what
/// became of each: a direct broker gone (or demoted) is published as
/// removed, a relayed one gone is reconciled again.
pub fn remove_batch(
    routes: &SharedRoutes,
    core: &Mutex<ClusterCore>,
    batch: &[Unregistration],
    reasons: &[RemovalReason],
    notify: bool,
    now: Millis,
) -> BatchOutcome {
    let (plan, direct): (Vec<Option<MemberId>>, Vec<bool>) = {
        let table = routes.read();
        let core = core.lock();
        batch
            .iter()
            .map(|unregistration| {
                let direct = table.is_direct(&unregistration.key);
                let keep = direct
                    .then(|| core.removing_direct(&broker_ref(&unregistration.key), now))
                    .and_then(|removing| match removing {
                        Removing::Demote(member) => Some(member),
                        Removing::Remove => None,
                    });
                (keep, direct)
            })
            .unzip()
    };
    let mut removals = Vec::new();
    let mut demoted = Vec::new();
    let removed = {
        let mut table = routes.write();
        for ((unregistration, keep), reason) in batch.iter().zip(&plan).zip(reasons) {
            match keep {
                Some(member)
                    if table.demote(
                        &unregistration.key,
                        member.node.as_str().into(),
                        unregistration.fence,
                    ) =>
                {
                    demoted.push((unregistration.key.clone(), *reason, member.clone()));
                }
                _ => removals.push(unregistration.clone()),
            }
        }
        table.unregister_batch(&removals, notify)
    };
    let mut core = core.lock();
    for (key, reason, member) in &demoted {
        core.direct_removed(&broker_ref(key), cause(*reason), Some(member.clone()));
    }
    for key in &removed.removed_brokers {
        let position = batch.iter().position(|u| u.key == *key);
        if position.is_some_and(|i| direct[i]) {
            let reason = position.map_or(RemovalReason::Unregister, |i| reasons[i]);
            core.direct_removed(&broker_ref(key), cause(reason), None);
        } else {
            core.relayed_removed(&broker_ref(key));
        }
    }
    BatchOutcome { removed, demoted }
}

fn cause(reason: RemovalReason) -> RemovalCause {
    match reason {
        RemovalReason::Close => RemovalCause::Close,
        RemovalReason::Expiry => RemovalCause::Expiry,
        RemovalReason::Unregister | RemovalReason::Cluster => RemovalCause::Unregister,
    }
}

/// Applies a registration pulled from `from` as a relayed broker (never
/// over a direct one: [`RegisterOutcome::kept_direct`]).
///
/// # Errors
/// As [`SharedRoutes::register_relayed`].
pub fn apply_relayed(
    routes: &SharedRoutes,
    registration: BrokerRegistration,
    from: &MemberId,
    now: Millis,
) -> Result<RegisterOutcome, RegisterError> {
    routes.register_relayed(registration, from.node.as_str().into(), now)
}

/// Drops the broker at `key` if it is still relayed (one that registered
/// here directly meanwhile stays). Returns whether it went.
pub fn drop_relayed(routes: &SharedRoutes, key: &BrokerKey) -> bool {
    let mut table = routes.write();
    let relayed = table
        .live_broker(key)
        .is_some_and(|live| live.relayed_from.is_some());
    let Some(unregistration) = relayed.then(|| table.unregistration_for(key)).flatten() else {
        return false;
    };
    !table
        .unregister_batch(&[unregistration], false)
        .removed_brokers
        .is_empty()
}

/// A direct registration was applied at `now` (`changed_at` the wall
/// clock): the core publishes the broker's digest if it changed.
pub fn direct_registered(
    routes: &SharedRoutes,
    core: &Mutex<ClusterCore>,
    registered: &Registered,
    now: Millis,
    changed_at: u64,
) {
    let digest = registered.digest(topics_fingerprint(routes, &registered.key), changed_at);
    core.lock()
        .direct_registered(broker_ref(&registered.key), digest, now);
}

/// The fingerprint of the broker's topic list as the table holds it, if
/// the table holds the list as the broker sent it (a master's registration
/// that wrote or found every topic as sent).
pub fn topics_fingerprint(routes: &SharedRoutes, key: &BrokerKey) -> Option<u64> {
    routes
        .read()
        .live_broker(key)
        .and_then(|live| live.held_topics)
        .map(|held| held.fingerprint)
}

/// What a pull of `key` is answered with: the registration as the table
/// holds it and its digest, when the broker is registered here directly
/// (the digest this node publishes), or, with `relayed_ok`, held here as
/// relayed (the digest of the copy pulled).
/// Its topics come from `lists` while the topic map is unwritten.
pub fn held(
    routes: &SharedRoutes,
    core: &Mutex<ClusterCore>,
    lists: &HeldTopicLists,
    key: &BrokerKey,
    relayed_ok: bool,
) -> Option<(BrokerRegistration, BrokerDigest)> {
    let table = routes.read_briefly();
    let edits = table.topic_edits();
    let registration = table.held_registration_with(key, 0, relayed_ok, |name, collect| {
        lists.get_or_collect(name, edits, collect)
    })?;
    let core = core.lock();
    let broker = broker_ref(key);
    let digest = core
        .direct_digest(&broker)
        .or_else(|| relayed_ok.then(|| core.relayed_digest(&broker)).flatten())?;
    Some((registration, digest))
}
