//! The pre-pass that turns fastjson's unquoted object keys into JSON.
//!
//! fastjson (feature `AllowUnQuotedFieldNames`, on by default) reads
//! `{0:"addr"}` and `{-1:0}`; Java brokers send `currIdMap` that way inside
//! REGISTER_BROKER bodies. serde_json does not, so bare keys are quoted first.

use std::borrow::Cow;

/// Characters of a bare token: numbers (with sign, fraction, exponent), JSON
/// literals and identifier-like keys.
fn is_bare(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'_' | b'$' | b'.')
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Index just past the string starting at `input[open] == b'"'` (or the end
/// of input for an unterminated string, which serde_json then rejects).
fn skip_string(input: &[u8], open: usize) -> usize {
    let mut i = open + 1;
    while let Some(found) = memchr::memchr2(b'"', b'\\', &input[i.min(input.len())..]) {
        let at = i + found;
        if input[at] == b'"' {
            return at + 1;
        }
        i = at + 2;
    }
    input.len()
}

/// Quotes every bare token that stands in key position (follows `{` or `,`
/// and is followed, after optional whitespace, by `:`). Strings are skipped,
/// so their content is never touched. Returns the input unchanged (borrowed)
/// when there is nothing to do, which is the case for everything the
/// standard dialect produces.
///
/// Only the bytes between strings are looked at, and of those only what
/// follows `{` or `,`: a registration body is mostly strings, which are
/// skipped a word at a time. Quoting cannot turn invalid input valid in a
/// harmful way: only a key may stand between `{` or `,` and `:`.
pub fn quote_bare_keys(input: &[u8]) -> Cow<'_, [u8]> {
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut i = 0;
    while let Some(found) = memchr::memchr3(b'"', b'{', b',', &input[i..]) {
        let at = i + found;
        if input[at] == b'"' {
            i = skip_string(input, at);
            continue;
        }
        let mut start = at + 1;
        while start < input.len() && is_space(input[start]) {
            start += 1;
        }
        let mut end = start;
        while end < input.len() && is_bare(input[end]) {
            end += 1;
        }
        let mut colon = end;
        while colon < input.len() && is_space(input[colon]) {
            colon += 1;
        }
        if end > start && input.get(colon) == Some(&b':') {
            let buf = out.get_or_insert_with(|| Vec::with_capacity(input.len() + 16));
            buf.extend_from_slice(&input[copied..start]);
            buf.push(b'"');
            buf.extend_from_slice(&input[start..end]);
            buf.push(b'"');
            copied = end;
        }
        i = end.max(at + 1);
    }
    match out {
        None => Cow::Borrowed(input),
        Some(mut buf) => {
            buf.extend_from_slice(&input[copied..]);
            Cow::Owned(buf)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> String {
        String::from_utf8(quote_bare_keys(s.as_bytes()).into_owned()).unwrap()
    }

    #[test]
    fn quotes_integer_keys_only_in_key_position() {
        assert_eq!(q(r#"{0:"a",-1:2}"#), r#"{"0":"a","-1":2}"#);
        assert_eq!(q(r#"{ 10 : 0 , 2:[1,2]}"#), r#"{ "10" : 0 , "2":[1,2]}"#);
        assert_eq!(q(r#"{"a":{0:true}}"#), r#"{"a":{"0":true}}"#);
    }

    #[test]
    fn leaves_strings_and_strict_json_alone() {
        let strict = r#"{"k":"{0:\"x\"}","n":-1.5e+3,"t":true}"#;
        assert!(matches!(
            quote_bare_keys(strict.as_bytes()),
            Cow::Borrowed(_)
        ));
        assert_eq!(q(r#"{"a\"b":1,0:"\\"}"#), r#"{"a\"b":1,"0":"\\"}"#);
    }

    #[test]
    fn survives_garbage() {
        for s in ["\"", "\"\\", "{0", "0:", ":::", "{\"a", "\\\"", ""] {
            let _ = q(s);
        }
    }
}
