//! `rmq-controller`: parse flags, load configuration, bind, serve.

// jemalloc, not the C library's allocator: glibc keeps what a flood of
// connections freed in its arenas (about 7 KiB per closed connection stayed
// resident), and giving it back would take unsafe FFI (malloc_trim). With
// jemalloc's background thread and the decay of .cargo/config.toml, freed
// pages go back to the system within seconds.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use rmq_controller::server::Security;
use rmq_controller::{ControllerConfig, ControllerNode};
use rmq_transport::auth::{self, AuthKeys, ServerSecurity};
use rmq_transport::ServerLimits;
use rmq_wire::SerializeType;

/// A drop-in Apache RocketMQ AutoSwitch-HA controller.
///
/// Reads the same properties file as Java's `mqcontroller -c`
/// (controllerDLegerGroup, controllerDLegerPeers, controllerDLegerSelfId,
/// controllerStorePath, …) and listens on this node's port of
/// controllerDLegerPeers, where brokers (controllerAddr), mqadmin and the
/// other controller nodes reach it.
#[derive(Debug, Parser)]
#[command(
    name = "rmq-controller",
    version,
    after_help = "Examples:\n  rmq-controller -c conf/controller.properties\n  rmq-controller --set controllerDLegerGroup=group1 --set controllerDLegerPeers=n0-127.0.0.1:9878 --set controllerDLegerSelfId=n0\n  rmq-controller -c conf/controller.properties -p\n\nEnvironment: ROCKETMQ_HOME, ROCKETMQ_SERIALIZE_TYPE (JSON or ROCKETMQ), RUST_LOG (e.g. info, rmq_controller=debug)."
)]
struct Args {
    /// Java properties file (ControllerConfig keys); it is also where
    /// UPDATE_CONTROLLER_CONFIG persists.
    #[arg(short = 'c', long = "configFile", value_name = "FILE")]
    config_file: Option<PathBuf>,
    /// Print every option as name=value and exit.
    #[arg(short = 'p', long = "printConfigItem")]
    print_config: bool,
    /// Set any option, as in the properties file; repeatable.
    #[arg(short = 's', long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,openraft=error")),
        )
        .with_writer(std::io::stderr)
        // Colour codes only for a terminal: in a redirected log file they are noise.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();

    let (config, limits, properties) = load_config(&args)?;
    let security = ServerSecurity::from_properties(&properties, rmq_auth::CONTROLLER_REQUIREMENTS)
        .map_err(|why| anyhow::anyhow!("invalid configuration, not starting: {why}"))?;
    if args.print_config {
        let mut out = std::io::stdout().lock();
        for (key, value) in config.to_properties() {
            writeln!(out, "{key}={value}")?;
        }
        writeln!(
            out,
            "# connection and memory limits, frame limit, trusted proxies, dead-peer detection (Waymark's own keys, docs/configuration.md)"
        )?;
        for (key, value) in limits.to_properties() {
            writeln!(out, "{key}={value}")?;
        }
        out.write_all(security.print_lines(&properties).as_bytes())?;
        return Ok(());
    }
    for warning in config.warnings(&ControllerConfig::from_env()) {
        tracing::warn!("{warning}");
    }
    security.log_start(
        "register broker replicas, elect masters and change the controller's configuration",
    );
    limits.log_start();
    let serialize_type = match std::env::var("ROCKETMQ_SERIALIZE_TYPE") {
        Err(_) => SerializeType::Json,
        Ok(name) => SerializeType::from_name(&name).with_context(|| {
            format!("ROCKETMQ_SERIALIZE_TYPE must be JSON or ROCKETMQ, not {name:?}")
        })?,
    };
    let address = config.listen_address()?;
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
    let store_dir = config.store_dir(&home);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&address)
            .await
            .with_context(|| format!("cannot listen on {address}"))?;
        let local = listener.local_addr()?;
        let node =
            ControllerNode::start_with_tls(config, &store_dir, security.outgoing_tls.clone())
                .await
                .with_context(|| {
                    format!(
                        "cannot start the controller (store {})",
                        store_dir.display()
                    )
                })?;
        // Deployment scripts and health checks grep stdout for this line.
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "{}",
            rmq_controller::server::boot_line(serialize_type, local)
        )?;
        out.flush()?;
        drop(out);
        rmq_controller::server::run(
            listener,
            node,
            serialize_type,
            &limits,
            Security {
                guard: security.guard,
                tls: security.tls,
            },
            rmq_transport::shutdown::terminated(),
        )
        .await?;
        tracing::info!("controller stopped");
        Ok(())
    })
}

/// Loads the file, then `--set`; refuses to start on a value a key cannot
/// take (naming where it came from), as Java's setters would silently keep
/// the default instead.
fn load_config(
    args: &Args,
) -> anyhow::Result<(ControllerConfig, ServerLimits, BTreeMap<String, String>)> {
    let mut config = ControllerConfig::from_env();
    let mut limits = ServerLimits::new();
    let mut refusals = Vec::new();
    let mut all = BTreeMap::new();
    let mut apply = |origin: &str, properties: &BTreeMap<String, String>| {
        all.extend(properties.clone());
        for (key, value) in properties {
            let checked = if ServerLimits::KEYS.contains(&key.as_str()) {
                ServerLimits::check(key, value)
            } else if AuthKeys::KEYS.contains(&key.as_str()) {
                AuthKeys::check(key, value)
            } else if auth::is_security_key(key) {
                // TLS keys: checked together when the TLS settings are built.
                Ok(())
            } else {
                ControllerConfig::check_update(key, value)
            };
            if let Err(why) = checked {
                refusals.push(format!("{origin}: {why} (got {value:?})"));
            }
            limits.set(key, value);
        }
        config.apply_file(properties);
    };
    let mut store_path = None;
    if let Some(path) = &args.config_file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config file {}", path.display()))?;
        let properties = rmq_protocol::properties::parse(&text)
            .with_context(|| format!("{} is not a properties file", path.display()))?;
        apply(&path.display().to_string(), &properties);
        store_path = Some(path.to_string_lossy().into_owned());
        eprintln!("load config properties file OK, {}", path.display());
    }
    let overrides = rmq_protocol::properties::parse_assignments(&args.set)
        .map_err(|e| anyhow::anyhow!("--set {e}"))?;
    apply("--set", &overrides);
    if !refusals.is_empty() {
        anyhow::bail!(
            "invalid configuration, not starting:\n  {}",
            refusals.join("\n  ")
        );
    }
    if let Some(path) = store_path {
        config.config_store_path = path;
    }
    // The limit and security keys are not the controller's options: not
    // kept as unknown ones (GET_CONTROLLER_CONFIG, the persisted file) either.
    config.extra.retain(|key, _| {
        !ServerLimits::KEYS.contains(&key.as_str()) && !auth::is_security_key(key)
    });
    Ok((config, limits, all))
}
