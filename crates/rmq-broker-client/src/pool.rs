//! One connection per NameServer, opened on first use and reopened when it
//! has closed.
//!
//! Java keeps a separate availability scan; here a connection attempt is the
//! availability check: a request to an unreachable server fails at connect
//! (bounded by the connect timeout) without holding up the requests to the
//! others. Connections of addresses that left the list are closed.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use rmq_transport::{ClientConfig, ClientError, RpcClient};

/// The slot of one address; the async lock makes concurrent users share one
/// connect instead of racing.
type Slot = Arc<tokio::sync::Mutex<Option<RpcClient>>>;

/// Connections by NameServer address.
#[derive(Debug)]
pub(crate) struct Pool {
    config: ClientConfig,
    slots: Mutex<HashMap<String, Slot>>,
}

impl Pool {
    pub(crate) fn new(config: ClientConfig) -> Pool {
        Pool {
            config,
            slots: Mutex::default(),
        }
    }

    /// The open connection to `addr`, connecting if there is none.
    pub(crate) async fn get(&self, addr: &str) -> Result<RpcClient, ClientError> {
        let slot = self
            .slots
            .lock()
            .entry(addr.to_owned())
            .or_default()
            .clone();
        let mut guard = slot.lock().await;
        if let Some(client) = guard.as_ref().filter(|c| !c.is_closed()) {
            return Ok(client.clone());
        }
        let client = RpcClient::connect(addr, self.config.clone()).await?;
        *guard = Some(client.clone());
        Ok(client)
    }

    /// Closes and forgets the connections of addresses not in `keep`.
    pub(crate) fn retain(&self, keep: &[String]) {
        let gone: Vec<Slot> = {
            let mut slots = self.slots.lock();
            let gone = slots
                .keys()
                .filter(|a| !keep.contains(a))
                .cloned()
                .collect::<Vec<_>>();
            gone.iter().filter_map(|a| slots.remove(a)).collect()
        };
        for slot in gone {
            if let Ok(guard) = slot.try_lock() {
                if let Some(client) = guard.as_ref() {
                    client.close();
                }
            }
        }
    }

    /// Closes every connection.
    pub(crate) fn close_all(&self) {
        self.retain(&[]);
    }
}
