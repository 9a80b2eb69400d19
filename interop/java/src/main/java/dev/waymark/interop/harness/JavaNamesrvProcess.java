package dev.waymark.interop.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The profile's Java NameServer ({@link NamesrvLauncher}) in its own JVM, for a control that
 * needs JVM-wide system properties Java reads once, at class initialisation: {@code
 * -Dtls.server.mode=enforcing}, {@code -Dtls.config.file=...} ({@code TlsSystemConfig}). The
 * in-process {@link JavaNameServer} would impose them on every server of the test JVM. Binds a
 * loopback port the kernel picks; its directory holds {@code user.home}, the KV file and
 * {@code namesrv.log} (stdout and stderr); stdin is a pipe from this JVM, so it stops if this
 * JVM dies.
 */
public final class JavaNamesrvProcess implements NameServer {
    private static final String READY = "NAMESRV READY ";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private final Process process;
    private final String addr;
    private final Path dir;
    private boolean stopped;

    private JavaNamesrvProcess(Process process, String addr, Path dir) {
        this.process = process;
        this.addr = addr;
        this.dir = dir;
    }

    /**
     * Starts one with the harness's JVM options, then {@code jvmOptions}; {@code settings} are
     * NamesrvConfig / NettyServerConfig options by Java name.
     */
    public static JavaNamesrvProcess start(Path classpathFile, List<String> jvmOptions, Map<String, String> settings)
        throws Exception {
        if (classpathFile == null || !Files.isRegularFile(classpathFile)) {
            throw new IllegalStateException("no harness class path file (" + classpathFile
                + "); run mvn -P <profile> test-compile first");
        }
        String classpath = Files.readString(classpathFile).trim();
        Path dir = Files.createTempDirectory("waymark-java-namesrv-process-");
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(ControllerProcess.JVM_OPTIONS);
        command.addAll(jvmOptions);
        command.add("-Duser.home=" + dir.resolve("home"));
        command.add("-Drocketmq.home.dir=" + dir);
        // The launcher's own temporary directory too, so that killing it leaves nothing behind.
        command.add("-Djava.io.tmpdir=" + Files.createDirectories(dir.resolve("tmp")));
        command.add("-cp");
        command.add(classpath);
        command.add(NamesrvLauncher.class.getName());
        command.add("kvConfigPath=" + dir.resolve("kv.json"));
        command.add("configStorePath=" + dir.resolve("namesrv.properties"));
        settings.forEach((k, v) -> command.add(k + "=" + v));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        Path log = dir.resolve("namesrv.log");
        CompletableFuture<String> ready = new CompletableFuture<>();
        Thread pump = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8)); PrintStream out = new PrintStream(Files.newOutputStream(log), true,
                    StandardCharsets.UTF_8)) {
                String line;
                while ((line = in.readLine()) != null) {
                    out.println(line);
                    if (line.startsWith(READY)) {
                        ready.complete(line.substring(READY.length()).trim());
                    }
                }
            } catch (IOException e) {
                // The process went away; start() or stop() reports it.
            }
            ready.completeExceptionally(new IllegalStateException("output ended before " + READY.trim()));
        }, "java-namesrv-process-" + process.pid());
        pump.setDaemon(true);
        pump.start();
        try {
            return new JavaNamesrvProcess(process, ready.get(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS), dir);
        } catch (TimeoutException | ExecutionException e) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            String message = "Java NameServer " + String.join(" ", command) + " did not start (exit "
                + (process.isAlive() ? "-" : process.exitValue()) + "); log:\n" + ChildJvms.tail(log);
            EmbeddedBroker.deleteTree(dir);
            throw new IllegalStateException(message, e);
        }
    }


    @Override
    public String addr() {
        return addr;
    }

    @Override
    public String kind() {
        return "java";
    }

    public long pid() {
        return process.pid();
    }

    /** The last lines of its output. */
    public String logTail() {
        return ChildJvms.tail(dir.resolve("namesrv.log"));
    }

    /** Kills it (nothing to unregister; a clean stop takes seconds) and deletes its directory. */
    @Override
    public synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        ChildJvms.killAndDelete(process, dir);
    }

    @Override
    public String toString() {
        return "java NameServer " + addr + " (own JVM, pid " + process.pid() + ")";
    }
}
