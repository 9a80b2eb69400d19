//! Java `.properties` text: the UPDATE_NAMESRV_CONFIG request body and the
//! GET_NAMESRV_CONFIG response body.
//!
//! [`parse`] follows `java.util.Properties.load`: natural lines end at `\n`,
//! `\r` or `\r\n`; a line whose first non-blank character is `#` or `!` is a
//! comment (never continued); an odd number of trailing backslashes joins the
//! next line, whose leading blanks are dropped; the key ends at the first
//! unescaped `=`, `:` or blank, then blanks, at most one `=`/`:` and blanks
//! again separate it from the value; `\t \n \r \f \uXXXX` are escapes and any
//! other escaped character stands for itself. Later duplicates win.
//!
//! [`render`] is Java's output of the configuration: sorted `key=value\n`
//! lines with no escaping at all.

use std::collections::BTreeMap;

use crate::BodyError;

fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\u{c}')
}

/// Splits text into logical lines (continuations joined, escapes intact).
fn logical_lines(text: &str) -> Vec<Vec<char>> {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    let mut lines = Vec::new();
    let mut i = 0;
    loop {
        while i < n && (is_blank(chars[i]) || chars[i] == '\n' || chars[i] == '\r') {
            i += 1;
        }
        if i >= n {
            return lines;
        }
        if chars[i] == '#' || chars[i] == '!' {
            while i < n && chars[i] != '\n' && chars[i] != '\r' {
                i += 1;
            }
            continue;
        }
        let mut line = Vec::new();
        let mut escaped = false;
        while i < n {
            let c = chars[i];
            i += 1;
            if c == '\n' || c == '\r' {
                if !escaped {
                    break;
                }
                line.pop();
                escaped = false;
                if c == '\r' && chars.get(i) == Some(&'\n') {
                    i += 1;
                }
                while i < n && is_blank(chars[i]) {
                    i += 1;
                }
                continue;
            }
            line.push(c);
            escaped = c == '\\' && !escaped;
        }
        if escaped && i >= n {
            // A backslash at the very end of the input is dropped.
            line.pop();
        }
        lines.push(line);
    }
}

/// Resolves the escapes of a key or value (`Properties.loadConvert`).
fn unescape(chars: &[char], line: usize) -> Result<String, BodyError> {
    let mut units: Vec<u16> = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '\\' {
            units.extend_from_slice(c.encode_utf16(&mut [0; 2]));
            continue;
        }
        let Some(&e) = chars.get(i) else { break };
        i += 1;
        let plain = match e {
            't' => '\t',
            'n' => '\n',
            'r' => '\r',
            'f' => '\u{c}',
            'u' => {
                let hex = chars.get(i..i + 4).ok_or(BodyError::Properties { line })?;
                let mut unit = 0u16;
                for h in hex {
                    let digit = h.to_digit(16).ok_or(BodyError::Properties { line })?;
                    unit = unit << 4 | digit as u16;
                }
                units.push(unit);
                i += 4;
                continue;
            }
            other => other,
        };
        units.extend_from_slice(plain.encode_utf16(&mut [0; 2]));
    }
    Ok(String::from_utf16_lossy(&units))
}

/// Splits a logical line into raw key and value (`Properties.load0`).
fn split(line: &[char]) -> (&[char], &[char]) {
    let mut key_len = 0;
    let mut value_start = line.len();
    let mut has_sep = false;
    let mut escaped = false;
    while key_len < line.len() {
        let c = line[key_len];
        if !escaped && (c == '=' || c == ':') {
            value_start = key_len + 1;
            has_sep = true;
            break;
        }
        if !escaped && is_blank(c) {
            value_start = key_len + 1;
            break;
        }
        escaped = c == '\\' && !escaped;
        key_len += 1;
    }
    while value_start < line.len() {
        let c = line[value_start];
        if !is_blank(c) {
            if !has_sep && (c == '=' || c == ':') {
                has_sep = true;
            } else {
                break;
            }
        }
        value_start += 1;
    }
    (&line[..key_len], &line[value_start.min(line.len())..])
}

/// Parses properties text with `java.util.Properties.load` semantics.
///
/// The body is taken as UTF-8 text (see the crate report on Java reading it
/// as ISO-8859-1).
///
/// # Errors
/// [`BodyError::Properties`] for a malformed `\uXXXX` escape, the only
/// error Java reports (the NameServer answers `string2Properties error`).
pub fn parse(text: &str) -> Result<BTreeMap<String, String>, BodyError> {
    let mut map = BTreeMap::new();
    for (index, line) in logical_lines(text).iter().enumerate() {
        let (key, value) = split(line);
        map.insert(unescape(key, index + 1)?, unescape(value, index + 1)?);
    }
    Ok(map)
}

/// `key=value` assignments from the command line (`--set k=v`), in a map
/// like a properties file's; keys are trimmed, values kept as given.
///
/// # Errors
/// The first argument without `=`, as text.
pub fn parse_assignments(pairs: &[String]) -> Result<BTreeMap<String, String>, String> {
    let mut map = BTreeMap::new();
    for pair in pairs {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(format!("expects KEY=VALUE, got {pair:?}"));
        };
        map.insert(key.trim().to_owned(), value.to_owned());
    }
    Ok(map)
}

/// Renders the configuration as Java does for GET_NAMESRV_CONFIG and the
/// persisted file: one `key=value\n` line per entry, sorted by key, no
/// escaping.
pub fn render<'a>(entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut sorted: Vec<(&str, &str)> = entries.into_iter().collect();
    sorted.sort_unstable();
    let mut out = String::new();
    for (key, value) in sorted {
        out.push_str(key);
        out.push('=');
        out.push_str(value);
        out.push('\n');
    }
    out
}

/// Renders entries for a properties file that [`parse`] and Java's
/// `Properties.load` read back to the same map: sorted `key=value` lines
/// where a backslash, every control character (so every line break) and
/// every character beyond ASCII are escaped (Java reads a `-c` file as
/// ISO-8859-1), a key's separators and blanks too, and a value's leading
/// blanks. Unlike [`render`], no entry can make a line of its own.
pub fn render_for_file<'a>(entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut sorted: Vec<(&str, &str)> = entries.into_iter().collect();
    sorted.sort_unstable();
    let mut out = String::new();
    for (key, value) in sorted {
        escape_into(&mut out, key, true);
        out.push('=');
        escape_into(&mut out, value, false);
        out.push('\n');
    }
    out
}

/// Appends `text` escaped as `Properties.store` would need it read back.
fn escape_into(out: &mut String, text: &str, is_key: bool) {
    for (i, c) in text.chars().enumerate() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{c}' => out.push_str("\\f"),
            ' ' if is_key || i == 0 => out.push_str("\\ "),
            '=' | ':' if is_key => {
                out.push('\\');
                out.push(c);
            }
            '#' | '!' if is_key && i == 0 => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() || !c.is_ascii() => {
                for unit in c.encode_utf16(&mut [0; 2]) {
                    out.push_str(&format!("\\u{unit:04X}"));
                }
            }
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Vec<(String, String)> {
        parse(text).unwrap().into_iter().collect()
    }

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn separators_and_comments() {
        let text = "# comment\n! also\n  a=1\nb : 2\nc 3\nd\te=4\nf\n g:=x\n\n";
        assert_eq!(
            p(text),
            kv(&[
                ("a", "1"),
                ("b", "2"),
                ("c", "3"),
                ("d", "e=4"),
                ("f", ""),
                ("g", "=x")
            ])
        );
        assert_eq!(p("{key=value}"), kv(&[("{key", "value}")]));
        assert_eq!(
            p("enableTopicList=false\n"),
            kv(&[("enableTopicList", "false")])
        );
    }

    #[test]
    fn escapes_and_continuations() {
        assert_eq!(
            p("k\\=ey=v\\tal\\u00E9\\\\"),
            kv(&[("k=ey", "v\tal\u{e9}\\")])
        );
        assert_eq!(
            p("a=one \\\n    two\r\nb=x\\\r\n  y"),
            kv(&[("a", "one two"), ("b", "xy")])
        );
        assert_eq!(p("# not continued \\\nc=1"), kv(&[("c", "1")]));
        assert_eq!(p("a=b\\\n# part of a\n"), kv(&[("a", "b# part of a")]));
        assert_eq!(p("a=b\\\n\nc=d"), kv(&[("a", "b"), ("c", "d")]));
        assert_eq!(p("a=\\uD83D\\uDE00"), kv(&[("a", "\u{1F600}")]));
        assert_eq!(p("a=trailing\\"), kv(&[("a", "trailing")]));
        assert_eq!(p("a=1\na=2"), kv(&[("a", "2")]));
    }

    #[test]
    fn malformed_unicode_escape_is_the_only_error() {
        assert!(matches!(
            parse("a=\\u12"),
            Err(BodyError::Properties { line: 1 })
        ));
        assert!(matches!(
            parse("x=1\na=\\uZZZZ"),
            Err(BodyError::Properties { line: 2 })
        ));
        assert!(parse("a=\\u+123").is_err());
    }

    #[test]
    fn a_file_rendering_reads_back_to_the_same_entries() {
        let entries = [
            ("plain", "value"),
            ("path", r"C:\rocketmq\store"),
            (
                "injected",
                "false\nkvConfigPath=/tmp/evil\r\nconfigBlackList=",
            ),
            ("blanks", "  leading and inner  "),
            ("tabs", "\ta\u{c}b\u{1}"),
            ("key with=sep:s", "v"),
            ("#not a comment", "!"),
            ("unicode", "zone-é-東"),
            ("peers", "n0-127.0.0.1:9878;n1-127.0.0.1:9879"),
            ("empty", ""),
        ];
        let text = render_for_file(entries);
        assert_eq!(
            text.lines().count(),
            entries.len(),
            "one line per entry:\n{text}"
        );
        assert!(text.is_ascii());
        assert!(
            text.contains("peers=n0-127.0.0.1:9878;n1-127.0.0.1:9879\n"),
            "values keep ':'"
        );
        let back = parse(&text).unwrap();
        let expected: BTreeMap<String, String> = entries
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        assert_eq!(back, expected);
    }

    #[test]
    fn render_is_sorted_key_value_lines() {
        let text = render([
            ("listenPort", "9876"),
            ("bindAddress", "0.0.0.0"),
            ("kvConfigPath", "/a b"),
        ]);
        assert_eq!(
            text,
            "bindAddress=0.0.0.0\nkvConfigPath=/a b\nlistenPort=9876\n"
        );
        assert_eq!(parse(&text).unwrap()["kvConfigPath"], "/a b");
    }
}
