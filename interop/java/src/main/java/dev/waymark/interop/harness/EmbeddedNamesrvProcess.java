package dev.waymark.interop.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
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
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A NameServer with the AutoSwitch-HA controller embedded ({@code enableControllerInNamesrv=true}),
 * in its own process: Waymark's {@code rmq-namesrv} ({@link #waymark}) or the profile's real
 * {@code org.apache.rocketmq.namesrv.NamesrvStartup} with a {@code -c} file ({@link #java}),
 * which starts the NameServer and then, from the same properties, a {@code ControllerManager}
 * in the same JVM, exactly as the distribution's {@code mqnamesrv} does.
 *
 * <p>The NameServer binds port 0 and names its port in its boot line ({@code The Name Server
 * boot success. serializeType=JSON, address 127.0.0.1:<port>}); the controller listens on the
 * port of its {@code controllerDLegerPeers} entry, chosen below the ephemeral range, and the
 * whole start is retried on fresh ports when it cannot bind. Started = both boot lines
 * printed (Waymark: {@code The Controller Server boot success ...}, Java: {@code The
 * ControllerManager boot success ...}); {@link Controllers#startEmbedded} then waits for the
 * controller to serve. Its directory holds the KV file, the config files, the controller's
 * store, the JVM's {@code user.home} and {@code namesrv.log} (stdout and stderr).
 */
public final class EmbeddedNamesrvProcess implements NameServer {
    private static final Pattern NAMESRV_BOOT = Pattern.compile("The Name Server boot success.*address \\S+:(\\d+)\\s*$");
    private static final String WAYMARK_CONTROLLER_BOOT = "The Controller Server boot success";
    private static final String JAVA_CONTROLLER_BOOT = "The ControllerManager boot success";
    private static final Duration BOOT_TIMEOUT = Duration.ofSeconds(90);
    /** Java's DLedger data files: 16 MiB instead of 1 GiB, as the harness's other Java controllers. */
    private static final String SMALL_MAPPED_FILE = String.valueOf(16 << 20);

    private final String kind;
    private final Process process;
    private final int port;
    private final String controllerAddr;
    private final Path dir;
    private boolean stopped;

    private EmbeddedNamesrvProcess(String kind, Process process, int port, String controllerAddr, Path dir) {
        this.kind = kind;
        this.process = process;
        this.port = port;
        this.controllerAddr = controllerAddr;
        this.dir = dir;
    }

    /** Waymark's {@code rmq-namesrv} with its embedded controller; {@code settings} by Java key. */
    public static EmbeddedNamesrvProcess waymark(Path binary, Map<String, String> settings) throws Exception {
        return Ports.startOnFreePorts("Waymark NameServer with embedded controller", new int[] {0}, controllerPort -> {
            Path dir = Files.createTempDirectory("waymark-namesrv-controller-");
            Map<String, String> all = controllerSettings(dir, controllerPort);
            all.put("kvConfigPath", dir.resolve("kv.json").toString());
            all.put("configStorePath", dir.resolve("namesrv.properties").toString());
            all.putAll(settings);
            List<String> command = new ArrayList<>(List.of(binary.toString(), "--listen", "127.0.0.1:0"));
            all.forEach((k, v) -> {
                command.add("--set");
                command.add(k + "=" + v);
            });
            return launch("waymark", command, Map.of("HOME", dir.toString()), WAYMARK_CONTROLLER_BOOT, dir,
                "127.0.0.1:" + controllerPort);
        });
    }

    /**
     * The profile's Java {@code NamesrvStartup -c <file>} (its own JVM); {@code settings} by
     * Java key, written into the file with the harness's defaults (loopback, small thread
     * pools, DLedger files of 16 MiB).
     */
    public static EmbeddedNamesrvProcess java(Path classpathFile, Map<String, String> settings) throws Exception {
        if (classpathFile == null || !Files.isRegularFile(classpathFile)) {
            throw new IllegalStateException("no harness class path file (" + classpathFile
                + "); run mvn -P <profile> test-compile first");
        }
        String classpath = Files.readString(classpathFile).trim();
        return Ports.startOnFreePorts("Java NameServer with embedded controller", new int[] {0}, controllerPort -> {
            Path dir = Files.createTempDirectory("waymark-java-namesrv-controller-");
            Properties p = new Properties();
            p.setProperty("listenPort", "0");
            p.setProperty("kvConfigPath", dir.resolve("kv.json").toString());
            p.setProperty("serverWorkerThreads", "2");
            p.setProperty("serverSelectorThreads", "1");
            p.setProperty("defaultThreadPoolNums", "4");
            p.setProperty("clientRequestThreadPoolNums", "2");
            p.setProperty("mappedFileSize", SMALL_MAPPED_FILE);
            p.putAll(controllerSettings(dir, controllerPort));
            p.putAll(settings);
            Path file = dir.resolve("namesrv.properties");
            try (OutputStream out = Files.newOutputStream(file)) {
                p.store(out, "NameServer with embedded controller (waymark interop harness)");
            }
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.addAll(ControllerProcess.JVM_OPTIONS);
            command.add("-Duser.home=" + dir.resolve("home"));
            command.add("-Drocketmq.home.dir=" + dir);
            command.add("-cp");
            command.add(classpath);
            command.add("org.apache.rocketmq.namesrv.NamesrvStartup");
            command.add("-c");
            command.add(file.toString());
            return launch("java", command, Map.of(), JAVA_CONTROLLER_BOOT, dir, "127.0.0.1:" + controllerPort);
        });
    }

    /** The harness's controller defaults: a one-node group {@code n0} on {@code port}, store in {@code dir}. */
    private static Map<String, String> controllerSettings(Path dir, int port) {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("bindAddress", "127.0.0.1");
        s.put("enableControllerInNamesrv", "true");
        s.put("controllerDLegerGroup", "group1");
        s.put("controllerDLegerPeers", "n0-127.0.0.1:" + port);
        s.put("controllerDLegerSelfId", "n0");
        s.put("controllerStorePath", dir.resolve("store").toString());
        s.put("rocketmqHome", dir.toString());
        return s;
    }

    private static EmbeddedNamesrvProcess launch(String kind, List<String> command, Map<String, String> env,
                                                 String controllerBoot, Path dir, String controllerAddr)
        throws Exception {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().putAll(env);
        Process process = builder.start();
        Path log = dir.resolve("namesrv.log");
        CompletableFuture<Integer> namesrvPort = new CompletableFuture<>();
        CompletableFuture<Boolean> controllerUp = new CompletableFuture<>();
        Thread pump = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8)); PrintStream out = new PrintStream(Files.newOutputStream(log,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND), true, StandardCharsets.UTF_8)) {
                String line;
                while ((line = in.readLine()) != null) {
                    out.println(line);
                    Matcher m = NAMESRV_BOOT.matcher(line);
                    if (m.find()) {
                        namesrvPort.complete(Integer.parseInt(m.group(1)));
                    }
                    if (line.contains(controllerBoot)) {
                        controllerUp.complete(true);
                    }
                }
            } catch (IOException e) {
                // The process went away; launch() or stop() reports it.
            }
            IllegalStateException ended = new IllegalStateException("output ended before the boot lines");
            namesrvPort.completeExceptionally(ended);
            controllerUp.completeExceptionally(ended);
        }, "embedded-namesrv-" + process.pid());
        pump.setDaemon(true);
        pump.start();
        try {
            long deadline = System.nanoTime() + BOOT_TIMEOUT.toNanos();
            int port = namesrvPort.get(BOOT_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            controllerUp.get(Math.max(1, (deadline - System.nanoTime()) / 1_000_000), TimeUnit.MILLISECONDS);
            return new EmbeddedNamesrvProcess(kind, process, port, controllerAddr, dir);
        } catch (TimeoutException | ExecutionException e) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            String text = tail(log, 40);
            // The whole log: a stack trace or backtrace may follow the bind error.
            String all = tail(log, Integer.MAX_VALUE);
            EmbeddedBroker.deleteTree(dir);
            String message = kind + " NameServer with embedded controller (" + String.join(" ", command)
                + ") did not boot (exit " + (process.isAlive() ? "-" : process.exitValue()) + "); log:\n" + text;
            if (all.contains("Address already in use") || all.contains("Failed to bind")) {
                throw new IllegalStateException(message, new BindException("Address already in use"));
            }
            throw new IllegalStateException(message, e);
        }
    }

    private static String tail(Path log, int lines) {
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** The NameServer's address. */
    @Override
    public String addr() {
        return "127.0.0.1:" + port;
    }

    /** The embedded controller's address (its DLedger self-peer port). */
    public String controllerAddr() {
        return controllerAddr;
    }

    @Override
    public String kind() {
        return kind;
    }

    public long pid() {
        return process.pid();
    }

    public boolean alive() {
        return process.isAlive();
    }

    public String logTail() {
        return tail(dir.resolve("namesrv.log"), 40);
    }

    /** Kills the process (a clean stop of Java's controller takes many seconds) and deletes its directory. */
    @Override
    public synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        EmbeddedBroker.deleteTree(dir);
    }

    @Override
    public String toString() {
        return kind + " NameServer " + addr() + " with embedded controller " + controllerAddr + " (pid "
            + process.pid() + ")";
    }
}
