//! What a decision answers: a response code, a remark, the response header
//! (or none) and a body, before it becomes a `RemotingCommand` for one
//! request.

use rmq_protocol::{Dialect, JavaJson};
use rmq_wire::{ExtFields, RemotingCommand, ResponseCode, ToExtFields};

use crate::Event;

/// The response to one controller request, without the request's opaque.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// Response code.
    pub code: ResponseCode,
    /// Remark, as Java words it.
    pub remark: Option<String>,
    /// The response header's ext fields; `None` when Java's response has no
    /// header class (no `extFields` at all), `Some(empty)` for `{}`.
    pub ext: Option<ExtFields>,
    /// The response body.
    pub body: Option<Vec<u8>>,
}

impl Answer {
    /// SUCCESS, without header or body.
    pub fn ok() -> Answer {
        Answer {
            code: ResponseCode::Success,
            remark: None,
            ext: None,
            body: None,
        }
    }

    /// An error with a remark, without header or body.
    pub fn error(code: ResponseCode, remark: impl Into<String>) -> Answer {
        Answer {
            code,
            remark: Some(remark.into()),
            ext: None,
            body: None,
        }
    }

    /// This answer with `header`'s fields as its ext fields.
    pub fn with_header(mut self, header: &impl ToExtFields) -> Answer {
        let mut ext = ExtFields::new();
        header.to_ext_fields(&mut ext);
        self.ext = Some(ext);
        self
    }

    /// This answer with `body` in fastjson's default dialect.
    pub fn with_body(mut self, body: &impl JavaJson) -> Answer {
        self.body = Some(body.to_json(Dialect::Default));
        self
    }

    /// Whether the code is SUCCESS.
    pub fn is_success(&self) -> bool {
        self.code == ResponseCode::Success
    }

    /// The response to `request`. Its `version` is 0, as every response of
    /// Java's controller (it never sets `rocketmq.remoting.version`).
    pub fn into_response(self, request: &RemotingCommand) -> RemotingCommand {
        let mut response = RemotingCommand::response_to(request, self.code);
        response.version = 0;
        response.remark = self.remark;
        response.ext_fields = self.ext;
        response.body = self.body.map(Into::into);
        response
    }
}

/// A decision: the answer, and the events that must be committed (and
/// applied) before the answer may be sent. No events: nothing changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// What the requester is told.
    pub answer: Answer,
    /// What changes, in order.
    pub events: Vec<Event>,
}

impl Decision {
    /// An answer that changes nothing.
    pub fn answer(answer: Answer) -> Decision {
        Decision {
            answer,
            events: Vec::new(),
        }
    }

    /// An answer that needs `event` committed first.
    pub fn with_event(answer: Answer, event: Event) -> Decision {
        Decision {
            answer,
            events: vec![event],
        }
    }
}
