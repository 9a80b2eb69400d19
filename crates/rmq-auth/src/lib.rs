//! Request authentication for RocketMQ remoting, compatible with unchanged
//! Java brokers, clients and `mqadmin`. Sans-IO: no sockets, no runtime, no
//! threads, no clock.
//!
//! * [`signature`]: what Java signs and how (HMAC-SHA1 over the ext-field
//!   values in Java `TreeMap` order and the body, Base64), and constant-time
//!   verification.
//! * [`credentials`]: the client side, signing an outgoing request as
//!   `AclClientRPCHook` does; mqadmin's `tools.yml`.
//! * [`address`]: Java 4.x allow-list patterns (`10.10.103.*`,
//!   `192.168.1.1-100`, `192.168.1.{1,2}`, IPv6 forms).
//! * [`accounts`]: the accounts file (4.x `plain_acl.yml` or a JSON list of
//!   5.x users), checked with file and line in every error, and re-read when
//!   it changes.
//! * [`policy`]: the per-request decision, from a table of what each request
//!   code needs.
//! * [`verified`]: a bounded memo of verified requests, so that an unchanged
//!   periodic re-registration is compared instead of hashed again.
//!
//! # What this protects, and what it does not
//!
//! A valid signature proves that the sender knows the account's secret *and*
//! that the signed ext fields and body are the ones the secret's holder
//! signed. It proves nothing else, because the Java scheme signs nothing
//! else:
//!
//! * **No nonce, no timestamp.** Identical requests carry identical
//!   signatures. Anyone who captures a signed request (an UNREGISTER_BROKER,
//!   a DELETE_KV_CONFIG) can replay it verbatim, at any later time.
//! * **The request code is not signed**, nor are opaque, flag, version,
//!   language or remark. A captured request can be re-sent under another code
//!   with the same header: WIPE_WRITE_PERM_OF_BROKER (205) and
//!   ADD_WRITE_PERM_OF_BROKER (327) of one broker carry the *same* signature,
//!   as do GET_KV_CONFIG (101) and DELETE_KV_CONFIG (102) of one key, and every
//!   header-less, body-less request of one access key.
//! * **Values are concatenated without separators**, so moving characters
//!   between adjacent fields keeps the signature.
//! * Address allow-lists trust the source address, which anyone on the path
//!   or the same network can spoof for one-way requests.
//!
//! Only TLS prevents capture (and so replay); only a verified client
//! certificate (see [`policy`]'s TLS identities) ties a request to a peer.
//! Waymark still verifies signatures exactly as Java does, because that is
//! what every Java peer can produce; treat it as protection against
//! mistakes and casual misuse on a trusted network, not against an attacker
//! who can read the traffic.

pub mod accounts;
pub mod address;
pub mod credentials;
pub mod policy;
pub mod signature;
pub mod verified;

pub use accounts::{
    Account, Accounts, AccountsError, AccountsFile, BrokerBinding, BrokerClaim, LoadOptions,
    ReloadOutcome,
};
pub use address::{AddrPortPattern, AddressPattern, AddressPatternError};
pub use credentials::Credentials;
pub use policy::{
    AuthMethod, Decision, Policy, Principal, Refusal, RefusalReason, Requirement, RequirementTable,
    CONTROLLER_REQUIREMENTS, NAMESRV_REQUIREMENTS,
};
pub use verified::VerifiedMemo;
