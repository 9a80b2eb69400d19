//! Line numbers for problems found after parsing.
//!
//! Accounts are checked on a parsed tree that has no positions, so when a
//! check fails (or a field earns a warning) the file is parsed a second time
//! with a seed that walks down the same path and fails on arrival: the YAML
//! and JSON parsers stamp their own errors with the position, which gives the
//! line. Only done for a problem, so the cost never matters.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::Format;

/// One step from a node to a child.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// A mapping key.
    Key(String),
    /// A list position.
    Index(usize),
}

/// Where a node sits in the document, e.g. `accounts[2].brokers[0]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Path(pub(crate) Vec<Step>);

impl Path {
    /// This path extended by a key.
    pub(crate) fn key(&self, key: &str) -> Path {
        let mut steps = self.0.clone();
        steps.push(Step::Key(key.to_owned()));
        Path(steps)
    }

    /// This path extended by a list position.
    pub(crate) fn index(&self, index: usize) -> Path {
        let mut steps = self.0.clone();
        steps.push(Step::Index(index));
        Path(steps)
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            match step {
                Step::Key(key) if i == 0 => write!(f, "{key}")?,
                Step::Key(key) => write!(f, ".{key}")?,
                Step::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// The 1-based line of the node at `path` in `text`, when the parser tells.
pub(crate) fn line_of(format: Format, text: &str, path: &Path) -> Option<usize> {
    let seek = Seek { path: &path.0 };
    match format {
        Format::PlainAclYaml => {
            let deserializer = serde_norway::Deserializer::from_str(text);
            seek.deserialize(deserializer)
                .err()
                .and_then(|e| e.location())
                .map(|l| l.line())
        }
        Format::UsersJson => {
            let mut deserializer = serde_json::Deserializer::from_str(text);
            seek.deserialize(&mut deserializer).err().map(|e| e.line())
        }
    }
}

/// Walks `path`; on arrival deserializes the node with [`Arrived`], which
/// refuses everything, so the parser reports the node's position.
struct Seek<'p> {
    path: &'p [Step],
}

impl<'de> DeserializeSeed<'de> for Seek<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        if self.path.is_empty() {
            deserializer.deserialize_any(Arrived)
        } else {
            deserializer.deserialize_any(self)
        }
    }
}

impl<'de> Visitor<'de> for Seek<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    // A scalar where the path goes on: the path is not there.
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let (step, rest) = self
            .path
            .split_first()
            .expect("Seek is used only with steps left");
        while let Some(key) = map.next_key::<serde_json::Value>()? {
            match (step, key) {
                (Step::Key(wanted), serde_json::Value::String(key)) if *wanted == key => {
                    map.next_value_seed(Seek { path: rest })?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let (step, rest) = self
            .path
            .split_first()
            .expect("Seek is used only with steps left");
        let mut index = 0;
        loop {
            let more = if *step == Step::Index(index) {
                seq.next_element_seed(Seek { path: rest })?
            } else {
                seq.next_element::<IgnoredAny>()?.map(|_| ())
            };
            if more.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }
}

/// Refuses every value: each `visit_*` keeps serde's default, an
/// "invalid type" error raised where the parser stands.
struct Arrived;

impl Visitor<'_> for Arrived {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("nothing: this pass only locates a node")
    }
}
