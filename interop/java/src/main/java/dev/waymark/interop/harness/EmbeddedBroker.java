package dev.waymark.interop.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.remoting.common.TlsMode;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;
import org.apache.rocketmq.remoting.netty.TlsSystemConfig;
import org.apache.rocketmq.store.config.MessageStoreConfig;

/**
 * A real {@code BrokerController} (rocketmq-broker of the profile's release) running in this
 * JVM with a small store. {@link #start} returns once every configured NameServer lists it.
 */
public final class EmbeddedBroker implements AutoCloseable {
    private static final Duration REGISTRATION_TIMEOUT = Duration.ofSeconds(30);
    /**
     * Controller mode: metadata, id, registration with the controller, an election or a
     * master to follow, then the NameServers. A failed step is retried by the broker every
     * 5 s.
     */
    public static final Duration CONTROLLER_READY_TIMEOUT = Duration.ofSeconds(60);
    /** The ports a broker on {@code p} binds: {@code p - 2} (its "fast" listener), {@code p}, {@code p + 1} (HA). */
    private static final int[] PORT_OFFSETS = {-2, 0, 1};
    /** How long a restart waits for its old ports to be released. */
    private static final Duration RESTART_BIND_TIMEOUT = Duration.ofSeconds(20);

    private final BrokerSpec spec;
    private final BrokerController controller;
    /** Whether the broker's outgoing connections use TLS: the harness's own checks then do too. */
    private final boolean clientTls;
    private volatile boolean stopped;

    private EmbeddedBroker(BrokerSpec spec, BrokerController controller, boolean clientTls) {
        this.spec = spec;
        this.controller = controller;
        this.clientTls = clientTls;
    }

    /**
     * Starts a broker and waits until every NameServer of its spec has it registered; in
     * controller mode, until it is ready ({@link #awaitControllerReady}).
     */
    public static EmbeddedBroker start(BrokerSpec spec) throws Exception {
        EmbeddedBroker broker = startUnchecked(spec);
        try {
            if (spec.controllerMode()) {
                broker.awaitControllerReady(CONTROLLER_READY_TIMEOUT);
            } else {
                broker.awaitRegistered(broker.namesrvs(), REGISTRATION_TIMEOUT);
            }
        } catch (RuntimeException | AssertionError e) {
            broker.stop();
            throw e;
        }
        return broker;
    }

    /** Starts a broker without waiting for its registration. */
    public static EmbeddedBroker startUnchecked(BrokerSpec spec) throws Exception {
        if (spec.storeDir() == null) {
            spec.store(Files.createTempDirectory("waymark-broker-"));
        }
        if (System.getProperty(MixAll.ROCKETMQ_HOME_PROPERTY) == null) {
            System.setProperty(MixAll.ROCKETMQ_HOME_PROPERTY, spec.storeDir().toAbsolutePath().toString());
        }
        // BrokerStartup does this before building a controller: every request the broker sends
        // then carries its release's version. Without it they carry version 0, and a NameServer
        // takes the broker for one older than 3.0.11 (pre-RegisterBrokerBody registrations).
        System.setProperty(RemotingCommand.REMOTING_VERSION_KEY, Integer.toString(MQVersion.CURRENT_VERSION));
        String what = "broker " + spec.clusterName() + "/" + spec.brokerName() + "/" + spec.brokerId();
        if (spec.listenPort() == 0) {
            return Ports.startOnFreePorts(what, PORT_OFFSETS, port -> launch(spec.port(port)));
        }
        // A given port (a restart): the old broker's sockets may still be closing.
        return Ports.startOnPort(what, spec.listenPort(), PORT_OFFSETS, RESTART_BIND_TIMEOUT, port -> launch(spec));
    }

    /** One start of the broker on its spec's ports; shuts the half-started broker down when it fails. */
    private static EmbeddedBroker launch(BrokerSpec spec) throws Exception {
        Properties p = spec.toProperties();
        BrokerConfig brokerConfig = new BrokerConfig();
        NettyServerConfig serverConfig = new NettyServerConfig();
        NettyClientConfig clientConfig = new NettyClientConfig();
        MessageStoreConfig storeConfig = new MessageStoreConfig();
        // As BrokerStartup (4.9.7 line 105; 5.x NettyClientConfig's initial value): outgoing TLS
        // when -Dtls.enable=true, or when this JVM's server mode is enforcing; a useTLS option wins.
        clientConfig.setUseTLS(Boolean.parseBoolean(System.getProperty(TlsSystemConfig.TLS_ENABLE,
            String.valueOf(TlsSystemConfig.tlsMode == TlsMode.ENFORCING))));
        MixAll.properties2Object(p, brokerConfig);
        MixAll.properties2Object(p, serverConfig);
        MixAll.properties2Object(p, clientConfig);
        MixAll.properties2Object(p, storeConfig);
        brokerConfig.setRocketmqHome(System.getProperty(MixAll.ROCKETMQ_HOME_PROPERTY));
        BrokerController controller = Brokers.create(p, brokerConfig, serverConfig, clientConfig, storeConfig);
        if (!controller.initialize()) {
            shutdownQuietly(controller);
            throw new IllegalStateException("BrokerController.initialize() failed for " + spec);
        }
        try {
            controller.start();
        } catch (Exception e) {
            shutdownQuietly(controller);
            throw e;
        }
        return new EmbeddedBroker(spec, controller, clientConfig.isUseTLS());
    }

    /** Shutdown of a broker whose start failed part way: whatever it started is stopped, errors ignored. */
    private static void shutdownQuietly(BrokerController controller) {
        try {
            controller.shutdown();
        } catch (RuntimeException e) {
            // Parts that never started cannot stop; the start's own error is the one to report.
        }
    }

    /** This broker again (same identity, ports, store, options): for restarts after {@link #stop}. */
    public EmbeddedBroker restart() throws Exception {
        if (!stopped) {
            throw new IllegalStateException("stop the broker before restarting it");
        }
        return start(spec.copy());
    }

    /**
     * {@code <brokerIP1>:<listenPort>}, the address it registers: {@code 127.0.0.1} unless the
     * spec sets {@code brokerIP1} (a broker in another network namespace advertises its own).
     */
    public String addr() {
        String ip = spec.options().get("brokerIP1");
        return (ip == null ? "127.0.0.1" : ip) + ":" + spec.listenPort();
    }

    /** {@code 127.0.0.1:<haListenPort>}, the HA address it registers. */
    public String haAddr() {
        return "127.0.0.1:" + (spec.listenPort() + 1);
    }

    public BrokerSpec spec() {
        return spec;
    }

    public BrokerController controller() {
        return controller;
    }

    /** The NameServers of its spec. */
    public List<String> namesrvs() {
        String addrs = spec.namesrvAddr();
        return addrs == null ? List.of() : Arrays.stream(addrs.split(";")).filter(s -> !s.isBlank()).toList();
    }

    /**
     * Waits until each of {@code namesrvs} lists this broker (GET_BROKER_CLUSTER_INFO). The
     * start-up registration goes only to NameServers the broker's availability scan has
     * already connected to (its availability scan runs asynchronously from the remoting
     * client's start); if one is still missing after 3 s,
     * one more registration is triggered instead of waiting for the 10 s periodic run.
     */
    public void awaitRegistered(List<String> namesrvs, Duration timeout) {
        long nudgeAt = System.nanoTime() + Duration.ofSeconds(3).toNanos();
        boolean[] nudged = {false};
        try (RawClient client = newRawClient()) {
            Poll.untilTrue(timeout, 200, addr() + " (" + spec.brokerName() + "/" + spec.brokerId()
                + ") registered with " + namesrvs, () -> {
                    boolean all = namesrvs.stream()
                        .allMatch(ns -> client.clusterInfo(ns).has(spec.brokerName(), spec.brokerId(), addr()));
                    if (!all && !nudged[0] && System.nanoTime() - nudgeAt > 0) {
                        nudged[0] = true;
                        controller.registerBrokerAll(true, false, true);
                    }
                    return all;
                });
        }
    }

    /** A client for the harness's checks, with TLS when the broker's own connections use it. */
    private RawClient newRawClient() {
        return new RawClient(clientTls, null);
    }

    /**
     * Controller mode: its {@code ReplicasManager}'s view (start-up state, role, ids, master,
     * fenced or not); null for a broker not in controller mode.
     */
    public ReplicaState replicaState() {
        return Brokers.replicaState(controller);
    }

    /**
     * Whether a controller-mode broker is ready: its {@code ReplicasManager} is RUNNING, it is
     * not fenced, and every NameServer of its spec lists its address under the id of its
     * current role (0 as master, its controller id as slave).
     */
    public boolean controllerReady(RawClient client) {
        ReplicaState state = replicaState();
        return state != null && state.running() && namesrvs().stream()
            .allMatch(ns -> client.clusterInfo(ns).has(spec.brokerName(), state.brokerId(), addr()));
    }

    /**
     * Waits until a controller-mode broker is ready ({@link #controllerReady}). The role change
     * re-registers with the NameServers by itself; if it is running and still missing from one
     * 3 s after it began running, one more registration (under its current role) is triggered,
     * as {@link #awaitRegistered} does. Never before: a broker without a role would register
     * with the id of its configuration.
     */
    public void awaitControllerReady(Duration timeout) {
        long[] runningSince = {0};
        boolean[] nudged = {false};
        try (RawClient client = newRawClient()) {
            Poll.untilTrue(timeout, 200, addr() + " (" + spec.brokerName() + ", controller mode) ready", () -> {
                if (controllerReady(client)) {
                    return true;
                }
                ReplicaState state = replicaState();
                if (state == null || !state.running()) {
                    runningSince[0] = 0;
                } else if (runningSince[0] == 0) {
                    runningSince[0] = System.nanoTime();
                } else if (!nudged[0] && System.nanoTime() - runningSince[0] > Duration.ofSeconds(3).toNanos()) {
                    nudged[0] = true;
                    controller.registerBrokerAll(true, false, true);
                }
                return false;
            });
        }
    }

    /** Whether this release's brokers have a controller mode (5.x). */
    public static boolean hasControllerMode() {
        return Brokers.hasControllerMode();
    }

    /** The HA master address this (slave) broker's HA client uses; null when none. */
    public String haMasterAddress() {
        return Brokers.haMasterAddress(controller);
    }

    /** The master address the slave synchronises metadata from; null when none. */
    public String masterAddress() {
        return controller.getSlaveSynchronize() == null ? null : controller.getSlaveSynchronize().getMasterAddr();
    }

    /** Commit-log max physical offset (replication progress). */
    public long maxPhyOffset() {
        return controller.getMessageStore().getMaxPhyOffset();
    }

    /** Whether {@link #freeze} works with this release (5.x only). */
    public static boolean canFreeze() {
        return Brokers.canFreeze();
    }

    /**
     * Stops registrations and heartbeats, keeping every connection open: a hung broker. Only
     * {@link #stop} (or the NameServer's expiry) ends it.
     */
    public void freeze() {
        Brokers.freeze(controller);
    }

    /**
     * Closes the broker's client connections (to the NameServers) without unregistering:
     * what the NameServer sees when a broker process dies. The broker keeps serving until
     * {@link #stop}.
     */
    public void dropNamesrvConnections() {
        controller.getBrokerOuterAPI().shutdown();
    }

    /** Clean shutdown (UNREGISTER_BROKER to every NameServer, then close). Idempotent. */
    public synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        controller.shutdown();
    }

    /** Stops the broker and deletes its store. */
    @Override
    public void close() {
        stop();
        deleteTree(spec.storeDir());
    }

    static void deleteTree(Path root) {
        if (root == null || !Files.exists(root)) {
            return;
        }
        try (var paths = Files.walk(root)) {
            paths.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(path -> {
                try {
                    Files.deleteIfExists(path);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException | UncheckedIOException e) {
            // Best effort: a leftover temp directory is not a test failure.
        }
    }
}
