//! Typed custom headers of every NameServer request and response
//! and of the controller's.
//!
//! Each header is a plain struct with Rust field names; the Java field name is
//! the ext-field key on the wire. All of them are declared through one macro,
//! `ext_header!`, so there is a single codec path: every field names its
//! Java key and a *mode* that fixes both directions:
//!
//! | mode | Rust type | reading | writing |
//! |---|---|---|---|
//! | `required` | `String`, `i64`, `i32` | absent → `HeaderError::Missing`, unparsable → `HeaderError::Invalid` | always |
//! | `optional` | `Option<String/i64/i32>` | absent or unparsable → `None` (Java logs and ignores parse failures) | when `Some` |
//! | `flag` | `Option<bool>` | `true` iff the text is `true` ignoring case | when `Some` |
//! | `boolean` | `bool` | as `flag`, absent → `false` | always |
//! | `zero` | `i32`, `i64` | absent or unparsable → 0 | always |
//!
//! "Required" follows Java's `@CFNotNull`. Java itself does not enforce it
//! (`RemotingCommand.decodeCommandCustomHeader` logs the missing field and
//! runs the handler with a null, which usually fails there with a
//! NullPointerException remark); the NameServer turns `Missing` into
//! `SYSTEM_ERROR` with the error text as remark, which gives well-formed
//! requests the same answers and malformed ones a clearer one. Extra keys
//! (ACL, `lo`/`ns`/`nsd`/`bname`/`oway` of `TopicRequestHeader`) are ignored;
//! the zone keys `__ZONE_NAME`/`__ZONE_MODE` are part of the headers that use
//! them, so handlers never read raw ext fields.

pub mod broker;
pub mod cluster;
pub mod cluster_pull;
pub mod controller;
pub mod kv;
pub mod push;
pub mod route;
pub mod topic;

pub use broker::{
    BrokerHeartbeatRequestHeader, NotifyMinBrokerIdChangeRequestHeader,
    QueryDataVersionRequestHeader, QueryDataVersionResponseHeader, RegisterBrokerRequestHeader,
    RegisterBrokerResponseHeader, UnregisterBrokerRequestHeader,
};
pub use cluster::{GetBrokerMemberGroupRequestHeader, GetTopicsByClusterRequestHeader};
pub use cluster_pull::{PullRegistrationRequestHeader, PullRegistrationResponseHeader};
pub use controller::{
    AlterSyncStateSetRequestHeader, AlterSyncStateSetResponseHeader, ApplyBrokerIdRequestHeader,
    ApplyBrokerIdResponseHeader, CleanControllerBrokerDataRequestHeader, ElectMasterRequestHeader,
    ElectMasterResponseHeader, GetMetaDataResponseHeader, GetNextBrokerIdRequestHeader,
    GetNextBrokerIdResponseHeader, GetReplicaInfoRequestHeader, GetReplicaInfoResponseHeader,
    NotifyBrokerRoleChangedRequestHeader, RegisterBrokerToControllerRequestHeader,
    RegisterBrokerToControllerResponseHeader,
};
pub use kv::{
    DeleteKvConfigRequestHeader, GetKvConfigRequestHeader, GetKvConfigResponseHeader,
    GetKvListByNamespaceRequestHeader, PutKvConfigRequestHeader,
};
pub use push::{
    RouteChangedHeader, SubscribeRoutesRequestHeader, SubscribeRoutesResponseHeader,
    UnsubscribeRoutesRequestHeader,
};
pub use route::GetRouteInfoRequestHeader;
pub use topic::{
    AddWritePermOfBrokerRequestHeader, AddWritePermOfBrokerResponseHeader,
    DeleteTopicFromNamesrvRequestHeader, RegisterTopicRequestHeader,
    WipeWritePermOfBrokerRequestHeader, WipeWritePermOfBrokerResponseHeader,
};

/// The ext-field key under which brokers and clients send their zone.
pub const ZONE_NAME_KEY: &str = "__ZONE_NAME";
/// The ext-field key with which clients ask for zone-filtered routes.
pub const ZONE_MODE_KEY: &str = "__ZONE_MODE";

/// Read/write rules of the field modes (see the module table).
pub(crate) mod mode {
    use std::fmt::Display;
    use std::str::FromStr;

    use rmq_wire::{ExtReader, ExtWriter, HeaderError};

    /// Absent → `Missing`, unparsable → `Invalid`; always written.
    pub mod required {
        use super::*;
        /// Reads the field.
        pub fn read<T: FromStr>(r: &ExtReader<'_>, key: &'static str) -> Result<T, HeaderError> {
            r.number(key)
        }
        /// Writes the field.
        pub fn write<T: Display>(w: &mut ExtWriter<'_>, key: &str, v: &T) {
            w.put(key, v);
        }
    }

    /// Absent or unparsable → `None`; written when `Some`.
    pub mod optional {
        use super::*;
        /// Reads the field.
        pub fn read<T: FromStr>(
            r: &ExtReader<'_>,
            key: &'static str,
        ) -> Result<Option<T>, HeaderError> {
            Ok(r.lenient_number(key))
        }
        /// Writes the field.
        pub fn write<T: Display>(w: &mut ExtWriter<'_>, key: &str, v: &Option<T>) {
            w.put_opt(key, v.as_ref());
        }
    }

    /// Java `Boolean`: `true` ignoring case; written when `Some`.
    pub mod flag {
        use super::*;
        /// Reads the field.
        pub fn read(r: &ExtReader<'_>, key: &'static str) -> Result<Option<bool>, HeaderError> {
            Ok(r.opt_bool(key))
        }
        /// Writes the field.
        pub fn write(w: &mut ExtWriter<'_>, key: &str, v: &Option<bool>) {
            w.put_opt(key, *v);
        }
    }

    /// Java `boolean`: absent → false; always written.
    pub mod boolean {
        use super::*;
        /// Reads the field.
        pub fn read(r: &ExtReader<'_>, key: &'static str) -> Result<bool, HeaderError> {
            Ok(r.bool_or(key, false))
        }
        /// Writes the field.
        pub fn write(w: &mut ExtWriter<'_>, key: &str, v: &bool) {
            w.put(key, v);
        }
    }

    /// A number initialised to 0 in Java: absent or unparsable → 0; always written.
    pub mod zero {
        use super::*;
        /// Reads the field.
        pub fn read<T: FromStr + Default>(
            r: &ExtReader<'_>,
            key: &'static str,
        ) -> Result<T, HeaderError> {
            Ok(r.lenient_number(key).unwrap_or_default())
        }
        /// Writes the field.
        pub fn write<T: Display>(w: &mut ExtWriter<'_>, key: &str, v: &T) {
            w.put(key, v);
        }
    }
}

/// Declares a header struct and its `FromExtFields` / `ToExtFields`
/// implementations from `rust_name: Type = "javaName" (mode)` fields.
macro_rules! ext_header {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $field:ident : $ty:ty = $key:literal ($mode:ident)
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Default)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl rmq_wire::FromExtFields for $name {
            #[allow(unused_variables)]
            fn from_ext_fields(ext: &rmq_wire::ExtFields) -> Result<Self, rmq_wire::HeaderError> {
                let r = rmq_wire::ExtReader::new(ext);
                Ok($name { $( $field: $crate::headers::mode::$mode::read(&r, $key)?, )* })
            }
        }

        impl rmq_wire::ToExtFields for $name {
            #[allow(unused_variables, unused_mut)]
            fn to_ext_fields(&self, ext: &mut rmq_wire::ExtFields) {
                let mut w = rmq_wire::ExtWriter::new(ext);
                $( $crate::headers::mode::$mode::write(&mut w, $key, &self.$field); )*
            }
        }
    };
}
pub(crate) use ext_header;

#[cfg(test)]
pub(crate) mod test_support {
    use rmq_wire::{ExtFields, FromExtFields, ToExtFields};

    /// The `extFields` of a JSON command header as Java prints it.
    pub fn ext_of(header_json: &str) -> ExtFields {
        let value: serde_json::Value = serde_json::from_str(header_json).unwrap();
        value["extFields"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
            .collect()
    }

    /// Writes and reads back a header.
    pub fn round_trip<H: FromExtFields + ToExtFields + PartialEq + std::fmt::Debug>(
        header: &H,
    ) -> ExtFields {
        let mut ext = ExtFields::new();
        header.to_ext_fields(&mut ext);
        assert_eq!(&H::from_ext_fields(&ext).unwrap(), header);
        ext
    }

    /// An ext map from pairs.
    pub fn ext(pairs: &[(&str, &str)]) -> ExtFields {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }
}
