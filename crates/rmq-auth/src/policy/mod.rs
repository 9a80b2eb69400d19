//! The per-request decision: a pure function of the request, the peer's
//! address, the TLS identity the transport established, and the accounts.
//!
//! Owns the order of checks and the rights of each kind of principal. It
//! sends nothing, logs nothing and reads no clock; the caller turns a
//! [`Decision::Refused`] into a response (or drops a one-way request).
//!
//! Authentication, in this order:
//!
//! 1. The request carries `AccessKey`: an unknown key is refused
//!    (`User:X is not found.`), a disabled account too (`User:X is
//!    disabled.`); a peer inside that account's `whiteRemoteAddress` is that
//!    account without a signature (Java 4.x's rule); otherwise `Signature`
//!    must verify over the received ext fields and body.
//! 2. No `AccessKey`: a TLS identity equal to an account's `tlsSubject` is
//!    that account; else a peer inside an enabled account's
//!    `whiteRemoteAddress` is that account (the first in file order); else a
//!    peer inside `globalWhiteRemoteAddresses` is an unnamed principal with
//!    broker rights only; else the request is refused.
//!
//! Rights: an admin account (`admin: true`, `userType: Super`) may do
//! everything; any other account has broker rights (registration,
//! heartbeats, data-version queries) and protected reads. The global
//! allow-list grants broker rights only, never admin writes: stricter than
//! Java 4.x, where a globally allow-listed address may do anything, because
//! an address is weaker evidence than a key and admin writes can take a whole
//! cluster's write permission away. Java 4.x also consults the global
//! allow-list before the `AccessKey`; here a request that names a key stands
//! or falls by that key. Broker bindings (`brokers:`) of an account restrict
//! the identities its [`Requirement::Broker`] requests may claim.

mod decision;
mod requirement;

use std::net::IpAddr;
use std::sync::Arc;

use rmq_wire::{ExtFields, RemotingCommand};

pub(crate) use decision::shown;
pub use decision::{AuthMethod, Decision, Principal, Refusal, RefusalReason};
pub use requirement::{
    requirement, Requirement, RequirementTable, CONTROLLER_REQUIREMENTS, NAMESRV_REQUIREMENTS,
};

use crate::accounts::{Account, Accounts, BrokerClaim};
use crate::address::canonical;
use crate::signature::{self, ACCESS_KEY, SIGNATURE};
use crate::verified::VerifiedMemo;

/// Who may do what, for one server.
///
/// Fields are public so the caller can swap `accounts` after a reload or flip
/// switches from its configuration; the policy keeps no other state than
/// its optional memo of verified requests, which saves work and never
/// changes a decision.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The accounts in force.
    pub accounts: Arc<Accounts>,
    /// `false`: every request is [`Decision::Open`].
    pub enabled: bool,
    /// Whether [`Requirement::ProtectedRead`] codes need a principal.
    pub protect_reads: bool,
    /// The server's code → requirement table.
    pub table: RequirementTable,
    /// Codes served without authentication whatever the table says (Java 5.x
    /// `authenticationWhitelist`).
    pub exempt_codes: Vec<i32>,
    /// Requests already verified, so that an unchanged one is compared
    /// instead of hashed again; `None` verifies every request in full. The
    /// memo never changes a decision (see [`VerifiedMemo`]).
    pub memo: Option<Arc<VerifiedMemo>>,
}

impl Policy {
    /// An enabled policy over `table`, reads unprotected, nothing exempt.
    pub fn new(accounts: Arc<Accounts>, table: RequirementTable) -> Policy {
        Policy {
            accounts,
            enabled: true,
            protect_reads: false,
            table,
            exempt_codes: Vec::new(),
            memo: None,
        }
    }

    /// [`Policy::new`] with the NameServer's table.
    pub fn namesrv(accounts: Arc<Accounts>) -> Policy {
        Policy::new(accounts, NAMESRV_REQUIREMENTS)
    }

    /// Decides one request from `peer`. `tls_identity` is the client
    /// certificate identity the transport verified (subject or SAN text),
    /// compared byte for byte with the accounts' `tlsSubject`.
    pub fn decide(
        &self,
        request: &RemotingCommand,
        peer: IpAddr,
        tls_identity: Option<&str>,
    ) -> Decision {
        self.decide_as(
            request,
            peer,
            tls_identity,
            requirement(self.table, request.code),
        )
    }

    /// As [`Policy::decide`], with what the request needs given by the
    /// caller instead of the table: for a server whose requirement depends on
    /// a header field (the controller's CONTROLLER_ELECT_MASTER is a broker
    /// request, or an admin one with `designateElect=true`).
    pub fn decide_as(
        &self,
        request: &RemotingCommand,
        peer: IpAddr,
        tls_identity: Option<&str>,
        needed: Requirement,
    ) -> Decision {
        if !self.enabled || self.exempt_codes.contains(&request.code) {
            return Decision::Open;
        }
        match needed {
            Requirement::Open => return Decision::Open,
            Requirement::ProtectedRead if !self.protect_reads => return Decision::Open,
            _ => {}
        }
        let refuse = |reason| {
            Decision::Refused(Refusal {
                code: request.code,
                reason,
            })
        };
        let (who, account) = match self.authenticate(request, canonical(peer), tls_identity) {
            Ok(found) => found,
            Err(reason) => return refuse(reason),
        };
        if needed == Requirement::Admin && !who.admin {
            return refuse(RefusalReason::NeedAdmin { who });
        }
        if needed == Requirement::Broker {
            if let Some(account) = account.filter(|a| !a.brokers().is_empty()) {
                let claimed = BrokerClaim::of(request);
                if !account.brokers().iter().any(|b| b.covers(&claimed)) {
                    return refuse(RefusalReason::BrokerNotBound {
                        access_key: account.access_key().to_owned(),
                        claimed,
                    });
                }
            }
        }
        Decision::Allowed { who }
    }

    fn authenticate(
        &self,
        request: &RemotingCommand,
        peer: IpAddr,
        tls_identity: Option<&str>,
    ) -> Result<(Principal, Option<&Account>), RefusalReason> {
        if let Some(ext) = &request.ext_fields {
            if let Some(access_key) = ext.get(ACCESS_KEY) {
                return self.by_access_key(request, ext, access_key, peer);
            }
        }
        if let Some(identity) = tls_identity {
            if let Some(account) = self.accounts.by_tls_subject(identity) {
                let method = AuthMethod::TlsCertificate {
                    identity: identity.to_owned(),
                };
                return as_account(account, method).map(|who| (who, Some(account)));
            }
        }
        if let Some(account) = self.accounts.by_address(&peer) {
            let who = as_account(account, AuthMethod::AccountAllowList { peer })?;
            return Ok((who, Some(account)));
        }
        if self.accounts.globally_allowed(&peer) {
            let who = Principal {
                account: None,
                admin: false,
                method: AuthMethod::GlobalAllowList { peer },
            };
            return Ok((who, None));
        }
        Err(RefusalReason::NoCredentials {
            peer,
            certificate: tls_identity.map(str::to_owned),
        })
    }

    fn by_access_key(
        &self,
        request: &RemotingCommand,
        ext: &ExtFields,
        access_key: &str,
        peer: IpAddr,
    ) -> Result<(Principal, Option<&Account>), RefusalReason> {
        if access_key.is_empty() {
            return Err(RefusalReason::EmptyAccessKey);
        }
        let account = self
            .accounts
            .get(access_key)
            .ok_or_else(|| RefusalReason::UnknownUser {
                access_key: access_key.to_owned(),
            })?;
        let address_allowed = account
            .white_remote_address()
            .is_some_and(|pattern| pattern.matches(&peer));
        // Disabled comes before the address and the signature, as in Java 5.x.
        let method = if address_allowed {
            AuthMethod::AccountAllowList { peer }
        } else {
            AuthMethod::Signature
        };
        let who = as_account(account, method)?;
        if !address_allowed {
            let claimed = ext
                .get(SIGNATURE)
                .ok_or_else(|| RefusalReason::MissingSignature {
                    access_key: access_key.to_owned(),
                })?;
            let body = request.body.as_deref();
            let secret = account.secret_key();
            let valid = match &self.memo {
                Some(memo) => memo.verify_received(secret, ext, body, request.version, claimed),
                None => signature::verify_received(secret, ext, body, request.version, claimed),
            };
            if !valid {
                return Err(RefusalReason::BadSignature {
                    access_key: access_key.to_owned(),
                });
            }
        }
        Ok((who, Some(account)))
    }
}

/// The account as a principal, unless it is disabled.
fn as_account(account: &Account, method: AuthMethod) -> Result<Principal, RefusalReason> {
    if !account.is_enabled() {
        return Err(RefusalReason::Disabled {
            access_key: account.access_key().to_owned(),
        });
    }
    Ok(Principal {
        account: Some(account.access_key().to_owned()),
        admin: account.is_admin(),
        method,
    })
}

#[cfg(test)]
mod tests;
