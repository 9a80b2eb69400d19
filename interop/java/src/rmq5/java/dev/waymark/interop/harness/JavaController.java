package dev.waymark.interop.harness;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.IntStream;
import org.apache.rocketmq.common.ControllerConfig;
import org.apache.rocketmq.common.JraftConfig;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.controller.ControllerManager;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * One node of the real Apache RocketMQ controller (rocketmq-controller of the profile's
 * release: {@code ControllerManager}, DLedger type) in this JVM, built from {@code key=value}
 * settings exactly as {@code ControllerStartup} builds it from its {@code -c} file: every
 * setting goes through {@code MixAll.properties2Object} into ControllerConfig, JraftConfig,
 * NettyServerConfig and NettyClientConfig, and the whole set is registered with the
 * manager's {@code Configuration} (what GET_CONTROLLER_CONFIG prints).
 *
 * <p>A DLedger group is addressed by fixed ports written into the peer list
 * ({@code controllerDLegerPeers=n0-127.0.0.1:P0;n1-127.0.0.1:P1;...}), and each node serves
 * both Raft traffic and controller requests on its own peer port, so the kernel cannot pick
 * the ports at bind time. Without a peer list, {@link #start} makes a one-node group
 * ({@code n0}) on a port chosen below the ephemeral range, and {@link #startGroup} an
 * n-node group on consecutive such ports; a start that fails to bind is retried with fresh
 * ports ({@link Ports#startOnFreePorts}). With a peer list (one node of a group whose other
 * nodes run elsewhere, or a restart on the same address) the node's own port is retried
 * for a while instead ({@link Ports#startOnPort}).
 *
 * <p>Harness defaults, each overridable by a setting: group {@code group1}; store, config
 * file and {@code rocketmqHome} in a new temporary directory (deleted by {@link #close});
 * {@code bindAddress=127.0.0.1}; DLedger data files of 16 MiB instead of 1 GiB.
 */
public final class JavaController implements ControllerNode {
    public static final String GROUP = "controllerDLegerGroup";
    public static final String PEERS = "controllerDLegerPeers";
    public static final String SELF_ID = "controllerDLegerSelfId";
    public static final String STORE_PATH = "controllerStorePath";
    public static final String CONFIG_STORE_PATH = "configStorePath";
    public static final String ROCKETMQ_HOME = "rocketmqHome";
    /** The default group name (that of RocketMQ's quick-start configuration). */
    public static final String DEFAULT_GROUP = "group1";
    /** DLedger data file size: 16 MiB instead of 1 GiB, plenty for any test's log. */
    static final String SMALL_MAPPED_FILE = String.valueOf(16 << 20);
    /** How long a node on a given port waits for the port to be released (a restart). */
    private static final Duration FIXED_PORT_BIND_TIMEOUT = Duration.ofSeconds(20);

    private final ControllerManager manager;
    private final Map<String, String> settings;
    private final String selfId;
    private final String addr;
    private final int peerCount;
    private final Path ownedDir;
    private volatile boolean stopped;

    private JavaController(ControllerManager manager, Map<String, String> settings, String selfId, String addr,
                           int peerCount, Path ownedDir) {
        this.manager = manager;
        this.settings = settings;
        this.selfId = selfId;
        this.addr = addr;
        this.peerCount = peerCount;
        this.ownedDir = ownedDir;
    }

    /**
     * Starts one node. Without {@code controllerDLegerPeers} in {@code settings}: a one-node
     * group {@code n0} on a free port. With it: the node {@code controllerDLegerSelfId} of
     * that peer list, on its own port (retried for 20 s while something holds it).
     * Returns once the node's remoting server is bound; see {@link #awaitReady}.
     */
    public static JavaController start(Map<String, String> settings) throws Exception {
        String peers = settings.get(PEERS);
        if (peers == null || peers.isBlank()) {
            return Ports.startOnFreePorts("Java controller", new int[] {0}, port -> {
                Map<String, String> node = new LinkedHashMap<>(settings);
                node.put(PEERS, peerList(port));
                node.put(SELF_ID, "n0");
                return launch(node);
            });
        }
        String self = settings.get(SELF_ID);
        if (self == null || self.isBlank()) {
            throw new IllegalArgumentException(PEERS + " is set but " + SELF_ID + " is not");
        }
        int port = port(peerAddr(peers, self.trim()));
        return Ports.startOnPort("Java controller " + self, port, new int[] {0}, FIXED_PORT_BIND_TIMEOUT,
            p -> launch(settings));
    }

    /**
     * Starts an n-node group in this JVM ({@code n0}..{@code n<n-1>} on consecutive free
     * ports, each with its own temporary directory), retried with fresh ports when a node
     * cannot bind. Returns once every node is bound; the group elects its leader by itself
     * (see {@link #awaitLeader}). {@code settings} apply to every node and must not name
     * per-node paths or peers.
     */
    public static List<JavaController> startGroup(int nodes, Map<String, String> settings) throws Exception {
        for (String perNode : List.of(PEERS, SELF_ID, STORE_PATH, CONFIG_STORE_PATH)) {
            if (settings.containsKey(perNode)) {
                throw new IllegalArgumentException(perNode + " is per node; startGroup chooses it");
            }
        }
        int[] offsets = IntStream.range(0, nodes).toArray();
        return Ports.startOnFreePorts("Java controller group of " + nodes, offsets, base -> {
            String peers = peerList(IntStream.range(0, nodes).map(i -> base + i).toArray());
            List<JavaController> started = new ArrayList<>();
            try {
                for (int i = 0; i < nodes; i++) {
                    Map<String, String> node = new LinkedHashMap<>(settings);
                    node.put(PEERS, peers);
                    node.put(SELF_ID, "n" + i);
                    started.add(launch(node));
                }
                return started;
            } catch (Exception e) {
                started.forEach(JavaController::close);
                throw e;
            }
        });
    }

    /** {@code n0-127.0.0.1:P0;n1-127.0.0.1:P1;...}, the DLedger peer list of nodes on these ports. */
    public static String peerList(int... ports) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < ports.length; i++) {
            out.append(i == 0 ? "" : ";").append('n').append(i).append("-127.0.0.1:").append(ports[i]);
        }
        return out.toString();
    }

    /** The address of member {@code id} in a DLedger peer list ({@code id-host:port;...}). */
    static String peerAddr(String peers, String id) {
        for (String peer : peers.split(";")) {
            int dash = peer.indexOf('-');
            if (dash > 0 && peer.substring(0, dash).trim().equals(id)) {
                return peer.substring(dash + 1).trim();
            }
        }
        throw new IllegalArgumentException("no member " + id + " in " + PEERS + "=" + peers);
    }

    private static int port(String hostPort) {
        return Integer.parseInt(hostPort.substring(hostPort.lastIndexOf(':') + 1));
    }

    /** One start of the node {@code settings} describe; everything it started is stopped again when it fails. */
    private static JavaController launch(Map<String, String> settings) throws Exception {
        Path dir = null;
        Map<String, String> effective = new LinkedHashMap<>();
        effective.put(GROUP, DEFAULT_GROUP);
        effective.put("bindAddress", "127.0.0.1");
        effective.put("mappedFileSize", SMALL_MAPPED_FILE);
        if (!settings.containsKey(STORE_PATH) || !settings.containsKey(CONFIG_STORE_PATH)
            || !settings.containsKey(ROCKETMQ_HOME)) {
            dir = Files.createTempDirectory("waymark-java-controller-");
            effective.put(STORE_PATH, dir.resolve("store").toString());
            effective.put(CONFIG_STORE_PATH, dir.resolve("controller.properties").toString());
            effective.put(ROCKETMQ_HOME, dir.toString());
        }
        effective.putAll(settings);
        String type = effective.getOrDefault("controllerType", ControllerConfig.DLEDGER_CONTROLLER).trim();
        if (!type.equals(ControllerConfig.DLEDGER_CONTROLLER)) {
            throw new IllegalArgumentException("controllerType=" + type
                + ": the harness runs DLedger controllers only");
        }
        String self = effective.get(SELF_ID).trim();
        String peers = effective.get(PEERS).trim();
        String addr = peerAddr(peers, self);

        Properties p = new Properties();
        p.putAll(effective);
        // As ControllerStartup.createControllerManager does with its -c file.
        ControllerConfig controllerConfig = new ControllerConfig();
        JraftConfig jraftConfig = new JraftConfig();
        controllerConfig.setJraftConfig(jraftConfig);
        NettyServerConfig serverConfig = new NettyServerConfig();
        NettyClientConfig clientConfig = new NettyClientConfig();
        serverConfig.setListenPort(19876);
        MixAll.properties2Object(p, controllerConfig);
        MixAll.properties2Object(p, jraftConfig);
        MixAll.properties2Object(p, serverConfig);
        MixAll.properties2Object(p, clientConfig);
        ControllerManager manager = new ControllerManager(controllerConfig, serverConfig, clientConfig);
        manager.getConfiguration().registerConfig(p);
        try {
            if (!manager.initialize()) {
                throw new IllegalStateException("ControllerManager.initialize() failed");
            }
            manager.start();
        } catch (Exception e) {
            shutdownQuietly(manager);
            EmbeddedBroker.deleteTree(dir);
            throw e;
        }
        return new JavaController(manager, effective, self, addr, peers.split(";").length, dir);
    }

    /** Shutdown of a node whose start failed part way; the start's own error is the one to report. */
    private static void shutdownQuietly(ControllerManager manager) {
        try {
            manager.shutdown();
        } catch (RuntimeException e) {
            // Parts that never started cannot stop.
        }
    }

    /**
     * Waits until the node serves CONTROLLER_GET_METADATA_INFO on its address and, in a
     * one-node group, until it is leader (its scheduler runs, so it serves every request).
     */
    public void awaitReady(Duration timeout) {
        try (RawClient client = new RawClient()) {
            String what = "controller " + selfId + " at " + addr + " answering CONTROLLER_GET_METADATA_INFO";
            Poll.untilTrue(timeout, 100, what, () -> client.invoke(addr,
                RemotingCommand.createRequestCommand(ControllerCodes.GET_METADATA_INFO, null), 3000).getCode() == 0);
        }
        if (peerCount == 1) {
            awaitLeader(timeout);
        }
    }

    /** Waits until this node is leader. */
    public void awaitLeader(Duration timeout) {
        Poll.untilTrue(timeout, 50, "controller " + selfId + " at " + addr + " leading its group", this::isLeader);
    }

    @Override
    public String addr() {
        return addr;
    }

    @Override
    public String selfId() {
        return selfId;
    }

    /**
     * Leader in the sense that matters to clients: DLedger made it leader <em>and</em> its
     * initial entry committed, so its request scheduler runs ({@code Controller.isLeaderState}).
     */
    @Override
    public boolean isLeader() {
        return !stopped && manager.getController().isLeaderState();
    }

    /** The settings it runs with, harness defaults, peer list and self id included. */
    public Map<String, String> settings() {
        return Map.copyOf(settings);
    }

    public ControllerManager manager() {
        return manager;
    }

    /** This node again, same settings, address and store, after {@link #stop}. */
    public JavaController restart() throws Exception {
        if (!stopped) {
            throw new IllegalStateException("stop the controller before restarting it");
        }
        JavaController again = Ports.startOnPort("Java controller " + selfId, port(addr), new int[] {0},
            FIXED_PORT_BIND_TIMEOUT, p -> launch(settings));
        return again.adopt(ownedDir);
    }

    /** The restarted node takes over the temporary directory its predecessor created. */
    private JavaController adopt(Path dir) {
        return new JavaController(manager, settings, selfId, addr, peerCount, dir);
    }

    /** Shuts the node down, keeping its store (see {@link #restart}). Idempotent. */
    @Override
    public synchronized void stop() {
        if (!stopped) {
            stopped = true;
            manager.shutdown();
        }
    }

    /** Stops the node and deletes the temporary directory the harness made for it. */
    @Override
    public void close() {
        stop();
        EmbeddedBroker.deleteTree(ownedDir);
    }

    @Override
    public String toString() {
        return "Java controller " + selfId + " at " + addr;
    }
}
