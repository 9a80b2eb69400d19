package dev.waymark.interop.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
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

/**
 * The Waymark NameServer binary ({@code rmq-namesrv}), started as a child process on a port it
 * binds itself (port 0) of loopback or a given address, and stopped by its pid. Its stdout and
 * stderr go to {@code namesrv.log} in its temporary directory (kept when it fails to start).
 * {@link #restart} runs it again on the same port with the same directory, so that it finds the
 * route snapshot it wrote; {@link #startOn} runs one on a given port with a new directory (a
 * restart on an empty disk). The HTTP port and the cluster's gossip address, when it has them,
 * are read from its boot output ({@link #httpAddr}, {@link #gossipAddr}).
 */
public final class WaymarkNameServer implements NameServer {
    private static final String BOOT_LINE = "The Name Server boot success";
    private static final Pattern BOOT_ADDRESS = Pattern.compile("address \\S+:(\\d+)\\s*$");
    private static final Pattern HTTP_LINE = Pattern.compile("^Waymark HTTP listening on http://(\\S+)\\s*$");
    private static final Pattern GOSSIP_LINE = Pattern.compile("^Waymark cluster gossip on (\\S+) \\(bound ");
    /** How long the lines after the boot line may take: the server writes them together. */
    private static final Duration LATER_LINES_TIMEOUT = Duration.ofSeconds(5);
    /** How long a restart on the same port retries while the old process's socket is released. */
    private static final Duration RESTART_BIND_TIMEOUT = Duration.ofSeconds(20);

    private final Path binary;
    private final String host;
    private final Map<String, String> settings;
    private final Process process;
    private final int port;
    private final Path dir;
    private final Output output;
    private boolean stopped;

    private WaymarkNameServer(Path binary, String host, Map<String, String> settings, Process process, int port,
                              Path dir, Output output) {
        this.binary = binary;
        this.host = host;
        this.settings = settings;
        this.process = process;
        this.port = port;
        this.dir = dir;
        this.output = output;
    }

    /**
     * Starts {@code binary} with {@code --listen 127.0.0.1:0} (the server binds a port the
     * kernel picks and names it in its boot line), its KV, config and route snapshot files in a new temporary
     * directory, and one {@code --set key=value} per setting; returns once it printed its
     * boot line.
     */
    public static WaymarkNameServer start(Path binary, Map<String, String> settings) throws Exception {
        return start(binary, "127.0.0.1", settings);
    }

    /** {@link #start(Path, Map)} listening on {@code host} (an address of this machine) instead of loopback. */
    public static WaymarkNameServer start(Path binary, String host, Map<String, String> settings) throws Exception {
        Path dir = Files.createTempDirectory("waymark-namesrv-");
        return launch(binary, host, new LinkedHashMap<>(settings), dir, 0);
    }

    /**
     * One on {@code host:port} with its files in a new temporary directory: the server an
     * operator starts where one was killed, on an empty disk. Retried for a while when the port
     * is still held (the old process's sockets).
     */
    public static WaymarkNameServer startOn(Path binary, String host, int port, Map<String, String> settings)
        throws Exception {
        Path dir = Files.createTempDirectory("waymark-namesrv-");
        return Ports.startOnPort("Waymark NameServer", port, new int[] {0}, RESTART_BIND_TIMEOUT,
            p -> launch(binary, host, new LinkedHashMap<>(settings), dir, p));
    }

    /**
     * One start on {@code host:listenPort} (port 0: the kernel's choice) with its files in
     * {@code dir}; the process is killed again when it does not boot. Its output is appended to
     * the log, so that a restarted server's log holds every run.
     */
    private static WaymarkNameServer launch(Path binary, String host, Map<String, String> settings, Path dir,
                                            int listenPort) throws Exception {
        List<String> command = new ArrayList<>(List.of(binary.toString(), "--listen", host + ":" + listenPort,
            "--set", "kvConfigPath=" + dir.resolve("kv.json"),
            "--set", "configStorePath=" + dir.resolve("ns.properties"),
            // Its own route snapshot: the default is under the shared HOME, where one
            // scenario's routes would be restored into the next scenario's server.
            "--set", "routeSnapshotPath=" + dir.resolve("routes.snapshot")));
        settings.forEach((k, v) -> {
            command.add("--set");
            command.add(k + "=" + v);
        });
        Path log = dir.resolve("namesrv.log");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        Output output = new Output();
        Thread pump = new Thread(() -> output.pump(process, log), "waymark-namesrv-" + process.pid());
        pump.setDaemon(true);
        pump.start();
        try {
            return new WaymarkNameServer(binary, host, settings, process, output.port.get(20, TimeUnit.SECONDS), dir,
                output);
        } catch (TimeoutException | ExecutionException e) {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            throw new IllegalStateException("Waymark NameServer " + String.join(" ", command)
                + " did not boot (exit " + (process.isAlive() ? "-" : process.exitValue()) + "); log:\n"
                + tail(log), e);
        }
    }

    /** The port in a boot line ({@code "... address 127.0.0.1:40001"}), or -1. */
    static int bootPort(String line) {
        Matcher m = BOOT_ADDRESS.matcher(line);
        return line.contains(BOOT_LINE) && m.find() ? Integer.parseInt(m.group(1)) : -1;
    }

    /** What the server prints at start-up, as it prints it. */
    private static final class Output {
        final CompletableFuture<Integer> port = new CompletableFuture<>();
        final CompletableFuture<String> http = new CompletableFuture<>();
        final CompletableFuture<String> gossip = new CompletableFuture<>();

        void pump(Process process, Path log) {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8)); PrintStream out = new PrintStream(Files.newOutputStream(log,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND), true, StandardCharsets.UTF_8)) {
                String line;
                while ((line = in.readLine()) != null) {
                    out.println(line);
                    int bound = bootPort(line);
                    if (bound > 0) {
                        port.complete(bound);
                    }
                    Matcher m = HTTP_LINE.matcher(line);
                    if (m.find()) {
                        http.complete(m.group(1));
                    }
                    m = GOSSIP_LINE.matcher(line);
                    if (m.find()) {
                        gossip.complete(m.group(1));
                    }
                }
            } catch (IOException e) {
                // The process went away; start() or stop() reports it.
            }
            IllegalStateException ended = new IllegalStateException("output ended before the line");
            port.completeExceptionally(ended);
            http.completeExceptionally(ended);
            gossip.completeExceptionally(ended);
        }
    }

    /** The value of a line printed with the boot line; fails naming the line when there is none. */
    private String later(CompletableFuture<String> line, String what) {
        try {
            return line.get(LATER_LINES_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            throw new IllegalStateException(this + " printed no " + what + " line; log:\n" + logTail(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public String addr() {
        return host + ":" + port;
    }

    /** {@code host:port} of its HTTP port, from {@code Waymark HTTP listening on http://...}. */
    public String httpAddr() {
        return later(output.http, "HTTP");
    }

    /**
     * {@code host:port} peers gossip with, from {@code Waymark cluster gossip on ...}; only for
     * a server started with {@code clusterGossipAddr}.
     */
    public String gossipAddr() {
        return later(output.gossip, "cluster gossip");
    }

    @Override
    public String kind() {
        return "waymark";
    }

    public long pid() {
        return process.pid();
    }

    /** Whether the process is still running (a crash is a finding). */
    public boolean alive() {
        return process.isAlive();
    }

    /** The last lines of its output. */
    public String logTail() {
        return tail(dir.resolve("namesrv.log"));
    }

    @Override
    public synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        terminate();
        EmbeddedBroker.deleteTree(dir);
    }

    /**
     * SIGTERM, as {@link #stop} (the server writes its route snapshot on the way out), then the
     * binary again on the same port with the same settings and directory: the KV store and the
     * route snapshot it left are the new process's to read.
     */
    @Override
    public synchronized WaymarkNameServer restart() throws Exception {
        if (stopped) {
            throw new IllegalStateException(this + " is stopped; only a running NameServer can be restarted");
        }
        // The directory passes to the new instance: this one must no longer delete it.
        stopped = true;
        terminate();
        return Ports.startOnPort("Waymark NameServer", port, new int[] {0}, RESTART_BIND_TIMEOUT,
            p -> launch(binary, host, settings, dir, p));
    }

    /**
     * SIGKILL, as a crash or an evicted pod: no route snapshot written, its connections closed
     * by the kernel. Its directory is deleted, as a node rescheduled elsewhere leaves its disk
     * behind.
     */
    public synchronized void kill() {
        if (stopped) {
            return;
        }
        stopped = true;
        try {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        EmbeddedBroker.deleteTree(dir);
    }

    /** SIGTERM to the pid, then SIGKILL if it has not exited after 5 s. */
    private void terminate() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "waymark NameServer " + addr() + " (pid " + process.pid() + ")";
    }

}
