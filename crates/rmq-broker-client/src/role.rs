//! The role of a broker as the NameServers see it: its id and where it
//! replicates from (Java `BrokerController.handleRegisterBrokerResult`).
//!
//! Plain values. They change through registration answers or from outside
//! (a controller, an operator) via [`Registrar::set_role`](crate::Registrar::set_role);
//! the registrar owns the live copy.

/// Where this broker replicates from, as learnt from registration answers
/// (the first successful answer of a cycle) or set from outside ([`Registrar::set_role`](crate::Registrar::set_role)).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MasterInfo {
    /// The master's address for metadata sync (Java `SlaveSynchronize.masterAddr`):
    /// replaced by every applied answer, `None` included.
    pub master_addr: Option<String>,
    /// The HA master address: replaced only by answers that carry one, and
    /// never when a static `haMasterAddress` is configured.
    pub ha_server_addr: Option<String>,
}

/// A role decided outside the registrar (controller, DLedger, operator).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Role {
    /// 0 for the master, the assigned id (≥ 1) for a slave.
    pub broker_id: i64,
    /// Where to replicate from; `None` for a master.
    pub master: MasterInfo,
    /// `Some(epoch)` bumps the DataVersion with `stateVersion = epoch`, as a
    /// controller-mode role change does (`ReplicasManager.changeToMaster` and
    /// `changeToSlave` bump it with the master epoch); `None` leaves it.
    pub state_version: Option<i64>,
}
