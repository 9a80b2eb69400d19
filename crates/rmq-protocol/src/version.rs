//! `MQVersion` ordinals that switch NameServer behaviour.
//!
//! The `version` of a command is the ordinal of the sender's release in Java's
//! `MQVersion.Version` enum; all rules compare the *request's* version.

use crate::Dialect;

/// 3.0.11: from here on REGISTER_BROKER carries a `RegisterBrokerBody`;
/// below, a bare `TopicConfigSerializeWrapper`.
pub const V3_0_11: i32 = 37;
/// 4.9.4: from here on route responses use the standard JSON dialect.
pub const V4_9_4: i32 = 401;
/// 5.0.0: from here on the compressed REGISTER_BROKER body has a mapping section.
pub const V5_0_0: i32 = 413;
/// 5.3.1: requests above this version get GO_AWAY during graceful shutdown.
pub const V5_3_1: i32 = 475;

/// Which generation of Java sender an output imitates, where the generations
/// differ in what they write (not in how they parse).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BodyFlavor {
    /// 5.x: `DataVersion.stateVersion`, the static-topic mapping fields of the
    /// REGISTER_BROKER body and its compressed mapping section, TopicConfig
    /// `attributes`.
    #[default]
    V5,
    /// 4.x: none of those.
    V4,
}

impl BodyFlavor {
    /// The flavor of a sender with this `version`: 5.x from 5.0.0 (413) on.
    pub fn for_version(version: i32) -> BodyFlavor {
        if version >= V5_0_0 {
            BodyFlavor::V5
        } else {
            BodyFlavor::V4
        }
    }
}

/// The dialect of a GET_ROUTEINFO_BY_TOPIC response: standard iff the request
/// version is ≥ 4.9.4 or the client sent `acceptStandardJsonOnly=true`.
pub fn route_dialect(request_version: i32, accept_standard_json_only: Option<bool>) -> Dialect {
    if request_version >= V4_9_4 || accept_standard_json_only == Some(true) {
        Dialect::Standard
    } else {
        Dialect::Default
    }
}

/// The ordinal of a 4.x or 5.x release `major.minor.patch` (minor and patch
/// 0–9): `213 + 200·(major−4) + 20·minor + 2·patch`; `None` otherwise.
pub fn release_ordinal(major: u32, minor: u32, patch: u32) -> Option<i32> {
    if !(4..=5).contains(&major) || minor > 9 || patch > 9 {
        return None;
    }
    i32::try_from(213 + 200 * (major - 4) + 20 * minor + 2 * patch).ok()
}

/// The release an ordinal stands for, as [`parse_release`] reads it
/// (`515` → `"5.5.1"`, `480` → `"5.3.4-SNAPSHOT"`); `None` outside 4.0.0–5.9.9.
pub fn release_name(ordinal: i32) -> Option<String> {
    let (release, snapshot) = if ordinal % 2 == 0 {
        (ordinal + 1, true)
    } else {
        (ordinal, false)
    };
    let n = u32::try_from(release.checked_sub(213)?).ok()?;
    let (major, minor, patch) = (4 + n / 200, n % 200 / 20, n % 20 / 2);
    release_ordinal(major, minor, patch).filter(|o| *o == release)?;
    let suffix = if snapshot { "-SNAPSHOT" } else { "" };
    Some(format!("{major}.{minor}.{patch}{suffix}"))
}

/// Parses `"5.3.3"` (optionally `-SNAPSHOT`, one less) into its ordinal.
pub fn parse_release(text: &str) -> Option<i32> {
    let (numbers, snapshot) = match text.strip_suffix("-SNAPSHOT") {
        Some(rest) => (rest, 1),
        None => (text, 0),
    };
    let mut parts = numbers.trim().split('.').map(|p| p.parse::<u32>().ok());
    let (major, minor, patch) = (parts.next()??, parts.next()??, parts.next()??);
    if parts.next().is_some() {
        return None;
    }
    Some(release_ordinal(major, minor, patch)? - snapshot)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_of_known_releases() {
        for (release, ordinal) in [
            ("4.0.0", 213),
            ("4.5.0", 313),
            ("4.7.1", 355),
            ("4.9.4", 401),
            ("4.9.8", 409),
            ("5.0.0", 413),
            ("5.1.4", 441),
            ("5.3.3", 479),
            ("5.3.4-SNAPSHOT", 480),
        ] {
            assert_eq!(parse_release(release), Some(ordinal), "{release}");
        }
        for ordinal in 212..=620 {
            if let Some(name) = release_name(ordinal) {
                assert_eq!(parse_release(&name), Some(ordinal), "{name}");
            }
        }
        assert_eq!(release_name(515).as_deref(), Some("5.5.1"));
        assert_eq!(release_name(409).as_deref(), Some("4.9.8"));
        assert_eq!(release_name(480).as_deref(), Some("5.3.4-SNAPSHOT"));
        assert_eq!(release_name(37), None);
        assert_eq!(parse_release("3.0.11"), None);
        assert_eq!(parse_release("5.3"), None);
    }

    #[test]
    fn flavor_by_version() {
        assert_eq!(BodyFlavor::for_version(409), BodyFlavor::V4);
        assert_eq!(BodyFlavor::for_version(413), BodyFlavor::V5);
    }

    #[test]
    fn route_dialect_rule() {
        assert_eq!(route_dialect(400, None), Dialect::Default);
        assert_eq!(route_dialect(400, Some(false)), Dialect::Default);
        assert_eq!(route_dialect(400, Some(true)), Dialect::Standard);
        assert_eq!(route_dialect(401, None), Dialect::Standard);
    }
}
