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

use rmq_wire::{RemotingCommand, ResponseCode};

/// A SUCCESS response without header class.
pub(crate) fn success(request: &RemotingCommand) -> RemotingCommand {
    RemotingCommand::response_to(request, ResponseCode::Success)
}
