//! Typed NameServer headers and bodies of the RocketMQ remoting protocol.
