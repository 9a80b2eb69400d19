//! Who may change routes: request authentication and TLS on the listening
//! port, shared with the controller (`rmq_transport::auth`, over `rmq-auth`'s
//! verifier and policy, and `rmq_transport::tls`). The NameServer's table of
//! what each request code needs is `rmq_auth::NAMESRV_REQUIREMENTS`.

pub use rmq_transport::auth::{
    describe_tls, is_security_key, server_tls, AuthKeys, Guard, LogLimit, Verdict,
};
