package dev.waymark.interop.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.BindException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * Waymark's controller ({@code rmq-controller}) as child processes: one node, or a group of
 * nodes on loopback, each with its own temporary directory (its Raft store, its config file,
 * {@code controller.log}: stdout and stderr, kept across restarts).
 *
 * <p>A controller listens on its own entry of {@code controllerDLegerPeers}, so its port is
 * written into every node's settings before it starts: ports are chosen below the kernel's
 * ephemeral range and a start whose node cannot bind (its output says {@code Address already
 * in use} and it exits) is retried on fresh ports ({@link Ports#startOnFreePorts}); a restart
 * on the same address retries its port for 20 s ({@link Ports#startOnPort}). A node is started
 * once it printed its boot line, {@code The Controller Server boot success. serializeType=JSON,
 * address 127.0.0.1:<port>}, which comes before its first election ends: {@link Controllers}
 * waits for a serving leader.
 *
 * <p>Settings are Java's keys, each passed as {@code --set key=value}, on top of the harness
 * defaults: group {@code group1}, {@code bindAddress=127.0.0.1}, store, config file and
 * {@code rocketmqHome} in the node's directory.
 */
public final class WaymarkController implements ControllerServer {
    private static final String BOOT_LINE = "The Controller Server boot success";
    private static final Pattern BOOT_ADDRESS = Pattern.compile("address (\\S+:\\d+)\\s*$");
    private static final Duration BOOT_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration RESTART_BIND_TIMEOUT = Duration.ofSeconds(20);

    private final Path binary;
    private final Map<String, String> settings;
    private final Path dir;
    private final Process process;
    private final String addr;
    private final String selfId;
    private boolean stopped;
    private RawClient probe;

    private WaymarkController(Path binary, Map<String, String> settings, Path dir, Process process, String addr) {
        this.binary = binary;
        this.settings = settings;
        this.dir = dir;
        this.process = process;
        this.addr = addr;
        this.selfId = settings.get("controllerDLegerSelfId");
    }

    /** One node ({@code n0}, a one-node group) on a free port; returns once it printed its boot line. */
    public static WaymarkController start(Path binary, Map<String, String> settings) throws Exception {
        return startGroup(binary, 1, settings).get(0);
    }

    /**
     * An n-node group ({@code n0}.. on consecutive free ports), started together; returns once
     * every node printed its boot line (not necessarily once the group has a leader). A node
     * that cannot bind makes the whole group start again on fresh ports.
     */
    public static List<WaymarkController> startGroup(Path binary, int nodes, Map<String, String> settings)
        throws Exception {
        int[] offsets = new int[nodes];
        for (int i = 0; i < nodes; i++) {
            offsets[i] = i;
        }
        return Ports.startOnFreePorts("Waymark controller group of " + nodes, offsets, base -> {
            int[] ports = new int[nodes];
            for (int i = 0; i < nodes; i++) {
                ports[i] = base + i;
            }
            String peers = ControllerProcess.peerList(ports);
            List<Path> dirs = new ArrayList<>();
            List<Launch> launches = new ArrayList<>();
            try {
                for (int i = 0; i < nodes; i++) {
                    Path dir = Files.createTempDirectory("waymark-controller-");
                    dirs.add(dir);
                    Map<String, String> node = withDefaults(settings, dir);
                    node.put("controllerDLegerPeers", peers);
                    node.put("controllerDLegerSelfId", "n" + i);
                    launches.add(Launch.begin(binary, node, dir));
                }
                List<WaymarkController> started = new ArrayList<>();
                Exception failure = null;
                for (Launch launch : launches) {
                    try {
                        started.add(launch.await());
                    } catch (Exception e) {
                        failure = failure == null ? e : failure;
                    }
                }
                if (failure != null) {
                    started.forEach(WaymarkController::kill);
                    throw failure;
                }
                return started;
            } catch (Exception e) {
                launches.forEach(Launch::abandon);
                dirs.forEach(EmbeddedBroker::deleteTree);
                throw e;
            }
        });
    }

    private static Map<String, String> withDefaults(Map<String, String> settings, Path dir) {
        Map<String, String> out = new LinkedHashMap<>();
        out.put("controllerDLegerGroup", "group1");
        out.put("bindAddress", "127.0.0.1");
        out.put("controllerStorePath", dir.resolve("store").toString());
        out.put("configStorePath", dir.resolve("controller.properties").toString());
        out.put("rocketmqHome", dir.toString());
        out.putAll(settings);
        return out;
    }

    /** One process start, waited for separately (a group's nodes start together). */
    private static final class Launch {
        final Path binary;
        final Map<String, String> settings;
        final Path dir;
        final Process process;
        final CompletableFuture<String> boot = new CompletableFuture<>();
        final List<String> command;

        private Launch(Path binary, Map<String, String> settings, Path dir, Process process, List<String> command) {
            this.binary = binary;
            this.settings = settings;
            this.dir = dir;
            this.process = process;
            this.command = command;
        }

        static Launch begin(Path binary, Map<String, String> settings, Path dir) throws IOException {
            List<String> command = new ArrayList<>(List.of(binary.toString()));
            settings.forEach((k, v) -> {
                command.add("--set");
                command.add(k + "=" + v);
            });
            Path log = dir.resolve("controller.log");
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
            builder.environment().put("HOME", dir.toString());
            Process process = builder.start();
            Launch launch = new Launch(binary, settings, dir, process, command);
            Thread pump = new Thread(() -> launch.pump(log), "waymark-controller-" + process.pid());
            pump.setDaemon(true);
            pump.start();
            return launch;
        }

        private void pump(Path log) {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8)); PrintStream out = new PrintStream(Files.newOutputStream(log,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND), true, StandardCharsets.UTF_8)) {
                String line;
                while ((line = in.readLine()) != null) {
                    out.println(line);
                    Matcher m = BOOT_ADDRESS.matcher(line);
                    if (line.contains(BOOT_LINE) && m.find()) {
                        boot.complete(m.group(1));
                    }
                }
            } catch (IOException e) {
                // The process went away; await() or stop() reports it.
            }
            boot.completeExceptionally(new IllegalStateException("output ended before the boot line"));
        }

        WaymarkController await() throws Exception {
            String bound;
            try {
                bound = boot.get(BOOT_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            } catch (TimeoutException | ExecutionException e) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                String log = tail(dir.resolve("controller.log"), 30);
                String message = "Waymark controller " + settings.get("controllerDLegerSelfId") + " ("
                    + String.join(" ", command) + ") did not boot (exit "
                    + (process.isAlive() ? "-" : process.exitValue()) + "); log:\n" + log;
                // The whole log: with RUST_BACKTRACE set, a backtrace follows the error.
                String all = tail(dir.resolve("controller.log"), Integer.MAX_VALUE);
                if (all.contains("Address already in use") || all.contains("address already in use")) {
                    throw new IllegalStateException(message, new BindException("Address already in use"));
                }
                throw new IllegalStateException(message, e);
            }
            String expected = peerAddr(settings.get("controllerDLegerPeers"),
                settings.get("controllerDLegerSelfId"));
            if (!bound.equals(expected)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new IllegalStateException("Waymark controller bound " + bound + ", its peer entry is " + expected);
            }
            return new WaymarkController(binary, settings, dir, process, bound);
        }

        void abandon() {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The address of member {@code id} in a DLedger peer list ({@code id-host:port;...}). */
    static String peerAddr(String peers, String id) {
        for (String peer : peers.split(";")) {
            int dash = peer.indexOf('-');
            if (dash > 0 && peer.substring(0, dash).trim().equals(id)) {
                return peer.substring(dash + 1).trim();
            }
        }
        throw new IllegalArgumentException("no member " + id + " in " + peers);
    }

    private static String tail(Path log, int lines) {
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public String kind() {
        return "waymark";
    }

    @Override
    public String addr() {
        return addr;
    }

    @Override
    public String selfId() {
        return selfId;
    }

    /** What it answers in CONTROLLER_GET_METADATA_INFO ({@code isLeader}). */
    @Override
    public boolean isLeader() {
        Map<String, String> metadata = metadata();
        return metadata != null && "true".equals(metadata.get("isLeader"));
    }

    @Override
    public synchronized Map<String, String> metadata() {
        if (stopped || !process.isAlive()) {
            return null;
        }
        if (probe == null) {
            probe = new RawClient();
        }
        try {
            RemotingCommand response = probe.invoke(addr,
                RemotingCommand.createRequestCommand(ControllerCodes.GET_METADATA_INFO, null), 3000);
            return response.getCode() == 0 ? response.getExtFields() : null;
        } catch (IllegalStateException e) {
            return null;
        }
    }

    @Override
    public long pid() {
        return process.pid();
    }

    @Override
    public boolean alive() {
        return process.isAlive();
    }

    /** The settings it runs with (paths, peers and self id included). */
    public Map<String, String> settings() {
        return Map.copyOf(settings);
    }

    @Override
    public Path dir() {
        return dir;
    }

    @Override
    public String logTail() {
        return tail(dir.resolve("controller.log"), 40);
    }

    @Override
    public WaymarkController restart() throws Exception {
        if (process.isAlive()) {
            throw new IllegalStateException("stop or kill " + this + " before restarting it");
        }
        int port = Integer.parseInt(addr.substring(addr.lastIndexOf(':') + 1));
        return Ports.startOnPort("Waymark controller " + selfId, port, new int[] {0}, RESTART_BIND_TIMEOUT,
            p -> Launch.begin(binary, settings, dir).await());
    }

    /** SIGTERM (in-flight requests finish), then SIGKILL after 10 s. Idempotent. */
    @Override
    public synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        closeProbe();
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public synchronized void kill() {
        stopped = true;
        closeProbe();
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void closeProbe() {
        if (probe != null) {
            probe.close();
            probe = null;
        }
    }

    @Override
    public void close() {
        stop();
        EmbeddedBroker.deleteTree(dir);
    }

    @Override
    public void discard() {
        kill();
        EmbeddedBroker.deleteTree(dir);
    }

    @Override
    public String toString() {
        return "Waymark controller " + selfId + " at " + addr + " (pid " + process.pid() + ")";
    }
}
