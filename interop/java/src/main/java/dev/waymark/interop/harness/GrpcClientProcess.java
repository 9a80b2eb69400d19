package dev.waymark.interop.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The official RocketMQ 5.x gRPC Java client (rocketmq-client-java) in its own JVM, driven
 * through {@code GrpcClientLauncher} (interop/java/proxy): the client jar carries classes of
 * its own that differ from the profile's and the proxy's copies, so it shares a class path
 * with neither. One JVM serves every {@link #roundtrip} of a test class; its directory holds
 * {@code user.home} (the client's own logs) and {@code client.log} (stdout and stderr).
 */
public final class GrpcClientProcess implements AutoCloseable {
    private static final String LAUNCHER = "dev.waymark.interop.proxy.GrpcClientLauncher";
    private static final String READY = "CLIENT READY";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private final Process process;
    private final Path dir;
    private final Writer commands;
    private final BlockingQueue<String> answers;
    private boolean stopped;

    private GrpcClientProcess(Process process, Path dir, BlockingQueue<String> answers) {
        this.process = process;
        this.dir = dir;
        this.commands = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        this.answers = answers;
    }

    /** Starts a client of the proxy whose gRPC port is {@code endpoint} ({@code host:port}). */
    public static GrpcClientProcess start(Path proxyDir, String endpoint) throws Exception {
        String classpath = ProxyProcess.classpath(proxyDir, "client-classpath.txt");
        Path dir = Files.createTempDirectory("waymark-grpc-client-");
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(ControllerProcess.withHeap("-Xmx128m"));
        command.add("-Duser.home=" + dir.resolve("home"));
        command.add("-Djava.io.tmpdir=" + Files.createDirectories(dir.resolve("tmp")));
        command.add("-cp");
        command.add(classpath);
        command.add(LAUNCHER);
        command.add(endpoint);
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        Path log = dir.resolve("client.log");
        CompletableFuture<Void> ready = new CompletableFuture<>();
        BlockingQueue<String> answers = new LinkedBlockingQueue<>();
        Thread pump = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8)); PrintStream out = new PrintStream(Files.newOutputStream(log), true,
                    StandardCharsets.UTF_8)) {
                String line;
                while ((line = in.readLine()) != null) {
                    out.println(line);
                    if (line.equals(READY)) {
                        ready.complete(null);
                    } else if (line.startsWith("ROUNDTRIP ") || line.startsWith("ERROR ")) {
                        answers.add(line);
                    }
                }
            } catch (IOException e) {
                // The process went away; roundtrip() reports it.
            }
            ready.completeExceptionally(new IllegalStateException("output ended before " + READY));
        }, "grpc-client-process-" + process.pid());
        pump.setDaemon(true);
        pump.start();
        try {
            ready.get(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            return new GrpcClientProcess(process, dir, answers);
        } catch (TimeoutException | ExecutionException e) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            String message = "gRPC client " + String.join(" ", command) + " did not start; log:\n" + ChildJvms.tail(log);
            EmbeddedBroker.deleteTree(dir);
            throw new IllegalStateException(message, e);
        }
    }

    /**
     * A producer sends {@code count} messages to {@code topic} through the proxy and a
     * SimpleConsumer of {@code group} receives them; the client's answer, {@code ROUNDTRIP
     * <topic> sent=<n> received=<m>} or {@code ERROR <topic> <exception>}.
     */
    public synchronized String roundtrip(String topic, String group, int count, Duration timeout) throws Exception {
        commands.write("roundtrip " + topic + " " + group + " " + count + "\n");
        commands.flush();
        String answer = answers.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (answer == null) {
            throw new IllegalStateException("no answer from the gRPC client in " + timeout.toSeconds()
                + " s (alive: " + process.isAlive() + "); log:\n" + logTail());
        }
        return answer;
    }


    /** The last lines of its output. */
    public String logTail() {
        return ChildJvms.tail(dir.resolve("client.log"));
    }

    /** Kills it (its clients hold nothing worth a clean stop) and deletes its directory. */
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
        return "gRPC client (own JVM, pid " + process.pid() + ")";
    }
}
