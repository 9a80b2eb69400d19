//! A heartbeat load for one controller node, for counting what a one-way
//! BROKER_HEARTBEAT costs the node: instructions are repeatable on a busy
//! machine where CPU time is not.
//!
//! Joins `--replicas` broker replicas (sets of three, as 5.5.1 brokers join:
//! CONTROLLER_GET_NEXT_BROKER_ID, CONTROLLER_APPLY_BROKER_ID,
//! CONTROLLER_REGISTER_BROKER, one heartbeat, then CONTROLLER_ELECT_MASTER
//! from the first replica of each set), each on its own connection, prints
//! `joined` and waits for a line on stdin. Then every replica sends
//! `--rounds` one-way heartbeats, one replica at a time with `--pause-us`
//! between sends (so that each heartbeat arrives on its own, as spread-out
//! brokers' do), followed by one CONTROLLER_GET_METADATA_INFO on every
//! connection, whose answer proves that the node has read everything sent
//! before it. Prints `sent <heartbeats>` and waits for another line before
//! it closes the connections.
//!
//! With the node (a one-node group) under callgrind:
//!
//! ```sh
//! taskset -c 1 valgrind --tool=callgrind --callgrind-out-file=node.cg \
//!   target/release/rmq-controller --set controllerDLegerGroup=g1 \
//!   --set controllerDLegerPeers=n0-127.0.0.1:9878 --set controllerDLegerSelfId=n0 \
//!   --set controllerStorePath=/tmp/c/store --set configStorePath=/tmp/c/c.properties &
//! taskset -c 0 target/release/examples/heartbeat_load --addr 127.0.0.1:9878 --rounds 12
//! # after `joined`: callgrind_control -z <node pid>, then a line to the load;
//! # after `sent`: callgrind_control -d <node pid>, then a line to the load.
//! ```
//!
//! The dump holds the rounds and the closing requests; the difference
//! between two runs with different `--rounds`, divided by the difference in
//! heartbeats, is the cost of one heartbeat.

use std::io::{BufRead, Write};
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Parser;
use rmq_transport::{ClientConfig, RpcClient};
use rmq_wire::{ExtFields, RemotingCommand, RequestCode, ResponseCode};

/// A heartbeat load for one controller node.
#[derive(Debug, Parser)]
struct Args {
    /// The node's address.
    #[arg(long)]
    addr: String,
    /// Broker replicas, each on its own connection (sets of three).
    #[arg(long, default_value_t = 300)]
    replicas: usize,
    /// Heartbeats each replica sends after the join.
    #[arg(long, default_value_t = 10)]
    rounds: usize,
    /// Pause between two heartbeats, µs.
    #[arg(long, default_value_t = 2_000)]
    pause_us: u64,
    /// Do not wait for stdin (no counters to zero or dump).
    #[arg(long)]
    no_wait: bool,
}

const CLUSTER: &str = "DefaultCluster";
const TIMEOUT: Duration = Duration::from_secs(60);

/// A request as a 5.5.1 broker sends it (version 515).
fn request(code: RequestCode, ext: &[(&str, &str)]) -> RemotingCommand {
    let mut command = RemotingCommand::request(code, 0);
    command.version = 515;
    command.ext_fields = Some(
        ext.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<ExtFields>(),
    );
    command
}

/// Sends `request`, again while the node is not (yet) the leader.
async fn call(client: &RpcClient, request: RemotingCommand) -> anyhow::Result<RemotingCommand> {
    for _ in 0..100 {
        let response = client.invoke(request.clone(), TIMEOUT).await?;
        if response.code == i32::from(ResponseCode::ControllerNotLeader) {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        }
        if response.code != 0 {
            bail!("refused: {response:?}");
        }
        return Ok(response);
    }
    bail!("the node did not become the leader")
}

struct Replica {
    client: RpcClient,
    name: String,
    addr: String,
    id: i64,
}

impl Replica {
    async fn join(node: &str, name: String, addr: String) -> anyhow::Result<Replica> {
        let client = RpcClient::connect(node, ClientConfig::default()).await?;
        let next = call(
            &client,
            request(
                RequestCode::ControllerGetNextBrokerId,
                &[("clusterName", CLUSTER), ("brokerName", &name)],
            ),
        )
        .await?;
        let id: i64 = next
            .ext("nextBrokerId")
            .context("no nextBrokerId")?
            .parse()?;
        let id_text = id.to_string();
        let code = format!("{addr};1700000000000");
        call(
            &client,
            request(
                RequestCode::ControllerApplyBrokerId,
                &[
                    ("clusterName", CLUSTER),
                    ("brokerName", &name),
                    ("appliedBrokerId", &id_text),
                    ("registerCheckCode", &code),
                ],
            ),
        )
        .await?;
        call(
            &client,
            request(
                RequestCode::ControllerRegisterBroker,
                &[
                    ("clusterName", CLUSTER),
                    ("brokerName", &name),
                    ("brokerId", &id_text),
                    ("brokerAddress", &addr),
                ],
            ),
        )
        .await?;
        Ok(Replica {
            client,
            name,
            addr,
            id,
        })
    }

    /// The heartbeat a 5.5.1 broker sends its controllers (about 300 bytes).
    fn heartbeat(&self, max_offset: i64) -> RemotingCommand {
        let mut command = request(
            RequestCode::BrokerHeartbeat,
            &[
                ("clusterName", CLUSTER),
                ("brokerAddr", &self.addr),
                ("brokerName", &self.name),
                ("brokerId", &self.id.to_string()),
                ("epoch", "1"),
                ("maxOffset", &max_offset.to_string()),
                ("confirmOffset", &max_offset.to_string()),
                ("heartbeatTimeoutMills", "10000"),
                ("electionPriority", &i32::MAX.to_string()),
            ],
        );
        command.language = rmq_wire::LanguageCode::Java;
        command
    }
}

/// A line on stdout, flushed at once: whoever drives the load waits for it.
fn say(line: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")?;
    out.flush()?;
    Ok(())
}

fn wait_for_line() -> anyhow::Result<()> {
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut replicas = Vec::with_capacity(args.replicas);
    for r in 0..args.replicas {
        let name = format!("load-{}", r / 3);
        let addr = format!("127.0.0.{}:{}", 2 + r % 200, 30_000 + r);
        let replica = Replica::join(&args.addr, name, addr)
            .await
            .with_context(|| format!("replica {r} joins"))?;
        replica.client.invoke_oneway(replica.heartbeat(0))?;
        replicas.push(replica);
    }
    for first in replicas.iter().step_by(3) {
        let id = first.id.to_string();
        // The heartbeat went one-way: retry until it has been read.
        let mut attempts = 0;
        loop {
            let answer = first
                .client
                .invoke(
                    request(
                        RequestCode::ControllerElectMaster,
                        &[
                            ("clusterName", CLUSTER),
                            ("brokerName", &first.name),
                            ("brokerId", &id),
                            ("designateElect", "false"),
                        ],
                    ),
                    TIMEOUT,
                )
                .await?;
            if answer.code == 0 {
                break;
            }
            attempts += 1;
            if attempts > 50 {
                bail!("no master for {}: {answer:?}", first.name);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    say(&format!("joined {}", replicas.len()))?;
    if !args.no_wait {
        tokio::task::block_in_place(wait_for_line)?;
    }
    let pause = Duration::from_micros(args.pause_us);
    let mut sent = 0u64;
    for round in 0..args.rounds {
        for replica in &replicas {
            let offset = i64::try_from(round + 1)? * 1024;
            replica.client.invoke_oneway(replica.heartbeat(offset))?;
            sent += 1;
            if !pause.is_zero() {
                tokio::time::sleep(pause).await;
            }
        }
    }
    for replica in &replicas {
        call(
            &replica.client,
            request(RequestCode::ControllerGetMetadataInfo, &[]),
        )
        .await?;
    }
    say(&format!("sent {sent}"))?;
    if !args.no_wait {
        tokio::task::block_in_place(wait_for_line)?;
    }
    Ok(())
}
