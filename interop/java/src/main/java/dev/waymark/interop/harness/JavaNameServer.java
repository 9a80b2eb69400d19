package dev.waymark.interop.harness;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.namesrv.NamesrvController;

/** The Java NameServer ({@code NamesrvController} of the profile's release) in this JVM. */
public final class JavaNameServer implements NameServer {
    private final NamesrvController controller;
    private final int port;
    private final Path dir;
    private boolean stopped;

    private JavaNameServer(NamesrvController controller, int port, Path dir) {
        this.controller = controller;
        this.port = port;
        this.dir = dir;
    }

    /**
     * Starts one on a free port with its KV and config files in a new temporary directory;
     * {@code settings} are NamesrvConfig / NettyServerConfig options by Java name
     * ({@code listenPort} fixes the port; {@link #addr()} then names it).
     */
    public static JavaNameServer start(Map<String, String> settings) throws Exception {
        Path dir = Files.createTempDirectory("waymark-java-namesrv-");
        if (System.getProperty(MixAll.ROCKETMQ_HOME_PROPERTY) == null) {
            System.setProperty(MixAll.ROCKETMQ_HOME_PROPERTY, dir.toString());
        }
        // A given listenPort (a restart on the same address) is used as is; otherwise a
        // free port, with a retry if another process took it before the bind.
        String fixedPort = settings.get("listenPort");
        Exception last = null;
        for (int attempt = 0; attempt < (fixedPort == null ? 3 : 1); attempt++) {
            int port = fixedPort == null ? Ports.free() : Integer.parseInt(fixedPort.trim());
            Properties p = new Properties();
            p.setProperty("listenPort", String.valueOf(port));
            p.setProperty("bindAddress", "127.0.0.1");
            p.setProperty("kvConfigPath", dir.resolve("kv.json").toString());
            p.setProperty("configStorePath", dir.resolve("ns.properties").toString());
            p.setProperty("serverWorkerThreads", "2");
            p.setProperty("serverSelectorThreads", "1");
            p.setProperty("defaultThreadPoolNums", "4");
            p.setProperty("clientRequestThreadPoolNums", "2");
            p.putAll(settings);
            NamesrvController controller = JavaNamesrvs.create(p);
            try {
                if (!controller.initialize()) {
                    throw new IllegalStateException("NamesrvController.initialize() failed");
                }
                controller.start();
                return new JavaNameServer(controller, port, dir);
            } catch (Exception e) {
                last = e;
                controller.shutdown();
            }
        }
        throw last;
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

    @Override
    public String toString() {
        return "java NameServer " + addr();
    }
}
