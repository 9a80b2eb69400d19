package dev.waymark.interop.harness;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * Command-line entry point: one real in-process broker for tools outside this Maven project
 * (the Go interop module, manual runs). See README.md, "Broker launcher".
 *
 * <pre>
 * java -cp "$(cat interop/java/target/rmq5/classpath.txt)" dev.waymark.interop.harness.BrokerLauncher \
 *     --namesrv 127.0.0.1:9876 [--cluster C] [--name B] [--id N] [--port P] [--store DIR] \
 *     [--ignore-stdin] [key=value ...]
 * </pre>
 *
 * Every option also reads a system property ({@code -Dwaymark.broker.namesrv=...},
 * {@code .cluster}, {@code .name}, {@code .id}, {@code .port}, {@code .store}); arguments
 * win. {@code key=value} arguments set any broker/store/netty option. Prints
 * {@code BROKER READY <addr>} on stdout once every NameServer lists the broker, then runs
 * until SIGTERM/SIGINT or (unless {@code --ignore-stdin}) until its stdin reaches end of file;
 * either way it unregisters and shuts down cleanly. Exit code 0 after a clean stop, 1 when
 * start-up or registration fails, 2 on a usage error.
 *
 * <p>In controller mode ({@code enableControllerMode=true controllerAddr=...}, 5.x) it prints
 * {@code BROKER STARTED <addr>} once the broker runs, a {@code BROKER STATE ...} line
 * ({@link ReplicaState}) whenever its view of its broker set changes, and
 * {@code BROKER READY <addr> role=R brokerId=N controllerId=C} once it is ready (RUNNING, not
 * fenced, and listed by every NameServer under its role's id). That has no deadline: a broker
 * set without an electable replica keeps it fenced, and it keeps running.
 */
public final class BrokerLauncher {
    private BrokerLauncher() {
    }

    public static void main(String[] args) throws Exception {
        BrokerSpec spec = new BrokerSpec();
        String namesrv = System.getProperty("waymark.broker.namesrv");
        String cluster = System.getProperty("waymark.broker.cluster");
        String name = System.getProperty("waymark.broker.name");
        String id = System.getProperty("waymark.broker.id");
        String port = System.getProperty("waymark.broker.port");
        String store = System.getProperty("waymark.broker.store");
        boolean watchStdin = true;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "--namesrv", "-n" -> namesrv = value(args, ++i, arg);
                case "--cluster" -> cluster = value(args, ++i, arg);
                case "--name" -> name = value(args, ++i, arg);
                case "--id" -> id = value(args, ++i, arg);
                case "--port" -> port = value(args, ++i, arg);
                case "--store" -> store = value(args, ++i, arg);
                case "--ignore-stdin" -> watchStdin = false;
                case "--help", "-h" -> {
                    usage(null);
                    return;
                }
                default -> {
                    int eq = arg.indexOf('=');
                    if (eq <= 0 || arg.startsWith("-")) {
                        usage("unknown argument " + arg);
                    }
                    spec.set(arg.substring(0, eq), arg.substring(eq + 1));
                }
            }
        }
        if (namesrv == null || namesrv.isBlank()) {
            usage("--namesrv is required");
        }
        spec.namesrv(namesrv);
        if (cluster != null) {
            spec.cluster(cluster);
        }
        if (name != null) {
            spec.name(name);
        }
        if (id != null) {
            spec.id(Long.parseLong(id));
        }
        if (port != null) {
            spec.port(Integer.parseInt(port));
        }
        if (store != null) {
            spec.store(Path.of(store));
        }

        boolean controllerMode = spec.controllerMode();
        EmbeddedBroker broker;
        try {
            broker = controllerMode ? EmbeddedBroker.startUnchecked(spec) : EmbeddedBroker.start(spec);
        } catch (Throwable e) {
            System.err.println("BROKER FAILED " + e);
            e.printStackTrace();
            System.exit(1);
            return;
        }
        CountDownLatch done = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            broker.stop();
            done.countDown();
        }, "broker-launcher-shutdown"));
        if (controllerMode) {
            System.out.println("BROKER STARTED " + broker.addr());
            System.out.flush();
            Thread monitor = new Thread(() -> monitor(broker, done), "broker-launcher-monitor");
            monitor.setDaemon(true);
            monitor.start();
        } else {
            System.out.println("BROKER READY " + broker.addr());
            System.out.flush();
        }
        if (watchStdin) {
            Thread watcher = new Thread(() -> {
                drain(System.in);
                System.err.println("broker launcher: stdin closed, stopping " + broker.addr());
                broker.stop();
                done.countDown();
            }, "broker-launcher-stdin");
            watcher.setDaemon(true);
            watcher.start();
        }
        done.await();
        System.exit(0);
    }

    /**
     * Controller mode: prints a {@link ReplicaState} line ({@code BROKER STATE ...}) whenever
     * the broker's view of its set changes, and {@code BROKER READY <addr> role=... brokerId=...
     * controllerId=...} once it is ready ({@link EmbeddedBroker#controllerReady}): it may
     * never be (a set without an electable replica keeps it fenced), so there is no deadline.
     * If it runs but a NameServer still lacks it 3 s later, one more registration is triggered.
     */
    private static void monitor(EmbeddedBroker broker, CountDownLatch done) {
        ReplicaState last = null;
        boolean ready = false;
        long runningSince = 0;
        boolean nudged = false;
        long nextReadyCheck = 0;
        try (RawClient client = new RawClient()) {
            while (done.getCount() > 0) {
                ReplicaState now = broker.replicaState();
                if (now != null && !now.equals(last)) {
                    System.out.println(now.toLine());
                    System.out.flush();
                    last = now;
                }
                if (!ready && now != null && now.running() && System.nanoTime() - nextReadyCheck >= 0) {
                    nextReadyCheck = System.nanoTime() + 200_000_000L;
                    runningSince = runningSince == 0 ? System.nanoTime() : runningSince;
                    try {
                        if (broker.controllerReady(client)) {
                            ready = true;
                            ReplicaState state = broker.replicaState();
                            System.out.println("BROKER READY " + broker.addr() + " role=" + state.role() + " brokerId="
                                + state.brokerId() + " controllerId=" + state.controllerId());
                            System.out.flush();
                        } else if (!nudged && System.nanoTime() - runningSince > 3_000_000_000L) {
                            nudged = true;
                            broker.controller().registerBrokerAll(true, false, true);
                        }
                    } catch (RuntimeException e) {
                        // A NameServer that does not answer yet: the next round asks again.
                    }
                } else if (now == null || !now.running()) {
                    runningSince = 0;
                }
                Thread.sleep(100);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void drain(InputStream in) {
        byte[] buffer = new byte[256];
        try {
            while (in.read(buffer) >= 0) {
                // Input is ignored; only its end matters.
            }
        } catch (IOException e) {
            // A broken stdin counts as closed.
        }
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            usage(option + " needs a value");
        }
        return args[i];
    }

    private static void usage(String error) {
        String text = """
            usage: BrokerLauncher --namesrv HOST:PORT[;HOST:PORT] [--cluster NAME] [--name BROKER]
                                  [--id N] [--port P] [--store DIR] [--ignore-stdin] [key=value ...]
              --id 0 (default) = master, N > 0 = slave N; --port 0 (default) = a free port p with
              p-2 and p+1 free too; --store: default a new temporary directory.
              key=value: any BrokerConfig/MessageStoreConfig/Netty option (e.g. enableSlaveActingMaster=true).
              Prints "BROKER READY <addr>" once registered; stops on SIGTERM or end of stdin.
              Controller mode (enableControllerMode=true controllerAddr=...): "BROKER STARTED <addr>",
              then "BROKER STATE ..." on each role change and "BROKER READY <addr> role=..." once ready.""";
        if (error != null) {
            System.err.println("BrokerLauncher: " + error);
            System.err.println(text);
            System.exit(2);
        }
        System.out.println(text);
    }
}
