//! mqadmin's command names as aliases: `rmq-admin -n ADDR topicRoute -t T`
//! runs `rmq-admin -n ADDR topic route T`.
//!
//! Operators know mqadmin's names and have them in scripts and runbooks. The
//! names map to rmq-admin's two-word commands, and the options mqadmin gives
//! those commands (`-t TOPIC`, `-s NAMESPACE -k KEY -v VALUE`, `-b BROKER`)
//! to rmq-admin's arguments, by rewriting the command line before it is
//! parsed: clap has aliases for one level of sub-commands, not for a name
//! that stands for two, nor for options that become positional arguments.
//! Everything else on the line (global flags, `--json`, options both tools
//! share) is passed on unchanged, so clap's usage errors and help apply as
//! to the command written out.

use std::ffi::OsString;

/// Where one mqadmin option's value goes.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// The n-th positional argument of the rmq-admin command.
    Positional(usize),
    /// An rmq-admin option of another name.
    Option(&'static str),
    /// `config set`'s `KEY=VALUE`: the key part.
    PairKey,
    /// `config set`'s `KEY=VALUE`: the value part.
    PairValue,
}

/// One mqadmin command: its name, the rmq-admin words it stands for, and
/// what becomes of its options (options not listed pass unchanged).
struct Alias {
    name: &'static str,
    words: &'static [&'static str],
    options: &'static [(&'static str, Slot)],
}

const ALIASES: &[Alias] = &[
    Alias {
        name: "clusterList",
        words: &["cluster", "list"],
        options: &[],
    },
    Alias {
        name: "topicRoute",
        words: &["topic", "route"],
        options: &[("-t", Slot::Positional(0))],
    },
    Alias {
        name: "topicList",
        words: &["topic", "list"],
        options: &[],
    },
    Alias {
        name: "deleteTopic",
        words: &["topic", "delete"],
        options: &[
            ("-t", Slot::Positional(0)),
            ("-c", Slot::Option("--cluster")),
        ],
    },
    Alias {
        name: "updateKvConfig",
        words: &["kv", "put"],
        options: &[
            ("-s", Slot::Positional(0)),
            ("-k", Slot::Positional(1)),
            ("-v", Slot::Positional(2)),
        ],
    },
    Alias {
        name: "deleteKvConfig",
        words: &["kv", "delete"],
        options: &[("-s", Slot::Positional(0)), ("-k", Slot::Positional(1))],
    },
    Alias {
        name: "wipeWritePerm",
        words: &["broker", "wipe-write-perm"],
        options: &[("-b", Slot::Positional(0))],
    },
    Alias {
        name: "addWritePerm",
        words: &["broker", "add-write-perm"],
        options: &[("-b", Slot::Positional(0))],
    },
    Alias {
        name: "getNamesrvConfig",
        words: &["config", "get"],
        options: &[],
    },
    Alias {
        name: "updateNamesrvConfig",
        words: &["config", "set"],
        options: &[("-k", Slot::PairKey), ("-v", Slot::PairValue)],
    },
    Alias {
        name: "getControllerMetaData",
        words: &["controller", "metadata"],
        options: &[],
    },
    Alias {
        name: "getSyncStateSet",
        words: &["controller", "sync-state-set"],
        options: &[],
    },
    Alias {
        name: "electMaster",
        words: &["controller", "elect-master"],
        options: &[],
    },
    Alias {
        name: "cleanBrokerMetadata",
        words: &["controller", "clean-broker-metadata"],
        options: &[],
    },
    Alias {
        name: "getControllerConfig",
        words: &["controller", "config", "get"],
        options: &[],
    },
    Alias {
        name: "updateControllerConfig",
        words: &["controller", "config", "update"],
        options: &[],
    },
];

/// rmq-admin's global options that take a value as the next argument: the
/// command name is the first argument that is neither one of these, nor
/// their value, nor another option.
const GLOBAL_OPTIONS_WITH_VALUE: &[&str] = &[
    "-n",
    "--namesrv-addr",
    "--timeout-ms",
    "--access-key",
    "--secret-key",
    "--tools-yml",
    "--tls-trust",
    "--tls-cert",
    "--tls-key",
    "--tls-config-file",
    "-a",
    "--controller-addr",
];

/// The mqadmin names, for the help text.
pub fn names() -> impl Iterator<Item = (&'static str, String)> {
    ALIASES
        .iter()
        .map(|alias| (alias.name, alias.words.join(" ")))
}

/// The command line with an mqadmin command name (and its options) written
/// out as the rmq-admin command; unchanged when it has none.
pub fn expand(args: Vec<OsString>) -> Vec<OsString> {
    let Some((at, alias)) = find_alias(&args) else {
        return args;
    };
    let mut out: Vec<OsString> = args[..at].to_vec();
    out.extend(alias.words.iter().map(OsString::from));
    let mut positionals: Vec<Option<OsString>> = Vec::new();
    let (mut pair_key, mut pair_value) = (None, None);
    let mut rest = Vec::new();
    let mut tail = args[at + 1..].iter();
    while let Some(arg) = tail.next() {
        let slot = arg
            .to_str()
            .and_then(|text| alias.options.iter().find(|(flag, _)| *flag == text));
        let (Some((_, slot)), Some(value)) = (slot, slot.and_then(|_| tail.next())) else {
            rest.push(arg.clone());
            continue;
        };
        match *slot {
            Slot::Positional(index) => {
                if positionals.len() <= index {
                    positionals.resize(index + 1, None);
                }
                positionals[index] = Some(value.clone());
            }
            Slot::Option(name) => rest.extend([OsString::from(name), value.clone()]),
            Slot::PairKey => pair_key = Some(value.clone()),
            Slot::PairValue => pair_value = Some(value.clone()),
        }
    }
    // A missing option leaves its argument out, so clap names what is missing.
    out.extend(positionals.into_iter().flatten());
    if let Some(key) = pair_key {
        let mut pair = key;
        pair.push("=");
        pair.push(pair_value.unwrap_or_default());
        out.push(pair);
    }
    out.extend(rest);
    out
}

/// The position and alias of the command name, if it is an mqadmin one.
fn find_alias(args: &[OsString]) -> Option<(usize, &'static Alias)> {
    let mut index = 1;
    while let Some(arg) = args.get(index) {
        let text = arg.to_str()?;
        if GLOBAL_OPTIONS_WITH_VALUE.contains(&text) {
            index += 2;
            continue;
        }
        if text.starts_with('-') {
            index += 1;
            continue;
        }
        return ALIASES
            .iter()
            .find(|alias| alias.name == text)
            .map(|alias| (index, alias));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(line: &str) -> String {
        let args = line.split(' ').map(OsString::from).collect();
        expand(args)
            .iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn mqadmin_names_and_options_become_rmq_admin_commands() {
        assert_eq!(
            expanded("rmq-admin -n 127.0.0.1:9876 clusterList"),
            "rmq-admin -n 127.0.0.1:9876 cluster list"
        );
        assert_eq!(
            expanded("rmq-admin -n a:1 topicRoute -t TopicTest --json"),
            "rmq-admin -n a:1 topic route TopicTest --json"
        );
        assert_eq!(
            expanded("rmq-admin updateKvConfig -n a:1 -k K -s NS -v V"),
            "rmq-admin kv put NS K V -n a:1"
        );
        assert_eq!(
            expanded("rmq-admin -n a:1 updateNamesrvConfig -k orderMessageEnable -v true"),
            "rmq-admin -n a:1 config set orderMessageEnable=true"
        );
        assert_eq!(
            expanded("rmq-admin -n a:1 deleteTopic -t T -c C"),
            "rmq-admin -n a:1 topic delete T --cluster C"
        );
        assert_eq!(
            expanded("rmq-admin getSyncStateSet -a c:9878 -b broker-a"),
            "rmq-admin controller sync-state-set -a c:9878 -b broker-a"
        );
    }

    #[test]
    fn other_lines_are_left_alone() {
        for line in [
            "rmq-admin -n a:1 topic route topicRoute",
            "rmq-admin -n clusterList cluster list",
            "rmq-admin --json kv get NS clusterList",
            "rmq-admin",
        ] {
            assert_eq!(expanded(line), line);
        }
    }

    /// An mqadmin command line for every alias, as an operator would type it.
    const MQADMIN_LINES: &[&str] = &[
        "clusterList",
        "topicRoute -t TopicTest",
        "topicList",
        "deleteTopic -t TopicTest -c DefaultCluster",
        "updateKvConfig -s ORDER_TOPIC_CONFIG -k TopicTest -v broker-a:4",
        "deleteKvConfig -s ORDER_TOPIC_CONFIG -k TopicTest",
        "wipeWritePerm -b broker-a",
        "addWritePerm -b broker-a",
        "getNamesrvConfig",
        "updateNamesrvConfig -k orderMessageEnable -v true",
        "getControllerMetaData -a c:9878",
        "getSyncStateSet -a c:9878 -b broker-a",
        "electMaster -a c:9878 -b broker-a -i 2",
        "cleanBrokerMetadata -a c:9878 -b broker-a -i 3",
        "getControllerConfig -a c:9878",
        "updateControllerConfig -a c:9878 -k electMasterMaxRetryCount -v 5",
    ];

    #[test]
    fn every_alias_parses_as_its_command_and_the_help_names_it() {
        use clap::{CommandFactory, Parser};
        let help = crate::cli::Cli::command().render_long_help().to_string();
        let mut covered = Vec::new();
        for line in MQADMIN_LINES {
            let args = format!("rmq-admin -n a:1 {line}");
            let args: Vec<OsString> = args.split(' ').map(OsString::from).collect();
            let expanded = expand(args);
            if let Err(error) = crate::cli::Cli::try_parse_from(&expanded) {
                panic!("{line} -> {expanded:?}: {error}");
            }
            covered.push(line.split(' ').next().unwrap_or_default());
        }
        for (name, _) in names() {
            assert!(covered.contains(&name), "no sample line for {name}");
            assert!(help.contains(name), "the help does not name {name}");
        }
    }

    #[test]
    fn a_missing_option_leaves_the_argument_out_for_clap_to_name() {
        assert_eq!(
            expanded("rmq-admin -n a:1 wipeWritePerm"),
            "rmq-admin -n a:1 broker wipe-write-perm"
        );
    }
}
