//! Talking to the servers given with `-n` (NameServers) or `-a`
//! (controllers): the address list, one [`Session`] per server, and
//! [`fan_out`], which runs the same job against all of them at once.
//!
//! Owns connection set-up ([`ConnectOptions`]: the `--timeout-ms` limit,
//! TLS and request signing), and turning non-SUCCESS responses into
//! [`CallError::Response`]. It does not know what a request means or how
//! results are shown (`commands`, `output`), which controller leads
//! (`controller`), nor how the flags become options (`security`).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use rmq_auth::Credentials;
use rmq_protocol::JavaJson;
use rmq_transport::tls::TlsClient;
use rmq_transport::{ClientConfig, RequestHook, RpcClient};
use rmq_wire::{RemotingCommand, RequestCode, ResponseCode, ToExtFields};

use crate::error::CallError;

/// Parses mqadmin's `-n` (and `-a`) syntax: `host:port` entries separated by
/// `;` (`,` is accepted too), blanks ignored, duplicates dropped, order kept.
///
/// # Errors
/// A message naming the bad entry, or saying the list is empty.
pub fn parse_addrs(list: &str) -> Result<Vec<String>, String> {
    let mut addrs: Vec<String> = Vec::new();
    for entry in list.split([';', ',']).map(str::trim) {
        if entry.is_empty() {
            continue;
        }
        let valid = entry
            .rsplit_once(':')
            .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
        if !valid {
            return Err(format!("{entry:?} is not host:port"));
        }
        if !addrs.iter().any(|known| known == entry) {
            addrs.push(entry.to_owned());
        }
    }
    if addrs.is_empty() {
        return Err("no address given".to_owned());
    }
    Ok(addrs)
}

/// What one server gave for one job.
#[derive(Debug)]
pub struct Answer<T> {
    /// The server, as given with `-n` or `-a` (or named as the controller
    /// leader).
    pub addr: String,
    /// Its result.
    pub result: Result<T, CallError>,
}

/// How every connection of one command is made. One set for NameServers
/// and controllers alike, as Java's `tls.enable` and `AclClientRPCHook`
/// apply to all of a client's connections.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// The limit for connecting (TLS handshake included) and for each
    /// request (`--timeout-ms`).
    pub timeout: Duration,
    /// TLS for every connection; `None`: plain.
    pub tls: Option<TlsClient>,
    /// Signs every request (Java's `AclClientRPCHook`); `None`: unsigned.
    pub credentials: Option<Credentials>,
}

impl ConnectOptions {
    pub(crate) fn client_config(&self) -> ClientConfig {
        ClientConfig {
            connect_timeout: self.timeout,
            inbound_capacity: 0,
            tls: self.tls.clone(),
            request_hook: self
                .credentials
                .clone()
                .map(|c| Arc::new(c) as Arc<dyn RequestHook>),
            ..ClientConfig::default()
        }
    }
}

/// One connection to one server.
#[derive(Debug, Clone)]
pub struct Session {
    client: RpcClient,
    timeout: Duration,
}

impl Session {
    /// Connects as `options` say, giving up after their timeout.
    ///
    /// # Errors
    /// [`CallError::Connect`] (a failed TLS handshake included) or
    /// [`CallError::Timeout`].
    pub async fn open(addr: &str, options: &ConnectOptions) -> Result<Session, CallError> {
        let timeout = options.timeout;
        let client = RpcClient::connect(addr, options.client_config())
            .await
            .map_err(|error| CallError::from_client(error, millis(timeout)))?;
        Ok(Session { client, timeout })
    }

    /// Sends `request` and returns the response, whatever its code.
    ///
    /// # Errors
    /// Transport failures only.
    pub async fn invoke(&self, request: RemotingCommand) -> Result<RemotingCommand, CallError> {
        self.client
            .invoke(request, self.timeout)
            .await
            .map_err(|error| CallError::from_client(error, millis(self.timeout)))
    }

    /// Sends `request` and returns the response if its code is SUCCESS.
    ///
    /// # Errors
    /// Transport failures, and [`CallError::Response`] for any other code.
    pub async fn call(&self, request: RemotingCommand) -> Result<RemotingCommand, CallError> {
        let response = self.invoke(request).await?;
        if response.response_code() == ResponseCode::Success {
            Ok(response)
        } else {
            Err(CallError::Response {
                code: response.code,
                remark: response.remark,
            })
        }
    }

    /// Sends a request of `code` with `header` (if any) and decodes the
    /// JSON body of the SUCCESS response (either fastjson dialect).
    ///
    /// # Errors
    /// As [`Session::call`], plus [`CallError::Decode`] for a missing or
    /// malformed body.
    pub async fn call_json<T: JavaJson>(
        &self,
        code: RequestCode,
        header: Option<&dyn ToExtFields>,
    ) -> Result<T, CallError> {
        let response = self.call(request(code, header)).await?;
        decode_body(&response)
    }
}

/// A request with Java's language and version 479 (so route queries are
/// answered in the standard JSON dialect).
pub fn request(code: RequestCode, header: Option<&dyn ToExtFields>) -> RemotingCommand {
    let mut command = RemotingCommand::request(code, 0);
    if let Some(header) = header {
        header.to_ext_fields(command.ext_fields.get_or_insert_with(Default::default));
    }
    command
}

/// Decodes a response body.
///
/// # Errors
/// [`CallError::Decode`] when the body is absent or not the expected JSON.
pub fn decode_body<T: JavaJson>(response: &RemotingCommand) -> Result<T, CallError> {
    let body = response
        .body
        .as_deref()
        .ok_or_else(|| CallError::Decode("the response has no body".to_owned()))?;
    T::from_json(body).map_err(|error| CallError::Decode(error.to_string()))
}

/// Runs `job` against every server concurrently, each on its own
/// connection made as `options` say, and returns the answers in the order
/// of `addrs`.
pub async fn fan_out<T, F, Fut>(
    addrs: &[String],
    options: &ConnectOptions,
    job: F,
) -> Vec<Answer<T>>
where
    F: Fn(Session) -> Fut,
    Fut: Future<Output = Result<T, CallError>>,
{
    let job = &job;
    join_all(addrs.iter().map(|addr| async move {
        let result = match Session::open(addr, options).await {
            Ok(session) => job(session).await,
            Err(error) => Err(error),
        };
        Answer {
            addr: addr.clone(),
            result,
        }
    }))
    .await
}

fn millis(timeout: Duration) -> u64 {
    u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_lists_follow_mqadmin() {
        assert_eq!(
            parse_addrs("127.0.0.1:9876; 10.0.0.2:9876;;127.0.0.1:9876,ns:1").unwrap(),
            ["127.0.0.1:9876", "10.0.0.2:9876", "ns:1"]
        );
        assert!(parse_addrs("127.0.0.1").unwrap_err().contains("127.0.0.1"));
        assert!(parse_addrs("host:99999").is_err());
        assert!(parse_addrs(":9876").is_err());
        assert!(parse_addrs(" ; ").is_err());
    }

    #[test]
    fn requests_carry_java_language_version_and_header() {
        let header = rmq_protocol::headers::GetRouteInfoRequestHeader {
            topic: "TopicTest".into(),
            ..Default::default()
        };
        let command = request(RequestCode::GetRouteInfoByTopic, Some(&header));
        assert_eq!(command.language, rmq_wire::LanguageCode::Java);
        assert_eq!(command.version, rmq_wire::CURRENT_VERSION);
        assert_eq!(command.ext("topic"), Some("TopicTest"));
        assert_eq!(
            request(RequestCode::GetBrokerClusterInfo, None).ext_fields,
            None
        );
    }
}
