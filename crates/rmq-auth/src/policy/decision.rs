//! What the policy answers: serve it, serve it as someone, or refuse it with
//! a remark the client will show.

use std::fmt;
use std::net::IpAddr;

use rmq_wire::{RemotingCommand, ResponseCode};

use crate::accounts::BrokerClaim;

/// The outcome of [`crate::Policy::decide`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// No authentication needed: the code is open, exempt, or the policy is off.
    Open,
    /// Authenticated and permitted.
    Allowed {
        /// Who is acting, and how that was established.
        who: Principal,
    },
    /// Refused; answer [`Refusal::response`] (or drop a one-way request and log).
    Refused(Refusal),
}

/// Who a request acts as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The account's access key; `None` for a peer admitted by the global allow-list.
    pub account: Option<String>,
    /// Admin writes allowed.
    pub admin: bool,
    /// How the principal was established.
    pub method: AuthMethod,
}

/// How a principal was established.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthMethod {
    /// A valid `Signature` under the account's secret.
    Signature,
    /// The peer matched the account's `whiteRemoteAddress` (Java 4.x: no signature needed).
    AccountAllowList {
        /// The peer's address.
        peer: IpAddr,
    },
    /// The peer matched `globalWhiteRemoteAddresses`: broker rights only.
    GlobalAllowList {
        /// The peer's address.
        peer: IpAddr,
    },
    /// The TLS client identity matched the account's `tlsSubject`.
    TlsCertificate {
        /// The identity as the transport passed it.
        identity: String,
    },
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.account, &self.method) {
            (None, AuthMethod::GlobalAllowList { peer }) => {
                write!(
                    f,
                    "allow-listed address {peer} (globalWhiteRemoteAddresses)"
                )
            }
            (None, _) => f.write_str("an unnamed principal"),
            (Some(key), method) => {
                write!(f, "AccessKey={}", shown(key))?;
                match method {
                    AuthMethod::Signature => f.write_str(" (signature)"),
                    AuthMethod::AccountAllowList { peer } => {
                        write!(f, " (address {peer} in its whiteRemoteAddress)")
                    }
                    AuthMethod::GlobalAllowList { peer } => {
                        write!(f, " (allow-listed address {peer})")
                    }
                    AuthMethod::TlsCertificate { identity } => {
                        write!(f, " (TLS identity {})", shown(identity))
                    }
                }
            }
        }
    }
}

/// A refused request: the code it had and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The request code.
    pub code: i32,
    /// Why.
    pub reason: RefusalReason,
}

/// Why a request was refused. The first four are Java 5.x's messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefusalReason {
    /// No `AccessKey`, no TLS identity or address that names an account, and
    /// the peer is not globally allow-listed.
    NoCredentials {
        /// The peer's address.
        peer: IpAddr,
        /// The verified client certificate's identity, when the connection
        /// had one that names no account.
        certificate: Option<String>,
    },
    /// An `AccessKey` ext field that is empty.
    EmptyAccessKey,
    /// The access key names no account.
    UnknownUser {
        /// As sent.
        access_key: String,
    },
    /// The account (by key or by TLS identity) is disabled.
    Disabled {
        /// The account's access key.
        access_key: String,
    },
    /// An `AccessKey` without a `Signature`.
    MissingSignature {
        /// As sent.
        access_key: String,
    },
    /// The signature does not verify.
    BadSignature {
        /// As sent.
        access_key: String,
    },
    /// An admin code from a principal that is not an admin.
    NeedAdmin {
        /// Who asked.
        who: Principal,
    },
    /// A broker write claiming an identity the account is not bound to.
    BrokerNotBound {
        /// The account's access key.
        access_key: String,
        /// What the request claimed.
        claimed: BrokerClaim,
    },
}

impl Refusal {
    /// The answer's code: `NO_PERMISSION` (16), which every Java client knows.
    pub fn response_code(&self) -> ResponseCode {
        ResponseCode::NoPermission
    }

    /// A 5.x-style remark naming the reason, the access key and the request
    /// code, e.g. `check signature failed. (AccessKey=rocketmq2, request code 205)`.
    /// Text that came from the request is shown escaped and shortened.
    pub fn remark(&self) -> String {
        let code = self.code;
        match &self.reason {
            RefusalReason::NoCredentials {
                peer,
                certificate: None,
            } => format!(
                "username cannot be null. (no AccessKey, and {peer} is not allow-listed; request code {code})"
            ),
            RefusalReason::NoCredentials {
                peer,
                certificate: Some(identity),
            } => format!(
                "username cannot be null. (no AccessKey; the client certificate {} is no account's tlsSubject, and {peer} is not allow-listed; request code {code})",
                shown(identity)
            ),
            RefusalReason::EmptyAccessKey => {
                format!("username cannot be null. (empty AccessKey; request code {code})")
            }
            RefusalReason::UnknownUser { access_key } => {
                format!("User:{} is not found. (request code {code})", shown(access_key))
            }
            RefusalReason::Disabled { access_key } => {
                format!("User:{} is disabled. (request code {code})", shown(access_key))
            }
            RefusalReason::MissingSignature { access_key } => format!(
                "check signature failed. (AccessKey={}, no Signature ext field; request code {code})",
                shown(access_key)
            ),
            RefusalReason::BadSignature { access_key } => format!(
                "check signature failed. (AccessKey={}, request code {code})",
                shown(access_key)
            ),
            RefusalReason::NeedAdmin { who } => match (&who.account, &who.method) {
                (Some(key), _) => format!(
                    "admin permission needed. (AccessKey={} is not an admin; request code {code})",
                    shown(key)
                ),
                (None, AuthMethod::GlobalAllowList { peer }) => format!(
                    "admin permission needed. ({peer} is allow-listed for broker requests only; request code {code})"
                ),
                (None, _) => format!("admin permission needed. (request code {code})"),
            },
            RefusalReason::BrokerNotBound {
                access_key,
                claimed,
            } => format!(
                "broker identity not allowed. (AccessKey={} may not claim {claimed}; request code {code})",
                shown(access_key)
            ),
        }
    }

    /// The response to send for `request` (not for one-way requests, which get none).
    pub fn response(&self, request: &RemotingCommand) -> RemotingCommand {
        RemotingCommand::response_to(request, self.response_code()).with_remark(self.remark())
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.remark())
    }
}

/// Request-supplied text made safe for a remark or a log line: control
/// characters escaped, at most 64 characters kept.
pub(crate) fn shown(text: &str) -> String {
    const LIMIT: usize = 64;
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == LIMIT {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}
