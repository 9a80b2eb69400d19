package dev.waymark.interop.harness;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.namesrv.NamesrvController;

/** The Java NameServer ({@code NamesrvController} of the profile's release) in this JVM. */
public final class JavaNameServer implements NameServer {
    /** How long a restart on a given port waits for the old socket to be released. */
    private static final Duration RESTART_BIND_TIMEOUT = Duration.ofSeconds(20);

    private final NamesrvController controller;
    private final int port;
    private final Path dir;
    /** What it was started with, for {@link #restart}. */
    private final Map<String, String> settings;
    private boolean stopped;

    private JavaNameServer(NamesrvController controller, int port, Path dir, Map<String, String> settings) {
        this.controller = controller;
        this.port = port;
        this.dir = dir;
        this.settings = Map.copyOf(settings);
    }

    /**
     * Starts one on a loopback port the kernel picks at bind time (listenPort 0), with its
     * KV and config files in a new temporary directory; {@code settings} are NamesrvConfig /
     * NettyServerConfig options by Java name. A given {@code listenPort} (a restart on the
     * same address) is used as is, retrying for a while if the old socket still holds it.
     */
    public static JavaNameServer start(Map<String, String> settings) throws Exception {
        Path dir = Files.createTempDirectory("waymark-java-namesrv-");
        if (System.getProperty(MixAll.ROCKETMQ_HOME_PROPERTY) == null) {
            System.setProperty(MixAll.ROCKETMQ_HOME_PROPERTY, dir.toString());
        }
        String fixedPort = settings.get("listenPort");
        if (fixedPort == null) {
            return launch(0, settings, dir);
        }
        int port = Integer.parseInt(fixedPort.trim());
        return Ports.startOnPort("Java NameServer", port, new int[] {0}, RESTART_BIND_TIMEOUT,
            p -> launch(p, settings, dir));
    }

    /** One start on {@code port} (0: the kernel's choice); shut down again when it fails. */
    private static JavaNameServer launch(int port, Map<String, String> settings, Path dir) throws Exception {
        Properties p = new Properties();
        p.setProperty("bindAddress", "127.0.0.1");
        p.setProperty("kvConfigPath", dir.resolve("kv.json").toString());
        p.setProperty("configStorePath", dir.resolve("ns.properties").toString());
        p.setProperty("serverWorkerThreads", "2");
        p.setProperty("serverSelectorThreads", "1");
        p.setProperty("defaultThreadPoolNums", "4");
        p.setProperty("clientRequestThreadPoolNums", "2");
        p.putAll(settings);
        p.setProperty("listenPort", String.valueOf(port));
        NamesrvController controller = JavaNamesrvs.create(p);
        try {
            if (!controller.initialize()) {
                throw new IllegalStateException("NamesrvController.initialize() failed");
            }
            controller.start();
        } catch (Exception e) {
            controller.shutdown();
            throw e;
        }
        // 4.9 and 5.x both report the port they bound here.
        return new JavaNameServer(controller, controller.getRemotingServer().localListenPort(), dir, settings);
    }

    @Override
    public String addr() {
        return "127.0.0.1:" + port;
    }

    @Override
    public String kind() {
        return "java";
    }

    public NamesrvController controller() {
        return controller;
    }

    @Override
    public synchronized void stop() {
        if (!stopped) {
            stopped = true;
            controller.shutdown();
            EmbeddedBroker.deleteTree(dir);
        }
    }

    /**
     * Shuts it down, as {@link #stop}, and starts a new {@code NamesrvController} on the same
     * port with the same settings and directory (its KV store). Routes are not persisted by
     * the Java NameServer: the new one knows only the brokers that register with it again.
     */
    @Override
    public synchronized JavaNameServer restart() throws Exception {
        if (stopped) {
            throw new IllegalStateException(this + " is stopped; only a running NameServer can be restarted");
        }
        // The directory passes to the new instance: this one must no longer delete it.
        stopped = true;
        controller.shutdown();
        return Ports.startOnPort("Java NameServer", port, new int[] {0}, RESTART_BIND_TIMEOUT,
            p -> launch(p, settings, dir));
    }

    @Override
    public String toString() {
        return "java NameServer " + addr();
    }
}
