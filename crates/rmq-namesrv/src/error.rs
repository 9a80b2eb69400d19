//! Request errors and how they become responses.
//!
//! Only framing and I/O errors close a connection (that is the transport's
//! business); everything a handler or a request's decoding can get wrong is
//! an [`Error`]: a code and a remark naming the problem, which the
//! dispatcher turns into the response (and counts, when it is a refusal of
//! one of Waymark's limits).

use rmq_protocol::BodyError;
use rmq_wire::{ExtFields, HeaderError, RemotingCommand, ResponseCode};

use crate::answer::Answer;

/// A request that could not be served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// Response code.
    pub code: ResponseCode,
    /// Remark; Java leaves some errors without one.
    pub remark: Option<String>,
    /// True when Java's response has a header class, so the JSON header
    /// carries `"extFields":{}` even on error.
    pub empty_header: bool,
    /// The refusal kind (`metrics::refusal`) to count, when the request was
    /// refused by one of Waymark's limits.
    pub refusal: Option<&'static str>,
}

impl Error {
    /// SYSTEM_ERROR with a remark.
    pub fn system(remark: impl Into<String>) -> Error {
        Error::new(ResponseCode::SystemError, remark)
    }

    /// An error of any code with a remark.
    pub fn new(code: ResponseCode, remark: impl Into<String>) -> Error {
        Error {
            remark: Some(remark.into()),
            ..Error::without_remark(code)
        }
    }

    /// An error of any code with no remark.
    pub fn without_remark(code: ResponseCode) -> Error {
        Error {
            code,
            remark: None,
            empty_header: false,
            refusal: None,
        }
    }

    /// Marks the response as having a (empty) header.
    pub fn with_empty_header(mut self) -> Error {
        self.empty_header = true;
        self
    }

    /// Marks the error as a refusal of kind `refusal` (`metrics::refusal`).
    pub fn counted_as(mut self, refusal: &'static str) -> Error {
        self.refusal = Some(refusal);
        self
    }

    /// The response to `request` for this error.
    pub fn into_response(self, request: &RemotingCommand) -> RemotingCommand {
        let mut response = RemotingCommand::response_to(request, self.code);
        response.remark = self.remark;
        if self.empty_header {
            response.ext_fields = Some(ExtFields::new());
        }
        response
    }
}

impl From<HeaderError> for Error {
    fn from(error: HeaderError) -> Error {
        Error::system(error.to_string())
    }
}

impl From<BodyError> for Error {
    fn from(error: BodyError) -> Error {
        Error::system(format!("failed to decode the request body: {error}"))
    }
}

/// What handlers return.
pub type HandlerResult = Result<Answer, Error>;
