//! The ext-field map and the conversions between it and typed custom headers.
//!
//! On the wire a Java "custom header" is nothing but string entries of
//! `extFields`, keyed by the Java field name. Typed headers implement
//! [`FromExtFields`] and [`ToExtFields`]; [`ExtReader`] gives them Java's parsing
//! rules (booleans are `true` iff the text equals `true` ignoring case, numbers
//! as `Integer.parseInt`/`Long.parseLong`) while naming the field in every error.

use std::collections::BTreeMap;
use std::fmt::Display;
use std::str::FromStr;

/// Ext fields. Sorted so that encoding gives the same bytes every time; Java's
/// order is `HashMap` order, which no receiver depends on.
pub type ExtFields = BTreeMap<String, String>;

/// A custom header that could not be read from ext fields.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// A field the request cannot be served without is absent.
    #[error("the custom field {0} is null")]
    Missing(&'static str),
    /// A field is present but does not parse as its type.
    #[error("the custom field {field} has an invalid value {value:?}: expected {expected}")]
    Invalid {
        /// The Java field name.
        field: &'static str,
        /// The text that came.
        value: String,
        /// What was expected, e.g. `a 64-bit integer`.
        expected: &'static str,
    },
}

/// A typed header read from ext fields.
pub trait FromExtFields: Sized {
    /// Reads the header. Missing optional fields take their defaults.
    fn from_ext_fields(ext: &ExtFields) -> Result<Self, HeaderError>;
}

/// A typed header written into ext fields. Absent (`None`) fields are not written.
pub trait ToExtFields {
    /// Inserts the header's fields, overwriting entries of the same name.
    fn to_ext_fields(&self, ext: &mut ExtFields);
}

/// Reads typed values out of ext fields with Java's rules.
#[derive(Debug, Clone, Copy)]
pub struct ExtReader<'a> {
    ext: &'a ExtFields,
}

impl<'a> ExtReader<'a> {
    /// Wraps a map.
    pub fn new(ext: &'a ExtFields) -> Self {
        ExtReader { ext }
    }

    /// The raw text, if present.
    pub fn text(&self, field: &'static str) -> Option<&'a str> {
        self.ext.get(field).map(String::as_str)
    }

    /// A required string.
    pub fn string(&self, field: &'static str) -> Result<String, HeaderError> {
        self.text(field)
            .map(str::to_owned)
            .ok_or(HeaderError::Missing(field))
    }

    /// An optional string.
    pub fn opt_string(&self, field: &'static str) -> Option<String> {
        self.text(field).map(str::to_owned)
    }

    /// A required number (any `FromStr` integer or float type).
    pub fn number<T: FromStr>(&self, field: &'static str) -> Result<T, HeaderError> {
        self.opt_number(field)?.ok_or(HeaderError::Missing(field))
    }

    /// An optional number: absent is `None`, present but malformed is an error
    /// naming the field.
    pub fn opt_number<T: FromStr>(&self, field: &'static str) -> Result<Option<T>, HeaderError> {
        match self.text(field) {
            None => Ok(None),
            Some(text) => text.parse().map(Some).map_err(|_| HeaderError::Invalid {
                field,
                value: text.to_owned(),
                expected: std::any::type_name::<T>(),
            }),
        }
    }

    /// An optional number where Java ignores a malformed value: absent or
    /// malformed is `None`.
    pub fn lenient_number<T: FromStr>(&self, field: &'static str) -> Option<T> {
        self.text(field).and_then(|text| text.parse().ok())
    }

    /// An optional boolean, Java `Boolean.parseBoolean`: `true` ignoring case is
    /// true, any other text is false.
    pub fn opt_bool(&self, field: &'static str) -> Option<bool> {
        self.text(field)
            .map(|text| text.eq_ignore_ascii_case("true"))
    }

    /// A boolean with a default for when it is absent.
    pub fn bool_or(&self, field: &'static str, default: bool) -> bool {
        self.opt_bool(field).unwrap_or(default)
    }
}

/// Writes typed values into ext fields with Java's `toString` formatting.
#[derive(Debug)]
pub struct ExtWriter<'a> {
    ext: &'a mut ExtFields,
}

impl<'a> ExtWriter<'a> {
    /// Wraps a map.
    pub fn new(ext: &'a mut ExtFields) -> Self {
        ExtWriter { ext }
    }

    /// Writes a value that is always present (a Java primitive field).
    pub fn put(&mut self, field: &str, value: impl Display) -> &mut Self {
        self.ext.insert(field.to_owned(), value.to_string());
        self
    }

    /// Writes a value only when it is `Some` (a Java boxed field that may be null).
    pub fn put_opt<T: Display>(&mut self, field: &str, value: Option<T>) -> &mut Self {
        if let Some(value) = value {
            self.put(field, value);
        }
        self
    }
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

    #[test]
    fn reader_follows_java_parsing() {
        let map = ext(&[("id", "+5"), ("bad", " 5"), ("flag", "TRUE"), ("no", "1")]);
        let r = ExtReader::new(&map);
        assert_eq!(r.number::<i64>("id"), Ok(5));
        assert!(matches!(
            r.opt_number::<i64>("bad"),
            Err(HeaderError::Invalid { field: "bad", .. })
        ));
        assert_eq!(r.lenient_number::<i64>("bad"), None);
        assert_eq!(r.opt_bool("flag"), Some(true));
        assert_eq!(r.opt_bool("no"), Some(false));
        assert!(!r.bool_or("absent", false));
        assert_eq!(r.string("absent"), Err(HeaderError::Missing("absent")));
        assert_eq!(
            HeaderError::Missing("topic").to_string(),
            "the custom field topic is null"
        );
    }

    #[test]
    fn writer_skips_absent_values() {
        let mut map = ExtFields::new();
        ExtWriter::new(&mut map)
            .put("brokerId", 0)
            .put("compressed", false)
            .put_opt::<i64>("heartbeatTimeoutMillis", None);
        assert_eq!(map, ext(&[("brokerId", "0"), ("compressed", "false")]));
    }
}
