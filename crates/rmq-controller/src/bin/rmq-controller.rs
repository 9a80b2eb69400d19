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
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use rmq_controller::server::Security;
use rmq_controller::{ControllerConfig, ControllerNode};
use rmq_ops::http::Readiness;
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
    version = rmq_ops::build::LONG_VERSION,
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
    #[command(flatten)]
    log: rmq_ops::logging::LogArgs,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let _log = rmq_ops::logging::init(&args.log, "controller", "info,openraft=error")?;

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
            "# connection and memory limits, frame limit, trusted proxies, dead-peer detection, HTTP port (Waymark's own keys, docs/configuration.md)"
        )?;
        for (key, value) in limits.to_properties() {
            writeln!(out, "{key}={value}")?;
        }
        writeln!(out, "{HTTP_KEY}={}", http_address(&properties))?;
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
        let http_setting = http_address(&properties);
        let http = match http_setting.trim() {
            "" => {
                tracing::info!("httpListenAddr is empty: no HTTP port (metrics, health, dashboard)");
                None
            }
            address => {
                let explicit = properties.contains_key(HTTP_KEY);
                match rmq_ops::http::bind_port(address, explicit).await? {
                    Some(listener) => {
                        let mut registry = prometheus_client::registry::Registry::default();
                        rmq_ops::metrics::build_info(&mut registry, "controller");
                        rmq_controller::metrics::register(&mut registry, &node);
                        registry.register_collector(Box::new(rmq_ops::process::ProcessCollector));
                        // The node serves once its listener is bound and its
                        // Raft log is open: ready from here on.
                        let readiness = Readiness::default();
                        readiness.set_ready();
                        let router = rmq_controller::http::router(
                            node.clone(),
                            Arc::new(registry),
                            readiness,
                        );
                        Some((listener, router))
                    }
                    None => None,
                }
            }
        };
        let http_local = match &http {
            Some((listener, _)) => Some(listener.local_addr()?),
            None => None,
        };
        tracing::info!(
            version = rmq_ops::build::VERSION,
            git = rmq_ops::build::GIT_REVISION,
            remoting = %local,
            http = %http_local.map_or_else(|| "off".to_owned(), |addr| addr.to_string()),
            config_file = %args.config_file.as_ref().map_or_else(|| "none".to_owned(), |path| path.display().to_string()),
            set = %set_keys(&properties).join(" "),
            "rmq-controller starting"
        );
        // Deployment scripts and health checks grep stdout for these lines.
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "{}",
            rmq_controller::server::boot_line(serialize_type, local)
        )?;
        if let Some(addr) = http_local {
            writeln!(out, "Waymark HTTP listening on http://{addr}")?;
        }
        out.flush()?;
        drop(out);
        // The HTTP port serves until the process ends (the runtime drops
        // its task once the controller has stopped).
        if let Some((listener, router)) = http {
            tokio::spawn(async move {
                let forever = std::future::pending::<()>();
                if let Err(error) = rmq_ops::http::serve(listener, router, forever).await {
                    tracing::error!(%error, "HTTP port failed");
                }
            });
        }
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

/// Waymark's HTTP port key (docs/metrics.md).
const HTTP_KEY: &str = rmq_ops::http::LISTEN_KEY;

/// The controller's default HTTP address: beside the NameServer's 9877,
/// leaving 9878 to the controller's own port.
const DEFAULT_HTTP_ADDRESS: &str = "127.0.0.1:9879";

fn http_address(properties: &BTreeMap<String, String>) -> String {
    properties
        .get(HTTP_KEY)
        .map_or(DEFAULT_HTTP_ADDRESS, String::as_str)
        .trim()
        .to_owned()
}

/// The keys set in the file or with `--set`, values of secrets hidden, for
/// the start-up line.
fn set_keys(properties: &BTreeMap<String, String>) -> Vec<String> {
    properties
        .iter()
        .map(|(key, value)| {
            let lower = key.to_ascii_lowercase();
            let secret = ["secret", "password", "accesskey", "token"]
                .iter()
                .any(|word| lower.contains(word));
            if secret {
                format!("{key}=***")
            } else {
                format!("{key}={value}")
            }
        })
        .collect()
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
            } else if key == HTTP_KEY {
                rmq_ops::http::check_listen_addr(value)
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
        !ServerLimits::KEYS.contains(&key.as_str())
            && !auth::is_security_key(key)
            && key != HTTP_KEY
    });
    Ok((config, limits, all))
}
