//! The HTTP address service (Java `fetchNameServerAddr`, `DefaultTopAddressing`:
//! `GET http://<domain>:8080/rocketmq/<subgroup>`, the first line of the
//! answer): a tiny HTTP/1.1 GET over a tokio
//! `TcpStream` that returns the `host:port;host:port` text.
//!
//! Only plain `http://`, one request per connection (`Connection: close`),
//! `Content-Length`, chunked or read-to-close bodies of at most 1 MiB. It
//! owns no schedule (that is [`Schedule`](crate::Schedule)) and does not
//! apply the answer (that is [`NameServerList::apply_fetched`](crate::NameServerList::apply_fetched)).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::error::{ConfigError, HttpError};

/// Largest response accepted.
const MAX_RESPONSE: usize = 1 << 20;

/// Where the NameServer list is fetched from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressService {
    url: String,
    /// `host:port` to connect to.
    authority: String,
    /// Host header value.
    host: String,
    /// Path and query.
    path: String,
}

impl AddressService {
    /// Java's URL: `http://<domain>:8080/rocketmq/<subgroup>`, without
    /// `:8080` when `domain` already has a port. Java's defaults are
    /// `jmenv.tbsite.net` and `nsaddr`.
    ///
    /// # Errors
    /// As [`Self::from_url`].
    pub fn java(domain: &str, subgroup: &str) -> Result<AddressService, ConfigError> {
        let authority = if domain.contains(':') {
            domain.to_owned()
        } else {
            format!("{domain}:8080")
        };
        AddressService::from_url(&format!("http://{authority}/rocketmq/{subgroup}"))
    }

    /// Any `http://host[:port][/path]` URL (port default 80).
    ///
    /// # Errors
    /// [`ConfigError::Url`] for other schemes or an empty host.
    pub fn from_url(url: &str) -> Result<AddressService, ConfigError> {
        let bad = |reason| ConfigError::Url {
            url: url.to_owned(),
            reason,
        };
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| bad("only http:// is supported"))?;
        let (host, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        let authority = match host.rsplit_once(':') {
            Some((_, port)) if port.parse::<u16>().is_ok() => host.to_owned(),
            Some(_) => return Err(bad("bad port")),
            None => format!("{host}:80"),
        };
        Ok(AddressService {
            url: url.to_owned(),
            authority,
            host: host.to_owned(),
            path: path.to_owned(),
        })
    }

    /// The URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// GETs the list: `Ok(Some(text))` for a 200 with a non-blank body
    /// (trimmed, first line only), `Ok(None)` for a blank 200 body.
    ///
    /// # Errors
    /// I/O, a non-200 status, a malformed response, or `timeout` exceeded.
    pub async fn fetch(&self, timeout: Duration) -> Result<Option<String>, HttpError> {
        let response = tokio::time::timeout(timeout, self.exchange())
            .await
            .map_err(|_| HttpError::Timeout(timeout))??;
        let body = parse_response(&response)?;
        Ok(first_line(&String::from_utf8_lossy(&body)))
    }

    async fn exchange(&self) -> Result<Vec<u8>, HttpError> {
        let mut stream = TcpStream::connect(&self.authority).await?;
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let request = format!(
            "GET {} HTTP/1.1\r\nHost: {}\r\nClient-Version: V5_3_3\r\n\
             Content-Type: application/x-www-form-urlencoded;charset=UTF-8\r\n\
             Metaq-Client-RequestTS: {now_ms}\r\nConnection: close\r\n\r\n",
            self.path, self.host
        );
        stream.write_all(request.as_bytes()).await?;
        let mut response = Vec::new();
        (&mut stream)
            .take(MAX_RESPONSE as u64 + 1)
            .read_to_end(&mut response)
            .await?;
        if response.len() > MAX_RESPONSE {
            return Err(HttpError::Malformed("response larger than 1 MiB"));
        }
        Ok(response)
    }
}

/// Java's reading of the body: trimmed, cut at the first `\r`, else the
/// first `\n`; blank is `None`.
fn first_line(body: &str) -> Option<String> {
    let text = body.trim();
    let cut = text.find('\r').or_else(|| text.find('\n'));
    let line = cut.map_or(text, |i| &text[..i]).trim();
    (!line.is_empty()).then(|| line.to_owned())
}

/// The body of a complete HTTP/1.x response, if its status is 200.
fn parse_response(response: &[u8]) -> Result<Vec<u8>, HttpError> {
    let end = find(response, b"\r\n\r\n").ok_or(HttpError::Malformed("no end of headers"))?;
    let head = std::str::from_utf8(&response[..end])
        .map_err(|_| HttpError::Malformed("headers are not UTF-8"))?;
    let rest = &response[end + 4..];
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.split(' ');
    if !parts.next().unwrap_or_default().starts_with("HTTP/1.") {
        return Err(HttpError::Malformed("not an HTTP/1.x status line"));
    }
    let status: u16 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or(HttpError::Malformed("no status code"))?;
    if status != 200 {
        return Err(HttpError::Status(status));
    }
    let mut chunked = false;
    let mut length = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.to_ascii_lowercase().contains("chunked");
        } else if name.eq_ignore_ascii_case("content-length") {
            length = value.parse::<usize>().ok();
        }
    }
    if chunked {
        return dechunk(rest);
    }
    match length {
        Some(n) if n <= rest.len() => Ok(rest[..n].to_vec()),
        Some(_) => Err(HttpError::Malformed("body shorter than Content-Length")),
        None => Ok(rest.to_vec()),
    }
}

fn dechunk(mut data: &[u8]) -> Result<Vec<u8>, HttpError> {
    let mut body = Vec::new();
    loop {
        let eol = find(data, b"\r\n").ok_or(HttpError::Malformed("truncated chunk size"))?;
        let size_text = std::str::from_utf8(&data[..eol])
            .map_err(|_| HttpError::Malformed("chunk size is not text"))?;
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| HttpError::Malformed("bad chunk size"))?;
        data = &data[eol + 2..];
        if size == 0 {
            return Ok(body);
        }
        if data.len() < size {
            return Err(HttpError::Malformed("truncated chunk"));
        }
        body.extend_from_slice(&data[..size]);
        data = data.get(size + 2..).unwrap_or_default();
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_follow_java() {
        let s = AddressService::java("jmenv.tbsite.net", "nsaddr").unwrap();
        assert_eq!(s.url(), "http://jmenv.tbsite.net:8080/rocketmq/nsaddr");
        assert_eq!(s.authority, "jmenv.tbsite.net:8080");
        let s = AddressService::java("127.0.0.1:9000", "nsaddr").unwrap();
        assert_eq!(s.url(), "http://127.0.0.1:9000/rocketmq/nsaddr");
        let s = AddressService::from_url("http://example").unwrap();
        assert_eq!((s.authority.as_str(), s.path.as_str()), ("example:80", "/"));
        assert!(AddressService::from_url("https://x/y").is_err());
        assert!(AddressService::from_url("http://x:y/").is_err());
    }

    #[test]
    fn bodies_and_statuses() {
        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\na:1;b:2\r\nxyz";
        assert_eq!(parse_response(ok).unwrap(), b"a:1;b:2\r\nxy");
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\na:1\r\n4\r\n;b:2\r\n0\r\n\r\n";
        assert_eq!(parse_response(chunked).unwrap(), b"a:1;b:2");
        let close = b"HTTP/1.0 200 OK\r\n\r\n a:1 \n";
        assert_eq!(parse_response(close).unwrap(), b" a:1 \n");
        assert!(matches!(
            parse_response(b"HTTP/1.1 404 Not Found\r\n\r\n"),
            Err(HttpError::Status(404))
        ));
        assert!(parse_response(b"garbage").is_err());
    }

    #[test]
    fn first_line_is_trimmed() {
        assert_eq!(first_line("  a:1;b:2\r\nc:3").as_deref(), Some("a:1;b:2"));
        assert_eq!(first_line("a:1\nc:3").as_deref(), Some("a:1"));
        assert_eq!(first_line(" \r\n "), None);
    }
}
