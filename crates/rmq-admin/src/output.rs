//! How results are shown: aligned tables for people, one JSON document for
//! scripts, one error line per failed server, and the exit code.
//!
//! Owns the [`Report`] every command produces and [`tabulate`], the common
//! shape "one table, first column the server (`#NameServer` or
//! `#Controller`)". It does no I/O beyond [`Report::write`] and knows nothing
//! of requests.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::{json, Value};

use crate::error::{CallError, EXIT_FAILED, EXIT_OK, EXIT_PARTIAL};
use crate::namesrv::Answer;

/// A table whose columns are padded to their widest cell, mqadmin style
/// (`#Cluster Name  #Broker Name  #BID  #Addr`).
#[derive(Debug, Clone, Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column titles (written as given, e.g. `#Addr`).
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Table {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row; missing cells print empty, extra cells are kept.
    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// Number of rows (without the header).
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The text: columns separated by at least two spaces, no trailing blanks.
    pub fn render(&self) -> String {
        let lines: Vec<&Vec<String>> = std::iter::once(&self.header).chain(&self.rows).collect();
        let columns = lines.iter().map(|row| row.len()).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                lines
                    .iter()
                    .filter_map(|row| row.get(c))
                    .map(|cell| cell.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for row in lines {
            let mut line = String::new();
            for (c, width) in widths.iter().enumerate() {
                let cell = row.get(c).map_or("", String::as_str);
                line.push_str(cell);
                let pad = width - cell.chars().count() + 2;
                line.extend(std::iter::repeat_n(' ', pad));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// The kind of server a report is about: it names the first column, the
/// JSON key of each result and the error lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// A NameServer (`-n`).
    NameServer,
    /// An AutoSwitch-HA controller node (`controller -a`).
    Controller,
}

impl Server {
    /// The first column's title: `#NameServer`, `#Controller`.
    pub fn column(self) -> &'static str {
        match self {
            Server::NameServer => "#NameServer",
            Server::Controller => "#Controller",
        }
    }

    /// The key naming the server in each JSON result: `nameServer`, `controller`.
    pub fn json_key(self) -> &'static str {
        match self {
            Server::NameServer => "nameServer",
            Server::Controller => "controller",
        }
    }

    /// How an error line names it: `NameServer`, `controller`.
    pub fn label(self) -> &'static str {
        match self {
            Server::NameServer => "NameServer",
            Server::Controller => "controller",
        }
    }
}

/// Everything a command has to say.
#[derive(Debug, Clone)]
pub struct Report {
    /// Standard output without `--json`.
    pub text: String,
    /// Standard output with `--json`.
    pub json: Value,
    /// Lines for standard error, one per failed server (both modes).
    pub errors: Vec<String>,
    /// The process exit code.
    pub exit: u8,
}

impl Report {
    /// Writes the report; a closed pipe is not an error worth reporting.
    pub fn write(&self, json: bool) {
        let mut stdout = io::stdout().lock();
        let _ = if json {
            writeln!(stdout, "{:#}", self.json)
        } else {
            stdout.write_all(self.text.as_bytes())
        };
        let _ = stdout.flush();
        let mut stderr = io::stderr().lock();
        for line in &self.errors {
            let _ = writeln!(stderr, "{line}");
        }
    }
}

/// The error line of one server.
pub fn error_line(server: Server, addr: &str, error: &CallError) -> String {
    format!("error: {} {addr}: {error}", server.label())
}

/// The exit code for `ok` successes out of `total` servers.
pub fn exit_code(ok: usize, total: usize) -> u8 {
    match ok {
        0 => EXIT_FAILED,
        n if n < total => EXIT_PARTIAL,
        _ => EXIT_OK,
    }
}

/// The per-server entry of the JSON document:
/// `{"nameServer" | "controller", "ok", "result" | "error"}`.
pub fn answer_json<T: Serialize>(server: Server, answer: &Answer<T>) -> Value {
    let mut entry = match &answer.result {
        Ok(data) => json!({
            "ok": true,
            "result": serde_json::to_value(data).unwrap_or(Value::Null),
        }),
        Err(error) => json!({
            "ok": false,
            "error": error.to_json(),
        }),
    };
    entry[server.json_key()] = json!(answer.addr);
    entry
}

/// [`tabulate_on`] for NameServers.
pub fn tabulate<T: Serialize>(
    command: &str,
    answers: &[Answer<T>],
    header: &[&str],
    rows: impl Fn(&T) -> Vec<Vec<String>>,
) -> Report {
    tabulate_on(Server::NameServer, command, answers, header, rows)
}

/// The common report: one table whose first column is the server
/// (`#NameServer`, `#Controller`), filled by `rows` for every server that
/// answered (a server with nothing to show gets a `(none)` row, so every
/// answer is visible), an error line for every one that failed, and
/// `{"command", "exitCode", "results": [...]}`.
pub fn tabulate_on<T: Serialize>(
    server: Server,
    command: &str,
    answers: &[Answer<T>],
    header: &[&str],
    rows: impl Fn(&T) -> Vec<Vec<String>>,
) -> Report {
    let mut table = Table::new(std::iter::once(server.column()).chain(header.iter().copied()));
    let mut errors = Vec::new();
    for answer in answers {
        match &answer.result {
            Ok(data) => {
                let found = rows(data);
                if found.is_empty() {
                    table.push(vec![answer.addr.clone(), "(none)".to_owned()]);
                }
                for row in found {
                    table.push(std::iter::once(answer.addr.clone()).chain(row).collect());
                }
            }
            Err(error) => errors.push(error_line(server, &answer.addr, error)),
        }
    }
    let ok = answers.iter().filter(|a| a.result.is_ok()).count();
    let exit = exit_code(ok, answers.len());
    let text = if ok == 0 {
        String::new()
    } else {
        table.render()
    };
    Report {
        text,
        json: json!({
            "command": command,
            "exitCode": exit,
            "results": answers.iter().map(|a| answer_json(server, a)).collect::<Vec<_>>(),
        }),
        errors,
        exit,
    }
}

/// Java `PermName.perm2String` with the number: `6(RW-)`.
pub fn perm(perm: i32) -> String {
    let flag = |bit: i32, c: char| if perm & bit != 0 { c } else { '-' };
    format!("{perm}({}{}{})", flag(4, 'R'), flag(2, 'W'), flag(1, 'X'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_and_trim() {
        let mut table = Table::new(["#Cluster Name", "#BID", "#Addr"]);
        table.push(vec![
            "DefaultCluster".into(),
            "0".into(),
            "127.0.0.1:10911".into(),
        ]);
        table.push(vec!["c".into(), "12".into()]);
        assert_eq!(
            table.render(),
            "#Cluster Name   #BID  #Addr\nDefaultCluster  0     127.0.0.1:10911\nc               12\n"
        );
        assert_eq!(table.len(), 2);
    }

    #[test]
    fn exit_codes_and_perms() {
        assert_eq!(exit_code(2, 2), EXIT_OK);
        assert_eq!(exit_code(1, 2), EXIT_PARTIAL);
        assert_eq!(exit_code(0, 2), EXIT_FAILED);
        assert_eq!(perm(6), "6(RW-)");
        assert_eq!(perm(4), "4(R--)");
        assert_eq!(perm(7), "7(RWX)");
    }

    #[test]
    fn tabulate_shows_every_answer() {
        let answers = vec![
            Answer {
                addr: "a:1".to_owned(),
                result: Ok(vec!["t1".to_owned(), "t2".to_owned()]),
            },
            Answer {
                addr: "b:2".to_owned(),
                result: Ok(Vec::new()),
            },
            Answer {
                addr: "c:3".to_owned(),
                result: Err(CallError::Closed),
            },
        ];
        let report = tabulate("topic list", &answers, &["#Topic"], |topics| {
            topics.iter().map(|t| vec![t.clone()]).collect()
        });
        assert_eq!(
            report.text,
            "#NameServer  #Topic\na:1          t1\na:1          t2\nb:2          (none)\n"
        );
        assert_eq!(
            report.errors,
            ["error: NameServer c:3: connection closed before the response arrived"]
        );
        assert_eq!(report.exit, EXIT_PARTIAL);
        assert_eq!(report.json["results"][2]["error"]["kind"], "closed");
        assert_eq!(report.json["results"][0]["result"][1], "t2");
    }
}
