//! What each request code needs, as a table a server passes to its `Policy`.

/// What a request code needs before it is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requirement {
    /// Served to anyone.
    Open,
    /// A read that discloses configuration: needs an authenticated principal
    /// when the policy protects reads, else open.
    ProtectedRead,
    /// A broker write (registration, liveness): needs an authenticated
    /// principal, and the account's broker bindings, if it has any, must
    /// cover the `clusterName`/`brokerName`/`brokerAddr` the request claims.
    Broker,
    /// An administrative write: needs an admin account.
    Admin,
}

/// A server's table: request code → requirement. Codes not listed are
/// [`Requirement::Open`].
pub type RequirementTable = &'static [(i32, Requirement)];

/// The NameServer's table (the table of who may send what in docs/security.md):
/// every state-changing code needs an account, admin writes an admin one.
///
/// Route and cluster reads (105, 106, 206, 224, 304, 311–313, 901) stay open:
/// most clients never sign, and a refused route lookup breaks producers
/// silently. WAYMARK_GET_CLUSTER_STATUS (61011) is not listed either, so it
/// is open as GET_BROKER_CLUSTER_INFO is: broker addresses, the NameServer
/// cluster's members and where each broker came from, which
/// `rmq-admin namesrv diff` asks every NameServer for; nothing in it lets
/// a peer write.
pub const NAMESRV_REQUIREMENTS: RequirementTable = &[
    (103, Requirement::Broker),        // REGISTER_BROKER
    (104, Requirement::Broker),        // UNREGISTER_BROKER
    (904, Requirement::Broker),        // BROKER_HEARTBEAT
    (322, Requirement::Broker),        // QUERY_DATA_VERSION
    (100, Requirement::Admin),         // PUT_KV_CONFIG
    (102, Requirement::Admin),         // DELETE_KV_CONFIG
    (205, Requirement::Admin),         // WIPE_WRITE_PERM_OF_BROKER
    (327, Requirement::Admin),         // ADD_WRITE_PERM_OF_BROKER
    (216, Requirement::Admin),         // DELETE_TOPIC_IN_NAMESRV
    (217, Requirement::Admin),         // REGISTER_TOPIC_IN_NAMESRV
    (318, Requirement::Admin),         // UPDATE_NAMESRV_CONFIG
    (319, Requirement::ProtectedRead), // GET_NAMESRV_CONFIG
    (101, Requirement::ProtectedRead), // GET_KV_CONFIG
    (219, Requirement::ProtectedRead), // GET_KVLIST_BY_NAMESPACE
    // WAYMARK_PULL_REGISTRATION: a broker's whole registration, which
    // another NameServer of the cluster reads.
    (61010, Requirement::ProtectedRead),
];

/// The controller's table. Its broker requests carry `brokerName` but not
/// always `clusterName` or the broker's address (CONTROLLER_ALTER_SYNC_STATE_SET
/// has neither), so accounts the controller checks are best bound by broker
/// name alone. CONTROLLER_ELECT_MASTER is a broker request here; with
/// `designateElect=true` (an operator's) the controller asks for an admin.
pub const CONTROLLER_REQUIREMENTS: RequirementTable = &[
    (1001, Requirement::Broker),        // CONTROLLER_ALTER_SYNC_STATE_SET
    (1002, Requirement::Broker),        // CONTROLLER_ELECT_MASTER
    (1003, Requirement::Broker),        // CONTROLLER_REGISTER_BROKER
    (1012, Requirement::Broker),        // CONTROLLER_GET_NEXT_BROKER_ID
    (1013, Requirement::Broker),        // CONTROLLER_APPLY_BROKER_ID
    (904, Requirement::Broker),         // BROKER_HEARTBEAT
    (1009, Requirement::Admin),         // UPDATE_CONTROLLER_CONFIG
    (1011, Requirement::Admin),         // CLEAN_BROKER_DATA
    (1010, Requirement::ProtectedRead), // GET_CONTROLLER_CONFIG
];

/// The requirement of `code` in `table`.
pub fn requirement(table: RequirementTable, code: i32) -> Requirement {
    table
        .iter()
        .find(|(listed, _)| *listed == code)
        .map_or(Requirement::Open, |(_, requirement)| *requirement)
}

#[cfg(test)]
mod tests {
    use rmq_wire::RequestCode;

    use super::*;

    #[test]
    fn the_namesrv_table_names_the_codes_it_means() {
        let names: Vec<(&str, Requirement)> = NAMESRV_REQUIREMENTS
            .iter()
            .map(|(code, r)| (RequestCode::from(*code).java_name(), *r))
            .collect();
        assert_eq!(
            names,
            [
                ("REGISTER_BROKER", Requirement::Broker),
                ("UNREGISTER_BROKER", Requirement::Broker),
                ("BROKER_HEARTBEAT", Requirement::Broker),
                ("QUERY_DATA_VERSION", Requirement::Broker),
                ("PUT_KV_CONFIG", Requirement::Admin),
                ("DELETE_KV_CONFIG", Requirement::Admin),
                ("WIPE_WRITE_PERM_OF_BROKER", Requirement::Admin),
                ("ADD_WRITE_PERM_OF_BROKER", Requirement::Admin),
                ("DELETE_TOPIC_IN_NAMESRV", Requirement::Admin),
                ("REGISTER_TOPIC_IN_NAMESRV", Requirement::Admin),
                ("UPDATE_NAMESRV_CONFIG", Requirement::Admin),
                ("GET_NAMESRV_CONFIG", Requirement::ProtectedRead),
                ("GET_KV_CONFIG", Requirement::ProtectedRead),
                ("GET_KVLIST_BY_NAMESPACE", Requirement::ProtectedRead),
                ("WAYMARK_PULL_REGISTRATION", Requirement::ProtectedRead),
            ]
        );
        let mut codes: Vec<i32> = NAMESRV_REQUIREMENTS.iter().map(|(c, _)| *c).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), NAMESRV_REQUIREMENTS.len(), "no code twice");
        assert_eq!(requirement(NAMESRV_REQUIREMENTS, 105), Requirement::Open);
        let cluster_status = i32::from(RequestCode::WaymarkGetClusterStatus);
        assert_eq!(
            requirement(NAMESRV_REQUIREMENTS, cluster_status),
            Requirement::Open
        );
        let controller: Vec<(&str, Requirement)> = CONTROLLER_REQUIREMENTS
            .iter()
            .map(|(code, r)| (RequestCode::from(*code).java_name(), *r))
            .collect();
        assert_eq!(
            controller,
            [
                ("CONTROLLER_ALTER_SYNC_STATE_SET", Requirement::Broker),
                ("CONTROLLER_ELECT_MASTER", Requirement::Broker),
                ("CONTROLLER_REGISTER_BROKER", Requirement::Broker),
                ("CONTROLLER_GET_NEXT_BROKER_ID", Requirement::Broker),
                ("CONTROLLER_APPLY_BROKER_ID", Requirement::Broker),
                ("BROKER_HEARTBEAT", Requirement::Broker),
                ("UPDATE_CONTROLLER_CONFIG", Requirement::Admin),
                ("CLEAN_BROKER_DATA", Requirement::Admin),
                ("GET_CONTROLLER_CONFIG", Requirement::ProtectedRead),
            ]
        );
        // Reads a broker or mqadmin makes without signing stay open.
        for open in [1004, 1005, 1006, 1007] {
            assert_eq!(
                requirement(CONTROLLER_REQUIREMENTS, open),
                Requirement::Open
            );
        }
        assert_eq!(requirement(NAMESRV_REQUIREMENTS, -1), Requirement::Open);
    }
}
