//! What a handler answers when the request succeeded: the remark, header
//! and body of a SUCCESS response, without the request it answers. The
//! dispatcher makes it a response to its request ([`Answer::into_response`]);
//! a failure is an [`Error`](crate::error::Error) instead.

use bytes::Bytes;
use rmq_wire::{ExtFields, RemotingCommand, ResponseCode, ToExtFields};

/// A SUCCESS answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer {
    remark: Option<String>,
    /// `None` when Java's response has no header class (no `extFields` in
    /// the JSON header), `Some(empty)` for `"extFields":{}`.
    ext: Option<ExtFields>,
    body: Option<Bytes>,
}

impl Answer {
    /// SUCCESS without remark, header class or body.
    pub fn success() -> Answer {
        Answer::default()
    }

    /// This answer with `header`'s fields as its ext fields.
    pub fn with_header(mut self, header: &impl ToExtFields) -> Answer {
        header.to_ext_fields(self.ext.get_or_insert_with(ExtFields::new));
        self
    }

    /// This answer with `body`.
    pub fn with_body(mut self, body: impl Into<Bytes>) -> Answer {
        self.body = Some(body.into());
        self
    }

    /// This answer with `remark`.
    pub fn with_remark(mut self, remark: impl Into<String>) -> Answer {
        self.remark = Some(remark.into());
        self
    }

    /// The response to `request`.
    pub fn into_response(self, request: &RemotingCommand) -> RemotingCommand {
        let mut response = RemotingCommand::response_to(request, ResponseCode::Success);
        response.remark = self.remark;
        response.ext_fields = self.ext;
        response.body = self.body;
        response
    }
}
