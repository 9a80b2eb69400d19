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
}

impl OptionValue for bool {
    fn parse_into(&mut self, text: &str) {
        *self = text.trim().eq_ignore_ascii_case("true");
    }
    fn render(&self) -> Option<String> {
        Some(self.to_string())
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
}

impl OptionValue for Option<String> {
    fn parse_into(&mut self, text: &str) {
        *self = Some(text.trim().to_owned());
    }
    fn render(&self) -> Option<String> {
        self.clone()
    }
}

/// Declares an option struct: `rust_name: Type = "javaKey", |home, rocketmq_home| default;`
/// per option, in any order. The struct gets `defaults(home, rocketmq_home)`
/// (`home` is Java's `user.home`, `rocketmq_home` the `ROCKETMQ_HOME`
/// value) and `from_env()`, `set(key, text) -> bool` (false for an unknown
/// key), `apply_file`, `apply_update`, `to_properties()` and `to_text()`
/// (every option plus the extra keys, sorted), `black_list_of` and `KEYS`.
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

            /// The GET_*_CONFIG text and the persisted form: sorted
            /// `key=value\n` lines.
            pub fn to_text(&self) -> String {
                self.to_properties()
                    .iter()
                    .map(|(k, v)| format!("{k}={v}\n"))
                    .collect()
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
