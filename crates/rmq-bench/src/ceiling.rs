//! The ceiling server: no state, precomputed answers of a correct size, registrations decoded as a
//! correct server must (see docs/benchmarks.md, "The peers").

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use bytes::{BufMut, Bytes, BytesMut};
use rmq_protocol::headers::{RegisterBrokerRequestHeader, RegisterBrokerResponseHeader};
use rmq_protocol::{body_crc32, Dialect, JavaJson, RegisterBrokerBody};
use rmq_wire::frame::{self, FrameStatus};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode, FLAG_ONEWAY};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::workload::Layout;

/// The opaque used to find where a response's opaque digits go.
const SENTINEL: i32 = i32::MAX;

/// One precomputed response: its JSON header before and after the opaque digits, and the body.
#[derive(Debug, Clone)]
struct Template {
    head: Vec<u8>,
    tail: Vec<u8>,
    body: Vec<u8>,
}

impl Template {
    fn of(response: &RemotingCommand) -> Template {
        let mut response = response.clone();
        response.opaque = SENTINEL;
        let encoded = frame::encode_to_bytes(&response);
        let header_len = u32::from_be_bytes([0, encoded[5], encoded[6], encoded[7]]) as usize;
        let header = &encoded[8..8 + header_len];
        let digits = SENTINEL.to_string();
        let at = header
            .windows(digits.len())
            .rposition(|w| w == digits.as_bytes())
            .expect("the encoded header holds the opaque");
        Template {
            head: header[..at].to_vec(),
            tail: header[at + digits.len()..].to_vec(),
            body: encoded[8 + header_len..].to_vec(),
        }
    }

    fn write(&self, opaque: i32, out: &mut BytesMut) {
        let mut buf = [0u8; 11];
        let digits = decimal(opaque, &mut buf);
        let header_len = self.head.len() + digits.len() + self.tail.len();
        let length = 4 + header_len + self.body.len();
        out.reserve(4 + length);
        out.put_u32(length as u32);
        out.put_u32(header_len as u32 & 0xFF_FFFF);
        out.put_slice(&self.head);
        out.put_slice(digits);
        out.put_slice(&self.tail);
        out.put_slice(&self.body);
    }
}

/// `value` in decimal, written into the end of `buf`.
fn decimal(value: i32, buf: &mut [u8; 11]) -> &[u8] {
    let mut n = value.unsigned_abs();
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if value < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    &buf[at..]
}

#[derive(Debug)]
pub struct Answers {
    route: Template,
    register: Template,
    other: Template,
}

impl Answers {
    pub fn new(layout: &Layout) -> Answers {
        let request = RemotingCommand::request(0, 0);
        let ok = || RemotingCommand::response_to(&request, ResponseCode::Success);
        let route = ok().with_body(layout.route_of_set(0).to_json(Dialect::Standard));
        let register = ok().with_header(&RegisterBrokerResponseHeader::default());
        let [route, register, other] = [route, register, ok()].map(|r| Template::of(&r));
        Answers {
            route,
            register,
            other,
        }
    }

    /// Appends the answer to one whole request frame (none for one-way
    /// requests). `None` if the frame's header cannot be scanned.
    fn answer(&self, frame: Bytes, out: &mut BytesMut) -> Option<()> {
        let header_len = u32::from_be_bytes([0, frame[5], frame[6], frame[7]]) as usize;
        let header = frame.get(8..8 + header_len)?;
        let (code, opaque, flag) = match frame[4] {
            0 => (
                scan_int(header, b"\"code\":", false)?,
                scan_int(header, b"\"opaque\":", true)?,
                scan_int(header, b"\"flag\":", true).unwrap_or(0),
            ),
            1 => {
                let int =
                    |at: usize| Some(i32::from_be_bytes(header.get(at..at + 4)?.try_into().ok()?));
                let code = i32::from(i16::from_be_bytes(header.get(0..2)?.try_into().ok()?));
                (code, int(5)?, int(9)?)
            }
            _ => return None,
        };
        if flag & FLAG_ONEWAY != 0 {
            return Some(());
        }
        let template = match RequestCode::from(code) {
            RequestCode::GetRouteInfoByTopic => &self.route,
            RequestCode::RegisterBroker => match read_registration(frame) {
                Ok(()) => &self.register,
                Err(refusal) => {
                    frame::encode(&refusal, out);
                    return Some(());
                }
            },
            _ => &self.other,
        };
        template.write(opaque, out);
        Some(())
    }
}

/// The bound on a body's topics the decoder checks as it reads, as Waymark's
/// NameServer does by default (`maxTopicsPerRegistration`).
const MAX_TOPICS_PER_REGISTRATION: usize = 200_000;

/// Decodes a registration as a correct NameServer must before answering (frame, typed header,
/// CRC-32, body), then drops it; the error is the SYSTEM_ERROR answer.
fn read_registration(frame: Bytes) -> Result<(), RemotingCommand> {
    let request = frame::decode(frame).map_err(|e| {
        RemotingCommand::response_to(&RemotingCommand::request(0, 0), ResponseCode::SystemError)
            .with_remark(format!("undecodable frame: {e}"))
    })?;
    let refuse = |remark: String| {
        RemotingCommand::response_to(&request, ResponseCode::SystemError).with_remark(remark)
    };
    let header: Result<RegisterBrokerRequestHeader, _> = request.header();
    let header = header.map_err(|e| refuse(format!("bad header: {e}")))?;
    let body = request.body.as_deref();
    if header.body_crc32 != 0 && body.map_or(0, body_crc32) != header.body_crc32 {
        return Err(refuse("crc32 not match".into()));
    }
    let limit = MAX_TOPICS_PER_REGISTRATION;
    RegisterBrokerBody::decode_registration(body, header.compressed, request.version, limit)
        .map(drop)
        .map_err(|e| refuse(format!("Failed to decode RegisterBrokerBody: {e}")))
}

/// The integer after `key` in a JSON header (the last occurrence with
/// `last`, since ext fields come before the top-level keys that follow them).
fn scan_int(header: &[u8], key: &[u8], last: bool) -> Option<i32> {
    let at = if last {
        header.windows(key.len()).rposition(|w| w == key)?
    } else {
        header.windows(key.len()).position(|w| w == key)?
    };
    let rest = &header[at + key.len()..];
    let len = rest
        .iter()
        .take_while(|b| b.is_ascii_digit() || **b == b'-')
        .count();
    std::str::from_utf8(&rest[..len]).ok()?.parse().ok()
}

async fn connection(mut stream: TcpStream, answers: &Answers) -> anyhow::Result<()> {
    stream.set_nodelay(true)?;
    let mut input = BytesMut::with_capacity(64 * 1024);
    let mut output = BytesMut::with_capacity(64 * 1024);
    loop {
        if stream.read_buf(&mut input).await? == 0 {
            return Ok(());
        }
        loop {
            match frame::check(&input)? {
                FrameStatus::Complete { len } => {
                    let whole = input.split_to(len).freeze();
                    answers
                        .answer(whole, &mut output)
                        .context("unscannable request header")?;
                }
                FrameStatus::Incomplete { needed } => {
                    input.reserve(needed.saturating_sub(input.len()));
                    break;
                }
            }
        }
        if !output.is_empty() {
            stream.write_all(&output).await?;
            output.clear();
        }
    }
}

/// `rmq-bench ceiling-server`: binds `listen`, prints the ready line, serves forever.
pub async fn run(listen: SocketAddr, layout: Layout) -> anyhow::Result<()> {
    let listener = TcpListener::bind(listen).await;
    let listener = listener.with_context(|| format!("cannot listen on {listen}"))?;
    let answers = Arc::new(Answers::new(&layout));
    let mut out = std::io::stdout();
    writeln!(out, "ceiling server ready on {}", listener.local_addr()?)?;
    out.flush()?;
    loop {
        let (stream, _) = listener.accept().await.context("accept failed")?;
        let answers = answers.clone();
        tokio::spawn(async move {
            if let Err(error) = connection(stream, &answers).await {
                tracing::debug!(%error, "ceiling connection ended");
            }
        });
    }
}
