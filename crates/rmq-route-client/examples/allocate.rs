//! Which queues of a topic each consumer of a group gets, computed the way a
//! Rust consumer built on this crate computes them: route from the
//! NameServer(s) → subscribe view → [`rebalance`] with the named strategy.
//! Prints one JSON document; the interop tests compare it, queue for queue,
//! with what real Java consumers of the same group were assigned.
//!
//! ```text
//! cargo run -p rmq-route-client --example allocate -- \
//!     --namesrv '127.0.0.1:9876;127.0.0.1:9877' --topic TopicTest \
//!     --strategy AVG --consumer 127.0.0.1@a --consumer 127.0.0.1@b
//! ```
//!
//! Strategies by their Java names: `AVG`, `AVG_BY_CIRCLE`, `CONSISTENT_HASH`
//! (`--virtual-nodes`, default 10), `CONFIG` (`--config-queue broker:id`,
//! repeated), `MACHINE_ROOM` (`--idc room`, repeated) and
//! `MACHINE_ROOM_NEARBY-<inner>` (`--room name=room`, repeated, for broker
//! names and consumer ids alike). Output:
//!
//! ```text
//! {"topic":"TopicTest","strategy":"AVG","group":"G",
//!  "queues":[{"brokerName":"broker-a","queueId":0},...],
//!  "allocation":{"127.0.0.1@a":[{"brokerName":"broker-a","queueId":0},...],...}}
//! ```
//!
//! `queues` is the subscribe view in Java's allocation order. Exit code 1
//! when there is no route or the strategy refuses, 2 on a usage error.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use rmq_route_client::allocate::{
    rebalance, AllocateAveragely, AllocateAveragelyByCircle, AllocateByConfig,
    AllocateByMachineRoom, AllocateConsistentHash, AllocateMachineRoomNearby, MachineRoomResolver,
};
use rmq_route_client::{AllocateStrategy, MessageQueue, RouteClient, RouteClientConfig};
use serde_json::{json, Value};

/// Queue allocation of a consumer group, as rmq-route-client computes it.
#[derive(Debug, Parser)]
struct Args {
    /// NameServer address(es), `host:port;host:port`.
    #[arg(long)]
    namesrv: String,
    /// The subscribed topic.
    #[arg(long)]
    topic: String,
    /// Java strategy name: AVG, AVG_BY_CIRCLE, CONSISTENT_HASH, CONFIG,
    /// MACHINE_ROOM or MACHINE_ROOM_NEARBY-<inner>.
    #[arg(long)]
    strategy: String,
    /// A client id of the group (repeat for each consumer; any order).
    #[arg(long = "consumer", required = true)]
    consumers: Vec<String>,
    /// The consumer group (no strategy of Java's uses it; passed through).
    #[arg(long, default_value = "WaymarkAllocateGroup")]
    group: String,
    /// CONSISTENT_HASH: virtual nodes per consumer.
    #[arg(long, default_value_t = 10)]
    virtual_nodes: usize,
    /// CONFIG: a configured queue `brokerName:queueId` (repeat).
    #[arg(long = "config-queue")]
    config_queues: Vec<String>,
    /// MACHINE_ROOM: a consumed room (repeat).
    #[arg(long = "idc")]
    idcs: Vec<String>,
    /// MACHINE_ROOM_NEARBY-*: `name=room` for a broker name or a client id
    /// (repeat); a name without one has no room, which the strategy rejects.
    #[arg(long = "room")]
    rooms: Vec<String>,
}

/// Rooms from `--room`, looked up by broker name and by client id.
struct Rooms(BTreeMap<String, String>);

impl MachineRoomResolver for Rooms {
    fn broker_deploy_in(&self, mq: &MessageQueue) -> String {
        self.0.get(&mq.broker_name).cloned().unwrap_or_default()
    }

    fn consumer_deploy_in(&self, client_id: &str) -> String {
        self.0.get(client_id).cloned().unwrap_or_default()
    }
}

fn strategy(args: &Args, name: &str) -> Result<Arc<dyn AllocateStrategy>, String> {
    Ok(match name {
        "AVG" => Arc::new(AllocateAveragely),
        "AVG_BY_CIRCLE" => Arc::new(AllocateAveragelyByCircle),
        "CONSISTENT_HASH" => Arc::new(AllocateConsistentHash::new(args.virtual_nodes)),
        "CONFIG" => {
            let queues = args
                .config_queues
                .iter()
                .map(|q| {
                    let (broker, id) = q
                        .rsplit_once(':')
                        .ok_or_else(|| format!("--config-queue {q}: want brokerName:queueId"))?;
                    let id = id
                        .parse()
                        .map_err(|e| format!("--config-queue {q}: queue id: {e}"))?;
                    Ok(MessageQueue::new(&*args.topic, broker, id))
                })
                .collect::<Result<Vec<_>, String>>()?;
            Arc::new(AllocateByConfig::new(queues))
        }
        "MACHINE_ROOM" => Arc::new(AllocateByMachineRoom::new(args.idcs.iter().cloned())),
        _ => {
            let inner = name
                .strip_prefix("MACHINE_ROOM_NEARBY-")
                .filter(|inner| !inner.starts_with("MACHINE_ROOM_NEARBY"))
                .ok_or_else(|| format!("unknown strategy {name}"))?;
            let rooms = args
                .rooms
                .iter()
                .map(|r| {
                    r.split_once('=')
                        .map(|(n, room)| (n.to_owned(), room.to_owned()))
                        .ok_or_else(|| format!("--room {r}: want name=room"))
                })
                .collect::<Result<BTreeMap<_, _>, String>>()?;
            Arc::new(AllocateMachineRoomNearby::new(
                strategy(args, inner)?,
                Arc::new(Rooms(rooms)),
            ))
        }
    })
}

fn queue_json(mq: &MessageQueue) -> Value {
    json!({ "brokerName": mq.broker_name, "queueId": mq.queue_id })
}

async fn run(args: &Args) -> Result<Value, String> {
    let strategy = strategy(args, &args.strategy)?;
    let client = RouteClient::new(RouteClientConfig::with_namesrv_addr(&args.namesrv));
    // A consumer follows its topic through `watch`, which fetches the first
    // route; the view it hands out carries the subscribe set.
    let watch = client.watch(&args.topic).await;
    let view = watch.borrow().clone();
    let Some(view) = view else {
        // `watch` only logs a failed first fetch; ask once more for the reason.
        let why = match client.update_route(&args.topic).await {
            Err(e) => e.to_string(),
            Ok(_) => "the NameServer gave no route".to_owned(),
        };
        return Err(format!(
            "no route of {} from {}: {why}",
            args.topic, args.namesrv
        ));
    };
    let mut allocation = serde_json::Map::new();
    for current in &args.consumers {
        let mine: BTreeSet<MessageQueue> = rebalance(
            &*strategy,
            &args.group,
            current,
            &view.subscribe,
            &args.consumers,
        )
        .map_err(|e| format!("{} refused for {current}: {e}", strategy.name()))?;
        allocation.insert(
            current.clone(),
            Value::Array(mine.iter().map(queue_json).collect()),
        );
    }
    Ok(json!({
        "topic": args.topic,
        "strategy": strategy.name(),
        "group": args.group,
        "queues": view.subscribe.iter().map(queue_json).collect::<Vec<_>>(),
        "allocation": allocation,
    }))
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "allocate: runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(&args)) {
        Ok(out) => {
            let mut stdout = std::io::stdout().lock();
            if writeln!(stdout, "{out}").is_err() {
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "allocate: {e}");
            ExitCode::FAILURE
        }
    }
}
