//! The request signature of Java's ACL: what is signed, how, and how it is compared.
//!
//! Owns the byte-exact reproduction of `AclUtils.combineRequestContent` and
//! `AclSigner.calSignature` (HMAC-SHA1, standard padded Base64). It does not
//! decide who may do what (`policy`) and does not hold keys (`credentials`,
//! `accounts`).
//!
//! The signed bytes are the *values* of the ext fields, sorted by key the way
//! Java's `TreeMap<String, _>` sorts them (UTF-16 code units), concatenated
//! without separators, UTF-8 encoded, followed by the raw body. Keys, the
//! request code, opaque, flag, version, remark and the serialization are not
//! signed; see the crate docs for what that allows.

use std::cmp::Ordering;

use base64::Engine;
use hmac::{Hmac, Mac};
use rmq_wire::ExtFields;
use sha1::Sha1;
use subtle::ConstantTimeEq;

/// Ext field carrying the signer's access key (Java `SessionCredentials.ACCESS_KEY`).
pub const ACCESS_KEY: &str = "AccessKey";
/// Ext field carrying the signature itself; never part of the signed bytes.
pub const SIGNATURE: &str = "Signature";
/// Ext field carrying an optional security token; signed like any other field,
/// checked by no Java server.
pub const SECURITY_TOKEN: &str = "SecurityToken";
/// Ext field that 4.9.3-and-older clients add after signing
/// (Java `MixAll.UNIQUE_MSG_QUERY_FLAG`).
pub const UNIQUE_KEY_QUERY: &str = "_UNIQUE_KEY_QUERY";
/// `MQVersion.Version.V4_9_3.ordinal()`: requests of this version or older
/// have [`UNIQUE_KEY_QUERY`] left out of the signed bytes by the 5.x server.
pub const V4_9_3: i32 = 399;

/// The bytes a server verifies a received request against, as the 5.x server
/// builds them (`DefaultAuthenticationContextBuilder.build`): every ext field
/// except [`SIGNATURE`], and except [`UNIQUE_KEY_QUERY`] when `version` is
/// [`V4_9_3`] or older, then the body.
pub fn content(ext: &ExtFields, body: Option<&[u8]>, version: i32) -> Vec<u8> {
    let old_client = version <= V4_9_3;
    combine(ext, body, |key| {
        key == SIGNATURE || (old_client && key == UNIQUE_KEY_QUERY)
    })
}

/// The bytes a client signs (`AclClientRPCHook.doBeforeRequest`): every ext
/// field except [`SIGNATURE`], then the body. Unlike the server side, a
/// [`UNIQUE_KEY_QUERY`] present at signing time is signed whatever the version.
pub fn client_content(ext: &ExtFields, body: Option<&[u8]>) -> Vec<u8> {
    combine(ext, body, |key| key == SIGNATURE)
}

/// HMAC-SHA1 of `content` keyed with the UTF-8 bytes of `secret_key`, in
/// standard Base64 with padding (always 28 characters).
pub fn sign(secret_key: &str, content: &[u8]) -> String {
    // HMAC takes keys of any length (long ones are hashed first), so this cannot fail.
    let mut mac = Hmac::<Sha1>::new_from_slice(secret_key.as_bytes())
        .expect("HMAC-SHA1 accepts a key of any length");
    mac.update(content);
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// Whether `claimed` is the signature of `content` under `secret_key`.
///
/// Compares the Base64 text in constant time, as Java's
/// `MessageDigest.isEqual` over the two strings does: a differently padded or
/// otherwise non-canonical encoding of the right MAC is refused, as in Java.
pub fn verify(secret_key: &str, content: &[u8], claimed: &str) -> bool {
    sign(secret_key, content)
        .as_bytes()
        .ct_eq(claimed.as_bytes())
        .into()
}

/// Whether `claimed` is the signature of a received request's ext fields
/// and body ([`content`]) under `secret_key`: the same bytes, hashed as they
/// are walked instead of copied first (a registration body is hundreds of
/// kilobytes).
pub fn verify_received(
    secret_key: &str,
    ext: &ExtFields,
    body: Option<&[u8]>,
    version: i32,
    claimed: &str,
) -> bool {
    let fields = received_fields(ext, version);
    verify_fields(secret_key, &fields, body.unwrap_or_default(), claimed)
}

/// [`verify_received`] over ext-field values already in signing order
/// ([`received_fields`]).
pub fn verify_fields(secret_key: &str, fields: &[&str], body: &[u8], claimed: &str) -> bool {
    let mut mac = Hmac::<Sha1>::new_from_slice(secret_key.as_bytes())
        .expect("HMAC-SHA1 accepts a key of any length");
    for value in fields {
        mac.update(value.as_bytes());
    }
    mac.update(body);
    let expected = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    expected.as_bytes().ct_eq(claimed.as_bytes()).into()
}

/// The ext-field values a received request's signature covers, in signing
/// order ([`content`] without the body).
pub fn received_fields(ext: &ExtFields, version: i32) -> Vec<&str> {
    let old_client = version <= V4_9_3;
    sorted_fields(ext, |key| {
        key == SIGNATURE || (old_client && key == UNIQUE_KEY_QUERY)
    })
    .into_iter()
    .map(|(_, value)| value)
    .collect()
}

/// Java's `String.compareTo`: lexicographic over UTF-16 code units.
///
/// Differs from Rust's `str` order (code points) only when one key has a
/// character above U+FFFF where the other has one in U+E000..=U+FFFF: the
/// surrogate pair (0xD800..) then sorts first in Java.
pub fn java_key_order(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// The ext fields `skip` does not drop, in Java's `TreeMap` order.
fn sorted_fields(ext: &ExtFields, skip: impl Fn(&str) -> bool) -> Vec<(&str, &str)> {
    let mut fields: Vec<(&str, &str)> = ext
        .iter()
        .map(|(key, value)| (key.as_str(), value.as_str()))
        .filter(|(key, _)| !skip(key))
        .collect();
    // The map is already in code-point order; this re-sort only moves keys
    // with characters above the BMP, and is linear on sorted input.
    fields.sort_by(|a, b| java_key_order(a.0, b.0));
    fields
}

fn combine(ext: &ExtFields, body: Option<&[u8]>, skip: impl Fn(&str) -> bool) -> Vec<u8> {
    let fields = sorted_fields(ext, skip);
    let body = body.unwrap_or_default();
    let size = fields.iter().map(|(_, value)| value.len()).sum::<usize>() + body.len();
    let mut out = Vec::with_capacity(size);
    for (_, value) in fields {
        out.extend_from_slice(value.as_bytes());
    }
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(pairs: &[(&str, &str)]) -> ExtFields {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    // Vectors v1–v4: requests signed by the real 5.5.0 AclClientRPCHook (the
    // 4.9.8 one gives the same signatures), which the real 5.5.0 verifier
    // accepted. v1: REGISTER_BROKER 103.
    const V1_BODY: &str = r#"{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":1,"stateVersion":0,"timestamp":1700000000000},"topicConfigTable":{}}}"#;

    fn v1_ext() -> ExtFields {
        ext(&[
            ("AccessKey", "rocketmq2"),
            ("bodyCrc32", "385843084"),
            ("brokerAddr", "192.168.0.10:10911"),
            ("brokerId", "0"),
            ("brokerName", "broker-a"),
            ("clusterName", "DefaultCluster"),
            ("compressed", "false"),
            ("enableActingMaster", "false"),
            ("haServerAddr", "192.168.0.10:10912"),
            ("heartbeatTimeoutMillis", "30000"),
        ])
    }

    #[test]
    fn v1_register_broker_json() {
        let ext = v1_ext();
        let content = content(&ext, Some(V1_BODY.as_bytes()), 479);
        let signed_text = "rocketmq2385843084192.168.0.10:109110broker-aDefaultClusterfalsefalse192.168.0.10:1091230000";
        assert_eq!(&content[..signed_text.len()], signed_text.as_bytes());
        assert_eq!(&content[signed_text.len()..], V1_BODY.as_bytes());
        assert_eq!(sign("12345678", &content), "wsjBuVRePgcs9irKVQRw1S2rAT0=");
        assert!(verify("12345678", &content, "wsjBuVRePgcs9irKVQRw1S2rAT0="));
        assert!(!verify(
            "12345678x",
            &content,
            "wsjBuVRePgcs9irKVQRw1S2rAT0="
        ));
    }

    #[test]
    fn v2_wipe_write_perm_with_security_token() {
        let ext = ext(&[
            ("AccessKey", "RocketMQAdmin"),
            ("SecurityToken", "tok-42"),
            ("brokerName", "broker-a"),
            ("Signature", "PzF1Uwx/Qqg6nIxH1HD+UZMe2H8="),
        ]);
        let content = content(&ext, None, 479);
        assert_eq!(content, b"RocketMQAdmintok-42broker-a");
        assert_eq!(
            sign("s3cr3t-Key/+=", &content),
            "PzF1Uwx/Qqg6nIxH1HD+UZMe2H8="
        );
    }

    #[test]
    fn v3_put_kv_config_non_ascii() {
        let ext = ext(&[
            ("AccessKey", "adminü01"),
            ("key", "Topicé"),
            ("namespace", "ORDER_TOPIC_CONFIG"),
            ("value", "broker-a:4;broker-b:4 值"),
        ]);
        let content = content(&ext, None, 479);
        assert_eq!(sign("päss-密钥", &content), "B0DAM24q9eD03Ar5cPUtUXPB11M=");
    }

    #[test]
    fn v4_update_namesrv_config_body_only() {
        let ext = ext(&[("AccessKey", "rocketmq2")]);
        let body = b"orderMessageEnable=true\nclusterTest=false\n";
        let content = content(&ext, Some(body), 479);
        assert_eq!(sign("12345678", &content), "eZp2YN27Ly4eVZnpRgpg2muAqMQ=");
    }

    #[test]
    fn signatures_captured_from_live_java_peers() {
        // mqadmin wipeWritePerm (205) and addWritePerm (327) of broker-sec5:
        // the same header, so the same signature; nothing ties it to the code.
        let wipe_or_add = ext(&[("AccessKey", "rocketmq2"), ("brokerName", "broker-sec5")]);
        assert_eq!(
            sign("12345678", &content(&wipe_or_add, None, 515)),
            "Ie7xI5+UAHug/ZjDrrHoI0MfeAY="
        );
        // The broker's periodic GET_BROKER_CLUSTER_INFO (106): no header, no body.
        let cluster_info = ext(&[("AccessKey", "rocketmq")]);
        assert_eq!(
            sign("12345678", &content(&cluster_info, None, 515)),
            "wmnVRiuXwvgUxJ6oySLyc1qu7Z4="
        );
        // GET_ROUTEINFO_BY_TOPIC for TBW102 from a producer and from mqadmin.
        let route = ext(&[("AccessKey", "rocketmq2"), ("topic", "TBW102")]);
        assert_eq!(
            sign("12345678", &content(&route, None, 515)),
            "/u5P/wZUbhjanu4LM/UzEdo2u2I="
        );
    }

    #[test]
    fn values_move_between_adjacent_fields_without_changing_the_content() {
        let a = ext(&[("a", "ab"), ("b", "c")]);
        let b = ext(&[("a", "a"), ("b", "bc")]);
        assert_eq!(content(&a, None, 479), content(&b, None, 479));
    }

    #[test]
    fn keys_above_the_bmp_sort_as_java_does() {
        // U+1F600 is the surrogate pair D83D DE00 in UTF-16, below U+FF21 (Ａ);
        // by code point it is above. Java's TreeMap puts it first.
        let ext = ext(&[("k\u{1F600}", "emoji"), ("k\u{FF21}", "fullwidth")]);
        let keys: Vec<&String> = ext.keys().collect();
        assert_eq!(
            keys,
            ["k\u{FF21}", "k\u{1F600}"],
            "BTreeMap order is code point order"
        );
        assert_eq!(content(&ext, None, 479), b"emojifullwidth");
        assert_eq!(java_key_order("k\u{1F600}", "k\u{FF21}"), Ordering::Less);
        assert_eq!(java_key_order("B", "a"), Ordering::Less, "upper case first");
    }

    #[test]
    fn unique_key_query_is_dropped_only_for_old_versions() {
        let ext = ext(&[
            ("AccessKey", "rocketmq2"),
            ("_UNIQUE_KEY_QUERY", "true"),
            ("topic", "T"),
        ]);
        assert_eq!(content(&ext, None, 399), b"rocketmq2T");
        // `_` (0x5F) sorts between upper and lower case.
        assert_eq!(content(&ext, None, 400), b"rocketmq2trueT");
        assert_eq!(client_content(&ext, None), b"rocketmq2trueT");
    }

    #[test]
    fn verify_refuses_other_texts_of_any_length() {
        let content = b"x";
        let good = sign("12345678", content);
        assert_eq!(good.len(), 28);
        assert!(verify("12345678", content, &good));
        assert!(!verify("12345678", content, ""));
        assert!(!verify("12345678", content, &good[..27]));
        assert!(!verify("12345678", content, &format!("{good}=")));
        assert!(!verify("12345678", content, &good.to_lowercase()));
    }

    #[test]
    fn verifying_while_walking_agrees_with_the_copied_content() {
        let fields = ext(&[
            ("b", "2"),
            ("a", "1"),
            ("_UNIQUE_KEY_QUERY", "u"),
            ("Signature", "x"),
        ]);
        for version in [399, 400] {
            let signature = sign("secret-key", &content(&fields, Some(b"body"), version));
            assert!(verify_received(
                "secret-key",
                &fields,
                Some(b"body"),
                version,
                &signature
            ));
            assert!(!verify_received(
                "secret-key",
                &fields,
                Some(b"body!"),
                version,
                &signature
            ));
            assert!(!verify_received(
                "other-key",
                &fields,
                Some(b"body"),
                version,
                &signature
            ));
        }
    }
}
