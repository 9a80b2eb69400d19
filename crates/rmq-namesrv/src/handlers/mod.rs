//! Request handlers: plain functions over the parts of the state each one
//! uses and a request already decoded and checked (`crate::request`), one
//! module per family of request codes. Each returns the SUCCESS answer or
//! the error; `dispatch` picks the function and makes either the response.

pub mod broker;
pub mod cluster;
pub mod config;
pub mod kv;
pub mod route;
#[cfg(test)]
mod tests;
pub mod topic;
