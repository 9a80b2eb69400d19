//! Request handlers: plain functions over the state and a typed request,
//! one module per family of request codes. `dispatch` picks the function.

pub mod broker;
pub mod cluster;
pub mod config;
pub mod kv;
pub mod route;
#[cfg(test)]
mod tests;
pub mod topic;
pub mod validate;

use rmq_wire::{FromExtFields, HeaderError, RemotingCommand, ResponseCode};

/// A SUCCESS response without header class.
pub(crate) fn success(request: &RemotingCommand) -> RemotingCommand {
    RemotingCommand::response_to(request, ResponseCode::Success)
}

/// The typed header of a request whose Java handler does not require its fields: `None`
/// when one is missing (Java then finds nothing to act on and still answers SUCCESS); any
/// other header error stays an error.
pub(crate) fn header_if_complete<H: FromExtFields>(
    request: &RemotingCommand,
) -> Result<Option<H>, HeaderError> {
    match request.header::<H>() {
        Ok(header) => Ok(Some(header)),
        Err(HeaderError::Missing(_)) => Ok(None),
        Err(error) => Err(error),
    }
}
