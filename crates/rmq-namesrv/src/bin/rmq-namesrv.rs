//! `rmq-namesrv`: parse flags, load configuration, bind, serve.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context};
use clap::Parser;
use rmq_namesrv::{KvStore, Namesrv, NamesrvConfig};
use rmq_wire::SerializeType;

/// A drop-in Apache RocketMQ NameServer.
///
/// Reads the same properties file as Java's `mqnamesrv -c` and answers every
/// NameServer request code. With no options it listens on 0.0.0.0:9876 and
/// keeps its KV store in ~/namesrv/kvConfig.json.
#[derive(Debug, Parser)]
#[command(
    name = "rmq-namesrv",
    version,
    after_help = "Examples:\n  rmq-namesrv\n  rmq-namesrv -c conf/namesrv.properties\n  rmq-namesrv --listen 127.0.0.1:19876 --set supportActingMaster=true\n  rmq-namesrv -p\n\nEnvironment: ROCKETMQ_HOME, ROCKETMQ_SERIALIZE_TYPE (JSON or ROCKETMQ), RUST_LOG (e.g. info, rmq_namesrv=debug)."
)]
struct Args {
    /// Java properties file (NamesrvConfig and NettyServerConfig keys); it is
    /// also where UPDATE_NAMESRV_CONFIG persists.
    #[arg(short = 'c', long = "configFile", value_name = "FILE")]
    config_file: Option<PathBuf>,
    /// Print every option as name=value and exit.
    #[arg(short = 'p', long = "printConfigItem")]
    print_config: bool,
    /// Accepted for compatibility with mqnamesrv; has no effect.
    #[arg(short = 'n', long = "namesrvAddr", value_name = "LIST")]
    namesrv_addr: Option<String>,
    /// Listen address, overriding bindAddress and listenPort (`host:port` or `port`).
    #[arg(short = 'l', long, value_name = "ADDR")]
    listen: Option<String>,
    /// Set any option, as in the properties file; repeatable.
    #[arg(short = 's', long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();

    let config = load_config(&args)?;
    if args.print_config {
        let mut out = std::io::stdout().lock();
        for (key, value) in config.to_properties() {
            writeln!(out, "{key}={value}")?;
        }
        return Ok(());
    }
    let serialize_type = match std::env::var("ROCKETMQ_SERIALIZE_TYPE") {
        Err(_) => SerializeType::Json,
        Ok(name) => SerializeType::from_name(&name).with_context(|| {
            format!("ROCKETMQ_SERIALIZE_TYPE must be JSON or ROCKETMQ, not {name:?}")
        })?,
    };
    let kv = KvStore::load(&config.kv_config_path)?;
    let address = format!("{}:{}", config.bind_address, config.listen_port);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let mut config = config;
        let listener = tokio::net::TcpListener::bind(&address)
            .await
            .with_context(|| format!("cannot listen on {address}"))?;
        let local = listener.local_addr()?;
        // With port 0 the OS picks one; report that one (GET_NAMESRV_CONFIG).
        config.listen_port = i32::from(local.port());
        let (state, queues) = Namesrv::new(config, kv);
        // Deployment scripts and health checks grep stdout for this line.
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "The Name Server boot success. serializeType={}, address {local}",
            serialize_type.name()
        )?;
        out.flush()?;
        drop(out);
        rmq_namesrv::server::run(
            listener,
            Arc::new(state),
            queues,
            serialize_type,
            shutdown_signal(),
        )
        .await?;
        tracing::info!("name server stopped");
        Ok(())
    })
}

fn load_config(args: &Args) -> anyhow::Result<NamesrvConfig> {
    let mut config = NamesrvConfig::from_env();
    if let Some(path) = &args.config_file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config file {}", path.display()))?;
        let properties = rmq_protocol::properties::parse(&text)
            .with_context(|| format!("{} is not a properties file", path.display()))?;
        for key in config.apply_file(&properties) {
            tracing::warn!(%key, file = %path.display(), "unknown configuration key ignored");
        }
        config.config_store_path = path.to_string_lossy().into_owned();
        eprintln!("load config properties file OK, {}", path.display());
    }
    let mut overrides = BTreeMap::new();
    for pair in &args.set {
        let Some((key, value)) = pair.split_once('=') else {
            bail!("--set expects KEY=VALUE, got {pair:?}");
        };
        overrides.insert(key.trim().to_owned(), value.to_owned());
    }
    for key in config.apply_file(&overrides) {
        tracing::warn!(%key, "unknown configuration key ignored");
    }
    if let Some(listen) = &args.listen {
        let (host, port) = match listen.rsplit_once(':') {
            Some((host, port)) => (Some(host), port),
            None => (None, listen.as_str()),
        };
        let port: u16 = port
            .parse()
            .with_context(|| format!("bad port in --listen {listen:?}"))?;
        config.listen_port = i32::from(port);
        if let Some(host) = host {
            config.bind_address = host.to_owned();
        }
    }
    Ok(config)
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
    tracing::info!("shutdown signal received, draining");
}
