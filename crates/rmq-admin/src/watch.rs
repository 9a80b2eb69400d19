//! `route watch`: topics' routes, then each change as it happens, one line
//! each with a timestamp.
//!
//! Follows one NameServer, the first of `-n` that can be subscribed to. A
//! NameServer with route push (Waymark) sends each change as it applies it;
//! after a lost connection the subscription resumes from its cursor, so no
//! change is missed. A NameServer without (Java's) is polled. Unlike the
//! other commands this one streams: lines are written as they come, not
//! gathered into a report.

use std::collections::HashMap;
use std::io::Write;
use std::time::Duration;

use rmq_protocol::route_push::Cursor;
use rmq_protocol::{JavaJson, TopicRouteData};
use rmq_route_client::push::{PushConfig, PushError, PushEvent, RouteSubscription};
use rmq_route_client::{route_from_response, route_request, RouteClientConfig, RouteError};
use rmq_transport::RpcClient;
use rmq_wire::ResponseCode;
use serde_json::json;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::error::{EXIT_FAILED, EXIT_OK};
use crate::namesrv::ConnectOptions;
use crate::output::perm;

/// Wait before subscribing again after a lost connection.
const RECONNECT_DELAY: Duration = Duration::from_secs(1);

/// What `route watch` was asked to do.
#[derive(Debug, Clone)]
pub struct WatchRequest<'a> {
    /// The NameServers of `-n`, tried in order.
    pub addrs: &'a [String],
    /// The topics.
    pub topics: &'a [String],
    /// The poll period where there is no route push.
    pub poll: Duration,
    /// Exit after this many changes.
    pub count: Option<u64>,
    /// One JSON object per line.
    pub json: bool,
}

/// How a route line was learnt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// At start.
    Now,
    Push,
    Poll,
}

impl Source {
    fn as_str(self) -> &'static str {
        match self {
            Source::Now => "now",
            Source::Push => "push",
            Source::Poll => "poll",
        }
    }
}

/// The lines written so far and what they said.
struct Printer<W: Write> {
    out: W,
    json: bool,
    last: HashMap<String, Option<TopicRouteData>>,
    changes: u64,
    count: Option<u64>,
}

impl<W: Write> Printer<W> {
    /// Writes `topic`'s route if it differs from the last one written;
    /// `true` once `--count` changes have been written.
    fn show(&mut self, topic: &str, route: Option<TopicRouteData>, source: Source) -> bool {
        let source = match self.last.get(topic) {
            Some(last) if *last == route => return self.done(),
            Some(_) => source,
            None => Source::Now,
        };
        let line = if self.json {
            json!({
                "time": now(),
                "topic": topic,
                "source": source.as_str(),
                "route": route.as_ref().map(|route| serde_json::from_slice::<serde_json::Value>(&route.to_json(rmq_protocol::Dialect::Standard)).unwrap_or_default()),
            })
            .to_string()
        } else {
            format!(
                "{}  {topic}  {}  {}",
                now(),
                source.as_str(),
                summary(route.as_ref())
            )
        };
        // A closed pipe (`| head`) ends the output, not the process's duty.
        let _ = writeln!(self.out, "{line}");
        let _ = self.out.flush();
        if source != Source::Now {
            self.changes += 1;
        }
        self.last.insert(topic.to_owned(), route);
        self.done()
    }

    fn done(&self) -> bool {
        self.count.is_some_and(|count| self.changes >= count)
    }
}

/// The time now, UTC, RFC 3339 to the millisecond.
fn now() -> String {
    let now = OffsetDateTime::now_utc();
    // Whole milliseconds: the nanoseconds are noise next to a network hop.
    let now = now.replace_millisecond(now.millisecond()).unwrap_or(now);
    now.format(&Rfc3339).unwrap_or_else(|_| "-".to_owned())
}

/// `broker-a 0=10.0.0.1:10911 1=10.0.0.2:10911 read 4 write 4 perm 6(RW-); …`,
/// broker groups by name; `no route` for none.
pub fn summary(route: Option<&TopicRouteData>) -> String {
    let Some(route) = route else {
        return "no route (TOPIC_NOT_EXIST)".to_owned();
    };
    let mut queues: Vec<_> = route.queue_datas.iter().collect();
    queues.sort_by(|a, b| a.broker_name.cmp(&b.broker_name));
    let groups: Vec<String> = queues
        .iter()
        .map(|queue| {
            let addrs: Vec<String> = route
                .broker_datas
                .iter()
                .find(|group| group.broker_name == queue.broker_name)
                .map(|group| {
                    group
                        .broker_addrs
                        .iter()
                        .map(|(id, addr)| format!("{id}={addr}"))
                        .collect()
                })
                .unwrap_or_default();
            format!(
                "{} {} read {} write {} perm {}",
                queue.broker_name,
                if addrs.is_empty() {
                    "-".to_owned()
                } else {
                    addrs.join(" ")
                },
                queue.read_queue_nums,
                queue.write_queue_nums,
                perm(queue.perm)
            )
        })
        .collect();
    if groups.is_empty() {
        "no queues".to_owned()
    } else {
        groups.join("; ")
    }
}

/// Runs `route watch`, writing to `out`; the exit code: 0 after `--count`
/// changes, 3 when no NameServer could be followed.
pub async fn run<W: Write>(request: WatchRequest<'_>, connect: &ConnectOptions, out: W) -> u8 {
    let mut printer = Printer {
        out,
        json: request.json,
        last: HashMap::new(),
        changes: 0,
        count: request.count,
    };
    let config = PushConfig {
        connect_timeout: connect.timeout,
        request_timeout: connect.timeout,
        accept_standard_json_only: false,
        tls: connect.tls.clone(),
        credentials: connect.credentials.clone(),
    };
    let mut cursor: Option<Cursor> = None;
    let mut next_addr = 0;
    loop {
        let addr = &request.addrs[next_addr % request.addrs.len()];
        match follow(addr, &request, &config, &mut cursor, &mut printer).await {
            Ok(()) => return EXIT_OK,
            Err(PushError::NotSupported { .. }) => {
                eprintln!(
                    "note: NameServer {addr} has no route push (a Java NameServer?); polling every {} ms",
                    request.poll.as_millis()
                );
                return poll(addr, &request, connect, &mut printer).await;
            }
            Err(error) => {
                eprintln!("error: NameServer {addr}: {error}");
                next_addr += 1;
                // Once routes were printed, a lost NameServer is waited
                // for (or the next one taken); before, every one failing
                // is a failure of the command.
                if printer.last.is_empty() && next_addr >= request.addrs.len() {
                    return EXIT_FAILED;
                }
                tokio::time::sleep(RECONNECT_DELAY).await;
            }
        }
    }
}

/// Subscribes on `addr` (from `cursor` when every topic has been read) and
/// prints pushes; `Ok` once `--count` changes were printed.
async fn follow<W: Write>(
    addr: &str,
    request: &WatchRequest<'_>,
    config: &PushConfig,
    cursor: &mut Option<Cursor>,
    printer: &mut Printer<W>,
) -> Result<(), PushError> {
    let mut subscription = RouteSubscription::connect(addr, config.clone()).await?;
    let resume = cursor.filter(|_| {
        request
            .topics
            .iter()
            .all(|topic| printer.last.contains_key(topic))
    });
    subscription
        .subscribe(request.topics.iter().map(String::as_str), false, resume)
        .await?;
    eprintln!(
        "note: following {} topic(s) on {addr} by route push",
        request.topics.len()
    );
    loop {
        let event = subscription.next().await?;
        *cursor = subscription.cursor();
        if let PushEvent::Route { topic, route } = event {
            if printer.show(&topic, route, Source::Push) {
                return Ok(());
            }
        }
    }
}

/// Polls every topic every `request.poll`, printing changes.
async fn poll<W: Write>(
    addr: &str,
    request: &WatchRequest<'_>,
    connect: &ConnectOptions,
    printer: &mut Printer<W>,
) -> u8 {
    let mut ticks = tokio::time::interval(request.poll);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut client: Option<RpcClient> = None;
    loop {
        ticks.tick().await;
        for topic in request.topics {
            if client.as_ref().is_none_or(RpcClient::is_closed) {
                client = match RpcClient::connect(addr, connect.client_config()).await {
                    Ok(client) => Some(client),
                    Err(error) => {
                        eprintln!("error: NameServer {addr}: {error}");
                        break;
                    }
                };
            }
            let Some(connection) = &client else { break };
            // The route client's query and reading of the answer, with
            // Java's defaults (no zone, the version's dialect).
            let query = route_request(topic, &RouteClientConfig::default());
            let route = match connection.invoke(query, connect.timeout).await {
                Ok(answer) => match route_from_response(topic, &answer) {
                    Ok(route) => Some(route),
                    Err(RouteError::Response { code, .. })
                        if ResponseCode::from(code) == ResponseCode::TopicNotExist =>
                    {
                        None
                    }
                    Err(error) => {
                        eprintln!("error: NameServer {addr}: {topic}: {error}");
                        continue;
                    }
                },
                Err(error) => {
                    eprintln!("error: NameServer {addr}: {error}");
                    client = None;
                    break;
                }
            };
            if printer.show(topic, route, Source::Poll) {
                return EXIT_OK;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route() -> TopicRouteData {
        TopicRouteData::from_json(
            br#"{"brokerDatas":[{"brokerAddrs":{"0":"10.0.0.1:10911","1":"10.0.0.2:10911"},"brokerName":"broker-a","cluster":"C"}],
               "queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}"#,
        )
        .unwrap()
    }

    #[test]
    fn a_route_is_one_group_per_broker() {
        assert_eq!(
            summary(Some(&route())),
            "broker-a 0=10.0.0.1:10911 1=10.0.0.2:10911 read 4 write 4 perm 6(RW-)"
        );
        assert_eq!(summary(None), "no route (TOPIC_NOT_EXIST)");
    }

    #[test]
    fn only_changes_are_printed_and_counted() {
        let mut out = Vec::new();
        let mut printer = Printer {
            out: &mut out,
            json: false,
            last: HashMap::new(),
            changes: 0,
            count: Some(2),
        };
        assert!(
            !printer.show("T", Some(route()), Source::Push),
            "the first line is the start"
        );
        assert!(
            !printer.show("T", Some(route()), Source::Push),
            "unchanged: nothing"
        );
        let mut wiped = route();
        wiped.queue_datas[0].perm = 4;
        assert!(!printer.show("T", Some(wiped), Source::Push));
        assert!(
            printer.show("T", None, Source::Poll),
            "the second change ends it"
        );
        let text = String::from_utf8(out).unwrap();
        let sources: Vec<&str> = text
            .lines()
            .map(|line| line.split("  ").nth(2).unwrap())
            .collect();
        assert_eq!(sources, ["now", "push", "poll"]);
        assert!(
            text.lines().nth(1).unwrap().ends_with("perm 4(R--)"),
            "{text}"
        );
    }
}
