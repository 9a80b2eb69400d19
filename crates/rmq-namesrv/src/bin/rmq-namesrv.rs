//! `rmq-namesrv`: parse flags, load configuration, bind, serve.

// jemalloc, not the C library's allocator: glibc keeps what a flood of
// connections freed in its arenas (about 7 KiB per closed connection stayed
// resident), and giving it back would take unsafe FFI (malloc_trim). With
// jemalloc's background thread and the decay of .cargo/config.toml, freed
// pages go back to the system within seconds.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use rmq_controller::{ControllerConfig, ControllerNode};
use rmq_namesrv::address_server::AddressServer;
use rmq_namesrv::cluster::{ClusterKeys, ClusterParts, NamesrvCluster};
use rmq_namesrv::config::{check_value, startup_refusals, OpsKeys, SnapshotKeys};
use rmq_namesrv::limits::LimitKeys;
use rmq_namesrv::route_snapshot::{self, SnapshotFile};
use rmq_namesrv::security;
use rmq_namesrv::{KvStore, Namesrv, NamesrvConfig};
use rmq_ops::http::Readiness;
use rmq_ops::logging::LogArgs;
use rmq_transport::auth::ServerSecurity;
use rmq_transport::ServerLimits;
use rmq_wire::SerializeType;

/// A drop-in Apache RocketMQ NameServer.
///
/// Reads the same properties file as Java's `mqnamesrv -c` and answers every
/// NameServer request code. With no options it listens on 0.0.0.0:9876 and
/// keeps its KV store in ~/namesrv/kvConfig.json. With
/// enableControllerInNamesrv=true it also runs the AutoSwitch-HA controller,
/// configured by the controller keys of the same file, on the controller's
/// own port.
#[derive(Debug, Parser)]
#[command(
    name = "rmq-namesrv",
    version = rmq_ops::build::LONG_VERSION,
    after_help = "Examples:\n  rmq-namesrv\n  rmq-namesrv -c conf/namesrv.properties\n  rmq-namesrv --listen 127.0.0.1:19876 --set supportActingMaster=true\n  rmq-namesrv -p\n  rmq-namesrv -c conf/namesrv.properties --log-dir /var/log/waymark\n\nEnvironment: ROCKETMQ_HOME, ROCKETMQ_SERIALIZE_TYPE (JSON or ROCKETMQ), RUST_LOG (e.g. info, rmq_namesrv=debug)."
)]
struct Args {
    /// Java properties file (NamesrvConfig and NettyServerConfig keys); it is
    /// also where UPDATE_NAMESRV_CONFIG persists.
    #[arg(short = 'c', long = "configFile", value_name = "FILE")]
    config_file: Option<PathBuf>,
    /// Print every option as name=value and exit; comment lines mark the keys
    /// Waymark accepts but ignores.
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
    #[command(flatten)]
    log: LogArgs,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let _log = rmq_ops::logging::init(&args.log, "namesrv", "info,openraft=error")?;

    let loaded = load_config(&args)?;
    let (config, properties) = (loaded.config, loaded.properties);
    let loaded_keys = properties.clone();
    // Embedded mode: the controller reads its keys from the same properties.
    let controller = config
        .enable_controller_in_namesrv
        .then(|| embedded_controller_config(&config, &properties));
    refuse_invalid_values(&loaded.sources, controller.is_some())?;
    let limits = ServerLimits::from_properties(&properties);
    let request_limits = LimitKeys::from_properties(&properties);
    let snapshot_keys = SnapshotKeys::from_properties(&properties);
    let ops_keys = OpsKeys::from_properties(&properties);
    let cluster_keys = ClusterKeys::from_properties(&properties);
    let security = ServerSecurity::from_properties(&properties, rmq_auth::NAMESRV_REQUIREMENTS)
        .map_err(|why| anyhow::anyhow!("invalid configuration, not starting: {why}"))?;
    // The embedded controller checks its requests with the same keys and
    // accounts (its own table) and serves TLS the same way.
    let controller_security = match &controller {
        Some(_) => {
            let ServerSecurity { guard, tls, .. } =
                ServerSecurity::from_properties(&properties, rmq_auth::CONTROLLER_REQUIREMENTS)
                    .map_err(|why| anyhow::anyhow!("invalid configuration, not starting: {why}"))?;
            rmq_controller::server::Security { guard, tls }
        }
        None => rmq_controller::server::Security::default(),
    };
    let known = |key: &str| {
        NamesrvConfig::KEYS.contains(&key)
            || ServerLimits::KEYS.contains(&key)
            || LimitKeys::KEYS.contains(&key)
            || SnapshotKeys::KEYS.contains(&key)
            || OpsKeys::KEYS.contains(&key)
            || ClusterKeys::KEYS.contains(&key)
            || security::is_security_key(key)
            || (controller.is_some() && ControllerConfig::KEYS.contains(&key))
    };
    for key in properties.keys().filter(|key| !known(key)) {
        tracing::warn!(%key, "unknown configuration key: kept and shown, changes nothing");
    }
    if args.print_config {
        let mut out = std::io::stdout().lock();
        out.write_all(config.to_annotated_text().as_bytes())?;
        writeln!(
            out,
            "# connection and memory limits, frame limit, trusted proxies, dead-peer detection, route snapshot, HTTP port (Waymark's own keys, docs/configuration.md)"
        )?;
        let all_limits = limits
            .to_properties()
            .into_iter()
            .chain(request_limits.to_properties())
            .chain(snapshot_keys.to_properties())
            .chain(ops_keys.to_properties());
        for (key, value) in all_limits.collect::<BTreeMap<_, _>>() {
            writeln!(out, "{key}={value}")?;
        }
        out.write_all(security.print_lines(&properties).as_bytes())?;
        writeln!(
            out,
            "# NameServer cluster (Waymark's own keys, docs/configuration.md); off while clusterGossipAddr is empty"
        )?;
        for (key, value) in cluster_keys.to_properties() {
            let shown = if key == "clusterSecretKey" && !value.is_empty() {
                "<redacted>"
            } else {
                value.as_str()
            };
            writeln!(out, "{key}={shown}")?;
        }
        if let Some(controller) = &controller {
            // Keys both option sets have were printed above; printing them
            // again (the controller's listenPort is 19876) would make the
            // later line win for anyone reading the output as properties.
            writeln!(
                out,
                "# embedded controller (enableControllerInNamesrv=true)"
            )?;
            for (key, value) in controller.to_properties() {
                if !NamesrvConfig::KEYS.contains(&key.as_str()) {
                    writeln!(out, "{key}={value}")?;
                }
            }
        }
        return Ok(());
    }
    if let Some(warning) = config.ignored_warning(&NamesrvConfig::from_env()) {
        tracing::warn!("{warning}");
    }
    security.log_start(
        "register, unregister and wipe brokers and change the KV store and configuration",
    );
    let ignored_cluster_keys = cluster_keys.ignored();
    if !ignored_cluster_keys.is_empty() {
        tracing::warn!(
            keys = %ignored_cluster_keys.join(", "),
            "cluster keys set while clusterGossipAddr is empty: the cluster is off and they change nothing"
        );
    }
    limits.log_start();
    if let Some(controller) = &controller {
        for warning in controller.warnings(&ControllerConfig::from_env()) {
            tracing::warn!("controller: {warning}");
        }
    }
    let serialize_type = match std::env::var("ROCKETMQ_SERIALIZE_TYPE") {
        Err(_) => SerializeType::Json,
        Ok(name) => SerializeType::from_name(&name).with_context(|| {
            format!("ROCKETMQ_SERIALIZE_TYPE must be JSON or ROCKETMQ, not {name:?}")
        })?,
    };
    let kv = KvStore::load(&config.kv_config_path)?;
    let address = format!("{}:{}", config.bind_address, config.listen_port);
    let controller_address = match &controller {
        Some(controller) => Some(controller.listen_address()?),
        None => None,
    };
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let mut config = config;
        let listener = rmq_transport::server::bind(&address, config.listen_options())
            .await
            .with_context(|| format!("cannot listen on {address}"))?;
        let local = listener.local_addr()?;
        // With port 0 the OS picks one; report that one (GET_NAMESRV_CONFIG).
        config.listen_port = i32::from(local.port());
        let (mut state, queues) = Namesrv::with_limits(config, kv, request_limits.limits());
        state.auth = security.guard;
        state.outgoing_tls = security.outgoing_tls.clone();
        // A restart is a new incarnation to the cluster, above every earlier
        // one's even if the host clock stepped back (cluster/generation.rs):
        // kept on disk before the node gossips.
        let generation = if cluster_keys.enabled() {
            let path = rmq_namesrv::cluster::generation::path_for(Path::new(
                &state.config.read().kv_config_path,
            ));
            rmq_namesrv::cluster::generation::next(&path, state.wall.now_ms()).with_context(
                || format!("cannot keep the cluster generation in {}", path.display()),
            )?
        } else {
            0
        };
        let cluster_gossip = match cluster_keys
            .bind(local, generation)
            .map_err(|why| anyhow::anyhow!("invalid cluster configuration, not starting: {why}"))?
        {
            Some((settings, socket)) => {
                let gossip = (settings.gossip.advertise, settings.gossip_bind);
                let cluster_id = settings.gossip.cluster_id.clone();
                let parts = ClusterParts {
                    routes: state.routes.clone(),
                    clock: state.clock,
                    wall: state.wall.clone(),
                    metrics: state.metrics.clone(),
                    outgoing_tls: state.outgoing_tls.clone(),
                    max_topics: state.limits.max_topics_per_registration,
                };
                let cluster = NamesrvCluster::new(settings, socket, parts);
                state.cluster = Some(Arc::new(cluster));
                Some((gossip, cluster_id))
            }
            None => None,
        };
        match snapshot_keys.path() {
            Some(path) => {
                let file = SnapshotFile {
                    path,
                    max_bytes: snapshot_keys.max_bytes(),
                };
                let writer = route_snapshot::attach(&state.routes, state.clock.now(), file);
                state.route_snapshot = Some(writer);
            }
            None => tracing::info!(
                "routeSnapshotPath is empty: no route snapshot, a restart starts with no routes"
            ),
        }
        // The controller starts after the NameServer, on its own port, as
        // Java's NamesrvStartup does.
        let embedded = match (controller, controller_address) {
            (Some(controller), Some(address)) => {
                let listener = tokio::net::TcpListener::bind(&address)
                    .await
                    .with_context(|| format!("cannot listen on {address} (controller)"))?;
                let store_dir = controller.store_dir(&home);
                let tls = security.outgoing_tls.clone();
                let node = ControllerNode::start_with_tls(controller, &store_dir, tls)
                    .await
                    .with_context(|| {
                        format!(
                            "cannot start the controller (store {})",
                            store_dir.display()
                        )
                    })?;
                Some((listener, node))
            }
            _ => None,
        };
        let state = Arc::new(state);
        // The HTTP port: bound before the boot line so that a script waiting
        // for it finds every port listening.
        let readiness = Readiness::default();
        let http_explicit = loaded_keys.contains_key("httpListenAddr");
        let http_listener = match ops_keys.http_address() {
            Some(address) => rmq_ops::http::bind_port(&address, http_explicit).await?,
            None => {
                tracing::info!(
                    "httpListenAddr is empty: no HTTP port (metrics, health, dashboard)"
                );
                None
            }
        };
        let http = match http_listener {
            Some(listener) => {
                let mut registry = prometheus_client::registry::Registry::default();
                rmq_ops::metrics::build_info(&mut registry, "namesrv");
                state
                    .metrics
                    .register(&mut registry, state.routes.clone(), state.kv.clone());
                registry.register_collector(Box::new(rmq_ops::process::ProcessCollector));
                if let Some(cluster) = &state.cluster {
                    cluster.register_metrics(&mut registry);
                }
                // The embedded controller's state (Raft, broker sets) is
                // exported and shown beside the NameServer's.
                let controller_view = embedded.as_ref().map(|(_, node)| {
                    rmq_controller::metrics::register_state(&mut registry, node);
                    let node = node.clone();
                    let view: rmq_namesrv::http::ControllerView =
                        Arc::new(move || Ok(rmq_controller::http::view(&node)));
                    view
                });
                let address_server = AddressServer::new(
                    &ops_keys.address_server_subgroup,
                    &ops_keys.address_server_list,
                    state.cluster.clone(),
                    local,
                );
                if let Some(warning) = address_server.warning(&ops_keys.address_server_list) {
                    tracing::warn!("{warning}");
                }
                let router = rmq_namesrv::http::router(
                    state.clone(),
                    Arc::new(registry),
                    readiness.clone(),
                    controller_view,
                    address_server,
                );
                Some((listener, router))
            }
            None => None,
        };
        let http_local = match &http {
            Some((listener, _)) => Some(listener.local_addr()?),
            None => None,
        };
        // Ready once the remoting port answers routes: at once (the route
        // snapshot, if any, is loaded and the port is bound), or after
        // needWaitForService's wait, during which route queries are refused
        // as Java refuses them. Decided before the boot lines, so that a
        // probe sent on seeing them never finds a ready server not ready.
        let wait = {
            let config = state.config.read();
            config.need_wait_for_service.then(|| {
                std::time::Duration::from_secs(
                    u64::try_from(config.wait_seconds_for_service).unwrap_or(0),
                )
            })
        };
        // A cluster node with seeds is ready once it holds its peers' routes
        // (or its bootstrap timed out): it refuses route queries until then.
        let cluster = state
            .cluster
            .clone()
            .filter(|cluster| cluster.settings().has_seeds);
        match (wait, cluster) {
            (None, None) => readiness.set_ready(),
            (wait, cluster) => {
                tokio::spawn(async move {
                    if let Some(wait) = wait {
                        tokio::time::sleep(wait).await;
                    }
                    if let Some(cluster) = cluster {
                        while !cluster.is_ready() {
                            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                        }
                    }
                    readiness.set_ready();
                });
            }
        }
        log_start(&loaded_keys, local, http_local, args.config_file.as_deref());
        // Deployment scripts and health checks grep stdout for these lines.
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "The Name Server boot success. serializeType={}, address {local}",
            serialize_type.name()
        )?;
        if let Some((listener, _)) = &embedded {
            let addr = listener.local_addr()?;
            writeln!(
                out,
                "{}",
                rmq_controller::server::boot_line(serialize_type, addr)
            )?;
        }
        if let Some(addr) = http_local {
            writeln!(out, "Waymark HTTP listening on http://{addr}")?;
        }
        if let Some(((advertise, bound), cluster_id)) = &cluster_gossip {
            writeln!(
                out,
                "Waymark cluster gossip on {advertise} (bound {bound}), clusterId={cluster_id}"
            )?;
        }
        out.flush()?;
        drop(out);
        // One signal stops every server.
        let stop = tokio_util::sync::CancellationToken::new();
        let signal = stop.clone();
        tokio::spawn(async move {
            rmq_transport::shutdown::terminated().await;
            signal.cancel();
        });
        if let Some((listener, router)) = http {
            let stopped = stop.clone().cancelled_owned();
            tokio::spawn(async move {
                if let Err(error) = rmq_ops::http::serve(listener, router, stopped).await {
                    tracing::error!(%error, "HTTP port failed");
                }
            });
        }
        let kv = state.kv.clone();
        let namesrv = rmq_namesrv::server::run(
            listener,
            state,
            queues,
            serialize_type,
            &limits,
            security.tls,
            stop.clone().cancelled_owned(),
        );
        match embedded {
            Some((listener, node)) => {
                let controller = rmq_controller::server::run(
                    listener,
                    node,
                    serialize_type,
                    &limits,
                    controller_security,
                    stop.clone().cancelled_owned(),
                );
                let (namesrv, controller) = tokio::join!(namesrv, controller);
                namesrv?;
                controller?;
            }
            None => namesrv.await?,
        }
        // kvConfig.json alone then holds every write, as a Java NameServer
        // started on it next would expect; on failure the journal is kept
        // and replayed at the next start.
        if let Err(error) = kv.compact() {
            tracing::error!(%error, "folding the KV journal into kvConfig.json at stop failed");
        }
        tracing::info!("name server stopped");
        Ok(())
    })
}

/// The start-up line: version, git revision, where the ports listen, the
/// configuration file and every key set to other than its default (secrets
/// hidden).
fn log_start(
    set: &BTreeMap<String, String>,
    remoting: std::net::SocketAddr,
    http: Option<std::net::SocketAddr>,
    config_file: Option<&std::path::Path>,
) {
    let empty = BTreeMap::new();
    let defaults: BTreeMap<String, String> = NamesrvConfig::from_env()
        .to_properties()
        .into_iter()
        .chain(ServerLimits::from_properties(&empty).to_properties())
        .chain(LimitKeys::from_properties(&empty).to_properties())
        .chain(SnapshotKeys::from_properties(&empty).to_properties())
        .chain(OpsKeys::from_properties(&empty).to_properties())
        .chain(ClusterKeys::from_properties(&empty).to_properties())
        .collect();
    let changed = rmq_ops::logging::non_default_keys(set, &defaults, rmq_namesrv::http::is_secret);
    tracing::info!(
        version = rmq_ops::build::VERSION,
        git = rmq_ops::build::GIT_REVISION,
        %remoting,
        http = %http.map_or_else(|| "off".to_owned(), |addr| addr.to_string()),
        config_file = %config_file.map_or_else(|| "none".to_owned(), |path| path.display().to_string()),
        non_default = %changed.join(" "),
        "rmq-namesrv starting"
    );
}

/// The embedded controller's configuration: the same properties as the
/// NameServer's (file, then `--set`), as Java's NamesrvStartup reads them.
/// Its own config store is where the properties say, unless that is the
/// NameServer's file, which would then be written by both: the controller
/// then keeps its configuration beside it, in `<file>.controller`.
fn embedded_controller_config(
    namesrv: &NamesrvConfig,
    properties: &BTreeMap<String, String>,
) -> ControllerConfig {
    let mut controller = ControllerConfig::from_env();
    controller.apply_file(properties);
    controller.extra.clear();
    if controller.config_store_path == namesrv.config_store_path {
        controller.config_store_path = format!("{}.controller", namesrv.config_store_path);
    }
    controller
}

/// The configuration as loaded, before anything checks it.
struct Loaded {
    /// The NameServer's configuration.
    config: NamesrvConfig,
    /// Every property it was made from (the file's, then `--set`'s), for the
    /// embedded controller.
    properties: BTreeMap<String, String>,
    /// The same properties by origin (the file's path, `--set`), so that an
    /// error says where a bad value came from.
    sources: Vec<(String, BTreeMap<String, String>)>,
}

fn load_config(args: &Args) -> anyhow::Result<Loaded> {
    let mut config = NamesrvConfig::from_env();
    let mut all = BTreeMap::new();
    let mut sources = Vec::new();
    if let Some(path) = &args.config_file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config file {}", path.display()))?;
        let properties = rmq_protocol::properties::parse(&text)
            .with_context(|| format!("{} is not a properties file", path.display()))?;
        config.apply_file(&properties);
        all.extend(properties.clone());
        sources.push((path.display().to_string(), properties));
        config.config_store_path = path.to_string_lossy().into_owned();
        eprintln!("load config properties file OK, {}", path.display());
    }
    let overrides = rmq_protocol::properties::parse_assignments(&args.set)
        .map_err(|e| anyhow::anyhow!("--set {e}"))?;
    config.apply_file(&overrides);
    all.extend(overrides.clone());
    sources.push(("--set".to_owned(), overrides));
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
    Ok(Loaded {
        config,
        properties: all,
        sources,
    })
}

/// Refuses to start (or print) with a value Java's setters would silently
/// replace by the default: every bad entry is named at once, with where it
/// came from, so one edit fixes them all. The check is the one the runtime
/// UPDATE_NAMESRV_CONFIG makes ([`check_value`]); with the embedded
/// controller, its keys are checked with its own option types.
fn refuse_invalid_values(
    sources: &[(String, BTreeMap<String, String>)],
    embedded_controller: bool,
) -> anyhow::Result<()> {
    let check = |key: &str, value: &str| check_value(key, value, embedded_controller);
    let refusals: Vec<String> = sources
        .iter()
        .flat_map(|(origin, properties)| startup_refusals(origin, properties, check))
        .collect();
    if refusals.is_empty() {
        return Ok(());
    }
    anyhow::bail!(
        "invalid configuration, not starting:\n  {}",
        refusals.join("\n  ")
    )
}
