//! The parser against byte-level headers of both versions (the examples of
//! HAProxy's specification among them), truncated and malformed ones, and
//! arbitrary bytes.

use super::*;

fn addr(text: &str) -> SocketAddr {
    text.parse().unwrap()
}

fn complete(buf: &[u8]) -> (ProxyHeader, usize) {
    match parse(buf) {
        Ok(Parsed::Complete { header, len }) => (header, len),
        other => panic!("{:?}: {other:?}", String::from_utf8_lossy(buf)),
    }
}

fn proxied(version: Version, source: &str, destination: &str) -> ProxyHeader {
    ProxyHeader {
        version,
        addresses: Some(Addresses {
            source: addr(source),
            destination: addr(destination),
        }),
    }
}

/// Every proper prefix of a whole header is "need more".
fn assert_prefixes_incomplete(header: &[u8]) {
    for end in 0..header.len() {
        assert_eq!(
            parse(&header[..end]),
            Ok(Parsed::Incomplete),
            "{end} of {} bytes",
            header.len()
        );
    }
}

/// A v2 header: signature, `version_command`, `family`, then `block` with
/// its length.
fn v2(version_command: u8, family: u8, block: &[u8]) -> Vec<u8> {
    let mut out = V2_SIGNATURE.to_vec();
    out.push(version_command);
    out.push(family);
    out.extend_from_slice(&u16::try_from(block.len()).unwrap().to_be_bytes());
    out.extend_from_slice(block);
    out
}

#[test]
fn v1_tcp4_header_then_the_connections_own_bytes() {
    let mut buf = b"PROXY TCP4 192.168.0.1 192.168.0.11 56324 443\r\n".to_vec();
    let header_len = buf.len();
    buf.extend_from_slice(&[0x16, 0x03, 0x01]);
    let (header, len) = complete(&buf);
    assert_eq!(len, header_len);
    assert_eq!(
        header,
        proxied(Version::V1, "192.168.0.1:56324", "192.168.0.11:443")
    );
    assert_prefixes_incomplete(&buf[..len]);
}

#[test]
fn v1_tcp6_header() {
    let buf = b"PROXY TCP6 2001:db8::1 ::ffff:10.0.0.1 65535 0\r\n";
    let (header, len) = complete(buf);
    assert_eq!(len, buf.len());
    assert_eq!(
        header,
        proxied(Version::V1, "[2001:db8::1]:65535", "[::ffff:10.0.0.1]:0")
    );
}

#[test]
fn v1_unknown_keeps_the_connections_address_whatever_follows() {
    for buf in [
        &b"PROXY UNKNOWN\r\n"[..],
        b"PROXY UNKNOWN ffff:f...f:ffff ffff:f...f:ffff 65535 65535\r\n",
    ] {
        let (header, len) = complete(buf);
        assert_eq!(len, buf.len());
        assert_eq!(
            header,
            ProxyHeader {
                version: Version::V1,
                addresses: None
            }
        );
    }
}

#[test]
fn v1_is_at_most_107_bytes() {
    let group = "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff";
    let longest = format!("PROXY UNKNOWN {group} {group} 65535 65535\r\n");
    assert_eq!(longest.len(), V1_MAX_LEN);
    assert_eq!(complete(longest.as_bytes()).1, V1_MAX_LEN);
    let tcp6 = format!("PROXY TCP6 {group} {group} 65535 65535\r\n");
    assert_eq!(complete(tcp6.as_bytes()).1, tcp6.len());

    let too_long = format!("PROXY UNKNOWN {group} {group} 65535 655350\r\n");
    assert_eq!(
        parse(too_long.as_bytes()),
        Err(ProxyError::V1("no CRLF within 107 bytes"))
    );
    // Refused as soon as 107 bytes hold no CRLF, without waiting for more.
    let endless = [b"PROXY ".as_slice(), &[b'1'; 101]].concat();
    assert_eq!(
        parse(&endless),
        Err(ProxyError::V1("no CRLF within 107 bytes"))
    );
    assert_eq!(parse(&endless[..106]), Ok(Parsed::Incomplete));
}

#[test]
fn malformed_v1_headers_are_refused_with_the_reason() {
    let cases: [(&[u8], &str); 18] = [
        (b"PROXY TCP4 1.2.3.4 5.6.7.8  111 222\r\n", "single spaces"),
        (b"PROXY TCP4 1.2.3.4 5.6.7.8 111\r\n", "single spaces"),
        (b"PROXY TCP4 1.2.3.4 5.6.7.8 111 222 \r\n", "single spaces"),
        (b"PROXY  TCP4 1.2.3.4 5.6.7.8 111 222\r\n", "single spaces"),
        (b"PROXY TCP4 1.2.3.4 5.6.7.8 111 65536\r\n", "port"),
        (b"PROXY TCP4 1.2.3.4 5.6.7.8 0111 222\r\n", "port"),
        (b"PROXY TCP4 1.2.3.4 5.6.7.8 +111 222\r\n", "port"),
        (b"PROXY TCP4 1.2.3.4 5.6.7.8 -1 222\r\n", "port"),
        (b"PROXY TCP4 ::1 5.6.7.8 111 222\r\n", "family"),
        (b"PROXY TCP6 1.2.3.4 ::1 111 222\r\n", "family"),
        (b"PROXY TCP4 01.2.3.4 5.6.7.8 111 222\r\n", "family"),
        (b"PROXY TCP4 1.2.3.4 example.com 111 222\r\n", "family"),
        (b"PROXY tcp4 1.2.3.4 5.6.7.8 111 222\r\n", "protocol"),
        (b"PROXY UDP4 1.2.3.4 5.6.7.8 111 222\r\n", "protocol"),
        (b"PROXY UNKNOWNX\r\n", "single spaces"),
        (b"PROXY TCP4 1.2.3.4\n", "LF without CR"),
        (b"PROXY TCP4 1.2.3.4\rX", "CR not followed by LF"),
        (
            b"PROXY TCP4 1.2.3.\xc3\xa9 5.6.7.8 111 222\r\n",
            "not ASCII",
        ),
    ];
    for (buf, why) in cases {
        let error = parse(buf).unwrap_err();
        assert!(
            matches!(error, ProxyError::V1(_)) && error.to_string().contains(why),
            "{:?}: {error}",
            String::from_utf8_lossy(buf)
        );
    }
    for buf in [
        &b"PROXY\r\n"[..],
        b"PROXZ",
        b"GET / HTTP/1.1\r\n",
        b"\x16\x03\x01",
    ] {
        assert_eq!(parse(buf), Err(ProxyError::NoSignature), "{buf:?}");
    }
}

#[test]
fn v2_tcp4_example_of_the_specification() {
    // PROXY, AF_INET over STREAM, 12 address bytes: 192.168.0.1:56324 to
    // 192.168.0.11:443.
    let buf: [u8; 28] = [
        0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A, 0x21, 0x11, 0x00,
        0x0C, 0xC0, 0xA8, 0x00, 0x01, 0xC0, 0xA8, 0x00, 0x0B, 0xDC, 0x04, 0x01, 0xBB,
    ];
    let mut with_data = buf.to_vec();
    with_data.extend_from_slice(b"\x00\x00\x00\x10");
    let (header, len) = complete(&with_data);
    assert_eq!(len, 28);
    assert_eq!(
        header,
        proxied(Version::V2, "192.168.0.1:56324", "192.168.0.11:443")
    );
    assert_prefixes_incomplete(&buf);
}

#[test]
fn v2_tcp6_with_tlvs_skipped() {
    let mut block = Vec::new();
    block.extend_from_slice(&"2001:db8::7".parse::<Ipv6Addr>().unwrap().octets());
    block.extend_from_slice(&"2001:db8::1".parse::<Ipv6Addr>().unwrap().octets());
    block.extend_from_slice(&40000u16.to_be_bytes());
    block.extend_from_slice(&9876u16.to_be_bytes());
    // PP2_TYPE_AUTHORITY "ns.example", PP2_TYPE_NOOP of 3 bytes.
    block.extend_from_slice(b"\x02\x00\x0ans.example\x04\x00\x03\x00\x00\x00");
    let buf = v2(0x21, 0x21, &block);
    let (header, len) = complete(&buf);
    assert_eq!(len, buf.len());
    assert_eq!(
        header,
        proxied(Version::V2, "[2001:db8::7]:40000", "[2001:db8::1]:9876")
    );
    assert_prefixes_incomplete(&buf);
}

#[test]
fn v2_local_unspec_unix_and_datagrams_keep_the_connections_address() {
    let own = ProxyHeader {
        version: Version::V2,
        addresses: None,
    };
    let cases = [
        // LOCAL: a health check; the family is ignored, addresses or not.
        v2(0x20, 0x00, &[]),
        v2(0x20, 0x11, &[0; 12]),
        v2(0x20, 0xFF, &[]),
        // PROXY over AF_UNSPEC, with a TLV.
        v2(0x21, 0x00, &[0x04, 0x00, 0x01, 0x00]),
        // AF_UNIX stream and datagram, AF_INET and AF_INET6 datagrams.
        v2(0x21, 0x31, &[0; 216]),
        v2(0x21, 0x32, &[0; 216]),
        v2(0x21, 0x12, &[0; 12]),
        v2(0x21, 0x22, &[0; 36]),
    ];
    for buf in cases {
        assert_eq!(complete(&buf), (own, buf.len()), "{:02x?}", &buf[12..14]);
    }
}

#[test]
fn malformed_v2_headers_are_refused_as_soon_as_they_are_seen() {
    let cases = [
        (v2(0x11, 0x11, &[0; 12]), "version is not 2"),
        (v2(0x31, 0x11, &[0; 12]), "version is not 2"),
        (v2(0x22, 0x11, &[0; 12]), "command"),
        (v2(0x2F, 0x11, &[0; 12]), "command"),
        (v2(0x21, 0x13, &[0; 12]), "family"),
        (v2(0x21, 0x41, &[0; 12]), "family"),
        (v2(0x21, 0x10, &[0; 12]), "family"),
        (v2(0x21, 0x01, &[]), "family"),
        (v2(0x21, 0x11, &[0; 11]), "shorter"),
        (v2(0x21, 0x21, &[0; 35]), "shorter"),
        (v2(0x21, 0x31, &[0; 215]), "shorter"),
    ];
    for (buf, why) in cases {
        let error = parse(&buf).unwrap_err();
        assert!(
            matches!(error, ProxyError::V2(_)) && error.to_string().contains(why),
            "{:02x?}: {error}",
            &buf[12..16]
        );
        // Known from the first 13, 14 or 16 bytes, whatever length follows.
        let seen = if why == "shorter" {
            16
        } else if why == "family" {
            14
        } else {
            13
        };
        assert_eq!(parse(&buf[..seen]), Err(error));
    }
}

#[test]
fn v2_length_is_bounded_by_its_16_bits() {
    let block = vec![0u8; u16::MAX as usize];
    let buf = v2(0x21, 0x00, &block);
    assert_eq!(buf.len(), V2_MAX_LEN);
    assert_eq!(complete(&buf).1, V2_MAX_LEN);
    assert_eq!(parse(&buf[..V2_MAX_LEN - 1]), Ok(Parsed::Incomplete));
}

#[test]
fn detection_needs_a_whole_signature() {
    assert_eq!(detect(b""), Ok(None));
    assert_eq!(detect(b"PROX"), Ok(None));
    assert_eq!(detect(b"PROXY "), Ok(Some(Version::V1)));
    assert_eq!(detect(b"\r\n\r\n\0"), Ok(None));
    assert_eq!(detect(&V2_SIGNATURE), Ok(Some(Version::V2)));
    assert_eq!(detect(b"POST"), Err(ProxyError::NoSignature));
    assert_eq!(detect(b"\r\n\r\n\x01"), Err(ProxyError::NoSignature));
}

#[test]
fn first_bytes_of_a_header_cannot_start_a_frame_or_tls() {
    for first in 0..=u8::MAX {
        if starts_header(first) {
            let smallest_length = u32::from_be_bytes([first, 0, 0, 0]) as usize;
            assert!(
                smallest_length > rmq_wire::frame::MAX_LENGTH_FIELD,
                "{first:#04x}"
            );
            assert_ne!(first, 0x16);
        }
    }
    assert!(starts_header(b'P') && starts_header(0x0D));
    assert_eq!((0..=u8::MAX).filter(|b| starts_header(*b)).count(), 2);
}

/// A xorshift generator: deterministic, so a failure repeats.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn fill(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

/// What parse must hold for any input: no panic, a header no longer than
/// the input and the protocol's bound, the same header from exactly its
/// bytes, and "need more" from every proper prefix of them (which the
/// reader relies on to consume an incomplete header whole).
fn check_any(buf: &[u8]) -> Result<Parsed, ProxyError> {
    let parsed = parse(buf);
    match parsed {
        Ok(Parsed::Complete { header, len }) => {
            assert!(len <= buf.len() && len <= V2_MAX_LEN);
            assert_eq!(
                parse(&buf[..len]),
                Ok(Parsed::Complete { header, len }),
                "{buf:02x?}"
            );
            assert_prefixes_incomplete(&buf[..len]);
        }
        Ok(Parsed::Incomplete) => assert!(buf.len() < V2_MAX_LEN),
        Err(_) => {}
    }
    parsed
}

#[test]
fn arbitrary_bytes_never_panic_and_keep_the_invariants() {
    let mut random = Noise(0x9E37_79B9_7F4A_7C15);
    let seeds: Vec<Vec<u8>> = vec![
        b"PROXY TCP4 192.168.0.1 192.168.0.11 56324 443\r\n".to_vec(),
        b"PROXY TCP6 2001:db8::1 2001:db8::2 1 2\r\n".to_vec(),
        b"PROXY UNKNOWN\r\n".to_vec(),
        v2(0x21, 0x11, &[1; 12]),
        v2(0x21, 0x21, &[2; 40]),
        v2(0x20, 0x00, &[]),
    ];
    // How often each outcome came up: the inputs must reach all three.
    let (mut whole, mut incomplete, mut refused) = (0, 0, 0);
    for _ in 0..20_000 {
        let buf = match random.below(3) {
            // Noise, half of it behind a signature so that it gets parsed.
            0 => {
                let len = random.below(140);
                let mut buf = match random.below(3) {
                    0 => b"PROXY ".to_vec(),
                    1 => V2_SIGNATURE.to_vec(),
                    _ => Vec::new(),
                };
                buf.extend(random.fill(len));
                buf
            }
            // A valid header with a few bytes changed, cut short or extended.
            _ => {
                let mut buf = seeds[random.below(seeds.len())].clone();
                for _ in 0..random.below(3) {
                    let at = random.below(buf.len());
                    buf[at] = match random.below(4) {
                        0 => b' ',
                        1 => b'0' + random.below(10) as u8,
                        _ => random.next() as u8,
                    };
                }
                if random.below(2) == 0 {
                    buf.truncate(random.below(buf.len()));
                }
                let more = random.below(8);
                buf.extend(random.fill(more));
                buf
            }
        };
        match check_any(&buf) {
            Ok(Parsed::Complete { .. }) => whole += 1,
            Ok(Parsed::Incomplete) => incomplete += 1,
            Err(_) => refused += 1,
        }
    }
    assert!(
        whole > 1_000 && incomplete > 1_000 && refused > 1_000,
        "{whole} whole, {incomplete} incomplete, {refused} refused"
    );
}
