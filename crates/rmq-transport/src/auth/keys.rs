//! The keys that switch request authentication on and say where the
//! accounts are. Waymark's own keys (a Java NameServer has no
//! authentication and ignores them), except `authenticationEnabled` and
//! `authenticationWhitelist`, which a 5.x broker's operators already know
//! from its `AuthConfig` and which mean the same here.

use rmq_wire::RequestCode;

/// Default of `authenticationSignatureMemoBytes`: room for the unchanged
/// re-registrations of about 180 brokers of 2,000 topics each (350 kB a
/// body), or of thousands of small ones.
pub const DEFAULT_SIGNATURE_MEMO_BYTES: i64 = 64 << 20;

rmq_protocol::java_options! {
    /// Authentication settings, as read from the properties file and `--set`.
    pub struct AuthKeys {
        enabled: bool = "authenticationEnabled", |_, _| false;
        accounts_file: String = "authenticationAccountsFile", |_, _| String::new();
        whitelist: String = "authenticationWhitelist", |_, _| String::new();
        protect_config_reads: bool = "authenticationProtectConfigReads", |_, _| false;
        allow_public_default_accounts: bool = "authenticationAllowPublicDefaultAccounts", |_, _| false;
        signature_memo_bytes: i64 = "authenticationSignatureMemoBytes", |_, _| DEFAULT_SIGNATURE_MEMO_BYTES;
    }
}

impl AuthKeys {
    /// The defaults: authentication off.
    pub fn new() -> AuthKeys {
        AuthKeys::defaults(std::path::Path::new("."), None)
    }

    /// Reads the authentication keys of `properties`; other keys are left out.
    pub fn from_properties(properties: &std::collections::BTreeMap<String, String>) -> AuthKeys {
        let mut keys = AuthKeys::new();
        for (key, value) in properties {
            keys.set(key, value);
        }
        keys
    }

    /// Why `key` may not be `value` at start-up (`Ok` for other keys): the
    /// switches take `true` or `false`, the whitelist request codes.
    pub fn check(key: &str, value: &str) -> Result<(), String> {
        if !AuthKeys::KEYS.contains(&key) {
            return Ok(());
        }
        AuthKeys::check_update(key, value)?;
        if key == "authenticationWhitelist" {
            parse_whitelist(value)?;
        }
        Ok(())
    }

    /// The byte budget of the memo of verified requests
    /// (`authenticationSignatureMemoBytes`; 0 or less: no memo).
    pub fn signature_memo_budget(&self) -> usize {
        usize::try_from(self.signature_memo_bytes).unwrap_or(0)
    }

    /// Request codes exempt from authentication (`authenticationWhitelist`,
    /// comma-separated decimal codes, as Java's `AuthConfig`).
    pub fn whitelisted_codes(&self) -> Vec<i32> {
        // check() refused anything else at start-up.
        parse_whitelist(&self.whitelist).unwrap_or_default()
    }

    /// Why these settings cannot start a server, if they cannot.
    pub fn check_consistent(&self) -> Result<(), String> {
        if self.enabled && self.accounts_file.trim().is_empty() {
            return Err(
                "authenticationEnabled=true needs authenticationAccountsFile: without accounts every protected request would be refused"
                    .to_owned(),
            );
        }
        Ok(())
    }
}

impl Default for AuthKeys {
    fn default() -> AuthKeys {
        AuthKeys::new()
    }
}

fn parse_whitelist(value: &str) -> Result<Vec<i32>, String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|code| !code.is_empty())
        .map(|code| {
            code.parse::<i32>().map_err(|_| {
                format!(
                    "invalid value for authenticationWhitelist: {code:?} is not a request code (comma-separated numbers, e.g. {})",
                    i32::from(RequestCode::GetRouteInfoByTopic)
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_and_refuse_bad_values_naming_them() {
        let properties = [
            ("authenticationEnabled", "true"),
            ("authenticationAccountsFile", "/etc/waymark/acl.yml"),
            ("authenticationWhitelist", "105, 106"),
            ("listenPort", "1"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let keys = AuthKeys::from_properties(&properties);
        assert!(keys.enabled);
        assert_eq!(keys.accounts_file, "/etc/waymark/acl.yml");
        assert_eq!(keys.whitelisted_codes(), vec![105, 106]);
        assert_eq!(keys.check_consistent(), Ok(()));
        let error = AuthKeys::check("authenticationWhitelist", "105,GET_ROUTE").unwrap_err();
        assert!(error.contains("GET_ROUTE"), "{error}");
        let error = AuthKeys::check("authenticationEnabled", "yes").unwrap_err();
        assert!(error.contains("authenticationEnabled"), "{error}");
        assert_eq!(AuthKeys::check("listenPort", "x"), Ok(()));
    }

    #[test]
    fn enabling_without_accounts_is_refused() {
        let mut keys = AuthKeys::new();
        assert_eq!(keys.check_consistent(), Ok(()));
        keys.enabled = true;
        let error = keys.check_consistent().unwrap_err();
        assert!(error.contains("authenticationAccountsFile"), "{error}");
    }
}
