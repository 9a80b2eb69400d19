//! Request errors and how they become responses, in one place.
//!
//! Only framing and I/O errors close a connection (that is the transport's
//! business); everything a handler can get wrong is answered with a code and
//! a remark naming the problem.

use rmq_protocol::BodyError;
use rmq_wire::{ExtFields, HeaderError, RemotingCommand, ResponseCode};

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
}

impl Error {
    /// SYSTEM_ERROR with a remark.
    pub fn system(remark: impl Into<String>) -> Error {
        Error {
            code: ResponseCode::SystemError,
            remark: Some(remark.into()),
            empty_header: false,
        }
    }

    /// An error of any code with a remark.
    pub fn new(code: ResponseCode, remark: impl Into<String>) -> Error {
        Error {
            code,
            remark: Some(remark.into()),
            empty_header: false,
        }
    }

    /// Marks the response as having a (empty) header.
    pub fn with_empty_header(mut self) -> Error {
        self.empty_header = true;
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
pub type HandlerResult = Result<RemotingCommand, Error>;
