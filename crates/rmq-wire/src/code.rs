//! Request, response and language codes of the remoting protocol.
//!
//! Every code type keeps values it does not know as `Unknown(_)`: an unknown
//! request code is data to answer with REQUEST_CODE_NOT_SUPPORTED, not a reason
//! to drop a connection. Only the codes a NameServer or a controller deals
//! with are named; the rest of Java's tables travel as `Unknown`.

macro_rules! int_code {
    (
        $(#[$meta:meta])*
        $name:ident : $repr:ty { $( $(#[$vmeta:meta])* $variant:ident = $value:literal $java:literal, )* }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// A value this table does not name, kept as it came.
            Unknown($repr),
        }

        impl $name {
            /// The Java constant's name (`SYSTEM_ERROR`); `UNKNOWN` for an unnamed value.
            pub fn java_name(self) -> &'static str {
                match self {
                    $( $name::$variant => $java, )*
                    $name::Unknown(_) => "UNKNOWN",
                }
            }
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
    /// Request codes (Java `RequestCode`) that a NameServer or a controller serves or sends.
    RequestCode: i32 {
        /// PUT_KV_CONFIG
        PutKvConfig = 100 "PUT_KV_CONFIG",
        /// GET_KV_CONFIG
        GetKvConfig = 101 "GET_KV_CONFIG",
        /// DELETE_KV_CONFIG
        DeleteKvConfig = 102 "DELETE_KV_CONFIG",
        /// REGISTER_BROKER
        RegisterBroker = 103 "REGISTER_BROKER",
        /// UNREGISTER_BROKER
        UnregisterBroker = 104 "UNREGISTER_BROKER",
        /// GET_ROUTEINFO_BY_TOPIC
        GetRouteInfoByTopic = 105 "GET_ROUTEINFO_BY_TOPIC",
        /// GET_BROKER_CLUSTER_INFO
        GetBrokerClusterInfo = 106 "GET_BROKER_CLUSTER_INFO",
        /// WIPE_WRITE_PERM_OF_BROKER
        WipeWritePermOfBroker = 205 "WIPE_WRITE_PERM_OF_BROKER",
        /// GET_ALL_TOPIC_LIST_FROM_NAMESERVER
        GetAllTopicListFromNameserver = 206 "GET_ALL_TOPIC_LIST_FROM_NAMESERVER",
        /// DELETE_TOPIC_IN_NAMESRV
        DeleteTopicInNamesrv = 216 "DELETE_TOPIC_IN_NAMESRV",
        /// REGISTER_TOPIC_IN_NAMESRV
        RegisterTopicInNamesrv = 217 "REGISTER_TOPIC_IN_NAMESRV",
        /// GET_KVLIST_BY_NAMESPACE
        GetKvlistByNamespace = 219 "GET_KVLIST_BY_NAMESPACE",
        /// GET_TOPICS_BY_CLUSTER
        GetTopicsByCluster = 224 "GET_TOPICS_BY_CLUSTER",
        /// GET_SYSTEM_TOPIC_LIST_FROM_NS
        GetSystemTopicListFromNs = 304 "GET_SYSTEM_TOPIC_LIST_FROM_NS",
        /// GET_UNIT_TOPIC_LIST
        GetUnitTopicList = 311 "GET_UNIT_TOPIC_LIST",
        /// GET_HAS_UNIT_SUB_TOPIC_LIST
        GetHasUnitSubTopicList = 312 "GET_HAS_UNIT_SUB_TOPIC_LIST",
        /// GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST
        GetHasUnitSubUnunitTopicList = 313 "GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST",
        /// UPDATE_NAMESRV_CONFIG
        UpdateNamesrvConfig = 318 "UPDATE_NAMESRV_CONFIG",
        /// GET_NAMESRV_CONFIG
        GetNamesrvConfig = 319 "GET_NAMESRV_CONFIG",
        /// QUERY_DATA_VERSION
        QueryDataVersion = 322 "QUERY_DATA_VERSION",
        /// ADD_WRITE_PERM_OF_BROKER
        AddWritePermOfBroker = 327 "ADD_WRITE_PERM_OF_BROKER",
        /// GET_BROKER_MEMBER_GROUP
        GetBrokerMemberGroup = 901 "GET_BROKER_MEMBER_GROUP",
        /// BROKER_HEARTBEAT
        BrokerHeartbeat = 904 "BROKER_HEARTBEAT",
        /// NOTIFY_MIN_BROKER_ID_CHANGE, sent by the NameServer to brokers.
        NotifyMinBrokerIdChange = 905 "NOTIFY_MIN_BROKER_ID_CHANGE",
        /// CONTROLLER_ALTER_SYNC_STATE_SET
        ControllerAlterSyncStateSet = 1001 "CONTROLLER_ALTER_SYNC_STATE_SET",
        /// CONTROLLER_ELECT_MASTER
        ControllerElectMaster = 1002 "CONTROLLER_ELECT_MASTER",
        /// CONTROLLER_REGISTER_BROKER
        ControllerRegisterBroker = 1003 "CONTROLLER_REGISTER_BROKER",
        /// CONTROLLER_GET_REPLICA_INFO
        ControllerGetReplicaInfo = 1004 "CONTROLLER_GET_REPLICA_INFO",
        /// CONTROLLER_GET_METADATA_INFO
        ControllerGetMetadataInfo = 1005 "CONTROLLER_GET_METADATA_INFO",
        /// CONTROLLER_GET_SYNC_STATE_DATA
        ControllerGetSyncStateData = 1006 "CONTROLLER_GET_SYNC_STATE_DATA",
        /// GET_BROKER_EPOCH_CACHE, served by brokers in controller mode.
        GetBrokerEpochCache = 1007 "GET_BROKER_EPOCH_CACHE",
        /// NOTIFY_BROKER_ROLE_CHANGED, sent by the controller to brokers.
        NotifyBrokerRoleChanged = 1008 "NOTIFY_BROKER_ROLE_CHANGED",
        /// UPDATE_CONTROLLER_CONFIG
        UpdateControllerConfig = 1009 "UPDATE_CONTROLLER_CONFIG",
        /// GET_CONTROLLER_CONFIG
        GetControllerConfig = 1010 "GET_CONTROLLER_CONFIG",
        /// CLEAN_BROKER_DATA
        CleanBrokerData = 1011 "CLEAN_BROKER_DATA",
        /// CONTROLLER_GET_NEXT_BROKER_ID
        ControllerGetNextBrokerId = 1012 "CONTROLLER_GET_NEXT_BROKER_ID",
        /// CONTROLLER_APPLY_BROKER_ID
        ControllerApplyBrokerId = 1013 "CONTROLLER_APPLY_BROKER_ID",
        /// Waymark's route push (docs/protocol-extensions.md): a client
        /// subscribes to topics' routes on its connection. Java's codes all
        /// lie below 10,000; a Java NameServer answers REQUEST_CODE_NOT_SUPPORTED.
        WaymarkSubscribeRoutes = 61001 "WAYMARK_SUBSCRIBE_ROUTES",
        /// Waymark's route push: topics leave the connection's subscription.
        WaymarkUnsubscribeRoutes = 61002 "WAYMARK_UNSUBSCRIBE_ROUTES",
        /// Waymark's route push: a one-way request from the NameServer to a
        /// subscriber carrying one changed route.
        WaymarkRouteChanged = 61003 "WAYMARK_ROUTE_CHANGED",
        /// Waymark's NameServer cluster (docs/protocol-extensions.md): one
        /// NameServer asks another for a broker registered with it directly.
        WaymarkPullRegistration = 61010 "WAYMARK_PULL_REGISTRATION",
        /// Waymark's NameServer cluster: a NameServer's view of its cluster
        /// (members, and the source of every broker it holds), for tools.
        WaymarkGetClusterStatus = 61011 "WAYMARK_GET_CLUSTER_STATUS",
    }
}

int_code! {
    /// Response codes (Java `RemotingSysResponseCode` and `ResponseCode`) a NameServer or a
    /// controller uses.
    ResponseCode: i32 {
        /// SUCCESS
        Success = 0 "SUCCESS",
        /// SYSTEM_ERROR
        SystemError = 1 "SYSTEM_ERROR",
        /// SYSTEM_BUSY
        SystemBusy = 2 "SYSTEM_BUSY",
        /// REQUEST_CODE_NOT_SUPPORTED
        RequestCodeNotSupported = 3 "REQUEST_CODE_NOT_SUPPORTED",
        /// TRANSACTION_FAILED
        TransactionFailed = 4 "TRANSACTION_FAILED",
        /// NO_PERMISSION
        NoPermission = 16 "NO_PERMISSION",
        /// TOPIC_NOT_EXIST
        TopicNotExist = 17 "TOPIC_NOT_EXIST",
        /// QUERY_NOT_FOUND
        QueryNotFound = 22 "QUERY_NOT_FOUND",
        /// INVALID_PARAMETER
        InvalidParameter = 29 "INVALID_PARAMETER",
        /// GO_AWAY
        GoAway = 1500 "GO_AWAY",
        /// CONTROLLER_FENCED_MASTER_EPOCH
        ControllerFencedMasterEpoch = 2000 "CONTROLLER_FENCED_MASTER_EPOCH",
        /// CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH
        ControllerFencedSyncStateSetEpoch = 2001 "CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH",
        /// CONTROLLER_INVALID_MASTER
        ControllerInvalidMaster = 2002 "CONTROLLER_INVALID_MASTER",
        /// CONTROLLER_INVALID_REPLICAS
        ControllerInvalidReplicas = 2003 "CONTROLLER_INVALID_REPLICAS",
        /// CONTROLLER_MASTER_NOT_AVAILABLE
        ControllerMasterNotAvailable = 2004 "CONTROLLER_MASTER_NOT_AVAILABLE",
        /// CONTROLLER_INVALID_REQUEST
        ControllerInvalidRequest = 2005 "CONTROLLER_INVALID_REQUEST",
        /// CONTROLLER_BROKER_NOT_ALIVE
        ControllerBrokerNotAlive = 2006 "CONTROLLER_BROKER_NOT_ALIVE",
        /// CONTROLLER_NOT_LEADER
        ControllerNotLeader = 2007 "CONTROLLER_NOT_LEADER",
        /// CONTROLLER_BROKER_METADATA_NOT_EXIST
        ControllerBrokerMetadataNotExist = 2008 "CONTROLLER_BROKER_METADATA_NOT_EXIST",
        /// CONTROLLER_INVALID_CLEAN_BROKER_METADATA
        ControllerInvalidCleanBrokerMetadata = 2009 "CONTROLLER_INVALID_CLEAN_BROKER_METADATA",
        /// CONTROLLER_BROKER_NEED_TO_BE_REGISTERED
        ControllerBrokerNeedToBeRegistered = 2010 "CONTROLLER_BROKER_NEED_TO_BE_REGISTERED",
        /// CONTROLLER_MASTER_STILL_EXIST
        ControllerMasterStillExist = 2011 "CONTROLLER_MASTER_STILL_EXIST",
        /// CONTROLLER_ELECT_MASTER_FAILED
        ControllerElectMasterFailed = 2012 "CONTROLLER_ELECT_MASTER_FAILED",
        /// CONTROLLER_ALTER_SYNC_STATE_SET_FAILED
        ControllerAlterSyncStateSetFailed = 2013 "CONTROLLER_ALTER_SYNC_STATE_SET_FAILED",
        /// CONTROLLER_BROKER_ID_INVALID
        ControllerBrokerIdInvalid = 2014 "CONTROLLER_BROKER_ID_INVALID",
        /// CONTROLLER_JRAFT_INTERNAL_ERROR
        ControllerJraftInternalError = 2015 "CONTROLLER_JRAFT_INTERNAL_ERROR",
        /// CONTROLLER_BROKER_LIVE_INFO_NOT_EXISTS
        ControllerBrokerLiveInfoNotExists = 2016 "CONTROLLER_BROKER_LIVE_INFO_NOT_EXISTS",
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
