//! The accounts a server authenticates against, loaded from one file.
//!
//! Owns reading and checking the file; what an account may do per request is
//! `policy`'s. Two formats, told apart by the first character:
//!
//! * a JSON list (`[` first): 5.x objects, `{"username", "password",
//!   "userType": "Super"|"Normal", "userStatus": "enable"|"disable"}` (the
//!   `User` model of `initAuthenticationUser`) and/or `{"accessKey",
//!   "secretKey"}` (`SessionCredentials`, as in
//!   `innerClientAuthenticationCredentials`); such an entry is not an admin
//!   unless it says `"admin": true` (Java makes a broker's inner credentials a
//!   `Super` user; Waymark gives them broker rights only);
//! * otherwise YAML in 4.x `plain_acl.yml` form: `globalWhiteRemoteAddresses`
//!   (a list of [`AddressPattern`]s) and `accounts` (`accessKey`,
//!   `secretKey`, `admin`, `whiteRemoteAddress`, ...). Java's topic and group
//!   permission fields and `dataVersion` are accepted and reported back as
//!   warnings.
//!
//! Both formats also take the Waymark fields described in `entry`
//! (`tlsSubject`, `brokers`, `userStatus`). Every error names the file, the
//! line when the parser can tell, and the field; secrets are never echoed.
//!
//! YAML is read with `serde_norway`: `serde_yaml` is archived, and of its
//! maintained forks `serde_norway` also maintains its own copy of the libyaml
//! translation underneath (`unsafe-libyaml-norway`), where `serde_yaml_ng`
//! still sits on the unmaintained `unsafe-libyaml`.

mod binding;
mod entry;
mod file;
mod locate;

use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;
use std::path::{Path as FsPath, PathBuf};

use serde_json::Value;

pub use binding::{BrokerBinding, BrokerClaim};
pub(crate) use entry::scalar_text;
pub(crate) use file::read_text;
pub use file::{AccountsFile, ReloadOutcome};
use locate::{line_of, Path};

use crate::address::AddressPattern;

/// Credentials shipped with Apache RocketMQ (`plain_acl.yml`, `tools.yml`):
/// anyone can sign with them.
const PUBLIC_DEFAULTS: &[(&str, &str)] = &[("rocketmq2", "12345678"), ("RocketMQ", "12345678")];

/// How strict loading is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Accept accounts that use RocketMQ's published default credentials
    /// (`rocketmq2`/`12345678`, `RocketMQ`/`12345678`), with a warning.
    /// Refused by default.
    pub allow_public_defaults: bool,
}

/// An accounts file that cannot be used. The previous accounts, if any, stay.
#[derive(Debug, thiserror::Error)]
pub enum AccountsError {
    /// The file cannot be read.
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The content is wrong.
    #[error("{origin}{}: {message}", line_suffix(*.line))]
    Invalid {
        /// The file name (or the name given to [`Accounts::parse`]).
        origin: String,
        /// 1-based line, when known.
        line: Option<usize>,
        /// What is wrong, naming the field.
        message: String,
    },
}

fn line_suffix(line: Option<usize>) -> String {
    line.map(|line| format!(":{line}")).unwrap_or_default()
}

/// One account. `Debug` leaves the secret out.
#[derive(Clone, PartialEq, Eq)]
pub struct Account {
    access_key: String,
    secret_key: String,
    admin: bool,
    enabled: bool,
    white_remote_address: Option<AddressPattern>,
    tls_subject: Option<String>,
    brokers: Vec<BrokerBinding>,
}

impl Account {
    /// The access key (`accessKey` / `username`).
    pub fn access_key(&self) -> &str {
        &self.access_key
    }

    /// The HMAC key (`secretKey` / `password`).
    pub fn secret_key(&self) -> &str {
        &self.secret_key
    }

    /// `admin: true` / `userType: Super`: may do admin writes.
    pub fn is_admin(&self) -> bool {
        self.admin
    }

    /// False for `userStatus: disable`; such an account authenticates nothing.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Peers that act as this account without a signature (Java 4.x rule).
    pub fn white_remote_address(&self) -> Option<&AddressPattern> {
        self.white_remote_address.as_ref()
    }

    /// The TLS client identity that acts as this account.
    pub fn tls_subject(&self) -> Option<&str> {
        self.tls_subject.as_deref()
    }

    /// Broker identities this account may claim; empty means any.
    pub fn brokers(&self) -> &[BrokerBinding] {
        &self.brokers
    }
}

impl fmt::Debug for Account {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Account")
            .field("access_key", &self.access_key)
            .field("admin", &self.admin)
            .field("enabled", &self.enabled)
            .field("white_remote_address", &self.white_remote_address)
            .field("tls_subject", &self.tls_subject)
            .field("brokers", &self.brokers)
            .finish_non_exhaustive()
    }
}

/// Every account of one file, in file order, and the global allow-list.
#[derive(Debug, Clone, Default)]
pub struct Accounts {
    origin: String,
    accounts: Vec<Account>,
    by_access_key: HashMap<String, usize>,
    global_allow_list: Vec<AddressPattern>,
}

impl Accounts {
    /// Reads and checks the file at `path`. The warnings are for the caller to log.
    ///
    /// # Errors
    /// Unreadable file, syntax error, or an invalid account; see [`AccountsError`].
    pub fn load(
        path: &FsPath,
        options: LoadOptions,
    ) -> Result<(Accounts, Vec<String>), AccountsError> {
        let text = read_text(path)?;
        Accounts::parse(&text, &path.display().to_string(), options)
    }

    /// Checks `text`; `origin` names it in errors and warnings.
    ///
    /// # Errors
    /// As [`Accounts::load`], except reading.
    pub fn parse(
        text: &str,
        origin: &str,
        options: LoadOptions,
    ) -> Result<(Accounts, Vec<String>), AccountsError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let format = if text.trim_start().starts_with('[') {
            Format::UsersJson
        } else {
            Format::PlainAclYaml
        };
        let syntax = |line: Option<usize>, message: String| AccountsError::Invalid {
            origin: origin.to_owned(),
            line,
            message,
        };
        let document: Value = match format {
            Format::PlainAclYaml => serde_norway::from_str(text)
                .map_err(|e| syntax(e.location().map(|l| l.line()), e.to_string()))?,
            Format::UsersJson => {
                serde_json::from_str(text).map_err(|e| syntax(Some(e.line()), e.to_string()))?
            }
        };
        let mut notes = Vec::new();
        let accounts = build(format, &document, options, &mut notes).map_err(|problem| {
            AccountsError::Invalid {
                origin: origin.to_owned(),
                line: line_of(format, text, &problem.path),
                message: problem.to_string(),
            }
        })?;
        let accounts = Accounts {
            origin: origin.to_owned(),
            ..accounts
        };
        // In file order, whatever order the parsed maps iterate in.
        let mut located: Vec<(Option<usize>, String)> = notes
            .iter()
            .map(|note| (line_of(format, text, &note.path), note.to_string()))
            .collect();
        located.sort();
        let warnings = located
            .into_iter()
            .map(|(line, note)| format!("{origin}{}: {note}", line_suffix(line)))
            .collect();
        Ok((accounts, warnings))
    }

    /// Where these accounts came from.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The account with this access key, enabled or not.
    pub fn get(&self, access_key: &str) -> Option<&Account> {
        self.by_access_key
            .get(access_key)
            .map(|&i| &self.accounts[i])
    }

    /// Every account, in file order.
    pub fn iter(&self) -> impl Iterator<Item = &Account> {
        self.accounts.iter()
    }

    /// Number of accounts.
    pub fn len(&self) -> usize {
        self.accounts.len()
    }

    /// True when the file defines no account.
    pub fn is_empty(&self) -> bool {
        self.accounts.is_empty()
    }

    /// `globalWhiteRemoteAddresses`.
    pub fn global_allow_list(&self) -> &[AddressPattern] {
        &self.global_allow_list
    }

    /// Whether `peer` is in `globalWhiteRemoteAddresses`.
    pub fn globally_allowed(&self, peer: &IpAddr) -> bool {
        self.global_allow_list.iter().any(|p| p.matches(peer))
    }

    /// The account whose `tlsSubject` is exactly `identity` (enabled or not).
    pub fn by_tls_subject(&self, identity: &str) -> Option<&Account> {
        self.accounts
            .iter()
            .find(|a| a.tls_subject.as_deref() == Some(identity))
    }

    /// The first enabled account, in file order, whose `whiteRemoteAddress`
    /// matches `peer`.
    pub fn by_address(&self, peer: &IpAddr) -> Option<&Account> {
        self.accounts.iter().find(|a| {
            a.enabled
                && a.white_remote_address
                    .as_ref()
                    .is_some_and(|p| p.matches(peer))
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    PlainAclYaml,
    UsersJson,
}

/// A message about a place in the tree: a [`Problem`] makes the file
/// unusable, a [`Note`] becomes a warning.
#[derive(Debug)]
pub(crate) struct Located {
    path: Path,
    message: String,
}

/// Makes the file unusable.
pub(crate) type Problem = Located;
/// Accepted but not used; becomes a warning.
pub(crate) type Note = Located;

impl Located {
    fn new(path: &Path, message: impl Into<String>) -> Located {
        Located {
            path: path.clone(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Located {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.path.0.is_empty() {
            true => f.write_str(&self.message),
            false => write!(f, "{} {}", self.path, self.message),
        }
    }
}

fn build(
    format: Format,
    document: &Value,
    options: LoadOptions,
    notes: &mut Vec<Note>,
) -> Result<Accounts, Problem> {
    let top = Path::default();
    let mut accounts = Vec::new();
    let mut global_allow_list = Vec::new();
    match (format, document) {
        (Format::UsersJson, Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                accounts.push((
                    top.index(i),
                    entry::read_account(item, &top.index(i), notes)?,
                ));
            }
        }
        (Format::UsersJson, _) => {
            return Err(Problem::new(&top, "expected a JSON list of accounts"))
        }
        (Format::PlainAclYaml, Value::Null) => {}
        (Format::PlainAclYaml, Value::Object(map)) => {
            for (key, value) in map {
                let here = top.key(key);
                match (key.as_str(), value) {
                    (_, Value::Null) => {}
                    ("accounts", Value::Array(items)) => {
                        for (i, item) in items.iter().enumerate() {
                            let path = here.index(i);
                            accounts.push((path.clone(), entry::read_account(item, &path, notes)?));
                        }
                    }
                    ("globalWhiteRemoteAddresses", Value::Array(items)) => {
                        for (i, item) in items.iter().enumerate() {
                            let path = here.index(i);
                            let text = scalar_text(item)
                                .map_err(|what| Problem::new(&path, what))?
                                .unwrap_or_default();
                            let pattern = AddressPattern::parse(&text)
                                .map_err(|e| Problem::new(&path, e.to_string()))?;
                            if pattern.matches_everything() {
                                notes.push(Note::new(
                                    &path,
                                    "matches every address: any peer gets broker rights without credentials",
                                ));
                            }
                            global_allow_list.push(pattern);
                        }
                    }
                    ("accounts" | "globalWhiteRemoteAddresses", _) => {
                        return Err(Problem::new(&here, "must be a list"))
                    }
                    ("dataVersion", _) => notes.push(Note::new(
                        &here,
                        "is ignored: Waymark keeps no ACL data version",
                    )),
                    _ => notes.push(Note::new(&here, "is not a plain_acl.yml field; ignored")),
                }
            }
        }
        (Format::PlainAclYaml, _) => {
            return Err(Problem::new(
                &top,
                "expected a mapping with accounts and globalWhiteRemoteAddresses",
            ))
        }
    }
    if accounts.is_empty() && global_allow_list.is_empty() {
        notes.push(Note::new(
            &top,
            "defines no account and no allow-listed address: every protected request will be refused",
        ));
    }
    check_across(&accounts, options, notes)?;
    let by_access_key = accounts
        .iter()
        .enumerate()
        .map(|(i, (_, a))| (a.access_key.clone(), i))
        .collect();
    Ok(Accounts {
        origin: String::new(),
        accounts: accounts.into_iter().map(|(_, a)| a).collect(),
        by_access_key,
        global_allow_list,
    })
}

/// Rules that involve more than one account: public defaults and uniqueness.
fn check_across(
    accounts: &[(Path, Account)],
    options: LoadOptions,
    notes: &mut Vec<Note>,
) -> Result<(), Problem> {
    let mut access_keys: HashMap<&str, &Path> = HashMap::new();
    let mut tls_subjects: HashMap<&str, &Path> = HashMap::new();
    for (path, account) in accounts {
        if PUBLIC_DEFAULTS.contains(&(account.access_key.as_str(), account.secret_key.as_str())) {
            let message = format!(
                "uses RocketMQ's published default credentials ({:?} with its stock secret)",
                account.access_key
            );
            if !options.allow_public_defaults {
                return Err(Problem::new(
                    path,
                    format!("{message}; change them, or allow public defaults explicitly"),
                ));
            }
            notes.push(Note::new(path, format!("{message}: anyone can sign as it")));
        }
        if let Some(earlier) = access_keys.insert(&account.access_key, path) {
            return Err(Problem::new(
                path,
                format!("repeats access key {:?} of {earlier}", account.access_key),
            ));
        }
        if let Some(subject) = &account.tls_subject {
            if let Some(earlier) = tls_subjects.insert(subject, path) {
                return Err(Problem::new(
                    &path.key("tlsSubject"),
                    format!("repeats the tlsSubject of {earlier}"),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
