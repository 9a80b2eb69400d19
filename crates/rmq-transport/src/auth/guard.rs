//! The authentication check every request passes before its handler:
//! `rmq-auth`'s policy (with the server's table of what each code needs)
//! over the accounts file of the moment, the refusal answer, the
//! rate-limited refusal log and the audit log of admin writes.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use rmq_auth::policy::requirement;
use rmq_auth::{
    Accounts, AccountsFile, Decision, LoadOptions, Policy, ReloadOutcome, Requirement,
    RequirementTable, VerifiedMemo,
};
use rmq_wire::RemotingCommand;

use crate::ConnectionInfo;

use super::{AuthKeys, LogLimit};

/// Log lines for refused requests: at most this many per [`REFUSAL_LOG_WINDOW`].
const REFUSAL_LOG_LINES: u32 = 20;
/// See [`REFUSAL_LOG_LINES`].
const REFUSAL_LOG_WINDOW: Duration = Duration::from_secs(10);
/// Ext fields the audit line leaves out: credentials, not what was done.
const NOT_AUDITED: [&str; 3] = [
    rmq_auth::signature::ACCESS_KEY,
    rmq_auth::signature::SIGNATURE,
    rmq_auth::signature::SECURITY_TOKEN,
];

/// What a request may do next.
#[derive(Debug)]
pub enum Verdict {
    /// Serve it.
    Serve,
    /// Answer this instead (a refused request; for a one-way request the
    /// transport sends nothing, and the refusal is only logged).
    Refuse(RemotingCommand),
}

/// The authentication state of a server.
#[derive(Debug)]
pub struct Guard {
    /// `authenticationEnabled`: when off, every request is served (and
    /// admin writes are still audited).
    enabled: bool,
    table: RequirementTable,
    policy: RwLock<Arc<Policy>>,
    file: Mutex<Option<AccountsFile>>,
    refusals: LogLimit,
}

impl Guard {
    /// Authentication off: every request is served (`table` still tells
    /// which requests are admin writes, for the audit log).
    pub fn disabled(table: RequirementTable) -> Guard {
        let mut policy = Policy::new(Arc::new(Accounts::default()), table);
        policy.enabled = false;
        Guard {
            enabled: false,
            table,
            policy: RwLock::new(Arc::new(policy)),
            file: Mutex::new(None),
            refusals: LogLimit::new(REFUSAL_LOG_LINES, REFUSAL_LOG_WINDOW),
        }
    }

    /// The guard the keys describe, with the warnings its accounts file
    /// gave; an error names the file (and line) when it cannot be used.
    /// The file is loaded even when authentication is off, so that a broken
    /// file is found before anyone switches it on.
    pub fn from_keys(
        keys: &AuthKeys,
        table: RequirementTable,
    ) -> Result<(Guard, Vec<String>), String> {
        keys.check_consistent()?;
        let guard = Guard::disabled(table);
        if keys.accounts_file.trim().is_empty() {
            return Ok((guard, Vec::new()));
        }
        let options = LoadOptions {
            allow_public_defaults: keys.allow_public_default_accounts,
        };
        let (file, warnings) = AccountsFile::open(Path::new(keys.accounts_file.trim()), options)
            .map_err(|error| format!("authenticationAccountsFile: {error}"))?;
        let mut policy = Policy::new(file.accounts(), table);
        policy.enabled = keys.enabled;
        policy.protect_reads = keys.protect_config_reads;
        policy.exempt_codes = keys.whitelisted_codes();
        let memo_budget = keys.signature_memo_budget();
        if memo_budget > 0 {
            policy.memo = Some(Arc::new(VerifiedMemo::new(memo_budget)));
        }
        let guard = Guard {
            enabled: keys.enabled,
            policy: RwLock::new(Arc::new(policy)),
            file: Mutex::new(Some(file)),
            ..guard
        };
        Ok((guard, warnings))
    }

    /// Whether requests are authenticated.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// The number of accounts in force.
    pub fn account_count(&self) -> usize {
        self.policy().accounts.len()
    }

    /// Decides `request` from `conn`: serve it, or the refusal to answer.
    /// Refusals are logged (rate-limited); admin writes that are served are
    /// audited.
    pub fn check(&self, conn: &ConnectionInfo, request: &RemotingCommand) -> Verdict {
        self.check_as(conn, request, requirement(self.table, request.code))
    }

    /// As [`Guard::check`], with what the request needs decided by the
    /// caller (a requirement that depends on a header field).
    pub fn check_as(
        &self,
        conn: &ConnectionInfo,
        request: &RemotingCommand,
        needed: Requirement,
    ) -> Verdict {
        let admin_write = needed == Requirement::Admin;
        if !self.enabled {
            if admin_write {
                audit(
                    conn,
                    request,
                    "unauthenticated (authenticationEnabled=false)",
                );
            }
            return Verdict::Serve;
        }
        let policy = self.policy();
        // The name that is an account's tlsSubject; else the first one, so
        // that a refusal can say which certificate named no account.
        let identity = conn.tls_identity().and_then(|identity| {
            identity
                .names()
                .find(|name| policy.accounts.by_tls_subject(name).is_some())
                .or_else(|| identity.names().next())
        });
        match policy.decide_as(request, conn.peer().ip(), identity, needed) {
            Decision::Open => Verdict::Serve,
            Decision::Allowed { who } => {
                if admin_write {
                    audit(conn, request, &who.to_string());
                }
                Verdict::Serve
            }
            Decision::Refused(refusal) => {
                if let Some(left_out) = self.refusals.admit(Instant::now()) {
                    let oneway = request.is_oneway();
                    tracing::warn!(
                        peer = %conn.peer(),
                        code = request.code,
                        oneway,
                        left_out,
                        "request refused: {}{}",
                        refusal.remark(),
                        if oneway { " (one-way: dropped without an answer)" } else { "" }
                    );
                }
                Verdict::Refuse(refusal.response(request))
            }
        }
    }

    /// Reloads the accounts file when it changed. A file that no longer
    /// loads leaves the accounts in force as they were, and says why.
    pub fn reload_if_changed(&self) {
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(file) = file.as_mut() else { return };
        match file.reload_if_changed() {
            ReloadOutcome::Unchanged => {}
            ReloadOutcome::Reloaded { warnings } => {
                for warning in warnings {
                    tracing::warn!("authenticationAccountsFile: {warning}");
                }
                let mut policy = (*self.policy()).clone();
                policy.accounts = file.accounts();
                let count = policy.accounts.len();
                *self.policy.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(policy);
                tracing::info!(path = %file.path().display(), accounts = count, "accounts file reloaded");
            }
            ReloadOutcome::Rejected { error } => {
                tracing::error!(%error, "accounts file not reloaded, the previous accounts stay in force");
            }
        }
    }
}

impl Guard {
    fn policy(&self) -> Arc<Policy> {
        self.policy
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// One line per served admin write: who, from where, what.
fn audit(conn: &ConnectionInfo, request: &RemotingCommand, who: &str) {
    let fields: Vec<String> = request
        .ext_fields
        .iter()
        .flatten()
        .filter(|(key, _)| !NOT_AUDITED.contains(&key.as_str()))
        .map(|(key, value)| format!("{key}={}", shorten(value)))
        .collect();
    let body = request.body.as_ref().map_or(0, |body| body.len());
    tracing::info!(
        target: "audit",
        peer = %conn.peer(),
        who,
        code = request.code,
        request = ?request.request_code(),
        fields = %fields.join(", "),
        body_bytes = body,
        "admin write accepted"
    );
}

/// At most 80 characters of a field's value in the audit log.
fn shorten(value: &str) -> String {
    const MAX: usize = 80;
    match value.char_indices().nth(MAX) {
        Some((end, _)) => format!("{}…", &value[..end]),
        None => value.to_owned(),
    }
}
