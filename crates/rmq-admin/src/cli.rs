//! The command line: global flags, sub-commands, their help and examples.
//!
//! Owns parsing and validating arguments only (clap exits with code 2 on a
//! usage error); what a command does is in `commands` and `diff`.

use std::path::PathBuf;

use clap::{ArgGroup, Args, Parser, Subcommand};

use crate::namesrv::parse_addrs;

const EXIT_CODES: &str = "\
Exit codes:
  0  every NameServer answered successfully (namesrv diff: and they all agree)
  1  some NameServers failed while others answered, or (namesrv diff) the NameServers disagree
  2  usage error: bad flags or arguments, no NameServer (or controller) given
  3  no NameServer answered successfully: unreachable, timed out, or an error
     response such as TOPIC_NOT_EXIST, QUERY_NOT_FOUND or NO_PERMISSION
The same for the controller commands, with controllers for NameServers. For
sync-state-set, elect-master and clean-broker-metadata, which go to the leader
only, 0 means the leader did it (elect-master: also when the broker already is
master, CONTROLLER_MASTER_STILL_EXIST), 3 that it refused (such as
CONTROLLER_ELECT_MASTER_FAILED) or that no leader could be reached.

Every NameServer command asks every NameServer given with -n, concurrently.
Results go to standard output, one row per NameServer (first column
#NameServer); each NameServer that failed gets one line on standard error
naming it, the response code (name and number) and the remark. With --json,
standard output is one JSON document:
{\"command\", \"exitCode\", \"results\": [{\"nameServer\", \"ok\", \"result\" | \"error\"}]}.

Signing and TLS apply to every NameServer and controller alike. Requests
are signed as mqadmin signs them (AccessKey and Signature, HMAC-SHA1), with
--access-key and --secret-key (or ROCKETMQ_ACCESS_KEY and
ROCKETMQ_SECRET_KEY; keep the secret in the environment rather than on the
command line), else with --tools-yml, else with $ROCKETMQ_HOME/conf/tools.yml
if it exists. A NameServer with authentication on refuses unsigned or wrongly
signed writes with NO_PERMISSION (16), its remark naming the reason: exit
code 3. With --tls every connection is TLS; a NameServer enforcing TLS closes
plain connections (\"connection closed before the response arrived\").

The controller commands take the controllers with -a (as mqadmin's -a) and
report per controller (first column #Controller, JSON key \"controller\"):
metadata and config ask every controller given; sync-state-set, elect-master
and clean-broker-metadata ask them who the leader is
(CONTROLLER_GET_METADATA_INFO) and send the request to the leader only, so one
follower's address is enough. Their one result is the leader's answer, or,
when no leader was found, each controller's reason; with sync-state-set -c the
JSON document adds \"nameServers\", each NameServer's broker names of the
cluster.

mqadmin's command names work too, with mqadmin's options for their
arguments: clusterList, topicRoute -t T, topicList, deleteTopic -t T [-c C],
updateKvConfig -s NS -k K -v V, deleteKvConfig -s NS -k K, wipeWritePerm -b B,
addWritePerm -b B, getNamesrvConfig, updateNamesrvConfig -k K -v V,
getControllerMetaData, getSyncStateSet, electMaster, cleanBrokerMetadata,
getControllerConfig, updateControllerConfig (the controller ones with -a and
the options rmq-admin's controller commands share with mqadmin).

Examples:
  rmq-admin -n 127.0.0.1:9876 cluster list
  rmq-admin -n 127.0.0.1:9876 topicRoute -t TopicTest
  NAMESRV_ADDR='10.0.0.1:9876;10.0.0.2:9876' rmq-admin namesrv diff
  rmq-admin -n 127.0.0.1:9876 --json topic route TopicTest
  rmq-admin -n 127.0.0.1:9876 route watch TopicTest
  rmq-admin controller -a '10.0.0.1:9878;10.0.0.2:9878' metadata
  rmq-admin controller -a 10.0.0.1:9878 sync-state-set -b broker-a
  ROCKETMQ_SECRET_KEY=... rmq-admin -n 10.0.0.1:9876 --access-key ops-admin kv put NS K V
  rmq-admin -n 10.0.0.1:9876 --tls --tls-trust ca.pem --tools-yml tools.yml broker wipe-write-perm broker-a";

const CONTROLLER_EXAMPLES: &str = "\
Examples:
  rmq-admin controller -a '10.0.0.1:9878;10.0.0.2:9878;10.0.0.3:9878' metadata
  rmq-admin controller -a 10.0.0.1:9878 sync-state-set -b broker-a
  rmq-admin controller -a 10.0.0.1:9878 elect-master -b broker-a -i 2
  rmq-admin controller -a 10.0.0.1:9878 clean-broker-metadata -b broker-a -i 3
  rmq-admin controller -a '10.0.0.1:9878;10.0.0.2:9878' config update -k electMasterMaxRetryCount -v 5";

/// Administer Apache RocketMQ NameServers and AutoSwitch-HA controllers
/// (Waymark or Java), as mqadmin does.
#[derive(Debug, Parser)]
#[command(name = "rmq-admin", version, after_help = EXIT_CODES)]
pub struct Cli {
    /// NameServers, `host:port[;host:port...]` as mqadmin's -n.
    #[arg(
        short = 'n',
        long = "namesrv-addr",
        env = "NAMESRV_ADDR",
        global = true,
        value_name = "ADDRS",
        value_parser = parse_addr_list
    )]
    pub namesrv: Option<AddrList>,
    /// Limit for connecting and for each request, in milliseconds.
    #[arg(long, global = true, default_value_t = 3000, value_name = "MS",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_ms: u64,
    /// Print one JSON document instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
    /// Request signing and TLS.
    #[command(flatten)]
    pub security: SecurityArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// How requests are signed and connections encrypted: the same for every
/// NameServer and controller a command talks to. Checked together, with the
/// environment, by `security::connect_options` (clap's `requires` does not
/// see a global flag given on the other side of the sub-command).
#[derive(Debug, Clone, Default, Args)]
pub struct SecurityArgs {
    /// Sign every request with this access key (with a secret key), as
    /// mqadmin signs with conf/tools.yml. Default: $ROCKETMQ_ACCESS_KEY.
    #[arg(long, global = true, value_name = "KEY", help_heading = "Signing")]
    pub access_key: Option<String>,
    /// The secret key to sign with. Default: $ROCKETMQ_SECRET_KEY, which is
    /// the better place for it: a command-line argument is visible to every
    /// user of the machine (ps, /proc) and stays in shell history.
    #[arg(long, global = true, value_name = "SECRET", help_heading = "Signing")]
    pub secret_key: Option<String>,
    /// Sign with the accessKey and secretKey of this mqadmin tools.yml.
    /// Without any signing option, $ROCKETMQ_HOME/conf/tools.yml is used
    /// when it exists, as mqadmin does (a note on stderr says so).
    #[arg(long, global = true, value_name = "PATH", help_heading = "Signing")]
    pub tools_yml: Option<PathBuf>,
    /// Use TLS for every connection (Java's -Dtls.enable=true). Needs
    /// --tls-trust, --tls-insecure, or a --tls-config-file that says which.
    #[arg(long, global = true, help_heading = "TLS")]
    pub tls: bool,
    /// PEM CA certificate(s) the servers' certificates must chain to
    /// (tls.client.trustCertPath). The chain is checked, never the host
    /// name, as Java does.
    #[arg(long, global = true, value_name = "PATH", help_heading = "TLS")]
    pub tls_trust: Option<PathBuf>,
    /// PEM client certificate chain, for servers that require one (mutual
    /// TLS; tls.client.certPath). Needs --tls-key.
    #[arg(long, global = true, value_name = "PATH", help_heading = "TLS")]
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert (tls.client.keyPath; PKCS#8, PKCS#1 or
    /// SEC1).
    #[arg(long, global = true, value_name = "PATH", help_heading = "TLS")]
    pub tls_key: Option<PathBuf>,
    /// Accept any server certificate unverified (Java's default,
    /// tls.client.authServer=false): encrypted, but anyone who can
    /// intercept the connection can pose as the server. Prints a warning.
    #[arg(long, global = true, help_heading = "TLS")]
    pub tls_insecure: bool,
    /// Java's tls.config.file: a properties file with tls.client.* keys
    /// (trustCertPath, authServer, certPath, keyPath, keyPassword), whose
    /// values win over the flags, as in Java.
    #[arg(long, global = true, value_name = "PATH", help_heading = "TLS")]
    pub tls_config_file: Option<PathBuf>,
}

/// The NameServer addresses of `-n`, in the order given, without duplicates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddrList(pub Vec<String>);

fn parse_addr_list(text: &str) -> Result<AddrList, String> {
    parse_addrs(text).map(AddrList)
}

/// The sub-commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Brokers by cluster (mqadmin clusterList).
    #[command(subcommand)]
    Cluster(ClusterCommand),
    /// Topic routes, lists and deletion (mqadmin topicRoute, topicList, deleteTopic).
    #[command(subcommand)]
    Topic(TopicCommand),
    /// Following routes as they change.
    #[command(subcommand)]
    Route(RouteCommand),
    /// The KV configuration store (mqadmin updateKvConfig, getKvConfig, deleteKvConfig).
    #[command(subcommand)]
    Kv(KvCommand),
    /// Broker write permission and member groups (mqadmin wipeWritePerm, addWritePerm).
    #[command(subcommand)]
    Broker(BrokerCommand),
    /// NameServer configuration (mqadmin getNamesrvConfig, updateNamesrvConfig).
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Checks across NameServers.
    #[command(subcommand)]
    Namesrv(NamesrvCommand),
    /// AutoSwitch-HA controllers (mqadmin getControllerMetaData, getSyncStateSet,
    /// electMaster, cleanBrokerMetadata, get/updateControllerConfig).
    ///
    /// The controllers are given with -a. metadata and config ask every
    /// controller given; sync-state-set, elect-master and
    /// clean-broker-metadata find the leader through the controllers' metadata
    /// and send the request to the leader only, so any one node's address is
    /// enough.
    #[command(after_help = CONTROLLER_EXAMPLES)]
    Controller(ControllerArgs),
}

/// `controller -a ADDRS ...`
#[derive(Debug, Args)]
pub struct ControllerArgs {
    /// Controllers, `host:port[;host:port...]` as mqadmin's -a (each node's
    /// entry of controllerDLegerPeers).
    #[arg(
        short = 'a',
        long = "controller-addr",
        global = true,
        value_name = "ADDRS",
        value_parser = parse_addr_list
    )]
    pub addrs: Option<AddrList>,
    /// What to do.
    #[command(subcommand)]
    pub command: ControllerCommand,
}

/// `controller ...`
#[derive(Debug, Subcommand)]
pub enum ControllerCommand {
    /// What each controller given says about its group.
    ///
    /// One row per controller: group, leader id and address, whether it is
    /// the leader itself, and the peers.
    #[command(
        after_help = "Examples:\n  rmq-admin controller -a '10.0.0.1:9878;10.0.0.2:9878;10.0.0.3:9878' metadata\n  rmq-admin controller -a 10.0.0.1:9878 --json metadata"
    )]
    Metadata,
    /// The sync-state sets of broker sets, from the leader.
    ///
    /// One row per replica: the set's master id, address and epoch, its SSS
    /// epoch, and the replica's id, address, whether it is in the sync-state
    /// set and whether it is alive. With --cluster the broker names are the cluster's in the NameServers'
    /// cluster table (-n or NAMESRV_ADDR), as mqadmin getSyncStateSet -c.
    #[command(
        group(ArgGroup::new("brokers").required(true).args(["broker_names", "cluster"])),
        after_help = "Examples:\n  rmq-admin controller -a 10.0.0.1:9878 sync-state-set -b broker-a,broker-b\n  rmq-admin controller -a 10.0.0.1:9878 -n 10.0.0.1:9876 sync-state-set -c DefaultCluster"
    )]
    SyncStateSet {
        /// Broker sets (broker names), comma-separated or repeated.
        #[arg(
            short = 'b',
            long = "broker-name",
            value_name = "BROKER_NAME",
            value_delimiter = ','
        )]
        broker_names: Vec<String>,
        /// Every broker set of this cluster, as the NameServers list it.
        #[arg(
            short = 'c',
            long,
            value_name = "CLUSTER",
            conflicts_with = "broker_names"
        )]
        cluster: Option<String>,
    },
    /// Makes a replica the master of its broker set.
    ///
    /// An operator's designated election on the leader, as mqadmin
    /// electMaster. The replica must be alive and in the sync-state set,
    /// else the controller refuses (CONTROLLER_ELECT_MASTER_FAILED, exit
    /// code 3). When it already is the master the controller answers
    /// CONTROLLER_MASTER_STILL_EXIST, shown with the current master; that is
    /// not a failure (exit code 0).
    #[command(
        after_help = "Example:\n  rmq-admin controller -a 10.0.0.1:9878 elect-master -b broker-a -i 2"
    )]
    ElectMaster {
        /// The broker set.
        #[arg(short = 'b', long = "broker-name", value_name = "BROKER_NAME")]
        broker_name: String,
        /// The controller broker id of the replica to make master.
        #[arg(short = 'i', long = "broker-id", value_name = "ID")]
        broker_id: i64,
        /// The cluster of the broker set (Java's controller looks liveness up
        /// by cluster, broker name and id).
        #[arg(
            short = 'c',
            long,
            default_value = "DefaultCluster",
            value_name = "CLUSTER"
        )]
        cluster: String,
    },
    /// Removes replicas, or a whole broker set, from the controller.
    ///
    /// As mqadmin cleanBrokerMetadata. Without --clean-living-broker only
    /// replicas that are not alive are removed (an alive one is refused with
    /// CONTROLLER_INVALID_CLEAN_BROKER_METADATA); without ids, the whole set,
    /// which needs the set to have no master.
    #[command(
        after_help = "Examples:\n  rmq-admin controller -a 10.0.0.1:9878 clean-broker-metadata -b broker-a -i '3;4'\n  rmq-admin controller -a 10.0.0.1:9878 clean-broker-metadata -b broker-a -l"
    )]
    CleanBrokerMetadata {
        /// The broker set.
        #[arg(short = 'b', long = "broker-name", value_name = "BROKER_NAME")]
        broker_name: String,
        /// Controller broker ids to remove, `1;2` (or `1,2`).
        #[arg(short = 'i', long = "broker-ids", value_name = "ID;ID", value_parser = parse_ids)]
        broker_ids: Option<Ids>,
        /// Remove the whole set, alive replicas included. The controller
        /// ignores ids with it, so --broker-ids is refused.
        #[arg(
            short = 'l',
            long = "clean-living-broker",
            conflicts_with = "broker_ids"
        )]
        clean_living_broker: bool,
        /// The cluster of the broker set (Java's controller looks liveness up
        /// by cluster, broker name and id).
        #[arg(
            short = 'c',
            long,
            default_value = "DefaultCluster",
            value_name = "CLUSTER"
        )]
        cluster: String,
    },
    /// Controller configuration, of every controller given.
    #[command(subcommand)]
    Config(ControllerConfigCommand),
}

/// `controller config ...`
#[derive(Debug, Subcommand)]
pub enum ControllerConfigCommand {
    /// The controllers' configuration, or only the keys given (mqadmin
    /// getControllerConfig).
    #[command(
        after_help = "Examples:\n  rmq-admin controller -a '10.0.0.1:9878;10.0.0.2:9878' config get\n  rmq-admin controller -a 10.0.0.1:9878 config get electMasterMaxRetryCount"
    )]
    Get {
        /// Keys to show (all when none).
        keys: Vec<String>,
    },
    /// Changes one key on every controller given (mqadmin
    /// updateControllerConfig).
    ///
    /// Black-listed keys (configBlackList, configStorePath, ...) are refused
    /// with NO_PERMISSION.
    #[command(
        after_help = "Example:\n  rmq-admin controller -a '10.0.0.1:9878;10.0.0.2:9878' config update -k electMasterMaxRetryCount -v 5"
    )]
    Update {
        /// The key.
        #[arg(short = 'k', long, value_name = "KEY", value_parser = parse_key)]
        key: String,
        /// The value.
        #[arg(short = 'v', long, value_name = "VALUE", value_parser = parse_value)]
        value: String,
    },
}

/// Controller broker ids, in the order given, without duplicates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ids(pub Vec<i64>);

impl Ids {
    /// As CLEAN_BROKER_DATA carries them: `1;2`.
    pub fn to_wire(&self) -> String {
        self.0
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(";")
    }
}

/// Parses `1;2` (or `1,2`); each must be a number, as mqadmin checks.
fn parse_ids(text: &str) -> Result<Ids, String> {
    let mut ids = Vec::new();
    for part in text.split([';', ',']).map(str::trim) {
        if part.is_empty() {
            continue;
        }
        let id: i64 = part
            .parse()
            .map_err(|_| format!("{part:?} is not a broker id"))?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    if ids.is_empty() {
        return Err("no broker id given".to_owned());
    }
    Ok(Ids(ids))
}

/// `cluster ...`
#[derive(Debug, Subcommand)]
pub enum ClusterCommand {
    /// Every cluster, broker group and broker address the NameServers know.
    #[command(
        after_help = "Examples:\n  rmq-admin -n 127.0.0.1:9876 cluster list\n  rmq-admin -n '10.0.0.1:9876;10.0.0.2:9876' --json cluster list"
    )]
    List,
}

/// `route ...`
#[derive(Debug, Subcommand)]
pub enum RouteCommand {
    /// Prints topics' routes, then each change, with a timestamp, as it
    /// happens. Changes nothing.
    ///
    /// Follows one NameServer (the first of -n that answers). A Waymark
    /// NameServer pushes each change as it applies it (route push); on a
    /// NameServer without route push (Java's) the routes are polled every
    /// --poll-ms and a note on standard error says so. One line per route:
    /// time (UTC), topic, how it was learnt (now: at start; push; poll),
    /// then each broker group with its addresses (id=address), queue counts
    /// and perm, or "no route" where the NameServer answers
    /// TOPIC_NOT_EXIST. With --json, one JSON object per line: time, topic,
    /// source and route (as the NameServer sent it, or null). Runs until
    /// interrupted, or until --count changes were printed.
    #[command(
        after_help = "Examples:\n  rmq-admin -n 127.0.0.1:9876 route watch TopicTest\n  rmq-admin -n '10.0.0.1:9876;10.0.0.2:9876' --json route watch TopicA TopicB\n  rmq-admin -n 127.0.0.1:9876 route watch TopicTest --count 1"
    )]
    Watch {
        /// The topics.
        #[arg(required = true, value_name = "TOPIC")]
        topics: Vec<String>,
        /// How often routes are polled where the NameServer has no route
        /// push, in milliseconds.
        #[arg(long, default_value_t = 1000, value_name = "MS",
              value_parser = clap::value_parser!(u64).range(10..))]
        poll_ms: u64,
        /// Exit after this many changes (the routes printed at start do not
        /// count).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        count: Option<u64>,
    },
}

/// `topic ...`
#[derive(Debug, Subcommand)]
pub enum TopicCommand {
    /// The route of a topic: broker groups, addresses, queues and perms, and an order topic's configuration when the NameServer sends one.
    ///
    /// With --json the result is the route as the NameServer sent it
    /// (TopicRouteData: brokerDatas, queueDatas, ...).
    #[command(
        after_help = "Examples:\n  rmq-admin -n 127.0.0.1:9876 topic route TopicTest\n  rmq-admin -n 127.0.0.1:9876 --json topic route TopicTest"
    )]
    Route {
        /// The topic.
        topic: String,
    },
    /// All topic names, or those with queues on a cluster's brokers.
    #[command(
        after_help = "Examples:\n  rmq-admin -n 127.0.0.1:9876 topic list\n  rmq-admin -n 127.0.0.1:9876 topic list --cluster DefaultCluster"
    )]
    List(ClusterFilter),
    /// Deletes a topic's route from the NameServers (not from the brokers:
    /// a broker that still has the topic registers it again).
    #[command(
        after_help = "Examples:\n  rmq-admin -n 127.0.0.1:9876 topic delete TopicTest\n  rmq-admin -n 127.0.0.1:9876 topic delete TopicTest --cluster DefaultCluster"
    )]
    Delete {
        /// The topic.
        topic: String,
        /// Only remove the queues of this cluster's brokers.
        #[command(flatten)]
        filter: ClusterFilter,
    },
}

/// `--cluster NAME`
#[derive(Debug, Args)]
pub struct ClusterFilter {
    /// Restrict to this cluster.
    #[arg(short = 'c', long, value_name = "CLUSTER")]
    pub cluster: Option<String>,
}

/// `kv ...`
#[derive(Debug, Subcommand)]
pub enum KvCommand {
    /// Stores a value in every NameServer given (on disk, kvConfig.json, before it answers); ORDER_TOPIC_CONFIG values change order topics' routes.
    #[command(
        after_help = "Example:\n  rmq-admin -n 127.0.0.1:9876 kv put ORDER_TOPIC_CONFIG TopicOrder 'broker-a:4;broker-b:4'"
    )]
    Put {
        /// The namespace, e.g. ORDER_TOPIC_CONFIG.
        namespace: String,
        /// The key.
        key: String,
        /// The value.
        value: String,
    },
    /// Reads a value (QUERY_NOT_FOUND when absent).
    #[command(
        after_help = "Example:\n  rmq-admin -n 127.0.0.1:9876 kv get ORDER_TOPIC_CONFIG TopicOrder"
    )]
    Get {
        /// The namespace.
        namespace: String,
        /// The key.
        key: String,
    },
    /// Removes a key from every NameServer given (on disk before it answers).
    #[command(
        after_help = "Example:\n  rmq-admin -n 127.0.0.1:9876 kv delete ORDER_TOPIC_CONFIG TopicOrder"
    )]
    Delete {
        /// The namespace.
        namespace: String,
        /// The key.
        key: String,
    },
    /// Every key and value of a namespace (QUERY_NOT_FOUND when absent).
    #[command(after_help = "Example:\n  rmq-admin -n 127.0.0.1:9876 kv list ORDER_TOPIC_CONFIG")]
    List {
        /// The namespace.
        namespace: String,
    },
}

/// `broker ...`
#[derive(Debug, Subcommand)]
pub enum BrokerCommand {
    /// Clears the write permission of every queue of a broker group in the
    /// NameServers' routes (producers stop sending to it).
    #[command(
        after_help = "Example:\n  rmq-admin -n 127.0.0.1:9876 broker wipe-write-perm broker-a"
    )]
    WipeWritePerm {
        /// The broker group.
        broker_name: String,
    },
    /// Sets the permission of every queue of a broker group back to read+write (6).
    #[command(
        after_help = "Example:\n  rmq-admin -n 127.0.0.1:9876 broker add-write-perm broker-a"
    )]
    AddWritePerm {
        /// The broker group.
        broker_name: String,
    },
    /// The members (broker id and address) of a broker group.
    #[command(
        after_help = "Example:\n  rmq-admin -n 127.0.0.1:9876 broker member-group broker-a --cluster DefaultCluster"
    )]
    MemberGroup {
        /// The broker group.
        broker_name: String,
        /// The cluster, echoed by the NameServer (it looks the group up by name).
        #[arg(
            short = 'c',
            long,
            default_value = "DefaultCluster",
            value_name = "CLUSTER"
        )]
        cluster: String,
    },
}

/// `config ...`
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// The NameServers' configuration, or only the keys given.
    #[command(
        after_help = "Examples:\n  rmq-admin -n 127.0.0.1:9876 config get\n  rmq-admin -n 127.0.0.1:9876 config get enableTopicList orderMessageEnable"
    )]
    Get {
        /// Keys to show (all when none).
        keys: Vec<String>,
    },
    /// Changes configuration keys. Black-listed keys (configStorePath,
    /// kvConfigPath, ...) are refused with NO_PERMISSION.
    #[command(
        after_help = "Example:\n  rmq-admin -n 127.0.0.1:9876 config set orderMessageEnable=true enableTopicList=true"
    )]
    Set {
        /// `key=value` pairs.
        #[arg(required = true, value_name = "KEY=VALUE", value_parser = parse_key_value)]
        pairs: Vec<(String, String)>,
    },
}

/// `namesrv ...`
#[derive(Debug, Subcommand)]
pub enum NamesrvCommand {
    /// Compares cluster info and the route of every topic across the
    /// NameServers and lists every difference, with its cause: cluster
    /// membership, broker clusters, addresses, zones, topics, queue counts
    /// and perms.
    ///
    /// Each NameServer is also asked for its view of the Waymark NameServer
    /// cluster (WAYMARK_GET_CLUSTER_STATUS); the #Waymark Cluster column
    /// shows its clusterId, "(not ready)" while it bootstraps, "-" for a
    /// NameServer that is no cluster node (Java's, or Waymark's with the
    /// cluster off). Nodes of one cluster converge by themselves, so each
    /// difference is traced to its cause, listed under the table: a
    /// NameServer that is no cluster node, or in another cluster, still
    /// bootstrapping, seeing the node that holds the broker dead, or still
    /// pulling from it; a relayed copy that is not the holder's
    /// registration; or, both holding the same registration, an admin
    /// write made on one NameServer only (write permission, topics, order
    /// configuration in the KV store). With --json each difference has
    /// "causes": [{"kind", "text"}] and each result a "cluster" summary.
    ///
    /// Needs at least two NameServers. Exit code 0 when they agree, 1 when
    /// they disagree or one failed. A broker registering while the diff runs
    /// can show as a passing difference: run it again to confirm.
    #[command(
        after_help = "Example:\n  rmq-admin -n '10.0.0.1:9876;10.0.0.2:9876;10.0.0.3:9876' namesrv diff"
    )]
    Diff,
}

/// Parses `key=value` for `config set`; the key must survive Java's
/// `Properties.load` unchanged.
fn parse_key_value(text: &str) -> Result<(String, String), String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?} is not key=value"))?;
    let key = parse_key(key)?;
    if value.contains(['\n', '\r']) {
        return Err(format!("the value of {key} contains a line break"));
    }
    Ok((key, value.to_owned()))
}

/// A configuration key that survives Java's `Properties.load` unchanged
/// (mqadmin trims it first, so surrounding blanks are dropped).
fn parse_key(key: &str) -> Result<String, String> {
    let key = key.trim();
    let bad_key = key.is_empty()
        || key
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, ':' | '=' | '\\' | '#' | '!'));
    if bad_key {
        return Err(format!("{key:?} is not a configuration key"));
    }
    Ok(key.to_owned())
}

/// A configuration value on one line, trimmed as mqadmin trims it.
fn parse_value(value: &str) -> Result<String, String> {
    if value.contains(['\n', '\r']) {
        return Err("the value contains a line break".to_owned());
    }
    Ok(value.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn key_value_pairs() {
        assert_eq!(
            parse_key_value("enableTopicList=false"),
            Ok(("enableTopicList".into(), "false".into()))
        );
        assert_eq!(parse_key_value("a=b=c"), Ok(("a".into(), "b=c".into())));
        assert!(parse_key_value("novalue").is_err());
        assert!(parse_key_value("=x").is_err());
        assert!(parse_key_value("a b=x").is_err());
        assert!(parse_key_value("a=x\ny=z").is_err());
    }

    #[test]
    fn global_flags_anywhere() {
        let cli = Cli::try_parse_from([
            "rmq-admin",
            "topic",
            "route",
            "T",
            "--json",
            "-n",
            "a:1;b:2",
            "--timeout-ms",
            "50",
        ])
        .unwrap();
        assert!(cli.json);
        assert_eq!(cli.timeout_ms, 50);
        assert_eq!(cli.namesrv.unwrap().0, ["a:1", "b:2"]);
        assert!(
            Cli::try_parse_from(["rmq-admin", "--timeout-ms", "0", "cluster", "list"]).is_err()
        );
    }

    #[test]
    fn controller_flags() {
        let cli = Cli::try_parse_from([
            "rmq-admin",
            "controller",
            "sync-state-set",
            "-b",
            "broker-a,broker-b",
            "-b",
            "broker-c",
            "-a",
            "a:1;b:2",
        ])
        .unwrap();
        let Command::Controller(args) = &cli.command else {
            panic!("{cli:?}")
        };
        assert_eq!(args.addrs.as_ref().unwrap().0, ["a:1", "b:2"]);
        let ControllerCommand::SyncStateSet { broker_names, .. } = &args.command else {
            panic!("{args:?}")
        };
        assert_eq!(broker_names, &["broker-a", "broker-b", "broker-c"]);

        let parse = |args: &[&str]| {
            let mut all = vec!["rmq-admin", "controller", "-a", "a:1"];
            all.extend_from_slice(args);
            Cli::try_parse_from(all)
        };
        assert!(parse(&["sync-state-set"]).is_err());
        assert!(parse(&["sync-state-set", "-b", "x", "-c", "C"]).is_err());
        assert!(parse(&["elect-master", "-b", "broker-a"]).is_err());
        assert!(parse(&["elect-master", "-b", "broker-a", "-i", "two"]).is_err());
        assert!(parse(&["clean-broker-metadata", "-b", "a", "-i", "2", "-l"]).is_err());
        assert!(parse(&["config", "update", "-k", "a b", "-v", "1"]).is_err());
        let clean = parse(&["clean-broker-metadata", "-b", "a", "-i", "3; 1,3"]).unwrap();
        let Command::Controller(args) = clean.command else {
            unreachable!()
        };
        let ControllerCommand::CleanBrokerMetadata {
            broker_ids,
            cluster,
            ..
        } = args.command
        else {
            unreachable!()
        };
        assert_eq!(broker_ids.unwrap().to_wire(), "3;1");
        assert_eq!(cluster, "DefaultCluster");
    }

    #[test]
    fn broker_id_lists() {
        assert_eq!(parse_ids("1;2"), Ok(Ids(vec![1, 2])));
        assert_eq!(parse_ids(" 2 , 2;"), Ok(Ids(vec![2])));
        assert!(parse_ids(";").is_err());
        assert!(parse_ids("1;x").unwrap_err().contains("\"x\""));
    }
}
