//! PROXY protocol headers over real sockets: a trusted proxy's v1 and v2
//! headers name the client the service sees, a header from any other peer
//! closes its connection, a header may precede a TLS handshake, arrive in
//! pieces, or never finish (closed at the deadline), and connections
//! without one are served as ever, plain and TLS.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::closed_within;
use bytes::{Bytes, BytesMut};
use rmq_testkit::pki::{path, props, Pki};
use rmq_transport::tls::{ServerTls, TlsClient, TlsSettings};
use rmq_transport::{
    ClientConfig, ConnectionInfo, ProxyProtocol, Reply, RpcClient, ServerConfig, Service,
};
use rmq_wire::{frame, RemotingCommand, ResponseCode};
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

const WAIT: Duration = Duration::from_secs(5);
/// Answered with remark `peer=<peer> proxy=<proxied_by or -> tls=<bool>`.
const WHO: i32 = 7201;

/// Tells the client what the server knows of its connection.
#[derive(Default)]
struct WhoService {
    connects: AtomicUsize,
    calls: AtomicUsize,
}

impl Service for WhoService {
    fn on_connect(&self, _conn: &ConnectionInfo) {
        self.connects.fetch_add(1, Ordering::SeqCst);
    }

    fn call(&self, conn: &ConnectionInfo, request: RemotingCommand) -> Reply {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let proxy = conn
            .proxied_by()
            .map_or_else(|| "-".to_owned(), |proxy| proxy.to_string());
        Reply::ready(
            RemotingCommand::response_to(&request, ResponseCode::Success).with_remark(format!(
                "peer={} proxy={proxy} tls={}",
                conn.peer(),
                conn.is_tls()
            )),
        )
    }
}

struct Running {
    addr: SocketAddr,
    service: Arc<WhoService>,
    _stop: oneshot::Sender<()>,
}

async fn serve(config: ServerConfig) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let service = Arc::new(WhoService::default());
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(rmq_transport::run(
        listener,
        service.clone(),
        config,
        async {
            let _ = stopped.await;
        },
    ));
    Running {
        addr,
        service,
        _stop: stop,
    }
}

/// A server trusting headers from `trusted` (a `proxyProtocolTrustedAddresses` value).
fn trusting(trusted: &str, tls: ServerTls) -> ServerConfig {
    ServerConfig {
        proxy_protocol: ProxyProtocol::parse(trusted).unwrap(),
        tls,
        ..ServerConfig::default()
    }
}

/// A permissive or enforcing server TLS setting with a certificate of `pki`.
fn server_tls(pki: &Pki, mode: &str) -> ServerTls {
    let server = pki.issue("server", "waymark-ns", &[]);
    let pairs = [
        ("tls.server.mode", mode),
        ("tls.server.certPath", path(&server.cert)),
        ("tls.server.keyPath", path(&server.key)),
    ];
    let settings = TlsSettings::from_properties_with(&props(&pairs), None).unwrap();
    ServerTls::from_settings(&settings).unwrap().0
}

fn tls_client(pki: &Pki) -> TlsClient {
    let ca = pki.ca_path();
    let pairs = [("tls.client.trustCertPath", path(&ca))];
    let settings = TlsSettings::from_properties_with(&props(&pairs), None).unwrap();
    TlsClient::from_settings(&settings).unwrap().0
}

fn who_frame() -> Vec<u8> {
    frame::encode_to_bytes(&RemotingCommand::request(WHO, 1)).to_vec()
}

/// Reads one frame's remark; `None` on EOF, reset or nothing within WAIT.
async fn read_remark<S: AsyncRead + Unpin>(stream: &mut S) -> Option<String> {
    tokio::time::timeout(WAIT, async {
        let mut length = [0u8; 4];
        stream.read_exact(&mut length).await.ok()?;
        let len = u32::from_be_bytes(length) as usize;
        let mut buf = BytesMut::zeroed(4 + len);
        buf[..4].copy_from_slice(&length);
        stream.read_exact(&mut buf[4..]).await.ok()?;
        frame::decode(Bytes::from(buf)).ok()?.remark
    })
    .await
    .ok()
    .flatten()
}

/// Sends WHO on `stream` and returns the answer's remark.
async fn who<S: AsyncRead + AsyncWrite + Unpin>(stream: &mut S) -> Option<String> {
    stream.write_all(&who_frame()).await.ok()?;
    stream.flush().await.ok()?;
    read_remark(stream).await
}

/// Connects, sends `header` and the WHO request in one write (so that the
/// server must stop reading exactly at the header's end), and returns the
/// answer's remark and the local address the proxy (this test) used.
async fn who_with_header(addr: SocketAddr, header: &[u8]) -> (Option<String>, SocketAddr) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let local = stream.local_addr().unwrap();
    let mut bytes = header.to_vec();
    bytes.extend(who_frame());
    stream.write_all(&bytes).await.unwrap();
    (read_remark(&mut stream).await, local)
}

/// A v2 PROXY header over TCP from `source` to `destination` (the same
/// family), with a PP2_TYPE_AUTHORITY TLV the server skips.
/// A v1 and a v2 header naming `client` (IPv4), relayed to 192.0.2.1:9876.
fn both_headers(client: &str) -> [Vec<u8>; 2] {
    let source: SocketAddr = client.parse().unwrap();
    let destination: SocketAddr = "192.0.2.1:9876".parse().unwrap();
    let v1 = format!(
        "PROXY TCP4 {} {} {} {}\r\n",
        source.ip(),
        destination.ip(),
        source.port(),
        destination.port()
    );
    [v1.into_bytes(), v2_header(source, destination)]
}

fn v2_header(source: SocketAddr, destination: SocketAddr) -> Vec<u8> {
    let mut block = Vec::new();
    let family = match (source, destination) {
        (SocketAddr::V4(s), SocketAddr::V4(d)) => {
            block.extend(s.ip().octets());
            block.extend(d.ip().octets());
            0x11
        }
        (SocketAddr::V6(s), SocketAddr::V6(d)) => {
            block.extend(s.ip().octets());
            block.extend(d.ip().octets());
            0x21
        }
        _ => panic!("mixed families"),
    };
    block.extend(source.port().to_be_bytes());
    block.extend(destination.port().to_be_bytes());
    block.extend(b"\x02\x00\x0ans.example");
    let mut header = b"\r\n\r\n\0\r\nQUIT\n\x21".to_vec();
    header.push(family);
    header.extend(u16::try_from(block.len()).unwrap().to_be_bytes());
    header.extend(block);
    header
}

/// A v2 LOCAL header (a proxy's health check).
const V2_LOCAL: &[u8] = b"\r\n\r\n\0\r\nQUIT\n\x20\x00\x00\x00";

#[tokio::test]
async fn a_trusted_proxys_v1_header_names_the_client() {
    let server = serve(trusting("10.0.0.0/8, 127.0.0.1", ServerTls::Disabled)).await;
    let header = b"PROXY TCP4 203.0.113.7 192.0.2.1 40000 9876\r\n";
    let (remark, proxy) = who_with_header(server.addr, header).await;
    assert_eq!(
        remark.unwrap(),
        format!("peer=203.0.113.7:40000 proxy={proxy} tls=false")
    );
    let header = b"PROXY TCP6 2001:db8::7 2001:db8::1 40001 9876\r\n";
    let (remark, proxy) = who_with_header(server.addr, header).await;
    assert_eq!(
        remark.unwrap(),
        format!("peer=[2001:db8::7]:40001 proxy={proxy} tls=false")
    );
}

#[tokio::test]
async fn a_trusted_proxys_v2_header_names_the_client() {
    let server = serve(trusting("127.0.0.0/8", ServerTls::Disabled)).await;
    let header = v2_header(
        "198.51.100.9:51000".parse().unwrap(),
        "192.0.2.1:9876".parse().unwrap(),
    );
    let (remark, proxy) = who_with_header(server.addr, &header).await;
    assert_eq!(
        remark.unwrap(),
        format!("peer=198.51.100.9:51000 proxy={proxy} tls=false")
    );
    let header = v2_header(
        "[2001:db8::9]:51001".parse().unwrap(),
        "[2001:db8::1]:9876".parse().unwrap(),
    );
    let (remark, proxy) = who_with_header(server.addr, &header).await;
    assert_eq!(
        remark.unwrap(),
        format!("peer=[2001:db8::9]:51001 proxy={proxy} tls=false")
    );
}

#[tokio::test]
async fn local_and_unknown_headers_keep_the_proxys_address() {
    let server = serve(trusting("127.0.0.1", ServerTls::Disabled)).await;
    for header in [V2_LOCAL, b"PROXY UNKNOWN\r\n"] {
        let (remark, proxy) = who_with_header(server.addr, header).await;
        assert_eq!(remark.unwrap(), format!("peer={proxy} proxy=- tls=false"));
    }
}

#[tokio::test]
async fn an_untrusted_peers_header_closes_the_connection() {
    let pki = Pki::new("proxy-untrusted");
    let configs = [
        // The first bytes are not looked at: the header fails as a frame.
        trusting("", ServerTls::Disabled),
        trusting("10.0.0.0/8", ServerTls::Disabled),
        // They are looked at, for TLS: the header is refused before it.
        trusting("", server_tls(&pki, "permissive")),
        trusting("::1, 10.0.0.0/8", server_tls(&pki, "enforcing")),
    ];
    for config in configs {
        let tls = !matches!(config.tls, ServerTls::Disabled);
        let server = serve(config).await;
        let v2 = v2_header(
            "10.9.9.9:1000".parse().unwrap(),
            "10.0.0.1:9876".parse().unwrap(),
        );
        for header in [&b"PROXY TCP4 10.9.9.9 10.0.0.1 1000 9876\r\n"[..], &v2] {
            let mut stream = TcpStream::connect(server.addr).await.unwrap();
            let mut bytes = header.to_vec();
            bytes.extend(who_frame());
            stream.write_all(&bytes).await.unwrap();
            assert!(
                closed_within(&mut stream, WAIT).await,
                "tls={tls}: left open"
            );
        }
        assert_eq!(server.service.calls.load(Ordering::SeqCst), 0, "tls={tls}");
        if tls {
            assert_eq!(server.service.connects.load(Ordering::SeqCst), 0);
        }
    }
}

#[tokio::test]
async fn a_header_then_a_tls_handshake() {
    let pki = Pki::new("proxy-tls");
    let client = tls_client(&pki);
    for mode in ["permissive", "enforcing"] {
        let server = serve(trusting("127.0.0.1", server_tls(&pki, mode))).await;
        for header in both_headers("203.0.113.8:40002") {
            let mut stream = TcpStream::connect(server.addr).await.unwrap();
            let proxy = stream.local_addr().unwrap();
            stream.write_all(&header).await.unwrap();
            let name = ServerName::IpAddress(server.addr.ip().into());
            let mut tls = tokio_rustls::TlsConnector::from(client.config())
                .connect(name, stream)
                .await
                .unwrap();
            assert_eq!(
                who(&mut tls).await.unwrap(),
                format!("peer=203.0.113.8:40002 proxy={proxy} tls=true"),
                "{mode}"
            );
        }
    }
}

#[tokio::test]
async fn a_header_in_single_byte_writes_arrives_whole() {
    let pki = Pki::new("proxy-split");
    for tls in [ServerTls::Disabled, server_tls(&pki, "permissive")] {
        let server = serve(trusting("127.0.0.1", tls)).await;
        for header in both_headers("203.0.113.9:40003") {
            let mut stream = TcpStream::connect(server.addr).await.unwrap();
            stream.set_nodelay(true).unwrap();
            let proxy = stream.local_addr().unwrap();
            // Every byte on its own, the last one together with the frame.
            let (last, first) = header.split_last().unwrap();
            for byte in first {
                stream.write_all(&[*byte]).await.unwrap();
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            let mut rest = vec![*last];
            rest.extend(who_frame());
            stream.write_all(&rest).await.unwrap();
            assert_eq!(
                read_remark(&mut stream).await.unwrap(),
                format!("peer=203.0.113.9:40003 proxy={proxy} tls=false")
            );
        }
    }
}

#[tokio::test]
async fn a_header_that_never_completes_is_closed_at_the_deadline() {
    let pki = Pki::new("proxy-deadline");
    for tls in [ServerTls::Disabled, server_tls(&pki, "permissive")] {
        let config = ServerConfig {
            frame_timeout: Duration::from_millis(300),
            ..trusting("127.0.0.1", tls)
        };
        let server = serve(config).await;
        for partial in [&b"PROXY TCP4 203.0.113.10 19"[..], &V2_LOCAL[..14], b""] {
            let started = Instant::now();
            let mut stream = TcpStream::connect(server.addr).await.unwrap();
            stream.write_all(partial).await.unwrap();
            assert!(
                closed_within(&mut stream, WAIT).await,
                "{partial:?} left open"
            );
            assert!(
                started.elapsed() >= Duration::from_millis(300),
                "{partial:?} closed before the deadline"
            );
        }
        assert_eq!(server.service.connects.load(Ordering::SeqCst), 0);
    }
}

#[tokio::test]
async fn a_malformed_header_from_a_trusted_proxy_closes_the_connection() {
    let server = serve(trusting("127.0.0.1", ServerTls::Disabled)).await;
    let bad: [&[u8]; 4] = [
        b"PROXY TCP4 203.0.113.7 192.0.2.1 40000 99999\r\n",
        b"PROXY TCP4 203.0.113.7 192.0.2.1 40000\n",
        b"\r\n\r\n\0\r\nQUIT\n\x31\x11\x00\x0c",
        b"POST / HTTP/1.1\r\n\r\n",
    ];
    for header in bad {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        let mut bytes = header.to_vec();
        bytes.extend(who_frame());
        stream.write_all(&bytes).await.unwrap();
        assert!(
            closed_within(&mut stream, WAIT).await,
            "{header:?} left open"
        );
    }
    assert_eq!(server.service.connects.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn connections_without_a_header_are_served_as_before() {
    let pki = Pki::new("proxy-none");
    let client = tls_client(&pki);
    let configs = [
        trusting("127.0.0.1", ServerTls::Disabled),
        trusting("127.0.0.1", server_tls(&pki, "permissive")),
        trusting("10.0.0.0/8", ServerTls::Disabled),
        trusting("10.0.0.0/8", server_tls(&pki, "permissive")),
    ];
    for config in configs {
        let tls = !matches!(config.tls, ServerTls::Disabled);
        let server = serve(config).await;
        let mut clients = vec![(ClientConfig::default(), false)];
        if tls {
            let config = ClientConfig {
                tls: Some(client.clone()),
                ..ClientConfig::default()
            };
            clients.push((config, true));
        }
        for (config, over_tls) in clients {
            let rpc = RpcClient::connect(server.addr, config).await.unwrap();
            let response = rpc
                .invoke(RemotingCommand::request(WHO, 0), WAIT)
                .await
                .unwrap();
            let remark = response.remark.unwrap();
            assert!(
                remark.starts_with("peer=127.0.0.1:")
                    && remark.ends_with(&format!(" proxy=- tls={over_tls}")),
                "{remark}"
            );
        }
    }
}
