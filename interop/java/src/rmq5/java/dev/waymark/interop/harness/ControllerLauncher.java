package dev.waymark.interop.harness;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

/**
 * Command-line entry point: one node of the profile's real controller
 * ({@link JavaController}) in its own JVM, for tests that must kill a controller process
 * (kill -9) and for tools outside this Maven project. See README.md, "Controller launcher".
 *
 * <pre>
 * java --add-opens=... -cp "$(cat interop/java/target/rmq5/classpath.txt)" \
 *     dev.waymark.interop.harness.ControllerLauncher [--ignore-stdin] [-c FILE | FILE] [key=value ...]
 * </pre>
 *
 * {@code key=value} arguments and the properties file set any ControllerConfig /
 * NettyServerConfig / NettyClientConfig / JraftConfig option by its Java name (later ones
 * win). Without {@code controllerDLegerPeers} it runs a one-node group on a free port.
 * Prints {@code CONTROLLER READY <addr>} on stdout once the node serves
 * CONTROLLER_GET_METADATA_INFO (a one-node group: once it is leader), then runs until
 * SIGTERM/SIGINT or, unless {@code --ignore-stdin}, until its stdin reaches end of file.
 * Exit code 0 after a clean stop, 1 when start-up fails, 2 on a usage error, 3 when its
 * port stayed taken.
 */
public final class ControllerLauncher {
    /** Start-up (JVM warm-up, DLedger store, first election) on a busy two-core machine. */
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

    private ControllerLauncher() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> settings = new LinkedHashMap<>();
        boolean watchStdin = true;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            int eq = arg.indexOf('=');
            if (arg.equals("--ignore-stdin")) {
                watchStdin = false;
            } else if (arg.equals("-c") || arg.equals("--config")) {
                if (++i >= args.length) {
                    usage(arg + " needs a file");
                }
                load(Path.of(args[i]), settings);
            } else if (arg.equals("--help") || arg.equals("-h")) {
                usage(null);
                return;
            } else if (arg.startsWith("-")) {
                usage("unknown argument " + arg);
            } else if (eq > 0) {
                settings.put(arg.substring(0, eq), arg.substring(eq + 1));
            } else {
                load(Path.of(arg), settings);
            }
        }

        JavaController controller;
        try {
            controller = JavaController.start(settings);
        } catch (Throwable e) {
            System.err.println("CONTROLLER FAILED " + e);
            e.printStackTrace();
            System.exit(Ports.isBindFailure(e) ? 3 : 1);
            return;
        }
        try {
            controller.awaitReady(READY_TIMEOUT);
        } catch (Throwable e) {
            System.err.println("CONTROLLER FAILED " + e);
            e.printStackTrace();
            controller.close();
            System.exit(1);
            return;
        }
        CountDownLatch done = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            controller.close();
            done.countDown();
        }, "controller-launcher-shutdown"));
        System.out.println("CONTROLLER READY " + controller.addr());
        System.out.flush();
        if (watchStdin) {
            Thread watcher = new Thread(() -> {
                drain(System.in);
                System.err.println("controller launcher: stdin closed, stopping " + controller.addr());
                controller.close();
                done.countDown();
            }, "controller-launcher-stdin");
            watcher.setDaemon(true);
            watcher.start();
        }
        done.await();
        System.exit(0);
    }

    /** A properties file, as ControllerStartup's {@code -c}. */
    private static void load(Path file, Map<String, String> settings) {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            p.load(in);
        } catch (IOException e) {
            usage("cannot read " + file + ": " + e.getMessage());
        }
        p.stringPropertyNames().stream().sorted().forEach(k -> settings.put(k, p.getProperty(k)));
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

    private static void usage(String error) {
        String text = """
            usage: ControllerLauncher [--ignore-stdin] [-c FILE | FILE] [key=value ...]
              key=value: any ControllerConfig/Netty option, e.g. controllerDLegerPeers=n0-127.0.0.1:9878
              controllerDLegerSelfId=n0 scanNotActiveBrokerInterval=1000. Without controllerDLegerPeers:
              a one-node group on a free port. Defaults: controllerDLegerGroup=group1, store, config
              file and rocketmqHome in a new temporary directory, bindAddress=127.0.0.1, 16 MiB
              DLedger files. Prints "CONTROLLER READY <addr>"; stops on SIGTERM or end of stdin.""";
        if (error != null) {
            System.err.println("ControllerLauncher: " + error);
            System.err.println(text);
            System.exit(2);
        }
        System.out.println(text);
    }
}
