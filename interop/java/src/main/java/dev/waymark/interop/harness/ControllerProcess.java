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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * One controller node ({@code ControllerLauncher}, the profile's real controller) in its
 * own JVM, so that a test can kill it like a real process (SIGTERM, or SIGKILL for a crash)
 * and start it again on the same address and store; and so that it shares no static state
 * with the test JVM (a standalone controller sets no remoting version property, so its
 * frames carry version 0).
 *
 * <p>Each node gets a temporary directory holding its DLedger store, its config file,
 * {@code rocketmqHome}, the JVM's {@code user.home} (RocketMQ's logs) and
 * {@code controller.log} (the JVM's stdout and stderr). The class path comes from
 * {@code target/<profile>/classpath.txt} (system property {@code waymark.harness.classpath}
 * in the Maven tests). The child's stdin stays a pipe from this JVM, so it stops by itself
 * if this JVM dies.
 */
public final class ControllerProcess implements ControllerServer {
    public static final String LAUNCHER = "dev.waymark.interop.harness.ControllerLauncher";
    /**
     * The options every RocketMQ JVM the harness starts gets: the client compiler and the
     * serial collector, which start several JVMs at once faster on two cores; and the opens
     * RocketMQ needs on Java 17 (the same as interop/java/broker.sh), without which the
     * controller prints Hessian stack traces and 4.x stores fail.
     */
    static final List<String> COMMON_JVM_OPTIONS = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
        "--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
        "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.lang=ALL-UNNAMED",
        "--add-opens=java.base/java.util=ALL-UNNAMED", "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED");
    /** A controller's JVM options: a small heap and {@link #COMMON_JVM_OPTIONS}. */
    static final List<String> JVM_OPTIONS = withHeap("-Xmx256m", "-XX:MaxDirectMemorySize=128m");

    /** {@code heap} options followed by {@link #COMMON_JVM_OPTIONS}. */
    static List<String> withHeap(String... heap) {
        List<String> options = new ArrayList<>(List.of(heap));
        options.addAll(COMMON_JVM_OPTIONS);
        return List.copyOf(options);
    }
    /** JVM start, DLedger store and (one node) first election, on a busy two-core machine. */
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(90);
    private static final String READY = "CONTROLLER READY ";
    /** The launcher's exit code when its port stayed taken. */
    private static final int EXIT_BIND_FAILED = 3;

    private final Path classpathFile;
    private final Map<String, String> settings;
    private final Path dir;
    private final Process process;
    private final String addr;
    private final String selfId;
    private boolean stopped;
    /** For {@link #isLeader}; made on first use, closed with the process. */
    private RawClient probe;

    private ControllerProcess(Path classpathFile, Map<String, String> settings, Path dir, Process process,
                              String addr, String selfId) {
        this.classpathFile = classpathFile;
        this.settings = settings;
        this.dir = dir;
        this.process = process;
        this.addr = addr;
        this.selfId = selfId;
    }

    /** The class path file of the Maven build ({@code -Dwaymark.harness.classpath}), or null. */
    public static Path classpathFile() {
        String file = System.getProperty("waymark.harness.classpath", "");
        return file.isEmpty() ? null : Path.of(file);
    }

    /**
     * Starts one node with {@code settings} ({@code key=value} options of the launcher; no
     * {@code controllerDLegerPeers}: a one-node group on a port the launcher picks) and
     * returns once it printed its READY line.
     */
    public static ControllerProcess start(Path classpathFile, Map<String, String> settings) throws Exception {
        Path dir = Files.createTempDirectory("waymark-controller-");
        try {
            return launch(classpathFile, withPaths(settings, dir), dir);
        } catch (Exception e) {
            EmbeddedBroker.deleteTree(dir);
            throw e;
        }
    }

    /**
     * Starts an n-node group, one JVM per node ({@code n0}.. on consecutive free ports),
     * started in parallel; returns once every node serves requests (not necessarily once
     * the group has a leader). A node that cannot bind makes the whole group start again on
     * fresh ports.
     */
    public static List<ControllerProcess> startGroup(Path classpathFile, int nodes, Map<String, String> settings)
        throws Exception {
        int[] offsets = new int[nodes];
        for (int i = 0; i < nodes; i++) {
            offsets[i] = i;
        }
        ExecutorService starter = Executors.newFixedThreadPool(nodes, r -> {
            Thread t = new Thread(r, "controller-group-start");
            t.setDaemon(true);
            return t;
        });
        try {
            return Ports.startOnFreePorts("controller group of " + nodes + " processes", offsets,
                base -> startNodes(starter, classpathFile, base, nodes, settings));
        } finally {
            starter.shutdownNow();
        }
    }

    /** One attempt of {@link #startGroup} on ports {@code base..base+nodes-1}; all or none keep running. */
    private static List<ControllerProcess> startNodes(ExecutorService starter, Path classpathFile, int base, int nodes,
                                                      Map<String, String> settings) throws Exception {
        int[] ports = new int[nodes];
        for (int i = 0; i < nodes; i++) {
            ports[i] = base + i;
        }
        String peers = peerList(ports);
        List<Future<ControllerProcess>> starting = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
            Map<String, String> node = new LinkedHashMap<>(settings);
            node.put("controllerDLegerPeers", peers);
            node.put("controllerDLegerSelfId", "n" + i);
            starting.add(starter.submit(() -> start(classpathFile, node)));
        }
        List<ControllerProcess> started = new ArrayList<>();
        Exception failure = null;
        for (Future<ControllerProcess> node : starting) {
            try {
                started.add(node.get());
            } catch (ExecutionException e) {
                if (failure == null) {
                    failure = e.getCause() instanceof Exception cause ? cause : e;
                }
            }
        }
        if (failure != null) {
            started.forEach(ControllerProcess::discard);
            throw failure;
        }
        return started;
    }

    /** {@code n0-127.0.0.1:P0;n1-127.0.0.1:P1;...}. */
    public static String peerList(int... ports) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < ports.length; i++) {
            out.append(i == 0 ? "" : ";").append('n').append(i).append("-127.0.0.1:").append(ports[i]);
        }
        return out.toString();
    }

    private static Map<String, String> withPaths(Map<String, String> settings, Path dir) {
        Map<String, String> out = new LinkedHashMap<>();
        out.put("controllerStorePath", dir.resolve("store").toString());
        out.put("configStorePath", dir.resolve("controller.properties").toString());
        out.put("rocketmqHome", dir.toString());
        out.putAll(settings);
        return out;
    }

    private static ControllerProcess launch(Path classpathFile, Map<String, String> settings, Path dir)
        throws Exception {
        if (classpathFile == null || !Files.isRegularFile(classpathFile)) {
            throw new IllegalStateException("no harness class path file (" + classpathFile
                + "); run mvn -P <profile> test-compile first");
        }
        String classpath = Files.readString(classpathFile).trim();
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(JVM_OPTIONS);
        command.add("-Duser.home=" + dir.resolve("home"));
        command.add("-cp");
        command.add(classpath);
        command.add(LAUNCHER);
        settings.forEach((k, v) -> command.add(k + "=" + v));
        Path log = dir.resolve("controller.log");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        CompletableFuture<String> ready = new CompletableFuture<>();
        Thread pump = new Thread(() -> pump(process, log, ready), "controller-process-" + process.pid());
        pump.setDaemon(true);
        pump.start();
        String addr;
        try {
            addr = ready.get(READY_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        } catch (TimeoutException | ExecutionException e) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            String message = "controller " + settings.getOrDefault("controllerDLegerSelfId", "n0")
                + " did not start (exit " + (process.isAlive() ? "-" : process.exitValue()) + "); log:\n" + tail(log);
            if (!process.isAlive() && process.exitValue() == EXIT_BIND_FAILED) {
                throw new IllegalStateException(message, new BindException("Address already in use"));
            }
            throw new IllegalStateException(message, e);
        }
        Map<String, String> effective = new LinkedHashMap<>(settings);
        if (!effective.containsKey("controllerDLegerPeers")) {
            // The launcher picked the port: a restart must use the same one.
            effective.put("controllerDLegerPeers", "n0-" + addr);
            effective.put("controllerDLegerSelfId", "n0");
        }
        return new ControllerProcess(classpathFile, effective, dir, process, addr,
            effective.get("controllerDLegerSelfId"));
    }

    private static void pump(Process process, Path log, CompletableFuture<String> ready) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
            StandardCharsets.UTF_8)); PrintStream out = new PrintStream(Files.newOutputStream(log,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND), true, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                out.println(line);
                if (line.startsWith(READY)) {
                    ready.complete(line.substring(READY.length()).trim());
                }
            }
        } catch (IOException e) {
            // The process went away; launch() or stop() reports it.
        }
        ready.completeExceptionally(new IllegalStateException("output ended before the READY line"));
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
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
     * What the node says in CONTROLLER_GET_METADATA_INFO ({@code isLeader}): DLedger's view,
     * which turns true a moment before the new leader's scheduler serves requests.
     */
    @Override
    public boolean isLeader() {
        Map<String, String> metadata = metadata();
        return metadata != null && "true".equals(metadata.get("isLeader"));
    }

    /**
     * Its CONTROLLER_GET_METADATA_INFO answer ({@code group}, {@code controllerLeaderId},
     * {@code controllerLeaderAddress}, {@code isLeader}, {@code peers}), or null when it does
     * not answer.
     */
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
    public String kind() {
        return "java";
    }

    /** The node's temporary directory (store, config file, logs). */
    @Override
    public Path dir() {
        return dir;
    }

    @Override
    public long pid() {
        return process.pid();
    }

    /** Whether the process is still running. */
    @Override
    public boolean alive() {
        return process.isAlive();
    }

    /** The settings it was started with (paths and, once known, its peer list included). */
    public Map<String, String> settings() {
        return Map.copyOf(settings);
    }

    /** The last lines of its stdout and stderr. */
    @Override
    public String logTail() {
        return tail(dir.resolve("controller.log"));
    }

    /** The same node again (address, peers, store) after {@link #stop} or {@link #kill}. */
    @Override
    public ControllerProcess restart() throws Exception {
        if (process.isAlive()) {
            throw new IllegalStateException("stop or kill the controller before restarting it");
        }
        return launch(classpathFile, settings, dir);
    }

    /** SIGTERM (a clean shutdown), then SIGKILL if it is still running after 15 s. Idempotent. */
    @Override
    public synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        closeProbe();
        process.destroy();
        try {
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** SIGKILL: the process dies at once, as in a crash ({@code kill -9}); its store stays. */
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

    /** Stops it and deletes its directory. */
    @Override
    public void close() {
        stop();
        EmbeddedBroker.deleteTree(dir);
    }

    /**
     * Kills it and deletes its directory: for callers that do not need a clean shutdown,
     * which takes RocketMQ's remoting layer several seconds.
     */
    @Override
    public void discard() {
        kill();
        EmbeddedBroker.deleteTree(dir);
    }

    @Override
    public String toString() {
        return "controller " + selfId + " at " + addr + " (pid " + process.pid() + ")";
    }
}
