//! The commands controller mode reads from standard input, one per line:
//! `stop master [BROKER]`, `stop BROKER/R`, `start BROKER/R`, `status`.
//! They make a replica fail (as a crash) and come back, so failovers can be
//! watched by hand or driven by a script.

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

/// Which replicas a `stop` means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The master of the named broker set, or of every set.
    Master(Option<String>),
    /// One replica by its label, `<broker>/<index>`.
    Replica(String),
}

/// One command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Stop replicas as a crash would (no unregistration).
    Stop(Target),
    /// Start a stopped replica again (same address, same identity file).
    Start(String),
    /// Print one `status` line per replica.
    Status,
}

/// Parses one line; `Ok(None)` for a blank one.
///
/// # Errors
/// A line that is not a command, with the reason.
pub fn parse(line: &str) -> Result<Option<Command>, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    Ok(Some(match words.as_slice() {
        [] => return Ok(None),
        ["stop", "master"] => Command::Stop(Target::Master(None)),
        ["stop", "master", broker] => Command::Stop(Target::Master(Some(broker.to_string()))),
        ["stop", label] => Command::Stop(Target::Replica(label.to_string())),
        ["start", label] => Command::Start(label.to_string()),
        ["status"] => Command::Status,
        _ => {
            return Err(format!(
                "unknown command {line:?} (stop master [BROKER] | stop BROKER/R | start BROKER/R | status)"
            ))
        }
    }))
}

/// Reads commands from standard input on a thread of its own (a blocking
/// read cannot be cancelled, and must not hold up the runtime's shutdown);
/// the channel closes at end of input.
pub fn from_stdin() -> UnboundedReceiver<Command> {
    let (tx, rx) = unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { return };
            match parse(&line) {
                Ok(Some(command)) => {
                    if tx.send(command).is_err() {
                        return;
                    }
                }
                Ok(None) => {}
                Err(error) => eprintln!("{error}"),
            }
        }
    });
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse() {
        assert_eq!(parse("  "), Ok(None));
        assert_eq!(
            parse("stop master"),
            Ok(Some(Command::Stop(Target::Master(None))))
        );
        assert_eq!(
            parse("stop master broker-1"),
            Ok(Some(Command::Stop(Target::Master(Some("broker-1".into())))))
        );
        assert_eq!(
            parse(" stop broker-0/2 "),
            Ok(Some(Command::Stop(Target::Replica("broker-0/2".into()))))
        );
        assert_eq!(
            parse("start broker-0/2"),
            Ok(Some(Command::Start("broker-0/2".into())))
        );
        assert_eq!(parse("status"), Ok(Some(Command::Status)));
        assert!(parse("restart everything").is_err());
    }
}
