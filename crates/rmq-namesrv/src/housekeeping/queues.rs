//! What requests and connection events hand to the background tasks: the
//! unregistration queue, the min-broker-id notifications to send, and the
//! open connections an expired broker's is closed among. Each end is its own
//! value, so a component holds only the ones it feeds.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use rmq_ops::metrics::Refusals;
use rmq_transport::ConnectionHandle;
use tokio::sync::mpsc;

use crate::metrics::{refusal, RemovalReason};
use crate::route::{ConnId, MinIdNotification, Unregistration};

/// The sending end of the batch unregistration queue (bounded,
/// `unRegisterBrokerQueueCapacity`).
#[derive(Debug, Clone)]
pub struct Unregistrations {
    sender: mpsc::Sender<(Unregistration, RemovalReason)>,
    refusals: Arc<Refusals>,
}

/// The sending end of the notifications to brokers.
#[derive(Debug, Clone)]
pub struct Notifier {
    sender: mpsc::UnboundedSender<MinIdNotification>,
}

/// The receiving ends of the queues, for the background tasks.
#[derive(Debug)]
pub struct Queues {
    /// Unregistrations to run in batches, with why each was decided.
    pub unregistrations: mpsc::Receiver<(Unregistration, RemovalReason)>,
    /// Notifications to send.
    pub notifications: mpsc::UnboundedReceiver<MinIdNotification>,
}

/// Both queues: the unregistration queue holds at most `capacity`
/// (at least one); a submission refused for a full queue is counted in
/// `refusals`.
pub fn queues(capacity: usize, refusals: Arc<Refusals>) -> (Unregistrations, Notifier, Queues) {
    let (unregister_tx, unregister_rx) = mpsc::channel(capacity.max(1));
    let (notify_tx, notify_rx) = mpsc::unbounded_channel();
    (
        Unregistrations {
            sender: unregister_tx,
            refusals,
        },
        Notifier { sender: notify_tx },
        Queues {
            unregistrations: unregister_rx,
            notifications: notify_rx,
        },
    )
}

impl Unregistrations {
    /// Queues an unregistration decided for `reason`; `false` when the
    /// queue is full (counted and logged) or its worker is gone.
    pub fn submit(&self, unregistration: Unregistration, reason: RemovalReason) -> bool {
        match self.sender.try_send((unregistration, reason)) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full((dropped, _))) => {
                self.refusals.refused(refusal::UNREGISTRATION_QUEUE_FULL);
                tracing::warn!(broker = %dropped.key.addr, cluster = %dropped.key.cluster, "unregistration queue full, dropping");
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }
}

impl Notifier {
    /// Hands notifications to the sender task.
    pub fn notify(&self, notifications: Vec<MinIdNotification>) {
        for notification in notifications {
            let _ = self.sender.send(notification);
        }
    }
}

/// The open connections, so that an expired broker's connection can be
/// closed, as Java closes it.
#[derive(Debug, Default)]
pub struct Connections {
    open: Mutex<HashMap<ConnId, ConnectionHandle>>,
}

impl Connections {
    /// Notes an accepted connection.
    pub fn opened(&self, conn: ConnId, handle: ConnectionHandle) {
        self.open.lock().insert(conn, handle);
    }

    /// Forgets a closed connection.
    pub fn closed(&self, conn: ConnId) {
        self.open.lock().remove(&conn);
    }

    /// Closes a connection if it is still open.
    pub fn close(&self, conn: ConnId) {
        if let Some(handle) = self.open.lock().get(&conn) {
            handle.close();
        }
    }
}
