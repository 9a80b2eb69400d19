//! The NameServer channel: one sticky connection, replaced by the next
//! address in the ring when it breaks (Java `NettyRemotingClient` with a
//! null address: `getAndCreateNameserverChannel`).
//!
//! Owns connecting, the double-checked channel lock, closing the channel on
//! send failures and (when enough time was left) timeouts, GO_AWAY
//! reconnect-and-retry, and the optional single retry on the next address
//! after a connect error. It knows nothing of routes; requests and
//! responses pass through unchanged, except that a channel made
//! [`secured`](NameServerChannel::secured) signs each request and speaks
//! TLS on each connection it makes.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rmq_auth::Credentials;
use rmq_transport::tls::TlsClient;
use rmq_transport::{ClientConfig, ClientError, RequestHook, RpcClient};
use rmq_wire::{RemotingCommand, ResponseCode};
use tokio::time::Instant;

use super::list::{ListUpdate, NameServerList};
use crate::error::RouteError;

/// Java `NettyRemotingAbstract`'s `MIN_CLOSE_TIMEOUT_MILLIS`.
const MIN_CLOSE_TIMEOUT: Duration = Duration::from_millis(100);

/// Behaviour switches of [`NameServerChannel`].
#[derive(Debug, Clone)]
pub struct ChannelConfig {
    /// Connect timeout (Java `connectTimeoutMillis`, 3 s).
    pub connect_timeout: Duration,
    /// How long to wait for the channel lock (Java 3 s).
    pub lock_timeout: Duration,
    /// Close the channel after a response timeout (Java
    /// `clientCloseSocketIfTimeout`, default true).
    pub close_socket_if_timeout: bool,
    /// Reconnect to the same address and retry once on GO_AWAY (Java
    /// `enableReconnectForGoAway`, default true).
    pub reconnect_for_go_away: bool,
    /// After a connect error, try the next address once within the same
    /// call. Java does not, but no NameServer can tell the difference.
    /// Default true.
    pub retry_next_on_connect_error: bool,
}

impl Default for ChannelConfig {
    fn default() -> Self {
        ChannelConfig {
            connect_timeout: Duration::from_secs(3),
            lock_timeout: Duration::from_secs(3),
            close_socket_if_timeout: true,
            reconnect_for_go_away: true,
            retry_next_on_connect_error: true,
        }
    }
}

/// The sticky NameServer connection of one client instance.
#[derive(Debug)]
pub struct NameServerChannel {
    config: ChannelConfig,
    tls: Option<TlsClient>,
    signer: Option<Arc<dyn RequestHook>>,
    list: Mutex<NameServerList>,
    current: Mutex<Option<(String, RpcClient)>>,
    connect_lock: tokio::sync::Mutex<()>,
}

impl NameServerChannel {
    /// A channel over `list` (which may still be empty): plain
    /// connections, unsigned requests.
    pub fn new(config: ChannelConfig, list: NameServerList) -> Self {
        NameServerChannel {
            config,
            tls: None,
            signer: None,
            list: Mutex::new(list),
            current: Mutex::new(None),
            connect_lock: tokio::sync::Mutex::new(()),
        }
    }

    /// The same channel with every connection it makes from now on over
    /// `tls`, and every request signed with `credentials` (each when
    /// given). Call it before the first request: an open connection is not
    /// remade.
    pub fn secured(mut self, tls: Option<TlsClient>, credentials: Option<Credentials>) -> Self {
        self.tls = tls;
        self.signer = credentials.map(|c| Arc::new(c) as Arc<dyn RequestHook>);
        self
    }

    /// Installs a new address list (Java `updateNameServerAddressList`:
    /// ignored if empty or the same set, else shuffled); closes the channel if its
    /// address was dropped.
    pub fn update_list(&self, addrs: Vec<String>) -> ListUpdate {
        let update = self.list.lock().update(addrs);
        if let Some(dropped) = &update.dropped {
            let mut current = self.current.lock();
            if current
                .as_ref()
                .is_some_and(|(addr, _)| addr.contains(dropped.as_str()))
            {
                if let Some((_, client)) = current.take() {
                    client.close();
                }
            }
        }
        update
    }

    /// The installed addresses.
    pub fn addrs(&self) -> Vec<String> {
        self.list.lock().addrs().to_vec()
    }

    /// The chosen address, connected or not.
    pub fn chosen(&self) -> Option<String> {
        self.list.lock().chosen().map(str::to_owned)
    }

    /// The open channel, if the chosen address has one.
    fn open(&self) -> Option<(String, RpcClient)> {
        let list = self.list.lock();
        let current = self.current.lock();
        match (&*current, list.chosen()) {
            (Some((addr, client)), Some(chosen)) if addr == chosen && !client.is_closed() => {
                Some((addr.clone(), client.clone()))
            }
            _ => None,
        }
    }

    /// Java `getAndCreateNameserverChannel`: the chosen channel while it is
    /// connected, else the next address of the ring, connected now.
    async fn channel(&self) -> Result<(String, RpcClient), RouteError> {
        if let Some(open) = self.open() {
            return Ok(open);
        }
        let _guard = tokio::time::timeout(self.config.lock_timeout, self.connect_lock.lock())
            .await
            .map_err(|_| RouteError::ChannelLockTimeout)?;
        if let Some(open) = self.open() {
            return Ok(open);
        }
        let addr = self.list.lock().rotate().ok_or(RouteError::NoNameServer)?;
        self.connect(addr).await
    }

    async fn connect(&self, addr: String) -> Result<(String, RpcClient), RouteError> {
        let config = ClientConfig {
            connect_timeout: self.config.connect_timeout,
            inbound_capacity: 0,
            tls: self.tls.clone(),
            request_hook: self.signer.clone(),
            ..ClientConfig::default()
        };
        let previous = self.current.lock().take();
        if let Some((_, old)) = previous {
            old.close();
        }
        tracing::debug!(%addr, "connecting to name server");
        let client = RpcClient::connect(addr.as_str(), config).await?;
        *self.current.lock() = Some((addr.clone(), client.clone()));
        Ok((addr, client))
    }

    fn close(&self, client: &RpcClient) {
        client.close();
        let mut current = self.current.lock();
        if current
            .as_ref()
            .is_some_and(|(_, c)| c.peer_addr() == client.peer_addr())
        {
            *current = None;
        }
    }

    /// Sends `request` to the chosen NameServer and waits for the answer,
    /// `timeout` counting from the call (time spent obtaining the channel
    /// is deducted; none left → timeout without sending).
    ///
    /// # Errors
    /// [`RouteError::NoNameServer`], [`RouteError::ChannelLockTimeout`],
    /// [`RouteError::Transport`] (connect, closed, timeout) and
    /// [`RouteError::GoAway`]; a response with any code is `Ok`.
    pub async fn invoke(
        &self,
        request: RemotingCommand,
        timeout: Duration,
    ) -> Result<RemotingCommand, RouteError> {
        let start = Instant::now();
        let (addr, client) = match self.channel().await {
            Err(RouteError::Transport(ClientError::Connect { .. }))
                if self.config.retry_next_on_connect_error && self.addrs().len() > 1 =>
            {
                self.channel().await?
            }
            other => other?,
        };
        let response = self.send(&client, request.clone(), start, timeout).await?;
        if response.response_code() != ResponseCode::GoAway || !self.config.reconnect_for_go_away {
            return Ok(response);
        }
        tracing::info!(%addr, "name server is going away; reconnecting once");
        self.close(&client);
        let (_, client) = {
            let _guard = tokio::time::timeout(self.config.lock_timeout, self.connect_lock.lock())
                .await
                .map_err(|_| RouteError::ChannelLockTimeout)?;
            self.connect(addr.clone()).await?
        };
        let retried = self.send(&client, request, start, timeout).await?;
        if retried.response_code() == ResponseCode::GoAway {
            self.close(&client);
            return Err(RouteError::GoAway { addr });
        }
        Ok(retried)
    }

    async fn send(
        &self,
        client: &RpcClient,
        request: RemotingCommand,
        start: Instant,
        timeout: Duration,
    ) -> Result<RemotingCommand, RouteError> {
        let left = timeout.saturating_sub(start.elapsed());
        if left.is_zero() {
            return Err(ClientError::Timeout {
                addr: client.peer_addr(),
                timeout,
            }
            .into());
        }
        match client.invoke(request, left).await {
            Ok(response) => Ok(response),
            Err(error) => {
                let close = match &error {
                    ClientError::Timeout { .. } => {
                        self.config.close_socket_if_timeout
                            && (left > MIN_CLOSE_TIMEOUT || left > timeout / 4)
                    }
                    _ => true,
                };
                if close {
                    self.close(client);
                }
                Err(error.into())
            }
        }
    }
}
