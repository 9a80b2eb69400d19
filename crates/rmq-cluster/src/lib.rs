//! The NameServer cluster: Waymark NameServers that tell each other which
//! brokers registered with them, pull from each other what they lack, and
//! so serve the same routes whichever of them a client asks, while each
//! keeps answering on its own when its peers are gone.
//!
//! [`core`] is the sans-IO state machine (what to publish, pull, apply and
//! drop); [`gossip`] runs it over the chitchat library (membership, failure
//! detection and anti-entropy of the published keys, over UDP). Pulling a
//! registration from a peer and applying it to the route table are the
//! NameServer's: this crate knows nothing of route tables or remoting.

pub mod core;
pub mod gossip;
pub mod model;
