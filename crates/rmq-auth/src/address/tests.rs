//! Cases follow Java 4.9.8's `RemoteAddressStrategyTest` where it states a
//! behaviour, plus the forms it leaves implicit.

use std::net::IpAddr;

use proptest::prelude::*;

use super::*;

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn pattern(text: &str) -> AddressPattern {
    AddressPattern::parse(text).unwrap_or_else(|e| panic!("{e}"))
}

fn matches(pattern_text: &str, peer: &str) -> bool {
    pattern(pattern_text).matches(&ip(peer))
}

#[test]
fn blank_matches_nothing_and_stars_match_everything() {
    for blank in ["", "  "] {
        assert!(!matches(blank, "127.0.0.1"));
    }
    for any in ["*", "*.*.*.*", "*:*:*:*:*:*:*:*", " * "] {
        assert!(matches(any, "10.1.2.3"), "{any}");
        assert!(matches(any, "1050::1"), "{any}");
    }
}

#[test]
fn exact_addresses() {
    assert!(matches("127.0.0.1", "127.0.0.1"));
    assert!(!matches("127.0.0.1", "127.0.0.2"));
    assert!(matches("::1", "::1"));
    assert!(matches("::1", "0000:0000:0000:0000:0000:0000:0000:0001"));
    assert!(!matches("::1", "::2"));
    assert!(matches(
        "1050:0000:0000:0000:0005:0600:300c:326b",
        "1050::5:600:300C:326B"
    ));
}

#[test]
fn comma_lists_of_exact_addresses() {
    for list in [
        "127.0.0.1,127.0.0.2,127.0.0.3",
        "127.0.0.{1,2,3}",
        "127.0.0.1,,127.0.0.2 , 127.0.0.3",
    ] {
        for hit in ["127.0.0.1", "127.0.0.2", "127.0.0.3"] {
            assert!(matches(list, hit), "{list} {hit}");
        }
        for miss in ["127.0.0.0", "127.0.0.4"] {
            assert!(!matches(list, miss), "{list} {miss}");
        }
    }
    for list in [
        "1050::0005:0600:300c:1,1050::0005:0600:300c:2,1050::0005:0600:300c:3",
        "1050::0005:0600:300c:{1,2,3}",
    ] {
        assert!(
            matches(list, "1050:0000:0000:0000:0005:0600:300c:2"),
            "{list}"
        );
        assert!(
            !matches(list, "1050:0000:0000:0000:0005:0600:300c:4"),
            "{list}"
        );
    }
    // Java accepts a single item in braces.
    assert!(matches("192.168.1.{1}", "192.168.1.1"));
}

#[test]
fn ipv4_ranges() {
    let p = pattern("127.0.0.1-200");
    for last in 0..=255u8 {
        let peer = IpAddr::from([127, 0, 0, last]);
        assert_eq!(p.matches(&peer), (1..=200).contains(&last), "{peer}");
    }
    assert!(matches("10.10.103.*", "10.10.103.0"));
    assert!(matches("10.10.103.*", "10.10.103.255"));
    assert!(!matches("10.10.103.*", "10.10.104.1"));
    assert!(matches("127.0.1-200.*", "127.0.200.9"));
    assert!(!matches("127.0.1-200.*", "127.0.201.9"));
    assert!(!matches("127.0.1-200.*", "127.0.0.9"));
    assert!(matches("192.100-150.*.*", "192.130.0.2"));
    assert!(!matches("192.100-150.*.*", "192.151.0.2"));
    assert!(matches("127.*.*.*", "127.9.8.7"));
    assert!(!matches("127.*.*.*", "128.0.0.1"));
    assert!(!matches("10.10.103.*", "1050::1"));
}

#[test]
fn ipv6_ranges() {
    let p = pattern("1050::0005:0600:300c:1-200");
    for (last, expected) in [(0u16, false), (1, true), (0x200, true), (0x201, false)] {
        let peer = IpAddr::from([0x1050, 0, 0, 0, 5, 0x600, 0x300c, last]);
        assert_eq!(p.matches(&peer), expected, "{peer}");
    }
    assert!(matches("1050::0005:0600:300c:*", "1050::5:600:300c:ffff"));
    assert!(!matches("1050::0005:0600:3001:*", "1050::5:600:300c:1"));
    assert!(matches(
        "1050::0005:0600:300c:1-200:*",
        "1050:0:0:5:600:300c:1:abcd"
    ));
    assert!(!matches(
        "1050::0005:0600:300c:1-200:*",
        "1050:0:0:5:600:300c:201:abcd"
    ));
    // Without '::', fewer than eight groups is a prefix, as in Java.
    assert!(matches(
        "1050:0005:0600:300c:3261:*",
        "1050:5:600:300c:3261:1:2:3"
    ));
    assert!(!matches(
        "1050:0005:0600:300c:3261:*",
        "1050:5:600:300c:3262:1:2:3"
    ));
    assert!(matches("1050::*", "1050::abcd"));
    assert!(!matches("1050::*", "1050::1:abcd"));
    assert!(!matches("1050::*", "10.0.0.1"));
}

#[test]
fn ipv4_mapped_peers_match_ipv4_patterns() {
    for p in [
        "10.0.0.7",
        "10.0.0.*",
        "10.0.0.1-9",
        "10.0.0.{6,7}",
        "10.0.0.6,10.0.0.7",
        "::ffff:10.0.0.7",
    ] {
        assert!(matches(p, "::ffff:10.0.0.7"), "{p}");
        assert!(matches(p, "10.0.0.7"), "{p}");
    }
    // Only the mapped form is IPv4; the deprecated compatible form is not.
    assert!(!matches("0.0.0.1", "::1"));
}

#[test]
fn malformed_patterns_are_refused_naming_the_text() {
    for bad in [
        "256.0.0.1",
        "::1ggg",
        "127.0.0.1,2,3}",
        "::1,2,3}",
        "192.168.{1}",
        "{192.168.1}",
        "{192.168.1.1}",
        "192.168.1.{}",
        "192.168.{1,2}.{3}",
        "127.0.0.2-1",
        "127.0.0.-1-200",
        "127.0.0.0-256",
        "127.0.999.*",
        "127.1-150.5.5",
        "*.1.1.1",
        "10.*",
        "10.1.1.1.*",
        "10.1.1.*,10.2.2.2",
        "1050::*:*",
        "1050::*:1",
        "1050::1-2:3",
        "1050::1-2-3",
        "1050:1::2::*",
        "1:2:3:4:5:6:7:8:*",
        "1050::5:600:300c:10000-1",
        "hello",
    ] {
        let err = AddressPattern::parse(bad).expect_err(bad);
        assert_eq!(err.text, bad);
        assert!(err.to_string().contains(bad), "{err}");
    }
}

#[test]
fn display_gives_the_text_back() {
    assert_eq!(pattern(" 10.10.103.* ").to_string(), "10.10.103.*");
}

#[test]
fn addr_port_patterns() {
    let p = AddrPortPattern::parse("192.168.0.*:10911").unwrap();
    assert!(p.matches("192.168.0.10:10911"));
    assert!(!p.matches("192.168.0.10:10912"));
    assert!(!p.matches("192.168.1.10:10911"));
    assert!(!p.matches("broker-a.local:10911"));
    assert_eq!(p.to_string(), "192.168.0.*:10911");

    let any_port = AddrPortPattern::parse("192.168.0.10").unwrap();
    assert!(any_port.matches("192.168.0.10:1"));

    let v6 = AddrPortPattern::parse("[1050::*]:10911").unwrap();
    assert!(v6.matches("[1050::7]:10911"));
    assert!(!v6.matches("[1050::7]:10912"));
    assert_eq!(v6.to_string(), "[1050::*]:10911");
    assert!(AddrPortPattern::parse("1050::*")
        .unwrap()
        .matches("[1050::9]:1"));

    for bad in [
        "10.0.0.1:port",
        "[::1",
        "[::1]x",
        ":10911",
        "10.0.0.1:70000",
    ] {
        assert!(AddrPortPattern::parse(bad).is_err(), "{bad}");
    }
}

proptest! {
    #[test]
    fn parsing_and_matching_never_panic(text in "[0-9a-fA-F:.*,{}\\- ]{0,40}", peer in any::<[u8; 16]>()) {
        if let Ok(p) = AddressPattern::parse(&text) {
            p.matches(&IpAddr::from(peer));
            let [a, b, c, d, ..] = peer;
            p.matches(&IpAddr::from([a, b, c, d]));
        }
        if let Ok(p) = AddrPortPattern::parse(&text) {
            p.matches(&text);
        }
    }

    #[test]
    fn an_exact_pattern_matches_exactly_its_address(addr in any::<[u8; 4]>(), other in any::<[u8; 4]>()) {
        let p = pattern(&IpAddr::from(addr).to_string());
        prop_assert!(p.matches(&IpAddr::from(addr)));
        prop_assert_eq!(p.matches(&IpAddr::from(other)), addr == other);
    }
}
