//! The HTTP port (`httpListenAddr`): `GET /health`, `GET /ready`,
//! `GET /metrics` and the dashboard (`GET /`, served from the binary, no
//! external resources). A server merges its own `/api/v1` routes into
//! [`router`]'s and hands the result to [`serve`].
//!
//! The port is meant for probes, scrapers and operators, not for the
//! brokers' and clients' traffic: it takes at most [`MAX_CONNECTIONS`]
//! connections at once (more wait to be accepted), so a flood of HTTP
//! clients costs bounded memory and never touches the remoting port.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use prometheus_client::registry::Registry;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// HTTP connections served at once.
pub const MAX_CONNECTIONS: usize = 64;

/// Whether the server is ready for traffic: listening, and (after a warm
/// restart) its tables loaded. `/ready` answers 503 until it is set.
#[derive(Debug, Clone, Default)]
pub struct Readiness(Arc<AtomicBool>);

impl Readiness {
    /// Marks the server ready.
    pub fn set_ready(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether [`set_ready`](Self::set_ready) was called.
    pub fn is_ready(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// An error of the JSON API: a status and `{"error": "..."}`.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What went wrong, for the reader.
    pub message: String,
}

impl ApiError {
    /// 404 with `message`.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::NOT_FOUND,
            message: message.into(),
        }
    }

    /// 400 with `message`.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(serde_json::json!({ "error": self.message })),
        )
            .into_response()
    }
}

const INDEX_HTML: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const STYLE_CSS: &str = include_str!("../assets/style.css");

/// The routes every server has: health, readiness, metrics (rendered from
/// `registry` at each scrape) and the dashboard.
pub fn router(registry: Arc<Registry>, readiness: Readiness) -> Router {
    Router::new()
        .route("/health", get(|| async { "ok\n" }))
        .route(
            "/ready",
            get(move || {
                let ready = readiness.is_ready();
                async move {
                    if ready {
                        (StatusCode::OK, "ready\n")
                    } else {
                        (StatusCode::SERVICE_UNAVAILABLE, "starting\n")
                    }
                }
            }),
        )
        .route(
            "/metrics",
            get(move || {
                let text = crate::metrics::render(&registry);
                async move {
                    (
                        [(
                            header::CONTENT_TYPE,
                            prometheus_client::encoding::prometheus_text::CONTENT_TYPE,
                        )],
                        text,
                    )
                }
            }),
        )
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", INDEX_HTML) }),
        )
        .route(
            "/assets/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }),
        )
        .route(
            "/assets/style.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE_CSS) }),
        )
        // Browsers ask for it on their own; nothing to show, no error either.
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
        .fallback(|| async { ApiError::not_found("no such page") })
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// The configuration key of the HTTP port's address, in the NameServer's
/// and the controller's properties.
pub const LISTEN_KEY: &str = "httpListenAddr";

/// Why `value` cannot be [`LISTEN_KEY`]'s: it must be empty (no HTTP port)
/// or `ip:port`.
pub fn check_listen_addr(value: &str) -> Result<(), String> {
    let value = value.trim();
    if value.is_empty() || value.parse::<SocketAddr>().is_ok() {
        Ok(())
    } else {
        Err(format!(
            "invalid value for {LISTEN_KEY}: {value:?} is not ip:port (e.g. 127.0.0.1:9877), nor empty (no HTTP port)"
        ))
    }
}

/// Binds `address` (`host:port`; port 0 lets the system choose).
pub async fn bind(address: &str) -> io::Result<TcpListener> {
    TcpListener::bind(address).await
}

/// Binds the HTTP port at `address`. An address the operator chose
/// (`explicit`) that cannot be bound stops the start; the default one in use
/// (a second server on the host, which the operator did not give a port of
/// its own) is warned about and the server runs without an HTTP port, so
/// that the default never keeps a NameServer from starting.
///
/// # Errors
/// When `explicit` and the address cannot be bound.
pub async fn bind_port(address: &str, explicit: bool) -> anyhow::Result<Option<TcpListener>> {
    match bind(address).await {
        Ok(listener) => Ok(Some(listener)),
        Err(error) if !explicit => {
            tracing::warn!(
                %address, %error,
                "cannot listen on the default HTTP address: running WITHOUT the HTTP port (metrics, health, dashboard); set httpListenAddr to another address, or empty to silence this"
            );
            Ok(None)
        }
        Err(error) => Err(anyhow::Error::new(error)
            .context(format!("cannot listen on {address} (httpListenAddr)"))),
    }
}

/// Serves `router` on `listener` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let listener = Limited {
        listener,
        slots: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
    };
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}

/// A listener that holds at most [`MAX_CONNECTIONS`] connections open.
struct Limited {
    listener: TcpListener,
    slots: Arc<Semaphore>,
}

impl axum::serve::Listener for Limited {
    type Io = Slotted;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Slotted, SocketAddr) {
        // The semaphore is never closed.
        let slot = self.slots.clone().acquire_owned().await;
        let slot = slot.expect("the connection semaphore stays open");
        loop {
            match self.listener.accept().await {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    return (
                        Slotted {
                            stream,
                            _slot: slot,
                        },
                        peer,
                    );
                }
                Err(error) => {
                    // Out of descriptors and the like: wait, then retry, as
                    // axum's own listener does.
                    tracing::debug!(%error, "HTTP accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

/// A connection holding its slot until it is dropped.
struct Slotted {
    stream: TcpStream,
    _slot: OwnedSemaphorePermit,
}

impl AsyncRead for Slotted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Slotted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
