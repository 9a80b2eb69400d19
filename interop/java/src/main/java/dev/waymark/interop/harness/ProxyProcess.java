package dev.waymark.interop.harness;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.BindException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A real RocketMQ 5.x Proxy in cluster mode ({@code ProxyStartup -pm cluster -pc
 * rmq-proxy.json}) in its own JVM, on the class path {@code interop/java/proxy/pom.xml} builds
 * ({@link #dir}): the proxy's dependencies clash with the profile's. It finds brokers through
 * the NameServer of its configuration, as a 5.x deployment does.
 *
 * <p>Its two ports (gRPC {@code p}, remoting {@code p + 1}) are chosen below the ephemeral range
 * and the start is retried on fresh ones when the proxy cannot bind ({@link Ports}). It is
 * ready when it prints that it started, which it does only after its start-up found a broker
 * of its cluster through the NameServer (it creates its system topic there). Its directory
 * holds {@code user.home} (the proxy's own logs), its configuration and {@code proxy.log}
 * (stdout and stderr); stdin is a pipe from this JVM, so it stops if this JVM dies.
 */
public final class ProxyProcess implements AutoCloseable {
    private static final String LAUNCHER = "dev.waymark.interop.proxy.ProxyLauncher";
    private static final String READY = "rocketmq-proxy startup successfully";
    /** JVM start, class loading and the system topic, on a busy two-core machine. */
    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
    private static final int[] OFFSETS = {0, 1};

    private final Process process;
    private final Path dir;
    private final int grpcPort;
    private boolean stopped;

    private ProxyProcess(Process process, Path dir, int grpcPort) {
        this.process = process;
        this.dir = dir;
        this.grpcPort = grpcPort;
    }

    /**
     * The directory {@code interop/java/proxy/pom.xml} builds into ({@code
     * -Dwaymark.proxy.dir}, set by surefire), or null.
     */
    public static Path dir() {
        String dir = System.getProperty("waymark.proxy.dir", "");
        return dir.isEmpty() ? null : Path.of(dir);
    }

    /**
     * {@code classes} of {@code dir} followed by the class path of {@code file} there.
     *
     * @throws IllegalStateException when the build has not made them
     */
    static String classpath(Path dir, String file) throws IOException {
        Path list = dir.resolve(file);
        Path classes = dir.resolve("classes");
        if (!Files.isRegularFile(list) || !Files.isDirectory(classes)) {
            throw new IllegalStateException("no " + list + " or " + classes
                + " (mvn -P rmq5 test-compile builds interop/java/proxy/pom.xml)");
        }
        return classes + File.pathSeparator + Files.readString(list).trim();
    }

    /**
     * Starts a proxy of {@code cluster} asking {@code namesrv} (a NameServer address list) for
     * routes, and returns once it started.
     */
    public static ProxyProcess start(Path proxyDir, String namesrv, String cluster) throws Exception {
        String classpath = classpath(proxyDir, "proxy-classpath.txt");
        return Ports.startOnFreePorts("proxy", OFFSETS, port -> launch(classpath, namesrv, cluster, port));
    }

    private static ProxyProcess launch(String classpath, String namesrv, String cluster, int port) throws Exception {
        Path dir = Files.createTempDirectory("waymark-proxy-");
        Path config = dir.resolve("rmq-proxy.json");
        Files.writeString(config, "{\n"
            + "  \"rocketMQClusterName\": \"" + cluster + "\",\n"
            + "  \"namesrvAddr\": \"" + namesrv + "\",\n"
            + "  \"proxyMode\": \"cluster\",\n"
            // The address it gives remoting clients for itself: loopback, like the harness's
            // brokers, not whatever interface the machine has.
            + "  \"localServeAddr\": \"127.0.0.1\",\n"
            + "  \"grpcServerPort\": " + port + ",\n"
            + "  \"remotingListenPort\": " + (port + 1) + "\n"
            + "}\n");
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(ControllerProcess.withHeap("-Xmx256m", "-XX:MaxDirectMemorySize=128m"));
        command.add("-Duser.home=" + dir.resolve("home"));
        command.add("-Djava.io.tmpdir=" + Files.createDirectories(dir.resolve("tmp")));
        command.add("-cp");
        command.add(classpath);
        command.add(LAUNCHER);
        command.add("-pm");
        command.add("cluster");
        command.add("-pc");
        command.add(config.toString());
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        Path log = dir.resolve("proxy.log");
        CompletableFuture<Void> ready = new CompletableFuture<>();
        Thread pump = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8)); PrintStream out = new PrintStream(Files.newOutputStream(log), true,
                    StandardCharsets.UTF_8)) {
                String line;
                while ((line = in.readLine()) != null) {
                    out.println(line);
                    if (line.contains(READY)) {
                        ready.complete(null);
                    }
                }
            } catch (IOException e) {
                // The process went away; start() or stop() reports it.
            }
            ready.completeExceptionally(new IllegalStateException("output ended before " + READY));
        }, "proxy-process-" + process.pid());
        pump.setDaemon(true);
        pump.start();
        try {
            ready.get(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            return new ProxyProcess(process, dir, port);
        } catch (TimeoutException | ExecutionException e) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            pump.join(5_000);
            String tail = ChildJvms.tail(log);
            String message = "proxy " + String.join(" ", command) + " did not start (exit "
                + (process.isAlive() ? "-" : process.exitValue()) + "); log:\n" + tail;
            EmbeddedBroker.deleteTree(dir);
            // A port taken meanwhile: Ports retries on fresh ones.
            if (tail.contains("Address already in use") || tail.contains("BindException")) {
                throw new IllegalStateException(message, new BindException(message));
            }
            throw new IllegalStateException(message, e);
        }
    }


    /** Where gRPC clients connect: {@code 127.0.0.1:<grpc port>}. */
    public String grpcAddr() {
        return "127.0.0.1:" + grpcPort;
    }

    /** Its remoting-protocol port, {@code 127.0.0.1:<grpc port + 1>}. */
    public String remotingAddr() {
        return "127.0.0.1:" + (grpcPort + 1);
    }

    public boolean alive() {
        return process.isAlive();
    }

    /** The last lines of its output. */
    public String logTail() {
        return ChildJvms.tail(dir.resolve("proxy.log"));
    }

    /** Kills it (it keeps no state worth a clean stop) and deletes its directory. */
    @Override
    public synchronized void close() {
        if (stopped) {
            return;
        }
        stopped = true;
        ChildJvms.killAndDelete(process, dir);
    }

    @Override
    public String toString() {
        return "proxy gRPC " + grpcAddr() + ", remoting " + remotingAddr() + " (own JVM, pid " + process.pid() + ")";
    }
}
