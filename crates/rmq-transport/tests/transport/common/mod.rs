//! Shared pieces of the transport tests: a scriptable service, a server on
//! 127.0.0.1:0, and raw frame I/O for checking exactly what crosses the wire.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use rmq_transport::{
    ConnId, ConnectionHandle, ConnectionInfo, DisconnectReason, Reply, ServerConfig, Service,
};
use rmq_wire::frame;
use rmq_wire::{RemotingCommand, ResponseCode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot, Semaphore};
use tokio::task::JoinHandle;

/// Answered at once: body echoed, remark = ext `n` (or "echo").
pub const ECHO: i32 = 7001;
/// Answered after ext `ms` milliseconds, remark = ext `n`.
pub const DELAY: i32 = 7002;
/// Never answered (the service returns no response).
pub const SILENT: i32 = 7003;
/// The handler panics.
pub const PANIC: i32 = 7004;
/// Answered once the test adds a permit to `TestService::gate`.
pub const GATE: i32 = 7005;

/// What the service saw happen to connections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Connected(ConnId),
    Disconnected(ConnId, DisconnectReason),
}

/// A service whose behaviour is chosen by the request code.
pub struct TestService {
    pub calls: AtomicUsize,
    pub gate: Arc<Semaphore>,
    pub handles: Mutex<Vec<ConnectionHandle>>,
    events: mpsc::UnboundedSender<Event>,
}

impl TestService {
    pub fn new() -> (Arc<TestService>, mpsc::UnboundedReceiver<Event>) {
        let (events, rx) = mpsc::unbounded_channel();
        let service = TestService {
            calls: AtomicUsize::new(0),
            gate: Arc::new(Semaphore::new(0)),
            handles: Mutex::new(Vec::new()),
            events,
        };
        (Arc::new(service), rx)
    }

    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Service for TestService {
    fn on_connect(&self, conn: &ConnectionInfo) {
        self.handles.lock().unwrap().push(conn.handle().clone());
        let _ = self.events.send(Event::Connected(conn.id()));
    }

    fn call(&self, _conn: &ConnectionInfo, request: RemotingCommand) -> Reply {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let n = request.ext("n").unwrap_or("echo").to_string();
        let response = RemotingCommand::response_to(&request, ResponseCode::Success).with_remark(n);
        match request.code {
            ECHO => {
                let mut response = response;
                response.body = request.body.clone();
                Reply::ready(response)
            }
            DELAY => {
                let ms = request
                    .ext("ms")
                    .and_then(|ms| ms.parse().ok())
                    .unwrap_or(0);
                Reply::later(async move {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Some(response)
                })
            }
            SILENT => Reply::none(),
            PANIC => panic!("boom"),
            GATE => {
                let gate = self.gate.clone();
                Reply::later(async move {
                    gate.acquire().await.unwrap().forget();
                    Some(response)
                })
            }
            _ => Reply::ready(RemotingCommand::response_to(
                &request,
                ResponseCode::RequestCodeNotSupported,
            )),
        }
    }

    fn on_disconnect(&self, conn: &ConnectionInfo, reason: DisconnectReason) {
        let _ = self.events.send(Event::Disconnected(conn.id(), reason));
    }
}

/// A running server and the means to stop it.
pub struct TestServer {
    pub addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    pub join: JoinHandle<std::io::Result<()>>,
}

impl TestServer {
    pub async fn start(service: Arc<TestService>, config: ServerConfig) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = oneshot::channel::<()>();
        let join = tokio::spawn(rmq_transport::run(listener, service, config, async {
            let _ = rx.await;
        }));
        TestServer {
            addr,
            shutdown: Some(tx),
            join,
        }
    }

    pub fn shutdown(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// A request of `code` carrying ext `n`.
pub fn request(code: i32, n: impl ToString) -> RemotingCommand {
    RemotingCommand::request(code, 0).with_ext("n", n.to_string())
}

pub async fn write_frame(stream: &mut TcpStream, command: &RemotingCommand) {
    stream
        .write_all(&frame::encode_to_bytes(command))
        .await
        .unwrap();
}

/// Reads one raw frame: its serialize-type byte and the decoded command.
/// `None` on EOF, reset, or nothing within `wait`.
pub async fn read_frame(stream: &mut TcpStream, wait: Duration) -> Option<(u8, RemotingCommand)> {
    tokio::time::timeout(wait, async {
        let mut length = [0u8; 4];
        stream.read_exact(&mut length).await.ok()?;
        let len = u32::from_be_bytes(length) as usize;
        let mut buf = BytesMut::with_capacity(4 + len);
        buf.extend_from_slice(&length);
        buf.resize(4 + len, 0);
        stream.read_exact(&mut buf[4..]).await.ok()?;
        let type_byte = buf[4];
        Some((type_byte, frame::decode(Bytes::from(buf)).unwrap()))
    })
    .await
    .ok()
    .flatten()
}

/// True if the peer closes (EOF or reset) within `wait`, skipping any data.
pub async fn closed_within(stream: &mut TcpStream, wait: Duration) -> bool {
    tokio::time::timeout(wait, async {
        let mut sink = [0u8; 1024];
        loop {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => return,
                Ok(_) => continue,
            }
        }
    })
    .await
    .is_ok()
}

/// The next event, failing the test after two seconds.
pub async fn next_event(events: &mut mpsc::UnboundedReceiver<Event>) -> Event {
    tokio::time::timeout(Duration::from_secs(2), events.recv())
        .await
        .expect("no event within 2 s")
        .expect("event channel closed")
}

/// Waits for the disconnect of `id`, skipping other events.
pub async fn disconnect_of(
    events: &mut mpsc::UnboundedReceiver<Event>,
    id: ConnId,
) -> DisconnectReason {
    loop {
        if let Event::Disconnected(got, reason) = next_event(events).await {
            if got == id {
                return reason;
            }
        }
    }
}

/// Polls `check` every 5 ms until it holds, failing the test naming `what`
/// if it does not within 2 s.
pub async fn wait_until(what: &str, check: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while !check() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "not within 2 s: {what}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Waits for the next connect event.
pub async fn connected(events: &mut mpsc::UnboundedReceiver<Event>) -> ConnId {
    loop {
        if let Event::Connected(id) = next_event(events).await {
            return id;
        }
    }
}
