//! The command line: global flags, sub-commands, their help and examples.
//!
//! Owns parsing and validating arguments only (clap exits with code 2 on a
//! usage error); what a command does is in `commands` and `diff`.

use clap::{Args, Parser, Subcommand};

use crate::namesrv::parse_addrs;

const EXIT_CODES: &str = "\
Exit codes:
  0  every NameServer answered successfully (namesrv diff: and they all agree)
  1  some NameServers failed while others answered, or (namesrv diff) the NameServers disagree
  2  usage error: bad flags or arguments, no NameServer given
  3  no NameServer answered successfully: unreachable, timed out, or an error
     response such as TOPIC_NOT_EXIST, QUERY_NOT_FOUND or NO_PERMISSION

Every command asks every NameServer given with -n, concurrently. Results go
to standard output, one row per NameServer (first column #NameServer); each
NameServer that failed gets one line on standard error naming it, the response
code (name and number) and the remark. With --json, standard output is one JSON
document: {\"command\", \"exitCode\", \"results\": [{\"nameServer\", \"ok\", \"result\" | \"error\"}]}.

Examples:
  rmq-admin -n 127.0.0.1:9876 cluster list
  NAMESRV_ADDR='10.0.0.1:9876;10.0.0.2:9876' rmq-admin namesrv diff
  rmq-admin -n 127.0.0.1:9876 --json topic route TopicTest";

/// Administer Apache RocketMQ NameServers (Waymark or Java), as mqadmin does.
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
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
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

/// `topic ...`
#[derive(Debug, Subcommand)]
pub enum TopicCommand {
    /// The route of a topic: broker groups, addresses, queues and perms.
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
    /// Stores a value.
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
    /// Removes a key.
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
    /// NameServers and lists every difference: cluster membership, broker
    /// clusters, addresses, zones, topics, queue counts and perms.
    ///
    /// Needs at least two NameServers. Exit code 0 when they agree, 1 when
    /// they disagree or one failed. A broker registering while the diff runs
    /// can show as a passing difference: run it again to confirm.
    #[command(after_help = "Example:\n  rmq-admin -n '10.0.0.1:9876;10.0.0.2:9876' namesrv diff")]
    Diff,
}

/// Parses `key=value` for `config set`; the key must survive Java's
/// `Properties.load` unchanged.
fn parse_key_value(text: &str) -> Result<(String, String), String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?} is not key=value"))?;
    let bad_key = key.is_empty()
        || key
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, ':' | '=' | '\\' | '#' | '!'));
    if bad_key {
        return Err(format!("{key:?} is not a configuration key"));
    }
    if value.contains(['\n', '\r']) {
        return Err(format!("the value of {key} contains a line break"));
    }
    Ok((key.to_owned(), value.to_owned()))
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
}
