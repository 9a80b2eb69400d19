//! Broker bindings (a Waymark extension): which broker identities an account
//! may claim in REGISTER_BROKER, UNREGISTER_BROKER, BROKER_HEARTBEAT and
//! QUERY_DATA_VERSION, so that one broker's key cannot register or unregister
//! another broker.
//!
//! ```yaml
//! brokers:
//!   - clusterName: DefaultCluster
//!     brokerName: broker-a
//!     brokerAddr: 192.168.0.*:10911   # host pattern (address.rs syntax), optional :port
//!   - brokerName: broker-b            # any cluster, any address
//! ```

use std::fmt;

use rmq_wire::RemotingCommand;
use serde_json::Value;

use super::entry::scalar_text;
use super::locate::Path;
use super::Problem;
use crate::address::AddrPortPattern;

/// One identity an account may claim. Each absent field matches anything;
/// at least one is present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerBinding {
    /// Must equal the claimed `clusterName` when set.
    pub cluster_name: Option<String>,
    /// Must equal the claimed `brokerName` when set.
    pub broker_name: Option<String>,
    /// Must match the claimed `brokerAddr` when set.
    pub broker_addr: Option<AddrPortPattern>,
}

impl BrokerBinding {
    /// Whether the claim satisfies every field this binding sets. A claim
    /// that leaves out a field the binding sets is not covered.
    pub fn covers(&self, claim: &BrokerClaim) -> bool {
        fn equal(bound: &Option<String>, claimed: &Option<String>) -> bool {
            bound.is_none() || bound == claimed
        }
        equal(&self.cluster_name, &claim.cluster_name)
            && equal(&self.broker_name, &claim.broker_name)
            && self.broker_addr.as_ref().is_none_or(|pattern| {
                claim
                    .broker_addr
                    .as_deref()
                    .is_some_and(|addr| pattern.matches(addr))
            })
    }
}

/// The broker identity a request claims in its header ext fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BrokerClaim {
    /// `clusterName`, if present.
    pub cluster_name: Option<String>,
    /// `brokerName`, if present.
    pub broker_name: Option<String>,
    /// `brokerAddr`, if present.
    pub broker_addr: Option<String>,
}

impl BrokerClaim {
    /// Reads `clusterName`, `brokerName` and `brokerAddr` from the request
    /// (`brokerAddress` where the controller's registration names it so).
    pub fn of(request: &RemotingCommand) -> BrokerClaim {
        let field = |key: &str| request.ext(key).map(str::to_owned);
        BrokerClaim {
            cluster_name: field("clusterName"),
            broker_name: field("brokerName"),
            broker_addr: field("brokerAddr").or_else(|| field("brokerAddress")),
        }
    }
}

impl fmt::Display for BrokerClaim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |value: &Option<String>| match value {
            Some(text) => crate::policy::shown(text),
            None => "(none)".to_owned(),
        };
        write!(
            f,
            "clusterName={}, brokerName={}, brokerAddr={}",
            show(&self.cluster_name),
            show(&self.broker_name),
            show(&self.broker_addr)
        )
    }
}

/// Reads a `brokers:` list. Unknown keys are errors, not warnings: a
/// misspelt key would silently widen the binding.
pub(super) fn read_bindings(value: &Value, path: &Path) -> Result<Vec<BrokerBinding>, Problem> {
    let items = match value {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        _ => return Err(Problem::new(path, "must be a list of bindings")),
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| read_binding(item, &path.index(i)))
        .collect()
}

fn read_binding(value: &Value, path: &Path) -> Result<BrokerBinding, Problem> {
    let Value::Object(map) = value else {
        return Err(Problem::new(
            path,
            "must be a mapping of clusterName, brokerName, brokerAddr",
        ));
    };
    let mut binding = BrokerBinding {
        cluster_name: None,
        broker_name: None,
        broker_addr: None,
    };
    for (key, value) in map {
        let here = path.key(key);
        let text = scalar_text(value).map_err(|what| Problem::new(&here, what))?;
        let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
            continue;
        };
        match key.as_str() {
            "clusterName" => binding.cluster_name = Some(text),
            "brokerName" => binding.broker_name = Some(text),
            "brokerAddr" => {
                let pattern = AddrPortPattern::parse(&text)
                    .map_err(|e| Problem::new(&here, e.to_string()))?;
                binding.broker_addr = Some(pattern);
            }
            _ => {
                return Err(Problem::new(
                    &here,
                    "is not a binding field (clusterName, brokerName, brokerAddr)",
                ))
            }
        }
    }
    if binding.cluster_name.is_none()
        && binding.broker_name.is_none()
        && binding.broker_addr.is_none()
    {
        return Err(Problem::new(
            path,
            "binds nothing: set clusterName, brokerName or brokerAddr",
        ));
    }
    Ok(binding)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(cluster: &str, name: &str, addr: &str) -> BrokerClaim {
        BrokerClaim {
            cluster_name: Some(cluster.into()),
            broker_name: Some(name.into()),
            broker_addr: Some(addr.into()),
        }
    }

    #[test]
    fn a_binding_covers_what_it_names() {
        let json: Value = serde_json::from_str(
            r#"[{"clusterName":"C","brokerName":"a","brokerAddr":"10.0.0.*:10911"},{"brokerName":"b"}]"#,
        )
        .unwrap();
        let bindings = read_bindings(&json, &Path::default()).unwrap();
        let covered = |c: &BrokerClaim| bindings.iter().any(|b| b.covers(c));
        assert!(covered(&claim("C", "a", "10.0.0.5:10911")));
        assert!(!covered(&claim("C", "a", "10.0.0.5:10912")));
        assert!(!covered(&claim("D", "a", "10.0.0.5:10911")));
        assert!(covered(&claim("D", "b", "anything")));
        assert!(!covered(&BrokerClaim {
            broker_addr: Some("10.0.0.5:10911".into()),
            cluster_name: Some("C".into()),
            broker_name: None,
        }));
    }

    #[test]
    fn misspelt_or_empty_bindings_are_errors() {
        for bad in [
            r#"[{"brokername":"a"}]"#,
            r#"[{}]"#,
            r#"[{"brokerAddr":"10.0.0.1:x"}]"#,
            r#"{"brokerName":"a"}"#,
        ] {
            let json: Value = serde_json::from_str(bad).unwrap();
            assert!(read_bindings(&json, &Path::default()).is_err(), "{bad}");
        }
    }

    #[test]
    fn claims_are_shown_escaped() {
        let shown = claim("C", "a\nb", "x").to_string();
        assert_eq!(shown, "clusterName=C, brokerName=a\\nb, brokerAddr=x");
        assert_eq!(
            BrokerClaim::default().to_string(),
            "clusterName=(none), brokerName=(none), brokerAddr=(none)"
        );
    }
}
