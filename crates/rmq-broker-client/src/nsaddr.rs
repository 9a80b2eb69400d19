//! The NameServer address list: parsing `host:port;host:port`, Java's update
//! rule (an empty list never replaces, a changed list is shuffled), and the
//! "last applied string" memory of the HTTP address service (Java
//! `NettyRemotingClient.updateNameServerAddressList`, `BrokerOuterAPI.fetchNameServerAddr`).
//!
//! [`NameServerList`] is a cheap, cloneable handle shared by the registrar,
//! the schedule and whoever feeds addresses in; it holds no connections.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::error::ConfigError;

/// Checks that `addr` is `host:port` with a non-empty host and a numeric port.
///
/// # Errors
/// [`ConfigError::Address`] otherwise.
pub fn check_host_port(addr: &str) -> Result<(), ConfigError> {
    let bad = || ConfigError::Address {
        addr: addr.to_owned(),
    };
    let (host, port) = addr.rsplit_once(':').ok_or_else(bad)?;
    if host.trim().is_empty() || port.parse::<u16>().is_err() {
        return Err(bad());
    }
    Ok(())
}

/// Splits `a:p;b:p` on `;`, trimming elements and dropping empty ones (Java
/// keeps empty elements as addresses; this crate drops them).
pub fn split_list(text: &str) -> Vec<String> {
    text.split(';')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Parses a configured list, validating every element as Java's startup does.
///
/// # Errors
/// [`ConfigError::Address`] for the first element that is not `host:port`.
pub fn parse_list(text: &str) -> Result<Vec<String>, ConfigError> {
    let list = split_list(text);
    for addr in &list {
        check_host_port(addr)?;
    }
    Ok(list)
}

#[derive(Debug, Default)]
struct State {
    addrs: Vec<String>,
    /// The last string applied from the address service.
    last_fetched: Option<String>,
    /// Bumped on every change, so holders can notice one cheaply.
    generation: u64,
}

/// The current NameServer list, shared.
#[derive(Debug, Clone, Default)]
pub struct NameServerList {
    state: Arc<Mutex<State>>,
}

impl NameServerList {
    /// An empty list: registrations are no-ops until addresses arrive.
    pub fn empty() -> NameServerList {
        NameServerList::default()
    }

    /// A static list from `a:p;b:p`.
    ///
    /// # Errors
    /// An element that is not `host:port`.
    pub fn from_static(text: &str) -> Result<NameServerList, ConfigError> {
        let list = NameServerList::empty();
        list.update(parse_list(text)?);
        Ok(list)
    }

    /// The addresses now, in their (shuffled) order.
    pub fn addrs(&self) -> Vec<String> {
        self.state.lock().addrs.clone()
    }

    /// A counter that changes whenever the list does.
    pub fn generation(&self) -> u64 {
        self.state.lock().generation
    }

    /// Java `updateNameServerAddressList`: an empty list is ignored; a list
    /// of another length or with an unknown element replaces the current one
    /// in random order. Returns whether it replaced.
    pub fn update(&self, mut new: Vec<String>) -> bool {
        if new.is_empty() {
            return false;
        }
        let mut state = self.state.lock();
        let same = new.len() == state.addrs.len() && new.iter().all(|a| state.addrs.contains(a));
        if same {
            return false;
        }
        fastrand::shuffle(&mut new);
        state.addrs = new;
        state.generation += 1;
        true
    }

    /// Applies an address-service answer (already trimmed to its first
    /// line): unchanged text or a blank/empty list changes nothing. Returns
    /// whether the list was replaced.
    pub fn apply_fetched(&self, text: &str) -> bool {
        let text = text.trim();
        if text.is_empty() {
            return false;
        }
        {
            let mut state = self.state.lock();
            if state.last_fetched.as_deref() == Some(text) {
                return false;
            }
            state.last_fetched = Some(text.to_owned());
        }
        self.update(split_list(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing_drops_empty_elements_and_checks_ports() {
        assert_eq!(split_list("a:1;;b:2; "), ["a:1", "b:2"]);
        assert!(parse_list("a:1;b").is_err());
        assert!(parse_list("a:x").is_err());
        assert!(parse_list(":1").is_err());
        assert_eq!(parse_list("").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn update_follows_java_rule() {
        let list = NameServerList::from_static("a:1;b:2").unwrap();
        let g = list.generation();
        assert!(!list.update(vec![]));
        assert!(!list.update(vec!["b:2".into(), "a:1".into()]));
        assert_eq!(list.generation(), g);
        assert!(list.update(vec!["a:1".into()]));
        assert_eq!(list.addrs(), ["a:1"]);
        assert!(list.generation() > g);
    }

    #[test]
    fn fetched_text_is_remembered() {
        let list = NameServerList::empty();
        assert!(!list.apply_fetched("  "));
        assert!(list.apply_fetched("a:1;b:2\n"));
        assert!(!list.apply_fetched("a:1;b:2"));
        let mut addrs = list.addrs();
        addrs.sort();
        assert_eq!(addrs, ["a:1", "b:2"]);
        assert!(list.apply_fetched("c:3"));
        assert_eq!(list.addrs(), ["c:3"]);
    }
}
