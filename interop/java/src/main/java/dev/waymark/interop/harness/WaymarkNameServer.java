package dev.waymark.interop.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The Waymark NameServer binary ({@code rmq-namesrv}), started as a child process on a free
 * loopback port and stopped by its pid. Its stdout and stderr go to {@code namesrv.log} in
 * its temporary directory (kept when it fails to start).
 */
public final class WaymarkNameServer implements NameServer {
    private static final String BOOT_LINE = "The Name Server boot success";

    private final Process process;
    private final int port;
    private final Path dir;
    private boolean stopped;

    private WaymarkNameServer(Process process, int port, Path dir) {
        this.process = process;
        this.port = port;
        this.dir = dir;
    }

    /**
     * Starts {@code binary} with {@code --listen 127.0.0.1:<free port>}, its KV and config
     * files in a new temporary directory, and one {@code --set key=value} per setting; returns
     * once it printed its boot line.
     */
    public static WaymarkNameServer start(Path binary, Map<String, String> settings) throws Exception {
        Path dir = Files.createTempDirectory("waymark-namesrv-");
        IllegalStateException last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            int port = Ports.free();
            List<String> command = new ArrayList<>(List.of(binary.toString(), "--listen", "127.0.0.1:" + port,
                "--set", "kvConfigPath=" + dir.resolve("kv.json"),
                "--set", "configStorePath=" + dir.resolve("ns.properties")));
            settings.forEach((k, v) -> {
                command.add("--set");
                command.add(k + "=" + v);
            });
            Path log = dir.resolve("namesrv.log");
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            CountDownLatch booted = new CountDownLatch(1);
            Thread pump = new Thread(() -> pump(process, log, booted), "waymark-namesrv-" + port);
            pump.setDaemon(true);
            pump.start();
            if (booted.await(20, TimeUnit.SECONDS) && process.isAlive()) {
                return new WaymarkNameServer(process, port, dir);
            }
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            last = new IllegalStateException("Waymark NameServer " + String.join(" ", command)
                + " did not boot (exit " + (process.isAlive() ? "-" : process.exitValue()) + "); log:\n"
                + tail(log));
        }
        throw last;
    }

    private static void pump(Process process, Path log, CountDownLatch booted) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
            StandardCharsets.UTF_8)); PrintStream out = new PrintStream(Files.newOutputStream(log), true,
                StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                out.println(line);
                if (line.contains(BOOT_LINE)) {
                    booted.countDown();
                }
            }
        } catch (IOException e) {
            // The process went away; start() or stop() reports it.
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
        return "127.0.0.1:" + port;
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
        process.destroy(); // SIGTERM to the pid
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        EmbeddedBroker.deleteTree(dir);
    }

    @Override
    public String toString() {
        return "waymark NameServer " + addr() + " (pid " + process.pid() + ")";
    }

}
