package dev.waymark.interop.harness;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * The controller the AutoSwitch-HA scenarios run against, chosen by system property
 * {@code waymark.controller} = {@code waymark} (the {@code rmq-controller} binary at
 * {@code waymark.controller.bin}, {@link WaymarkController}) or {@code java} (the
 * profile's real controller, {@link ControllerProcess}: the control). Every node runs in its
 * own process, so a scenario can kill -9 it and start it again on its address and store.
 */
public final class Controllers {
    /** A start, the first election and (Java) a JVM, on a busy two-core machine. */
    public static final Duration SERVING_TIMEOUT = Duration.ofSeconds(60);

    private Controllers() {
    }

    /** {@code waymark} or {@code java}; no default. */
    public static String kind() {
        String kind = System.getProperty("waymark.controller", "").trim();
        if (!kind.equals("waymark") && !kind.equals("java")) {
            throw new IllegalArgumentException("waymark.controller must be waymark or java, not '" + kind + "'");
        }
        return kind;
    }

    /** Whether {@code -Dwaymark.controller} chose a controller. */
    public static boolean chosen() {
        return System.getProperty("waymark.controller", "").trim().matches("waymark|java");
    }

    public static boolean isWaymark() {
        return kind().equals("waymark");
    }

    /** {@code waymark.controller.bin}, checked. */
    public static Path binary() {
        String bin = System.getProperty("waymark.controller.bin");
        if (bin == null || bin.isBlank()) {
            throw new IllegalStateException("set -Dwaymark.controller.bin=<path to rmq-controller> to run against Waymark");
        }
        Path path = Path.of(bin).toAbsolutePath();
        if (!Files.isExecutable(path)) {
            throw new IllegalStateException("waymark.controller.bin " + path + " is not an executable file");
        }
        return path;
    }

    /**
     * One node of the selected kind (a one-node group on a free port) with these settings
     * (Java keys); returns once it serves as leader.
     */
    public static ControllerServer start(Map<String, String> settings) throws Exception {
        ControllerServer node = isWaymark() ? WaymarkController.start(binary(), settings)
            : ControllerProcess.start(ControllerProcess.classpathFile(), settings);
        try {
            awaitServingLeader(List.of(node), SERVING_TIMEOUT);
        } catch (RuntimeException | AssertionError e) {
            node.discard();
            throw e;
        }
        return node;
    }

    /** An n-node group of the selected kind; returns once one node serves as leader. */
    public static List<ControllerServer> startGroup(int nodes, Map<String, String> settings) throws Exception {
        List<ControllerServer> group = new ArrayList<>(isWaymark() ? WaymarkController.startGroup(binary(), nodes,
            settings) : ControllerProcess.startGroup(ControllerProcess.classpathFile(), nodes, settings));
        try {
            awaitServingLeader(group, SERVING_TIMEOUT);
        } catch (RuntimeException | AssertionError e) {
            group.forEach(ControllerServer::discard);
            throw e;
        }
        return group;
    }

    /**
     * Whether the node at {@code addr} serves leader-only requests now: its answer to
     * CONTROLLER_GET_REPLICA_INFO of a set nobody registers is not CONTROLLER_NOT_LEADER
     * (2007) and not a transport failure. That is a node whose first entry of its term is
     * committed (Java's {@code isLeaderState}), not only one that won a vote.
     */
    public static boolean serves(RawClient client, String addr) {
        RemotingCommand request = RemotingCommand.createRequestCommand(ControllerCodes.GET_REPLICA_INFO, null);
        request.addExtField("brokerName", "waymark-serving-probe");
        try {
            return client.invoke(addr, request, 3000).getCode() != ControllerCodes.NOT_LEADER;
        } catch (IllegalStateException e) {
            return false;
        }
    }

    /** Waits until exactly one of {@code nodes} serves as leader, and returns it. */
    public static <T extends ControllerServer> T awaitServingLeader(List<T> nodes, Duration timeout) {
        try (RawClient client = new RawClient()) {
            return Poll.until(timeout, 100, "one serving leader among " + nodes, () -> {
                List<T> serving = nodes.stream().filter(n -> n.alive() && serves(client, n.addr())).toList();
                return serving.size() == 1 ? serving.get(0) : null;
            });
        }
    }

    /**
     * A NameServer with the selected kind of controller embedded
     * ({@code enableControllerInNamesrv=true}): Waymark's {@code rmq-namesrv}
     * ({@code waymark.namesrv.bin}) or the profile's Java {@code NamesrvStartup}. Returns
     * once both print their boot lines and the controller serves as leader.
     */
    public static EmbeddedNamesrvProcess startEmbedded(Map<String, String> settings) throws Exception {
        EmbeddedNamesrvProcess namesrv = isWaymark() ? EmbeddedNamesrvProcess.waymark(NameServers.binary(), settings)
            : EmbeddedNamesrvProcess.java(ControllerProcess.classpathFile(), settings);
        try (RawClient client = new RawClient()) {
            Poll.untilTrue(SERVING_TIMEOUT, 100, "the controller embedded in " + namesrv + " serving",
                () -> serves(client, namesrv.controllerAddr()));
        } catch (RuntimeException | AssertionError e) {
            namesrv.stop();
            throw e;
        }
        return namesrv;
    }
}
