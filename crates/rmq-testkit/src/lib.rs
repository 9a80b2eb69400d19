//! Test support shared by the crates' integration tests: the NameServer
//! under test as a child process ([`Namesrv`]), the few admin requests
//! the tests send it ([`admin`]), Waymark's controller as child processes
//! ([`Controller`]), loopback ports ([`ports`]), a peer host that can
//! vanish without a FIN ([`netns`]), hostile peers that try to exhaust a
//! server ([`hostile`]), and the skip-or-fail rule for tests that cannot
//! run on this machine ([`skip`]).
//!
//! Which NameServer runs is a parameter of the test run, not of the test:
//! by default Waymark's `rmq-namesrv` binary; with the environment variable
//! [`JAVA_CLASSPATH_ENV`] naming a file that holds a Java class path, the
//! Java NameServer started by `dev.waymark.interop.harness.NamesrvLauncher`
//! (`interop/java`, see `interop/run-rust-vs-java.sh`). A test that depends
//! on Waymark-only behaviour asks for [`Namesrv::waymark`] and says why.
//!
//! Not here: brokers and clients (the crates under test provide those), and
//! the NameServer's own tests, which watch its log and signals.

pub mod admin;
mod controller;
pub mod hostile;
pub mod netns;
pub mod pki;
pub mod ports;
mod process;
pub mod seeds;
pub mod skip;

pub use controller::{peer_list, Controller};
pub use process::{Kind, Namesrv, JAVA_CLASSPATH_ENV, KEEP_DIR_ENV};

use std::time::Duration;

/// Polls `check` every 50 ms until it is true or `limit` passes; whether it
/// became true.
pub async fn eventually<F, Fut>(limit: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if check().await {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
