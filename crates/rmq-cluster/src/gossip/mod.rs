//! The core over chitchat: membership, failure detection and anti-entropy
//! of each node's published keys, over UDP.
//!
//! chitchat keeps, for every member, the key-values it publishes with a
//! version per write, reconciles them between pairs of nodes each gossip
//! round (scuttlebutt: only what the other side lacks travels), and judges
//! members live or dead from their heartbeats (phi accrual). [`Gossip`]
//! reads what changed since its last look into [`MemberUpdate`]s for the
//! core, writes the core's [`Effect::Publish`] and [`Effect::Delete`], and
//! gossips at once with every live member on [`Effect::GossipNow`], so that
//! a change travels in one round trip rather than at the next round.
//!
//! [`Effect::Publish`]: crate::core::Effect::Publish
//! [`Effect::Delete`]: crate::core::Effect::Delete
//! [`Effect::GossipNow`]: crate::core::Effect::GossipNow

mod driver;
mod transport;

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use chitchat::{spawn_chitchat, ChitchatConfig, ChitchatHandle, ChitchatId, FailureDetectorConfig};

use crate::core::{Effect, Liveness, MemberId, MemberUpdate};
pub use driver::{run, Host, PullAnswer};
pub use transport::{CountingTransport, GossipStats};

/// How a node gossips.
#[derive(Debug, Clone)]
pub struct GossipSettings {
    /// Gossip of another id is refused: two deployments never merge.
    pub cluster_id: String,
    /// This node's name: its remoting address, `host:port`.
    pub node: String,
    /// This incarnation (wall-clock ms at start: a restart is newer).
    pub generation: u64,
    /// The gossip address peers use (the bound address when it is not a
    /// wildcard).
    pub advertise: SocketAddr,
    /// Other nodes' gossip addresses, `host:port` (host names are resolved
    /// again every so often).
    pub seeds: Vec<String>,
    /// Time between two gossip rounds.
    pub interval: Duration,
    /// The failure detector's phi threshold: a member silent for this many
    /// mean heartbeat intervals is dead.
    pub phi_threshold: f64,
    /// How long a dead member is remembered before it is forgotten.
    pub dead_grace: Duration,
    /// How long a deleted key's tombstone is kept in the library's state
    /// (the core deletes a key only once every member has acknowledged it).
    pub deleted_key_grace: Duration,
}

/// A running gossip node.
pub struct Gossip {
    handle: ChitchatHandle,
    me: ChitchatId,
    stats: Arc<GossipStats>,
    known: HashMap<ChitchatId, Known>,
}

/// What [`Gossip::changes`] read of a member last time.
#[derive(Debug, Clone, Copy)]
struct Known {
    max_version: u64,
    last_gc_version: u64,
    liveness: Liveness,
}

/// Members that changed, and members the library forgot.
#[derive(Debug, Default)]
pub struct Changes {
    /// Changed members.
    pub updates: Vec<MemberUpdate>,
    /// Forgotten members.
    pub gone: Vec<MemberId>,
}

impl Gossip {
    /// Starts gossiping on `socket` (bound by the caller) with `initial`
    /// keys published.
    ///
    /// # Errors
    /// The socket cannot be used by the runtime.
    pub async fn spawn(
        settings: &GossipSettings,
        socket: std::net::UdpSocket,
        initial: Vec<(String, String)>,
    ) -> anyhow::Result<Gossip> {
        let listen = socket.local_addr()?;
        let me = ChitchatId::new(
            settings.node.clone(),
            settings.generation,
            settings.advertise,
        );
        let stats = Arc::new(GossipStats::default());
        let config = ChitchatConfig {
            chitchat_id: me.clone(),
            cluster_id: settings.cluster_id.clone(),
            gossip_interval: settings.interval,
            listen_addr: listen,
            seed_nodes: settings.seeds.clone(),
            failure_detector_config: FailureDetectorConfig {
                phi_threshold: settings.phi_threshold,
                // Heartbeats arrive about once a round: the window and the
                // prior follow the round, so detection scales with it.
                sampling_window_size: 100,
                max_interval: settings.interval * 20,
                initial_interval: settings.interval,
                dead_node_grace_period: settings.dead_grace,
            },
            marked_for_deletion_grace_period: settings.deleted_key_grace,
            catchup_callback: None,
            extra_liveness_predicate: None,
        };
        let transport = CountingTransport {
            socket: parking_lot::Mutex::new(Some(socket)),
            stats: stats.clone(),
            cluster_id: settings.cluster_id.clone(),
        };
        let handle = spawn_chitchat(config, initial, &transport).await?;
        Ok(Gossip {
            handle,
            me,
            stats,
            known: HashMap::new(),
        })
    }

    /// This member.
    pub fn member_id(&self) -> MemberId {
        member_id(&self.me)
    }

    /// The gossip socket's counters.
    pub fn stats(&self) -> &Arc<GossipStats> {
        &self.stats
    }

    /// The members whose liveness or published state changed since the
    /// last call (each with the keys written since), and those forgotten.
    pub async fn changes(&mut self) -> Changes {
        let chitchat = self.handle.chitchat();
        let chitchat = chitchat.lock().await;
        let live: HashSet<&ChitchatId> = chitchat.live_nodes().collect();
        let dead: HashSet<&ChitchatId> = chitchat.dead_nodes().collect();
        let mut changes = Changes::default();
        let mut present = HashSet::new();
        for (id, state) in chitchat.node_states() {
            if *id == self.me {
                continue;
            }
            present.insert(id.clone());
            let liveness = if live.contains(id) {
                Liveness::Live
            } else if dead.contains(id) {
                Liveness::Dead
            } else {
                Liveness::Unknown
            };
            let previous = self.known.get(id).copied();
            let full = previous.is_none_or(|known| {
                known.last_gc_version != state.last_gc_version()
                    || state.max_version() < known.max_version
            });
            let from = if full {
                0
            } else {
                previous.map_or(0, |known| known.max_version)
            };
            let unchanged = previous.is_some_and(|known| {
                !full && known.max_version == state.max_version() && known.liveness == liveness
            });
            self.known.insert(
                id.clone(),
                Known {
                    max_version: state.max_version(),
                    last_gc_version: state.last_gc_version(),
                    liveness,
                },
            );
            if unchanged {
                continue;
            }
            let keys = state
                .key_values_including_deleted()
                .filter(|(_, value)| value.version > from)
                .map(|(key, value)| {
                    let value = (!value.is_deleted()).then(|| value.value.clone());
                    (key.to_owned(), value)
                })
                .filter(|(_, value)| !full || value.is_some())
                .collect();
            changes.updates.push(MemberUpdate {
                id: member_id(id),
                liveness,
                gossip_addr: id.gossip_advertise_addr.to_string(),
                changes: keys,
                full,
            });
        }
        self.known.retain(|id, _| {
            let keep = present.contains(id);
            if !keep {
                changes.gone.push(member_id(id));
            }
            keep
        });
        changes
    }

    /// Carries out the core's effects on this node's keys.
    pub async fn apply<'a>(&self, effects: impl IntoIterator<Item = &'a Effect>) {
        let chitchat = self.handle.chitchat();
        let mut gossip_now = false;
        {
            let mut chitchat = chitchat.lock().await;
            for effect in effects {
                match effect {
                    Effect::Publish { key, value } => {
                        chitchat.self_node_state().set(key, value);
                    }
                    Effect::Delete { key } => chitchat.self_node_state().delete(key),
                    Effect::GossipNow => gossip_now = true,
                    _ => {}
                }
            }
        }
        if gossip_now {
            self.gossip_with_live_members().await;
        }
    }

    async fn gossip_with_live_members(&self) {
        let peers: Vec<SocketAddr> = {
            let chitchat = self.handle.chitchat();
            let chitchat = chitchat.lock().await;
            chitchat
                .live_nodes()
                .filter(|id| **id != self.me)
                .map(|id| id.gossip_advertise_addr)
                .collect()
        };
        self.gossip_with(peers);
    }

    fn gossip_with(&self, peers: impl IntoIterator<Item = SocketAddr>) {
        for peer in peers {
            // The command queue only fails once the gossip task has
            // stopped, which `terminated` reports.
            let _ = self.handle.gossip(peer);
        }
    }

    /// Gossips at once with every node this one knows of, up or not, and
    /// with its seeds. While a node is not ready it waits to see each
    /// member's heartbeat advance and to hold what they publish: asking
    /// every few polls instead of once a round takes a restarted node to
    /// readiness in about one of its peers' rounds rather than two or three
    /// of its own.
    pub async fn gossip_with_all_known(&self) {
        let peers: std::collections::BTreeSet<SocketAddr> = {
            let chitchat = self.handle.chitchat();
            let chitchat = chitchat.lock().await;
            chitchat
                .node_states()
                .keys()
                .filter(|id| **id != self.me)
                .map(|id| id.gossip_advertise_addr)
                .chain(chitchat.seed_nodes())
                .filter(|addr| *addr != self.me.gossip_advertise_addr)
                .collect()
        };
        self.gossip_with(peers);
    }

    /// Resolves when the gossip task stops by itself (its socket failed,
    /// or it panicked on a message): the error says why.
    pub fn terminated(&self) -> impl std::future::Future<Output = anyhow::Result<()>> + use<> {
        self.handle.termination_watcher()
    }

    /// Stops gossiping.
    pub fn shutdown(self) {
        let _ = self.handle.initiate_shutdown();
    }
}

impl Drop for Gossip {
    /// The gossip task is the library's: it stops when told, not when its
    /// handle goes.
    fn drop(&mut self) {
        let _ = self.handle.initiate_shutdown();
    }
}

fn member_id(id: &ChitchatId) -> MemberId {
    MemberId::new(id.node_id.to_string(), id.generation_id)
}
