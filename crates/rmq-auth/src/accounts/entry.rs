//! One account entry, in either shape, read from the parsed tree.
//!
//! The two shapes share one reader because they differ only in names:
//!
//! | meaning | 4.x `plain_acl.yml` / `SessionCredentials` | 5.x `User` |
//! |---|---|---|
//! | name | `accessKey` | `username` |
//! | secret | `secretKey` | `password` |
//! | admin | `admin: true` | `userType: Super` (or `1`) |
//! | disabled | — | `userStatus: disable` (or `2`) |
//!
//! Using both names of one meaning in one entry is an error. Waymark adds
//! `whiteRemoteAddress` (4.x, now in both shapes), `tlsSubject` and `brokers`.
//! Java's topic and group permission fields and `securityToken` are accepted
//! and reported as ignored; unknown fields are reported too.

use serde_json::{Map, Value};

use super::binding::read_bindings;
use super::locate::Path;
use super::{Account, Note, Problem};
use crate::address::AddressPattern;

/// Java's `AclConstants.ACCESS_KEY_MIN_LENGTH` / `SECRET_KEY_MIN_LENGTH`:
/// both must be *longer* than this, in UTF-16 units (`String.length()`).
const MIN_KEY_LENGTH: usize = 6;

/// 4.x fields Waymark accepts and does not use (the NameServer has no topic
/// or group resources to guard), with the reason given in the warning.
const IGNORED: &[(&str, &str)] = &[
    ("topicPerms", "Waymark checks no topic permissions"),
    ("groupPerms", "Waymark checks no group permissions"),
    ("defaultTopicPerm", "Waymark checks no topic permissions"),
    ("defaultGroupPerm", "Waymark checks no group permissions"),
    ("securityToken", "no server checks security tokens"),
];

const KNOWN: &[&str] = &[
    "accessKey",
    "username",
    "secretKey",
    "password",
    "admin",
    "userType",
    "userStatus",
    "whiteRemoteAddress",
    "tlsSubject",
    "brokers",
];

/// Reads one account at `path`; fields that are ignored or unknown go to `notes`.
pub(super) fn read_account(
    value: &Value,
    path: &Path,
    notes: &mut Vec<Note>,
) -> Result<Account, Problem> {
    let Value::Object(map) = value else {
        return Err(Problem::new(path, "an account must be a mapping"));
    };
    for key in map.keys() {
        if let Some((_, why)) = IGNORED.iter().find(|(name, _)| name == key) {
            notes.push(Note::new(&path.key(key), format!("is ignored: {why}")));
        } else if !KNOWN.contains(&key.as_str()) {
            notes.push(Note::new(
                &path.key(key),
                "is not an account field; ignored",
            ));
        }
    }

    let (name_field, access_key) = either(map, path, "accessKey", "username")?
        .ok_or_else(|| Problem::new(path, "has no accessKey (or username)"))?;
    if java_length(&access_key) <= MIN_KEY_LENGTH {
        return Err(Problem::new(
            &path.key(name_field),
            format!(
                "{access_key:?} is {} characters; Java requires more than {MIN_KEY_LENGTH}",
                java_length(&access_key)
            ),
        ));
    }
    let (secret_field, secret_key) =
        either(map, path, "secretKey", "password")?.ok_or_else(|| {
            Problem::new(
                path,
                format!("account {access_key:?} has no secretKey (or password)"),
            )
        })?;
    if java_length(&secret_key) <= MIN_KEY_LENGTH {
        // The secret itself is never echoed: errors end up in logs.
        return Err(Problem::new(
            &path.key(secret_field),
            format!(
                "the secret of {access_key:?} is {} characters; Java requires more than {MIN_KEY_LENGTH}",
                java_length(&secret_key)
            ),
        ));
    }

    let white_remote_address = read_white_remote_address(map, path)?;
    if white_remote_address
        .as_ref()
        .is_some_and(AddressPattern::matches_everything)
    {
        notes.push(Note::new(
            &path.key("whiteRemoteAddress"),
            "matches every address: any peer acts as this account without a signature",
        ));
    }
    Ok(Account {
        access_key,
        secret_key,
        admin: read_admin(map, path)?,
        enabled: read_enabled(map, path)?,
        white_remote_address,
        tls_subject: read_tls_subject(map, path)?,
        brokers: match map.get("brokers") {
            Some(value) => read_bindings(value, &path.key("brokers"))?,
            None => Vec::new(),
        },
    })
}

/// The text of a scalar as Java's `JSONObject.getString` would give it:
/// strings as they are, integers and booleans in decimal / `true`/`false`;
/// `None` for null. A YAML `secretKey: 12345678` is thus the text `12345678`.
///
/// # Errors
/// A decimal number (whose Java text would differ), a list or a mapping;
/// the message completes "<field> ...".
pub(crate) fn scalar_text(value: &Value) -> Result<Option<String>, &'static str> {
    match value {
        Value::Null => Ok(None),
        Value::String(text) => Ok(Some(text.clone())),
        Value::Bool(flag) => Ok(Some(flag.to_string())),
        Value::Number(n) if n.is_i64() || n.is_u64() => Ok(Some(n.to_string())),
        Value::Number(_) => Err("is a decimal number; quote it to make it text"),
        Value::Array(_) => Err("must be text, not a list"),
        Value::Object(_) => Err("must be text, not a mapping"),
    }
}

fn java_length(text: &str) -> usize {
    text.encode_utf16().count()
}

/// A text field with two accepted names; using both is an error.
fn either(
    map: &Map<String, Value>,
    path: &Path,
    first: &'static str,
    second: &'static str,
) -> Result<Option<(&'static str, String)>, Problem> {
    let first_value = text_field(map, path, first)?;
    let second_value = text_field(map, path, second)?;
    match (first_value, second_value) {
        (Some(_), Some(_)) => Err(Problem::new(
            path,
            format!("has both {first} and {second}; use one"),
        )),
        (Some(text), None) => Ok(Some((first, text))),
        (None, Some(text)) => Ok(Some((second, text))),
        (None, None) => Ok(None),
    }
}

/// A scalar field as text; null, absent and blank are `None`.
fn text_field(map: &Map<String, Value>, path: &Path, key: &str) -> Result<Option<String>, Problem> {
    match map.get(key) {
        None => Ok(None),
        Some(value) => Ok(scalar_text(value)
            .map_err(|what| Problem::new(&path.key(key), what))?
            .filter(|text| !text.trim().is_empty())),
    }
}

fn read_admin(map: &Map<String, Value>, path: &Path) -> Result<bool, Problem> {
    let admin = text_field(map, path, "admin")?;
    let user_type = text_field(map, path, "userType")?;
    match (admin, user_type) {
        (Some(_), Some(_)) => Err(Problem::new(path, "has both admin and userType; use one")),
        // SnakeYAML, which reads plain_acl.yml in Java, takes YAML 1.1's yes/no/on/off too.
        (Some(flag), None) => match flag.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" => Ok(true),
            "false" | "no" | "off" => Ok(false),
            _ => Err(Problem::new(
                &path.key("admin"),
                format!("{flag:?} is not true or false"),
            )),
        },
        (None, Some(kind)) => match kind.to_ascii_lowercase().as_str() {
            "super" | "1" => Ok(true),
            "normal" | "2" => Ok(false),
            _ => Err(Problem::new(
                &path.key("userType"),
                format!("{kind:?} is not Super or Normal"),
            )),
        },
        (None, None) => Ok(false),
    }
}

/// Java treats an unknown `userStatus` as enabled; an error here keeps a
/// misspelt `disabled` from leaving an account open.
fn read_enabled(map: &Map<String, Value>, path: &Path) -> Result<bool, Problem> {
    match text_field(map, path, "userStatus")? {
        None => Ok(true),
        Some(status) => match status.to_ascii_lowercase().as_str() {
            "enable" | "1" => Ok(true),
            "disable" | "2" => Ok(false),
            _ => Err(Problem::new(
                &path.key("userStatus"),
                format!("{status:?} is not enable or disable"),
            )),
        },
    }
}

fn read_white_remote_address(
    map: &Map<String, Value>,
    path: &Path,
) -> Result<Option<AddressPattern>, Problem> {
    text_field(map, path, "whiteRemoteAddress")?
        .map(|text| {
            AddressPattern::parse(&text)
                .map_err(|e| Problem::new(&path.key("whiteRemoteAddress"), e.to_string()))
        })
        .transpose()
}

fn read_tls_subject(map: &Map<String, Value>, path: &Path) -> Result<Option<String>, Problem> {
    match map.get("tlsSubject") {
        None | Some(Value::Null) => Ok(None),
        Some(_) => text_field(map, path, "tlsSubject")?
            .map(Some)
            .ok_or_else(|| Problem::new(&path.key("tlsSubject"), "is blank")),
    }
}
