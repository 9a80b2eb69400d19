//! Keeping routes: change detection ([`change`]) and the cache of one
//! client instance ([`cache`]), both plain data. Fetching and scheduling
//! are `client`'s.

pub mod cache;
pub mod change;

pub use cache::{cap_default_route, Applied, FoundBroker, RouteCache};
pub use change::route_changed;
