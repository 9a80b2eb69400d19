//! Talking to an AutoSwitch-HA controller group: what a node says about the
//! group ([`metadata`], CONTROLLER_GET_METADATA_INFO) and [`on_leader`], which
//! sends a leader-only request where it is served.
//!
//! Only the Raft leader serves the decisions and reads (GET_SYNC_STATE_DATA,
//! ELECT_MASTER, CLEAN_BROKER_DATA); every other node answers
//! CONTROLLER_NOT_LEADER. As mqadmin does, the leader is found by asking the
//! given nodes for their metadata, so any one node's address is enough.
//! Owns that search and its retries; what is sent and shown is `commands`'.

use std::future::Future;
use std::time::Duration;

use rmq_protocol::headers::GetMetaDataResponseHeader;
use rmq_wire::{RequestCode, ResponseCode};
use serde::Serialize;

use crate::error::CallError;
use crate::namesrv::{fan_out, request, Answer, ConnectOptions, Session};

/// How often the leader is looked for before giving up: a group that is
/// electing, or a new leader that does not serve yet, is asked again.
const LEADER_ATTEMPTS: usize = 3;

/// The pause between those attempts: about one Raft election.
const RETRY_PAUSE: Duration = Duration::from_millis(700);

/// What one controller node says about its group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// `controllerDLegerGroup`.
    pub group: Option<String>,
    /// The leader's peer id (`n0`), if the node knows one.
    pub controller_leader_id: Option<String>,
    /// The leader's address, if the node knows one.
    pub controller_leader_address: Option<String>,
    /// Whether the node answering is the leader (and serves).
    pub is_leader: bool,
    /// Every peer, `n0:127.0.0.1:9878`, in the order the node lists them.
    pub peers: Vec<String>,
}

impl From<GetMetaDataResponseHeader> for Metadata {
    fn from(header: GetMetaDataResponseHeader) -> Metadata {
        let blank_to_none = |value: Option<String>| value.filter(|v| !v.trim().is_empty());
        Metadata {
            group: header.group,
            controller_leader_id: blank_to_none(header.controller_leader_id),
            controller_leader_address: blank_to_none(header.controller_leader_address),
            is_leader: header.is_leader,
            peers: header
                .peers
                .unwrap_or_default()
                .split(';')
                .map(str::trim)
                .filter(|peer| !peer.is_empty())
                .map(str::to_owned)
                .collect(),
        }
    }
}

/// CONTROLLER_GET_METADATA_INFO on one node.
///
/// # Errors
/// Transport failures, an error response, or a header that does not decode.
pub async fn metadata(session: &Session) -> Result<Metadata, CallError> {
    let response = session
        .call(request(RequestCode::ControllerGetMetadataInfo, None))
        .await?;
    let header: GetMetaDataResponseHeader = response
        .header()
        .map_err(|e| CallError::Decode(e.to_string()))?;
    Ok(header.into())
}

/// The leader named by the answers: a node that says it is the leader wins,
/// else the first (in the order given) that names one.
fn leader(found: &[Answer<Metadata>]) -> Option<String> {
    let named = |m: &Metadata| m.controller_leader_address.clone();
    let answered = || found.iter().filter_map(|a| a.result.as_ref().ok());
    answered()
        .filter(|m| m.is_leader)
        .find_map(named)
        .or_else(|| answered().find_map(named))
}

/// Runs `job` on the controller leader, found through the metadata of the
/// nodes at `addrs` (asked concurrently).
///
/// Returns one answer, the leader's, when a leader was named; otherwise one
/// per address, each saying why it named none ([`CallError::NoLeader`] for a
/// node that answered without a leader). While some node answers but no
/// leader is known, or the named leader answers CONTROLLER_NOT_LEADER (it
/// does not serve yet, or lost leadership), the search is repeated, at most
/// [`LEADER_ATTEMPTS`] times; such an answer means nothing was done, so
/// repeating a write is safe.
pub async fn on_leader<T, F, Fut>(
    addrs: &[String],
    options: &ConnectOptions,
    job: F,
) -> Vec<Answer<T>>
where
    F: Fn(Session) -> Fut,
    Fut: Future<Output = Result<T, CallError>>,
{
    let mut attempt = 1;
    loop {
        let found = fan_out(
            addrs,
            options,
            |session| async move { metadata(&session).await },
        )
        .await;
        let last = attempt >= LEADER_ATTEMPTS;
        attempt += 1;
        let Some(addr) = leader(&found) else {
            if found.iter().any(|a| a.result.is_ok()) && !last {
                tokio::time::sleep(RETRY_PAUSE).await;
                continue;
            }
            return found
                .into_iter()
                .map(|a| Answer {
                    addr: a.addr,
                    result: a.result.and_then(|_| Err(CallError::NoLeader)),
                })
                .collect();
        };
        let result = match Session::open(&addr, options).await {
            Ok(session) => job(session).await,
            Err(error) => Err(error),
        };
        let not_leader = result.as_ref().err().and_then(CallError::response_code)
            == Some(ResponseCode::ControllerNotLeader.into());
        if not_leader && !last {
            tokio::time::sleep(RETRY_PAUSE).await;
            continue;
        }
        return vec![Answer { addr, result }];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(addr: &str, result: Result<Metadata, CallError>) -> Answer<Metadata> {
        Answer {
            addr: addr.to_owned(),
            result,
        }
    }

    fn naming(leader: Option<&str>, is_leader: bool) -> Metadata {
        Metadata {
            group: Some("group1".into()),
            controller_leader_id: leader.map(|_| "n1".to_owned()),
            controller_leader_address: leader.map(str::to_owned),
            is_leader,
            peers: Vec::new(),
        }
    }

    #[test]
    fn metadata_splits_the_peers_and_drops_blank_leaders() {
        let metadata = Metadata::from(GetMetaDataResponseHeader {
            group: Some("group1".into()),
            controller_leader_id: Some(String::new()),
            controller_leader_address: None,
            is_leader: false,
            peers: Some("n0:127.0.0.1:9878;n1:127.0.0.1:9868;".into()),
        });
        assert_eq!(metadata.peers, ["n0:127.0.0.1:9878", "n1:127.0.0.1:9868"]);
        assert_eq!(metadata.controller_leader_id, None);
    }

    #[test]
    fn the_node_that_leads_is_believed_first() {
        let found = [
            answer("a:1", Err(CallError::Closed)),
            answer("b:2", Ok(naming(Some("old:1"), false))),
            answer("c:3", Ok(naming(Some("c:3"), true))),
        ];
        assert_eq!(leader(&found).as_deref(), Some("c:3"));
        assert_eq!(leader(&found[..2]).as_deref(), Some("old:1"));
        assert_eq!(leader(&[answer("b:2", Ok(naming(None, false)))]), None);
    }
}
