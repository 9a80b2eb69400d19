//! The queue between a connection's senders (its reader queueing responses,
//! services holding its handle) and its writer: unbounded, many senders, one
//! receiver, with the part of an unbounded channel's interface the writer
//! uses.
//!
//! Not tokio's unbounded channel: that one costs every connection some
//! 800 bytes when it is made (a shared part padded to cache lines, and its
//! first block of slots), idle or not. This one is a mutex over a
//! `VecDeque`, which takes no memory until something is queued; sends are
//! few per connection (one per request answered), so the lock is not
//! contended.

use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Poll, Waker};

use crate::connection::Outbound;

/// A new queue's sending and receiving ends.
pub(crate) fn queue() -> (Sender, Receiver) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            items: VecDeque::new(),
            senders: 1,
            receiver_gone: false,
            waker: None,
        }),
    });
    (Sender(shared.clone()), Receiver(shared))
}

struct Shared {
    state: Mutex<State>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

struct State {
    items: VecDeque<Box<Outbound>>,
    /// Live senders: with none left and nothing queued, `recv` ends.
    senders: usize,
    /// The receiver was dropped: sends fail and give their command back.
    receiver_gone: bool,
    /// The receiver waiting for a command.
    waker: Option<Waker>,
}

/// Queues commands; cheap to clone.
pub(crate) struct Sender(Arc<Shared>);

impl Sender {
    /// Queues `item`; gives it back if the receiver is gone.
    pub(crate) fn send(&self, item: Box<Outbound>) -> Result<(), Box<Outbound>> {
        let mut state = self.0.lock();
        if state.receiver_gone {
            return Err(item);
        }
        state.items.push_back(item);
        let waker = state.waker.take();
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
        Ok(())
    }

    /// True once the receiver is gone.
    pub(crate) fn is_closed(&self) -> bool {
        self.0.lock().receiver_gone
    }
}

impl Clone for Sender {
    fn clone(&self) -> Sender {
        self.0.lock().senders += 1;
        Sender(self.0.clone())
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.senders -= 1;
        let waker = if state.senders == 0 {
            state.waker.take()
        } else {
            None
        };
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// Takes queued commands in order. Dropping it drops what is queued (and
/// with it the commands' in-flight permits and response charges).
pub(crate) struct Receiver(Arc<Shared>);

impl Receiver {
    /// The next command; `None` once nothing is queued and every sender is
    /// gone. Cancel-safe.
    pub(crate) async fn recv(&mut self) -> Option<Box<Outbound>> {
        poll_fn(|cx| {
            let mut state = self.0.lock();
            if let Some(item) = state.items.pop_front() {
                return Poll::Ready(Some(item));
            }
            if state.senders == 0 {
                return Poll::Ready(None);
            }
            match &mut state.waker {
                Some(waker) => waker.clone_from(cx.waker()),
                None => state.waker = Some(cx.waker().clone()),
            }
            Poll::Pending
        })
        .await
    }

    /// The next command if one is queued.
    pub(crate) fn try_recv(&mut self) -> Option<Box<Outbound>> {
        self.0.lock().items.pop_front()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.receiver_gone = true;
        let items = std::mem::take(&mut state.items);
        state.waker = None;
        drop(state);
        drop(items);
    }
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver")
            .field("queued", &self.0.lock().items.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use rmq_wire::RemotingCommand;

    use super::*;

    fn item(opaque: i32) -> Box<Outbound> {
        Box::new(Outbound {
            command: RemotingCommand::request(0, opaque),
            permit: None,
            charge: None,
        })
    }

    #[tokio::test]
    async fn commands_come_out_in_order_and_recv_ends_with_the_senders() {
        let (tx, mut rx) = queue();
        let other = tx.clone();
        tx.send(item(1)).unwrap();
        other.send(item(2)).unwrap();
        assert_eq!(rx.recv().await.unwrap().command.opaque, 1);
        assert_eq!(rx.try_recv().unwrap().command.opaque, 2);
        assert!(rx.try_recv().is_none());
        let waiting = tokio::spawn(async move { rx.recv().await.map(|i| i.command.opaque) });
        tokio::task::yield_now().await;
        other.send(item(3)).unwrap();
        drop((tx, other));
        assert_eq!(waiting.await.unwrap(), Some(3));
    }

    #[test]
    fn sends_fail_once_the_receiver_is_gone() {
        let (tx, rx) = queue();
        tx.send(item(1)).unwrap();
        assert!(!tx.is_closed());
        drop(rx);
        assert!(tx.is_closed());
        assert_eq!(tx.send(item(2)).unwrap_err().command.opaque, 2);
    }
}
