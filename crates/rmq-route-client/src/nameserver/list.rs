//! The NameServer address list and the sticky choice among it
//! (Java `NettyRemotingClient.updateNameServerAddressList` and its
//! `namesrvIndex` rotation), as plain data.
//!
//! Owns parsing `namesrvAddr`, installing a new list (shuffled, only when
//! the set of addresses changed), and rotating the choice round-robin from a
//! random start. Connections are `channel`'s; this module says only *which*
//! address comes next.

/// Parses a `namesrvAddr` value: `host:port;host:port`, split on `;` with
/// no trimming or de-duplication (empty pieces dropped). If the trimmed
/// value starts with `http://`, the part after the last `/` is the single
/// address (the endpoint form).
pub fn parse_namesrv_addr(value: &str) -> Vec<String> {
    let trimmed = value.trim();
    if trimmed.starts_with("http://") {
        let last = trimmed.rsplit('/').next().unwrap_or_default();
        return if last.is_empty() {
            Vec::new()
        } else {
            vec![last.to_owned()]
        };
    }
    value
        .split(';')
        .filter(|a| !a.is_empty())
        .map(str::to_owned)
        .collect()
}

/// What installing a list did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListUpdate {
    /// The list was replaced (the address set differed).
    pub changed: bool,
    /// The chosen address is no longer listed: the choice was cleared and
    /// the caller must close its channel.
    pub dropped: Option<String>,
}

/// Addresses, the chosen one, and the rotation counter.
#[derive(Debug, Clone)]
pub struct NameServerList {
    addrs: Option<Vec<String>>,
    chosen: Option<String>,
    index: i32,
    rng: fastrand::Rng,
}

impl NameServerList {
    /// An empty list with a random start index in `[0, 999)`, as Java.
    pub fn new() -> NameServerList {
        NameServerList::with_rng(fastrand::Rng::new())
    }

    /// An empty list whose start index and shuffles come from `seed`.
    pub fn seeded(seed: u64) -> NameServerList {
        NameServerList::with_rng(fastrand::Rng::with_seed(seed))
    }

    fn with_rng(mut rng: fastrand::Rng) -> NameServerList {
        NameServerList {
            addrs: None,
            chosen: None,
            index: rng.i32(0..999),
            rng,
        }
    }

    /// Java `updateNameServerAddressList`. An empty `new` is ignored. The
    /// list is replaced, shuffled, when there was none, its length differs,
    /// or some new address is not in the old list; re-ordering or duplicates
    /// alone are not a change.
    pub fn update(&mut self, mut new: Vec<String>) -> ListUpdate {
        if new.is_empty() {
            return ListUpdate::default();
        }
        let changed = match &self.addrs {
            None => true,
            Some(old) => new.len() != old.len() || new.iter().any(|a| !old.contains(a)),
        };
        if !changed {
            return ListUpdate::default();
        }
        self.rng.shuffle(&mut new);
        let dropped = match &self.chosen {
            Some(chosen) if !new.contains(chosen) => self.chosen.take(),
            _ => None,
        };
        self.addrs = Some(new);
        ListUpdate {
            changed: true,
            dropped,
        }
    }

    /// The installed addresses in their (shuffled) order.
    pub fn addrs(&self) -> &[String] {
        self.addrs.as_deref().unwrap_or_default()
    }

    /// The sticky choice, if any.
    pub fn chosen(&self) -> Option<&str> {
        self.chosen.as_deref()
    }

    /// Moves the choice to the next address: `list[|++index| % len]`.
    /// `None` when the list is empty. (Java's `Math.abs` of `i32::MIN`
    /// would index out of bounds; the unsigned magnitude is used instead.)
    pub fn rotate(&mut self) -> Option<String> {
        let addrs = self.addrs.as_deref().filter(|a| !a.is_empty())?;
        self.index = self.index.wrapping_add(1);
        let i = self.index.unsigned_abs() as usize % addrs.len();
        let addr = addrs[i].clone();
        self.chosen = Some(addr.clone());
        Some(addr)
    }

    /// Forgets the choice if it is still `addr` (Java's compare-and-set).
    pub fn clear_chosen_if(&mut self, addr: &str) {
        if self.chosen.as_deref() == Some(addr) {
            self.chosen = None;
        }
    }
}

impl Default for NameServerList {
    fn default() -> Self {
        NameServerList::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parse_table() {
        let table: &[(&str, &[&str])] = &[
            ("127.0.0.1:9876", &["127.0.0.1:9876"]),
            ("a:1;b:2", &["a:1", "b:2"]),
            ("a:1; b:2", &["a:1", " b:2"]),
            ("a:1;a:1", &["a:1", "a:1"]),
            ("a:1;", &["a:1"]),
            ("", &[]),
            ("http://ns.example.com:9876", &["ns.example.com:9876"]),
            ("  http://host/path/ns:9876 ", &["ns:9876"]),
            ("http://host/", &[]),
        ];
        for (input, want) in table {
            assert_eq!(parse_namesrv_addr(input), strings(want), "{input:?}");
        }
    }

    #[test]
    fn update_replaces_only_a_changed_set() {
        let mut list = NameServerList::seeded(7);
        assert_eq!(list.update(vec![]), ListUpdate::default());
        assert!(list.update(strings(&["a", "b", "c"])).changed);
        let mut sorted = list.addrs().to_vec();
        sorted.sort();
        assert_eq!(sorted, strings(&["a", "b", "c"]));
        // Re-ordering is no change.
        assert!(!list.update(strings(&["c", "b", "a"])).changed);
        // Same length, duplicates covering old members: no change either.
        assert!(!list.update(strings(&["a", "a", "b"])).changed);
        // Different length: change.
        assert!(list.update(strings(&["a", "b"])).changed);
    }

    #[test]
    fn rotation_is_a_ring_over_the_list_and_sticky_until_rotated() {
        let mut list = NameServerList::seeded(1);
        assert_eq!(list.rotate(), None);
        list.update(strings(&["a", "b", "c"]));
        let first = list.rotate().unwrap();
        assert_eq!(list.chosen(), Some(first.as_str()));
        let ring: Vec<String> = (0..6).map(|_| list.rotate().unwrap()).collect();
        let order = list.addrs().to_vec();
        let start = order.iter().position(|a| *a == first).unwrap();
        for (k, got) in ring.iter().enumerate() {
            assert_eq!(*got, order[(start + 1 + k) % 3]);
        }
        // The index wraps without going out of bounds.
        list.index = i32::MAX;
        assert!(list.rotate().is_some());
        assert!(list.rotate().is_some());
    }

    #[test]
    fn dropping_the_chosen_address_clears_the_choice() {
        let mut list = NameServerList::seeded(3);
        list.update(strings(&["a", "b"]));
        let chosen = list.rotate().unwrap();
        let other = if chosen == "a" { "b" } else { "a" };
        // Still listed: kept.
        let kept = list.update(strings(&[other, &chosen, "c"]));
        assert_eq!(kept.dropped, None);
        assert_eq!(list.chosen(), Some(chosen.as_str()));
        let gone = list.update(strings(&[other, "c"]));
        assert_eq!(gone.dropped.as_deref(), Some(chosen.as_str()));
        assert_eq!(list.chosen(), None);
        list.rotate();
        list.clear_chosen_if("nope");
        assert!(list.chosen().is_some());
    }
}
