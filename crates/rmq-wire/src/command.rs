//! The `RemotingCommand` value: one request or response as it travels.
//!
//! This is plain data. Encoding and decoding live in `frame` and `header`;
//! typed custom headers convert to and from `ext_fields` through the traits in
//! `ext_fields`.

use bytes::Bytes;

use crate::code::{LanguageCode, RequestCode, ResponseCode, SerializeType};
use crate::ext_fields::{ExtFields, FromExtFields, HeaderError, ToExtFields};

/// Flag bit 0: the command is a response.
pub const FLAG_RESPONSE: i32 = 0b01;
/// Flag bit 1: the request is one-way; nothing must answer it.
pub const FLAG_ONEWAY: i32 = 0b10;

/// The `version` Waymark puts on what it sends: Java 5.3.3 (`MQVersion` ordinal 479),
/// the release whose NameServer behaviour Waymark reproduces.
pub const CURRENT_VERSION: i32 = 479;

/// One remoting command, request or response.
///
/// `ext_fields` is `None` when the command has no custom header at all; Java
/// then omits the `extFields` key from the JSON header. `Some` of an empty map
/// is written as `"extFields":{}` in JSON (and as an empty map section in the
/// binary header, which decodes back as `None`, as in Java).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemotingCommand {
    /// Request code for requests, response code for responses.
    pub code: i32,
    /// The sender's language.
    pub language: LanguageCode,
    /// The sender's `MQVersion` ordinal.
    pub version: i32,
    /// Request id; a response carries the id of the request it answers.
    pub opaque: i32,
    /// Bit field: [`FLAG_RESPONSE`], [`FLAG_ONEWAY`].
    pub flag: i32,
    /// Free text, usually the error message of a response.
    pub remark: Option<String>,
    /// The custom header and any extra keys.
    pub ext_fields: Option<ExtFields>,
    /// Header format: set from the frame on decode, chosen by the sender on encode.
    pub serialize_type: SerializeType,
    /// The body; `None` when absent (the wire cannot tell empty from absent).
    pub body: Option<Bytes>,
}

impl RemotingCommand {
    /// A two-way request with Waymark's language and version.
    pub fn request(code: impl Into<i32>, opaque: i32) -> RemotingCommand {
        RemotingCommand {
            code: code.into(),
            language: LanguageCode::Java,
            version: CURRENT_VERSION,
            opaque,
            flag: 0,
            remark: None,
            ext_fields: None,
            serialize_type: SerializeType::Json,
            body: None,
        }
    }

    /// A response to `request`: same opaque, response flag set, Waymark's own
    /// language and version (as Java's server does), JSON header.
    pub fn response_to(request: &RemotingCommand, code: impl Into<i32>) -> RemotingCommand {
        RemotingCommand {
            code: code.into(),
            flag: FLAG_RESPONSE,
            ..RemotingCommand::request(0, request.opaque)
        }
    }

    /// Sets the header format.
    pub fn with_serialize_type(mut self, serialize_type: SerializeType) -> Self {
        self.serialize_type = serialize_type;
        self
    }

    /// Sets the remark.
    pub fn with_remark(mut self, remark: impl Into<String>) -> Self {
        self.remark = Some(remark.into());
        self
    }

    /// Sets the body.
    pub fn with_body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Writes a typed custom header into `ext_fields`, creating the map, so
    /// the JSON header carries `extFields` even when every field is absent.
    pub fn with_header(mut self, header: &impl ToExtFields) -> Self {
        header.to_ext_fields(self.ext_fields.get_or_insert_with(ExtFields::new));
        self
    }

    /// Adds one extra ext field, as Java's `addExtField`.
    pub fn with_ext(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.ext_fields
            .get_or_insert_with(ExtFields::new)
            .insert(key.into(), value.into());
        self
    }

    /// Marks the request one-way.
    pub fn oneway(mut self) -> Self {
        self.flag |= FLAG_ONEWAY;
        self
    }

    /// Reads the typed custom header. A command without ext fields reads as an
    /// empty map, so headers whose fields are all optional still decode.
    pub fn header<H: FromExtFields>(&self) -> Result<H, HeaderError> {
        match &self.ext_fields {
            Some(ext) => H::from_ext_fields(ext),
            None => H::from_ext_fields(&ExtFields::new()),
        }
    }

    /// One ext field, if present.
    pub fn ext(&self, key: &str) -> Option<&str> {
        self.ext_fields.as_ref()?.get(key).map(String::as_str)
    }

    /// True for responses (flag bit 0).
    pub fn is_response(&self) -> bool {
        self.flag & FLAG_RESPONSE != 0
    }

    /// True for one-way requests (flag bit 1).
    pub fn is_oneway(&self) -> bool {
        self.flag & FLAG_ONEWAY != 0
    }

    /// The code read as a request code.
    pub fn request_code(&self) -> RequestCode {
        RequestCode::from(self.code)
    }

    /// The code read as a response code.
    pub fn response_code(&self) -> ResponseCode {
        ResponseCode::from(self.code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_copies_the_opaque_and_sets_the_response_bit() {
        let request = RemotingCommand::request(RequestCode::GetRouteInfoByTopic, 41).oneway();
        let response = RemotingCommand::response_to(&request, ResponseCode::TopicNotExist);
        assert_eq!(response.opaque, 41);
        assert!(response.is_response());
        assert!(!response.is_oneway());
        assert_eq!(response.response_code(), ResponseCode::TopicNotExist);
        assert_eq!(response.version, CURRENT_VERSION);
        assert!(request.is_oneway() && !request.is_response());
    }
}
