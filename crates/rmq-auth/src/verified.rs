//! A memo of signed requests already verified, so that the same bytes under
//! the same key are compared instead of hashed again.
//!
//! A Java broker re-registers every 30 s with the same header and, while
//! its topics are unchanged, the same body: hundreds of kilobytes that
//! HMAC-SHA1 hashes at about 1.5–2 GB/s even with the CPU's SHA
//! instructions, a tenth of what the whole registration costs the server.
//! Comparing those bytes with the copy kept from the last time they were
//! verified costs a few percent of the hash.
//!
//! The memo never changes an answer. An entry is made only after a full
//! verification succeeded, and is used only when the claimed signature, the
//! secret key and every signed byte (the ext-field values in signing order,
//! then the body) equal the entry's; equal bytes under an equal key have an
//! equal HMAC, so the answer is the one a full verification would give.
//! Entries hold copies, never the received frame, so what the memo holds is
//! exactly what it counts against its byte budget; the oldest entries go
//! first when a new one does not fit.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use rmq_wire::ExtFields;

use crate::signature;

/// Bytes an entry costs beyond its signed bytes (map slot, key, queue slot),
/// so that a flood of tiny entries is bounded too.
const ENTRY_OVERHEAD: usize = 128;

/// Verified signatures and the bytes they were verified over, within a byte
/// budget.
pub struct VerifiedMemo {
    budget: usize,
    inner: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    /// Shared, so that a lookup compares the bytes after the lock is let go.
    by_signature: HashMap<String, Arc<Entry>>,
    /// Signatures in the order their entries were made: the oldest is
    /// evicted first.
    order: VecDeque<String>,
    bytes: usize,
}

struct Entry {
    secret_key: String,
    fields: Vec<u8>,
    body: Vec<u8>,
}

impl Entry {
    fn cost(&self, signature: &str) -> usize {
        self.secret_key.len()
            + self.fields.len()
            + self.body.len()
            + signature.len()
            + ENTRY_OVERHEAD
    }
}

impl VerifiedMemo {
    /// A memo holding at most `budget` bytes; 0 keeps nothing (every request
    /// is verified in full).
    pub fn new(budget: usize) -> VerifiedMemo {
        VerifiedMemo {
            budget,
            inner: Mutex::new(Entries::default()),
        }
    }

    /// The byte budget.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// The bytes the entries hold now.
    pub fn held_bytes(&self) -> usize {
        self.lock().bytes
    }

    /// As [`signature::verify_received`], with the memo: a request whose
    /// signed bytes and key equal an entry's is answered from it; a request
    /// that verifies in full is remembered.
    pub fn verify_received(
        &self,
        secret_key: &str,
        ext: &ExtFields,
        body: Option<&[u8]>,
        version: i32,
        claimed: &str,
    ) -> bool {
        let body = body.unwrap_or_default();
        let fields = signature::received_fields(ext, version);
        let signed_len = fields.iter().map(|value| value.len()).sum::<usize>() + body.len();
        if signed_len + ENTRY_OVERHEAD > self.budget {
            return signature::verify_fields(secret_key, &fields, body, claimed);
        }
        if self.recalls(secret_key, &fields, body, claimed) {
            return true;
        }
        if !signature::verify_fields(secret_key, &fields, body, claimed) {
            return false;
        }
        let entry = Entry {
            secret_key: secret_key.to_owned(),
            fields: fields.concat().into_bytes(),
            body: body.to_vec(),
        };
        self.remember(claimed, entry);
        true
    }

    fn recalls(&self, secret_key: &str, fields: &[&str], body: &[u8], claimed: &str) -> bool {
        let Some(entry) = self.lock().by_signature.get(claimed).cloned() else {
            return false;
        };
        entry.secret_key == secret_key
            && entry.body == body
            && same_concatenation(&entry.fields, fields)
    }

    fn remember(&self, signature: &str, entry: Entry) {
        let cost = entry.cost(signature);
        let mut entries = self.lock();
        if let Some(old) = entries.by_signature.remove(signature) {
            entries.bytes -= old.cost(signature);
            entries.order.retain(|key| key != signature);
        }
        while entries.bytes + cost > self.budget {
            let Some(oldest) = entries.order.pop_front() else {
                break;
            };
            if let Some(old) = entries.by_signature.remove(&oldest) {
                entries.bytes -= old.cost(&oldest);
            }
        }
        entries.bytes += cost;
        entries.order.push_back(signature.to_owned());
        entries
            .by_signature
            .insert(signature.to_owned(), Arc::new(entry));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for VerifiedMemo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entries = self.lock();
        f.debug_struct("VerifiedMemo")
            .field("budget", &self.budget)
            .field("entries", &entries.by_signature.len())
            .field("bytes", &entries.bytes)
            .finish()
    }
}

/// Whether `stored` is the concatenation of `fields`, without building it.
fn same_concatenation(stored: &[u8], fields: &[&str]) -> bool {
    let mut rest = stored;
    for field in fields {
        let Some(tail) = rest.strip_prefix(field.as_bytes()) else {
            return false;
        };
        rest = tail;
    }
    rest.is_empty()
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

    fn signed(secret: &str, pairs: &[(&str, &str)], body: &[u8]) -> ExtFields {
        let mut fields = ext(pairs);
        let signature = signature::sign(secret, &signature::client_content(&fields, Some(body)));
        fields.insert(signature::SIGNATURE.to_owned(), signature);
        fields
    }

    fn claimed(fields: &ExtFields) -> String {
        fields[signature::SIGNATURE].clone()
    }

    const SECRET: &str = "broker-secret";
    const VERSION: i32 = 501;

    #[test]
    fn a_verified_request_is_remembered_and_an_unchanged_one_recalled() {
        let memo = VerifiedMemo::new(1 << 20);
        let body = vec![7u8; 10_000];
        let fields = signed(
            SECRET,
            &[("AccessKey", "broker"), ("brokerName", "b")],
            &body,
        );
        assert!(memo.verify_received(SECRET, &fields, Some(&body), VERSION, &claimed(&fields)));
        let held = memo.held_bytes();
        assert!(
            held >= body.len(),
            "the first verification is remembered: {held}"
        );
        assert!(memo.verify_received(SECRET, &fields, Some(&body), VERSION, &claimed(&fields)));
        assert_eq!(memo.held_bytes(), held, "a recalled request adds nothing");
    }

    #[test]
    fn a_changed_byte_key_or_signature_is_never_recalled() {
        let memo = VerifiedMemo::new(1 << 20);
        let body = vec![7u8; 1_000];
        let fields = signed(
            SECRET,
            &[("AccessKey", "broker"), ("brokerName", "b")],
            &body,
        );
        let signature = claimed(&fields);
        assert!(memo.verify_received(SECRET, &fields, Some(&body), VERSION, &signature));

        let mut other_body = body.clone();
        other_body[999] = 8;
        assert!(!memo.verify_received(SECRET, &fields, Some(&other_body), VERSION, &signature));

        let mut other_fields = fields.clone();
        other_fields.insert("brokerName".to_owned(), "c".to_owned());
        assert!(!memo.verify_received(SECRET, &other_fields, Some(&body), VERSION, &signature));

        assert!(!memo.verify_received("another-secret", &fields, Some(&body), VERSION, &signature));

        let forged = format!("x{}", &signature[1..]);
        assert!(!memo.verify_received(SECRET, &fields, Some(&body), VERSION, &forged));
        // The remembered request still verifies.
        assert!(memo.verify_received(SECRET, &fields, Some(&body), VERSION, &signature));
    }

    #[test]
    fn a_bad_signature_is_not_remembered() {
        let memo = VerifiedMemo::new(1 << 20);
        let body = b"body".to_vec();
        let fields = signed(SECRET, &[("AccessKey", "broker")], &body);
        assert!(!memo.verify_received(
            "wrong-secret",
            &fields,
            Some(&body),
            VERSION,
            &claimed(&fields)
        ));
        assert_eq!(memo.held_bytes(), 0);
    }

    #[test]
    fn moving_characters_between_fields_recalls_as_the_signature_allows() {
        // Java signs the values concatenated: the same concatenation has the
        // same signature, so the memo may (and does) answer it the same way.
        let memo = VerifiedMemo::new(1 << 20);
        let fields = signed(SECRET, &[("a", "xy"), ("b", "z")], b"");
        let signature = claimed(&fields);
        assert!(memo.verify_received(SECRET, &fields, None, VERSION, &signature));
        let mut moved = ext(&[("a", "x"), ("b", "yz")]);
        moved.insert(signature::SIGNATURE.to_owned(), signature.clone());
        assert!(signature::verify_received(
            SECRET, &moved, None, VERSION, &signature
        ));
        assert!(memo.verify_received(SECRET, &moved, None, VERSION, &signature));
    }

    #[test]
    fn the_budget_holds_and_the_oldest_entries_go_first() {
        let body = vec![1u8; 1_000];
        let memo = VerifiedMemo::new(3 * (body.len() + 400));
        let mut all = Vec::new();
        for name in ["b0", "b1", "b2", "b3", "b4"] {
            let fields = signed(
                SECRET,
                &[("AccessKey", "broker"), ("brokerName", name)],
                &body,
            );
            assert!(memo.verify_received(SECRET, &fields, Some(&body), VERSION, &claimed(&fields)));
            assert!(memo.held_bytes() <= memo.budget());
            all.push(fields);
        }
        let entries = memo.lock();
        assert!(
            !entries.by_signature.contains_key(&claimed(&all[0])),
            "the oldest went first"
        );
        assert!(
            entries.by_signature.contains_key(&claimed(&all[4])),
            "the newest stays"
        );
    }

    #[test]
    fn requests_larger_than_the_budget_and_a_zero_budget_are_verified_in_full() {
        for budget in [0, 100] {
            let memo = VerifiedMemo::new(budget);
            let body = vec![3u8; 1_000];
            let fields = signed(SECRET, &[("AccessKey", "broker")], &body);
            assert!(memo.verify_received(SECRET, &fields, Some(&body), VERSION, &claimed(&fields)));
            assert!(!memo.verify_received(
                SECRET,
                &fields,
                Some(b"other"),
                VERSION,
                &claimed(&fields)
            ));
            assert_eq!(memo.held_bytes(), 0);
        }
    }

    #[test]
    fn old_clients_unique_key_field_is_left_out_as_in_full_verification() {
        let memo = VerifiedMemo::new(1 << 20);
        let mut fields = signed(SECRET, &[("AccessKey", "broker"), ("topic", "t")], b"");
        // Added after signing by a 4.9.3-or-older client.
        fields.insert(signature::UNIQUE_KEY_QUERY.to_owned(), "true".to_owned());
        let signature = claimed(&fields);
        for _ in 0..2 {
            assert!(memo.verify_received(SECRET, &fields, None, signature::V4_9_3, &signature));
            assert!(!memo.verify_received(SECRET, &fields, None, VERSION, &signature));
        }
    }
}
