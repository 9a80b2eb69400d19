//! Header of GET_ROUTEINFO_BY_TOPIC (105).

use super::ext_header;

ext_header! {
    /// GET_ROUTEINFO_BY_TOPIC request (`GetRouteInfoRequestHeader`), plus the
    /// zone keys the zone-routing hook reads.
    pub struct GetRouteInfoRequestHeader {
        /// The topic.
        topic: String = "topic" (required),
        /// `Some(true)` asks for the standard JSON dialect regardless of version.
        accept_standard_json_only: Option<bool> = "acceptStandardJsonOnly" (flag),
        /// Zone filtering requested (extra key `__ZONE_MODE`).
        zone_mode: Option<bool> = "__ZONE_MODE" (flag),
        /// The client's zone (extra key `__ZONE_NAME`).
        zone_name: Option<String> = "__ZONE_NAME" (optional),
    }
}

#[cfg(test)]
mod tests {
    use rmq_wire::{ExtFields, FromExtFields, HeaderError};

    use super::*;
    use crate::headers::test_support::{ext, ext_of, round_trip};

    #[test]
    fn route_request_with_ignored_extras() {
        let map = ext_of(
            r#"{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":479}"#,
        );
        let header = GetRouteInfoRequestHeader::from_ext_fields(&map).unwrap();
        assert_eq!(
            header,
            GetRouteInfoRequestHeader {
                topic: "TopicTest".into(),
                ..Default::default()
            }
        );
        assert_eq!(round_trip(&header), map);

        let extras = ext(&[
            ("topic", "T"),
            ("acceptStandardJsonOnly", "True"),
            ("lo", "true"),
            ("ns", "x"),
            ("AccessKey", "k"),
            ("__ZONE_MODE", "true"),
            ("__ZONE_NAME", "zone-1"),
        ]);
        let header = GetRouteInfoRequestHeader::from_ext_fields(&extras).unwrap();
        assert_eq!(header.accept_standard_json_only, Some(true));
        assert_eq!(
            (header.zone_mode, header.zone_name.as_deref()),
            (Some(true), Some("zone-1"))
        );
        round_trip(&header);
        assert_eq!(
            GetRouteInfoRequestHeader::from_ext_fields(&ExtFields::new()),
            Err(HeaderError::Missing("topic"))
        );
    }
}
