//! Request, response and language codes of the remoting protocol.
//!
//! Every code type keeps values it does not know as `Unknown(_)`: an unknown
//! request code is data to answer with REQUEST_CODE_NOT_SUPPORTED, not a reason
//! to drop a connection. Only the codes a NameServer deals with are named;
//! the rest of Java's tables travel as `Unknown`.

macro_rules! int_code {
    (
        $(#[$meta:meta])*
        $name:ident : $repr:ty { $( $(#[$vmeta:meta])* $variant:ident = $value:expr, )* }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// A value this table does not name, kept as it came.
            Unknown($repr),
        }

        impl From<$repr> for $name {
            fn from(value: $repr) -> Self {
                match value {
                    $( $value => $name::$variant, )*
                    other => $name::Unknown(other),
                }
            }
        }

        impl From<$name> for $repr {
            fn from(code: $name) -> $repr {
                match code {
                    $( $name::$variant => $value, )*
                    $name::Unknown(other) => other,
                }
            }
        }
    };
}

int_code! {
    /// Request codes (Java `RequestCode`) that a NameServer serves or sends.
    RequestCode: i32 {
        /// PUT_KV_CONFIG
        PutKvConfig = 100,
        /// GET_KV_CONFIG
        GetKvConfig = 101,
        /// DELETE_KV_CONFIG
        DeleteKvConfig = 102,
        /// REGISTER_BROKER
        RegisterBroker = 103,
        /// UNREGISTER_BROKER
        UnregisterBroker = 104,
        /// GET_ROUTEINFO_BY_TOPIC
        GetRouteInfoByTopic = 105,
        /// GET_BROKER_CLUSTER_INFO
        GetBrokerClusterInfo = 106,
        /// WIPE_WRITE_PERM_OF_BROKER
        WipeWritePermOfBroker = 205,
        /// GET_ALL_TOPIC_LIST_FROM_NAMESERVER
        GetAllTopicListFromNameserver = 206,
        /// DELETE_TOPIC_IN_NAMESRV
        DeleteTopicInNamesrv = 216,
        /// REGISTER_TOPIC_IN_NAMESRV
        RegisterTopicInNamesrv = 217,
        /// GET_KVLIST_BY_NAMESPACE
        GetKvlistByNamespace = 219,
        /// GET_TOPICS_BY_CLUSTER
        GetTopicsByCluster = 224,
        /// GET_SYSTEM_TOPIC_LIST_FROM_NS
        GetSystemTopicListFromNs = 304,
        /// GET_UNIT_TOPIC_LIST
        GetUnitTopicList = 311,
        /// GET_HAS_UNIT_SUB_TOPIC_LIST
        GetHasUnitSubTopicList = 312,
        /// GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST
        GetHasUnitSubUnunitTopicList = 313,
        /// UPDATE_NAMESRV_CONFIG
        UpdateNamesrvConfig = 318,
        /// GET_NAMESRV_CONFIG
        GetNamesrvConfig = 319,
        /// QUERY_DATA_VERSION
        QueryDataVersion = 322,
        /// ADD_WRITE_PERM_OF_BROKER
        AddWritePermOfBroker = 327,
        /// GET_BROKER_MEMBER_GROUP
        GetBrokerMemberGroup = 901,
        /// BROKER_HEARTBEAT
        BrokerHeartbeat = 904,
        /// NOTIFY_MIN_BROKER_ID_CHANGE, sent by the NameServer to brokers.
        NotifyMinBrokerIdChange = 905,
    }
}

int_code! {
    /// Response codes (Java `RemotingSysResponseCode` and `ResponseCode`) a NameServer uses.
    ResponseCode: i32 {
        /// SUCCESS
        Success = 0,
        /// SYSTEM_ERROR
        SystemError = 1,
        /// SYSTEM_BUSY
        SystemBusy = 2,
        /// REQUEST_CODE_NOT_SUPPORTED
        RequestCodeNotSupported = 3,
        /// TRANSACTION_FAILED
        TransactionFailed = 4,
        /// NO_PERMISSION
        NoPermission = 16,
        /// TOPIC_NOT_EXIST
        TopicNotExist = 17,
        /// QUERY_NOT_FOUND
        QueryNotFound = 22,
        /// GO_AWAY
        GoAway = 1500,
    }
}

/// The sender's language (Java `LanguageCode`). The byte is the binary-header
/// code and equals the enum ordinal that JSON may carry instead of the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LanguageCode {
    /// JAVA, what every Java peer sends and what Waymark sends.
    #[default]
    Java,
    /// CPP
    Cpp,
    /// DOTNET
    Dotnet,
    /// PYTHON
    Python,
    /// DELPHI
    Delphi,
    /// ERLANG
    Erlang,
    /// RUBY
    Ruby,
    /// OTHER
    Other,
    /// HTTP
    Http,
    /// GO
    Go,
    /// PHP
    Php,
    /// OMS
    Oms,
    /// RUST
    Rust,
    /// NODE_JS
    NodeJs,
    /// A code byte this table does not name.
    Unknown(u8),
}

const LANGUAGE_NAMES: [(&str, LanguageCode); 14] = [
    ("JAVA", LanguageCode::Java),
    ("CPP", LanguageCode::Cpp),
    ("DOTNET", LanguageCode::Dotnet),
    ("PYTHON", LanguageCode::Python),
    ("DELPHI", LanguageCode::Delphi),
    ("ERLANG", LanguageCode::Erlang),
    ("RUBY", LanguageCode::Ruby),
    ("OTHER", LanguageCode::Other),
    ("HTTP", LanguageCode::Http),
    ("GO", LanguageCode::Go),
    ("PHP", LanguageCode::Php),
    ("OMS", LanguageCode::Oms),
    ("RUST", LanguageCode::Rust),
    ("NODE_JS", LanguageCode::NodeJs),
];

impl LanguageCode {
    /// The code byte of the binary header (and the JSON ordinal).
    pub fn code(self) -> u8 {
        match self {
            LanguageCode::Unknown(byte) => byte,
            known => LANGUAGE_NAMES
                .iter()
                .position(|(_, lang)| *lang == known)
                .map_or(7, |index| index as u8),
        }
    }

    /// Looks a code byte up; bytes outside the table stay `Unknown`.
    pub fn from_code(code: u8) -> LanguageCode {
        LANGUAGE_NAMES
            .get(usize::from(code))
            .map_or(LanguageCode::Unknown(code), |(_, lang)| *lang)
    }

    /// The Java enum name written in JSON headers. `Unknown` codes are named
    /// `OTHER`, the closest thing Java clients understand.
    pub fn name(self) -> &'static str {
        match self {
            LanguageCode::Unknown(_) => "OTHER",
            known => LANGUAGE_NAMES[usize::from(known.code())].0,
        }
    }

    /// Parses a name as fastjson does: ignoring ASCII case. `None` if unknown.
    pub fn from_name(name: &str) -> Option<LanguageCode> {
        LANGUAGE_NAMES
            .iter()
            .find(|(known, _)| known.eq_ignore_ascii_case(name))
            .map(|(_, lang)| *lang)
    }
}

/// How a header is serialized: the high byte of a frame's second word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SerializeType {
    /// JSON header (type byte 0), Java's default.
    #[default]
    Json,
    /// The compact ROCKETMQ binary header (type byte 1).
    RocketMq,
}

impl SerializeType {
    /// The type byte on the wire.
    pub fn code(self) -> u8 {
        match self {
            SerializeType::Json => 0,
            SerializeType::RocketMq => 1,
        }
    }

    /// The type for a wire byte; `None` for anything but 0 and 1.
    pub fn from_code(code: u8) -> Option<SerializeType> {
        match code {
            0 => Some(SerializeType::Json),
            1 => Some(SerializeType::RocketMq),
            _ => None,
        }
    }

    /// The name Java uses (`JSON`, `ROCKETMQ`), as in `ROCKETMQ_SERIALIZE_TYPE`.
    pub fn name(self) -> &'static str {
        match self {
            SerializeType::Json => "JSON",
            SerializeType::RocketMq => "ROCKETMQ",
        }
    }

    /// Parses `JSON` or `ROCKETMQ` (exact, as Java's `valueOf`).
    pub fn from_name(name: &str) -> Option<SerializeType> {
        match name {
            "JSON" => Some(SerializeType::Json),
            "ROCKETMQ" => Some(SerializeType::RocketMq),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_codes_round_trip_and_keep_unknowns() {
        assert_eq!(RequestCode::from(105), RequestCode::GetRouteInfoByTopic);
        assert_eq!(i32::from(RequestCode::BrokerHeartbeat), 904);
        assert_eq!(RequestCode::from(99_999), RequestCode::Unknown(99_999));
        assert_eq!(i32::from(RequestCode::Unknown(-3)), -3);
    }

    #[test]
    fn language_codes_match_java_ordinals() {
        assert_eq!(LanguageCode::Java.code(), 0);
        assert_eq!(LanguageCode::Go.code(), 9);
        assert_eq!(LanguageCode::NodeJs.code(), 13);
        assert_eq!(LanguageCode::from_code(12), LanguageCode::Rust);
        assert_eq!(LanguageCode::from_code(200), LanguageCode::Unknown(200));
        assert_eq!(LanguageCode::Unknown(200).code(), 200);
        assert_eq!(LanguageCode::from_name("java"), Some(LanguageCode::Java));
        assert_eq!(
            LanguageCode::from_name("NODE_JS"),
            Some(LanguageCode::NodeJs)
        );
        assert_eq!(LanguageCode::from_name("COBOL"), None);
        assert_eq!(LanguageCode::Unknown(99).name(), "OTHER");
    }

    #[test]
    fn serialize_type_accepts_only_zero_and_one() {
        assert_eq!(SerializeType::from_code(0), Some(SerializeType::Json));
        assert_eq!(SerializeType::from_code(1), Some(SerializeType::RocketMq));
        assert_eq!(SerializeType::from_code(2), None);
    }
}
