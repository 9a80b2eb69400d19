//! Tokio plumbing for RocketMQ remoting: codec, connections, server loop, RPC client.
