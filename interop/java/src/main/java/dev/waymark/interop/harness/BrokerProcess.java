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
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

/**
 * One real broker ({@link BrokerLauncher}, the profile's {@code BrokerController}) in its own
 * JVM, so that a test can treat it as a process: kill -9 it (a crash), stop and continue it
 * (SIGSTOP / SIGCONT: a hung machine, every connection left open), or stop it cleanly, and
 * start it again on the same ports with the same store.
 *
 * <p>Each broker gets a temporary directory holding its store (unless the spec names one),
 * the JVM's {@code user.home} (RocketMQ's logs under {@code home/logs/rocketmqlogs}) and
 * {@code broker.log} (the JVM's stdout and stderr, kept across restarts). Ports: {@code
 * --port 0} on the first start (the launcher picks a free triple and retries on fresh ports,
 * {@link Ports}), the same port on every restart (retried while the old sockets close). The
 * child's stdin is a pipe from this JVM, so it stops by itself if this JVM dies.
 *
 * <p>In controller mode ({@link BrokerSpec#controllerMode}) {@link #start} returns once the
 * broker runs ({@code BROKER STARTED}); it is <em>ready</em> ({@link #awaitReady}) once its
 * {@code ReplicasManager} is RUNNING, it is not fenced, and every NameServer lists it under
 * the id of its role: 0 as master, its controller id as slave. {@link #state} is its latest
 * own view of its role ({@link ReplicaState}). Otherwise {@link #start} returns once every
 * NameServer lists it (as {@link EmbeddedBroker#start}).
 */
public final class BrokerProcess implements AutoCloseable {
    public static final String LAUNCHER = "dev.waymark.interop.harness.BrokerLauncher";
    /** A broker's JVM options: a larger heap than a controller's, and the common ones. */
    static final List<String> JVM_OPTIONS = ControllerProcess.withHeap("-Xmx384m", "-XX:MaxDirectMemorySize=256m");
    /** JVM start, store recovery and (a restart) the old ports' release, on a busy two-core machine. */
    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
    private static final String STARTED = "BROKER STARTED ";
    private static final String READY = "BROKER READY ";

    private final Path classpathFile;
    /** JVM options beyond {@link #JVM_OPTIONS} (e.g. {@code -Dtls.enable=true}), kept for restarts. */
    private final List<String> extraJvmOptions;
    /** What the command runs under ({@link #start(Path, BrokerSpec, List, List)}), kept for restarts. */
    private final List<String> commandPrefix;
    private final BrokerSpec spec;
    private final Path dir;
    private final Process process;
    private final String addr;
    private final CompletableFuture<String> ready;
    private final Output output;
    private boolean paused;
    private boolean ended;

    private BrokerProcess(Path classpathFile, List<String> extraJvmOptions, List<String> commandPrefix,
                          BrokerSpec spec, Path dir, Process process, String addr, Output output) {
        this.classpathFile = classpathFile;
        this.extraJvmOptions = extraJvmOptions;
        this.commandPrefix = commandPrefix;
        this.spec = spec;
        this.dir = dir;
        this.process = process;
        this.addr = addr;
        this.ready = output.ready;
        this.output = output;
    }

    /**
     * Starts a broker of {@code spec} (its port 0 = a free one, its store null = one in the
     * broker's directory) and returns once it runs (controller mode) or is registered.
     */
    public static BrokerProcess start(Path classpathFile, BrokerSpec spec) throws Exception {
        return start(classpathFile, spec, List.of());
    }

    /**
     * {@link #start(Path, BrokerSpec)} with more JVM options, after the harness's: system
     * properties Java reads at start-up, e.g. {@code -Dtls.enable=true -Dtls.config.file=...}.
     */
    public static BrokerProcess start(Path classpathFile, BrokerSpec spec, List<String> extraJvmOptions)
        throws Exception {
        return start(classpathFile, spec, extraJvmOptions, List.of());
    }

    /**
     * {@link #start(Path, BrokerSpec, List)} with the JVM's command line run under {@code
     * commandPrefix}, e.g. {@code ip netns exec NAME} for a broker in another network namespace
     * (the prefix must exec the JVM, not fork it, so that its pid is the broker's for
     * {@link #pause} and {@link #kill}). Such a broker sets {@code brokerIP1} to its own address,
     * under which the launcher waits for it to be registered. The prefix is kept for {@link #restart}.
     */
    public static BrokerProcess start(Path classpathFile, BrokerSpec spec, List<String> extraJvmOptions,
                                      List<String> commandPrefix) throws Exception {
        Path dir = Files.createTempDirectory("waymark-broker-process-");
        BrokerSpec own = spec.copy();
        if (own.storeDir() == null) {
            own.store(dir.resolve("store"));
        }
        try {
            return launch(classpathFile, List.copyOf(extraJvmOptions), List.copyOf(commandPrefix), own, dir);
        } catch (Exception e) {
            EmbeddedBroker.deleteTree(dir);
            throw e;
        }
    }

    private static BrokerProcess launch(Path classpathFile, List<String> extraJvmOptions, List<String> commandPrefix,
                                        BrokerSpec spec, Path dir) throws Exception {
        if (classpathFile == null || !Files.isRegularFile(classpathFile)) {
            throw new IllegalStateException("no harness class path file (" + classpathFile
                + "); run mvn -P <profile> test-compile first");
        }
        String classpath = Files.readString(classpathFile).trim();
        Path home = dir.resolve("home");
        List<String> command = new ArrayList<>(commandPrefix);
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(JVM_OPTIONS);
        command.addAll(extraJvmOptions);
        command.add("-Duser.home=" + home);
        command.add("-Drocketmq.home.dir=" + home);
        command.add("-cp");
        command.add(classpath);
        command.add(LAUNCHER);
        command.addAll(spec.toLauncherArgs());
        Path log = dir.resolve("broker.log");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        Output output = new Output(spec.controllerMode());
        Thread pump = new Thread(() -> output.pump(process, log), "broker-process-" + process.pid());
        pump.setDaemon(true);
        pump.start();
        String addr;
        try {
            addr = output.started.get(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        } catch (TimeoutException | ExecutionException e) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new IllegalStateException("broker " + spec + " did not start (exit "
                + (process.isAlive() ? "-" : process.exitValue()) + "); log:\n" + tail(log, 40), e);
        }
        // The ports it bound: a restart binds the same ones.
        spec.port(Integer.parseInt(addr.substring(addr.lastIndexOf(':') + 1)));
        return new BrokerProcess(classpathFile, extraJvmOptions, commandPrefix, spec, dir, process, addr, output);
    }

    /** What the launcher prints, as it prints it. */
    private static final class Output {
        final boolean controllerMode;
        final CompletableFuture<String> started = new CompletableFuture<>();
        final CompletableFuture<String> ready = new CompletableFuture<>();
        volatile ReplicaState state;

        Output(boolean controllerMode) {
            this.controllerMode = controllerMode;
        }

        void pump(Process process, Path log) {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8)); PrintStream out = new PrintStream(Files.newOutputStream(log,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND), true, StandardCharsets.UTF_8)) {
                String line;
                while ((line = in.readLine()) != null) {
                    out.println(line);
                    if (line.startsWith(STARTED)) {
                        started.complete(firstWord(line.substring(STARTED.length())));
                    } else if (line.startsWith(READY)) {
                        String addr = firstWord(line.substring(READY.length()));
                        if (!controllerMode) {
                            started.complete(addr);
                        }
                        ready.complete(addr);
                    } else {
                        ReplicaState parsed = ReplicaState.parse(line);
                        if (parsed != null) {
                            state = parsed;
                        }
                    }
                }
            } catch (IOException e) {
                // The process went away; its owner reports it.
            }
            IllegalStateException ended = new IllegalStateException("the broker's output ended");
            started.completeExceptionally(ended);
            ready.completeExceptionally(ended);
        }

        private static String firstWord(String text) {
            String trimmed = text.trim();
            int space = trimmed.indexOf(' ');
            return space < 0 ? trimmed : trimmed.substring(0, space);
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

    /** The address it registers, as its launcher printed it: {@code <brokerIP1>:<listenPort>}. */
    public String addr() {
        return addr;
    }

    /** {@code 127.0.0.1:<haListenPort>}. */
    public String haAddr() {
        return "127.0.0.1:" + (spec.listenPort() + 1);
    }

    /** Its spec: ports and store as bound and used, for a restart. */
    public BrokerSpec spec() {
        return spec.copy();
    }

    public Path storeDir() {
        return spec.storeDir();
    }

    public long pid() {
        return process.pid();
    }

    /** Whether the process runs (a paused one does). */
    public boolean alive() {
        return process.isAlive();
    }

    public synchronized boolean paused() {
        return paused;
    }

    /** Its latest {@code BROKER STATE} (controller mode); null before the first. */
    public ReplicaState state() {
        return output.state;
    }

    /** Whether it printed {@code BROKER READY}. */
    public boolean ready() {
        return ready.isDone() && !ready.isCompletedExceptionally();
    }

    /** Waits for {@code BROKER READY}. */
    public void awaitReady(Duration timeout) {
        try {
            ready.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError(this + " not ready within " + timeout.toSeconds() + " s; state " + state()
                + "; log:\n" + logTail(), e);
        } catch (ExecutionException e) {
            throw new AssertionError(this + " ended before it was ready; log:\n" + logTail(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Waits until its own view of its role satisfies {@code condition}; returns that view. */
    public ReplicaState awaitState(Duration timeout, String what, Predicate<ReplicaState> condition) {
        return Poll.until(timeout, 100, this + ": " + what, () -> {
            ReplicaState now = state();
            return now != null && condition.test(now) ? now : null;
        });
    }

    /**
     * The identity file Java writes once the controller accepted its id
     * ({@code <store>/brokerIdentity}: {@code <cluster>#<brokerName>#<controller id>}), null
     * while there is none.
     */
    public String identityFile() {
        Path file = spec.storeDir().resolve("brokerIdentity");
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : null;
        } catch (IOException e) {
            return null;
        }
    }

    /** SIGKILL: the process dies at once, as in a crash ({@code kill -9}); its store stays. */
    public synchronized void kill() {
        ended = true;
        process.destroyForcibly();
        waitFor(Duration.ofSeconds(15));
        paused = false;
    }

    /** SIGSTOP: the JVM freezes with every socket open (a hung machine). */
    public synchronized void pause() {
        signal("STOP");
        paused = true;
    }

    /** SIGCONT after {@link #pause}. */
    public synchronized void resume() {
        signal("CONT");
        paused = false;
    }

    private void signal(String name) {
        if (!process.isAlive()) {
            throw new IllegalStateException(this + " is not running");
        }
        try {
            Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid()))
                .redirectErrorStream(true).start();
            String out = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed: " + out);
            }
        } catch (IOException e) {
            throw new IllegalStateException("kill -" + name + " " + process.pid(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** SIGTERM (unregisters, then a clean shutdown; SIGCONT first if paused), SIGKILL after 30 s. */
    public synchronized void stop() {
        if (ended) {
            return;
        }
        ended = true;
        if (paused && process.isAlive()) {
            signal("CONT");
            paused = false;
        }
        process.destroy();
        if (!waitFor(Duration.ofSeconds(30))) {
            process.destroyForcibly();
            waitFor(Duration.ofSeconds(10));
        }
    }

    private boolean waitFor(Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * The same broker again (ports, store, options) after {@link #kill} or {@link #stop}:
     * returns once it runs (controller mode) or is registered.
     */
    public BrokerProcess restart() throws Exception {
        if (process.isAlive()) {
            throw new IllegalStateException("kill or stop " + this + " before restarting it");
        }
        return launch(classpathFile, extraJvmOptions, commandPrefix, spec.copy(), dir);
    }

    /** The last lines of its stdout and stderr. */
    public String logTail() {
        return tail(dir.resolve("broker.log"), 40);
    }

    /** Its temporary directory (store unless the spec named one, logs). */
    public Path dir() {
        return dir;
    }

    /** Kills it (a clean stop takes RocketMQ several seconds) and deletes its directory. */
    @Override
    public void close() {
        kill();
        EmbeddedBroker.deleteTree(dir);
    }

    @Override
    public String toString() {
        ReplicaState now = state();
        return "broker " + spec.brokerName() + " at " + addr + " (pid " + process.pid()
            + (now == null || now.controllerId() == null ? "" : ", controller id " + now.controllerId()) + ")";
    }
}
