//! What a build says about itself: version and git revision.

/// The package version (the workspace's).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The git revision the build came from (12 hex digits), or `unknown`.
pub const GIT_REVISION: &str = env!("WAYMARK_GIT_REVISION");

/// `--version` text: `0.1.0 (git 0123456789ab)`.
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (git ",
    env!("WAYMARK_GIT_REVISION"),
    ")"
);
