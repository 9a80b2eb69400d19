//! Java option objects (`NamesrvConfig`, `ControllerConfig`,
//! `NettyServerConfig`) as Rust structs with Java's key names: the
//! properties file of `-c`, UPDATE_*_CONFIG and the GET_*_CONFIG text all
//! read and write them through [`java_options!`].
//!
//! Values follow Java's setter conversion (`MixAll.properties2Object`):
//! numbers parsed, booleans `true` ignoring case (anything else false),
//! strings trimmed; a value that does not parse leaves the option unchanged.

/// Conversion between an option's value and its text, as Java's setters do.
pub trait OptionValue {
    /// Sets the value from text (Java's conversion; unparsable numbers are
    /// ignored).
    fn parse_into(&mut self, text: &str);
    /// The text, or `None` for an unset (`null`) option, which Java leaves
    /// out of the properties text.
    fn render(&self) -> Option<String>;
    /// Whether a configuration update may set this option to `text`, and
    /// why not. Stricter than [`OptionValue::parse_into`], which follows
    /// Java in ignoring what does not parse: an update that would be
    /// ignored is refused instead.
    fn check(text: &str) -> Result<(), String>
    where
        Self: Sized;
}

impl OptionValue for bool {
    fn parse_into(&mut self, text: &str) {
        *self = text.trim().eq_ignore_ascii_case("true");
    }
    fn render(&self) -> Option<String> {
        Some(self.to_string())
    }
    fn check(text: &str) -> Result<(), String> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("true") || text.eq_ignore_ascii_case("false") {
            Ok(())
        } else {
            Err("must be true or false".to_owned())
        }
    }
}

macro_rules! number_value {
    ($($ty:ty),*) => {$(
        impl OptionValue for $ty {
            fn parse_into(&mut self, text: &str) {
                if let Ok(value) = text.trim().parse() {
                    *self = value;
                }
            }
            fn render(&self) -> Option<String> {
                Some(self.to_string())
            }
            fn check(text: &str) -> Result<(), String> {
                text.trim().parse::<$ty>().map(|_| ()).map_err(|_| {
                    format!("must be a whole number from {} to {}", <$ty>::MIN, <$ty>::MAX)
                })
            }
        }
    )*};
}
number_value!(i32, i64);

impl OptionValue for String {
    fn parse_into(&mut self, text: &str) {
        text.trim().clone_into(self);
    }
    fn render(&self) -> Option<String> {
        Some(self.clone())
    }
    fn check(_: &str) -> Result<(), String> {
        Ok(())
    }
}

impl OptionValue for Option<String> {
    fn parse_into(&mut self, text: &str) {
        *self = Some(text.trim().to_owned());
    }
    fn render(&self) -> Option<String> {
        self.clone()
    }
    fn check(_: &str) -> Result<(), String> {
        Ok(())
    }
}

/// Why an UPDATE_*_CONFIG entry `key=value` is refused before its option
/// is even looked at: a control character in the key or the value (a line
/// break would otherwise reach the text served by GET_*_CONFIG as an extra
/// line), or a port outside 0–65535.
pub fn check_update_text(key: &str, value: &str) -> Result<(), String> {
    if key.trim().is_empty() {
        return Err("an empty key".to_owned());
    }
    for (what, text) in [("key", key), ("value", value)] {
        if let Some(c) = text.chars().find(|c| c.is_control()) {
            return Err(format!(
                "invalid {what} for {}: it contains the control character U+{:04X}",
                printable(key),
                c as u32
            ));
        }
    }
    if key.ends_with("Port") {
        let in_range = value
            .trim()
            .parse::<i64>()
            .is_ok_and(|port| (0..=65535).contains(&port));
        if !in_range {
            return Err(format!(
                "invalid value for {key}: a port must be from 0 to 65535"
            ));
        }
    }
    Ok(())
}

/// `key` for an error message, its control characters shown as `\u{..}`.
fn printable(key: &str) -> String {
    key.chars()
        .map(|c| {
            if c.is_control() {
                format!("\\u{{{:x}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The start-up check of a limit key (Waymark's own budgets): what
/// `check_update` (the key's type check) says, and then a whole number of at
/// least 1, since a limit of zero would refuse everything.
pub fn check_limit(
    key: &str,
    value: &str,
    check_update: impl Fn(&str, &str) -> Result<(), String>,
) -> Result<(), String> {
    check_update(key, value)?;
    match value.trim().parse::<i64>() {
        Ok(n) if n >= 1 => Ok(()),
        _ => Err(format!("invalid value for {key}: must be at least 1")),
    }
}

/// A limit key's value as a size: at least 1, saturating.
pub fn limit_size(value: i64) -> usize {
    usize::try_from(value.max(1)).unwrap_or(usize::MAX)
}

/// Declares an option struct: `rust_name: Type = "javaKey", |home, rocketmq_home| default;`
/// per option, in any order. The struct gets `defaults(home, rocketmq_home)`
/// (`home` is Java's `user.home`, `rocketmq_home` the `ROCKETMQ_HOME`
/// value) and `from_env()`, `set(key, text) -> bool` (false for an unknown
/// key), `apply_file`, `apply_update`, `to_properties()` and `to_text()`
/// (every option plus the extra keys, sorted), `to_file_text()` (the same,
/// escaped for a properties file), `check_update`, `black_list_of` and `KEYS`.
/// Keys no option knows are kept in `extra`, as Java echoes them.
#[macro_export]
macro_rules! java_options {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $field:ident : $ty:ty = $key:literal, $default:expr; )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            $( #[doc = concat!("`", $key, "`")] pub $field: $ty, )*
            /// Keys of the `-c` file that no option knows; echoed by the
            /// GET_*_CONFIG text and persisted, as Java does.
            pub extra: std::collections::BTreeMap<String, String>,
        }

        impl $name {
            /// Every key an option of this struct has.
            pub const KEYS: &'static [&'static str] = &[$( $key, )*];

            /// Java's defaults, with paths under `home` (Java's `user.home`) and
            /// `rocketmq_home` from ROCKETMQ_HOME.
            pub fn defaults(home: &std::path::Path, rocketmq_home: Option<String>) -> Self {
                $name {
                    $( $field: $default(home, &rocketmq_home), )*
                    extra: std::collections::BTreeMap::new(),
                }
            }

            /// Sets one option from text; `false` if no option has that key.
            pub fn set(&mut self, key: &str, value: &str) -> bool {
                match key {
                    $( $key => {
                        $crate::options::OptionValue::parse_into(&mut self.$field, value);
                        true
                    } )*
                    _ => false,
                }
            }

            /// Every option as `key → text`, plus the extra keys, sorted by key.
            pub fn to_properties(&self) -> std::collections::BTreeMap<String, String> {
                let mut all = self.extra.clone();
                $( if let Some(text) = $crate::options::OptionValue::render(&self.$field) {
                    all.insert($key.to_owned(), text);
                } )*
                all
            }

            /// Defaults for this process: `HOME` as Java's `user.home`,
            /// `ROCKETMQ_HOME`.
            pub fn from_env() -> Self {
                let home = std::env::var_os("HOME")
                    .map_or_else(|| std::path::PathBuf::from("."), std::path::PathBuf::from);
                Self::defaults(&home, std::env::var("ROCKETMQ_HOME").ok())
            }

            /// Applies the properties of a `-c` file: known keys set options,
            /// unknown keys are kept (and returned, so the caller can warn
            /// about them).
            pub fn apply_file(
                &mut self,
                properties: &std::collections::BTreeMap<String, String>,
            ) -> Vec<String> {
                let mut unknown = Vec::new();
                for (key, value) in properties {
                    if !self.set(key, value) {
                        self.extra.insert(key.clone(), value.clone());
                        unknown.push(key.clone());
                    }
                }
                unknown
            }

            /// Applies an UPDATE_*_CONFIG: known keys set options, unknown keys
            /// change only an extra key already there (Java keeps an unknown
            /// key only if it was in the file).
            pub fn apply_update(&mut self, properties: &std::collections::BTreeMap<String, String>) {
                for (key, value) in properties {
                    if !self.set(key, value) {
                        if let Some(existing) = self.extra.get_mut(key) {
                            value.clone_into(existing);
                        }
                    }
                }
            }

            /// The GET_*_CONFIG text: sorted `key=value\n` lines, as Java
            /// prints them (unescaped).
            pub fn to_text(&self) -> String {
                self.to_properties()
                    .iter()
                    .map(|(k, v)| format!("{k}={v}\n"))
                    .collect()
            }

            /// The persisted form: the lines of [`Self::to_text`], escaped
            /// so that reading the file back gives exactly these options, and
            /// no value can add a line of its own.
            pub fn to_file_text(&self) -> String {
                let properties = self.to_properties();
                $crate::properties::render_for_file(
                    properties.iter().map(|(k, v)| (k.as_str(), v.as_str())),
                )
            }

            /// Whether an UPDATE_*_CONFIG may set `key` to `value`, and why
            /// not (the reason names the key): no control character in
            /// either, a port in range, a value the option's type takes.
            pub fn check_update(key: &str, value: &str) -> Result<(), String> {
                $crate::options::check_update_text(key, value)?;
                let checked = match key {
                    $( $key => <$ty as $crate::options::OptionValue>::check(value), )*
                    _ => Ok(()),
                };
                checked.map_err(|why| format!("invalid value for {key}: {why}"))
            }

            /// The keys UPDATE_*_CONFIG refuses: `always`, plus the entries of
            /// `configBlackList` (`black_list_text`).
            pub fn black_list_of(always: &[&str], black_list_text: &str) -> Vec<String> {
                let mut keys: Vec<String> = always.iter().map(|k| (*k).to_owned()).collect();
                keys.extend(
                    black_list_text
                        .split(';')
                        .map(str::trim)
                        .filter(|k| !k.is_empty())
                        .map(str::to_owned),
                );
                keys
            }
        }
    };
}
