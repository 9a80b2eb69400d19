package dev.waymark.interop.harness;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * What a {@link EmbeddedBroker} should be: identity, ports, NameServers, store directory and
 * any other {@code BrokerConfig} / {@code MessageStoreConfig} / {@code NettyServerConfig} /
 * {@code NettyClientConfig} option by its Java name (unknown names are ignored, as the broker's
 * own {@code -c} file loader ignores them, so one spec serves 4.x and 5.x brokers).
 */
public final class BrokerSpec {
    private String clusterName = "WaymarkCluster";
    private String brokerName = "broker-a";
    private long brokerId;
    private int listenPort;
    private String namesrvAddr;
    private Path storeDir;
    private final Map<String, String> options = new LinkedHashMap<>();

    /** The small-store defaults every harness broker gets before {@link #set}. */
    public static Map<String, String> defaults() {
        Map<String, String> d = new LinkedHashMap<>();
        d.put("brokerIP1", "127.0.0.1");
        d.put("brokerIP2", "127.0.0.1");
        d.put("autoCreateTopicEnable", "true");
        d.put("mappedFileSizeCommitLog", String.valueOf(4 * 1024 * 1024));
        d.put("mappedFileSizeConsumeQueue", String.valueOf(20 * 10_000));
        d.put("mapedFileSizeCommitLog", String.valueOf(4 * 1024 * 1024)); // 4.x spelling
        d.put("mapedFileSizeConsumeQueue", String.valueOf(20 * 10_000));
        d.put("mappedFileSizeConsumeQueueExt", String.valueOf(1024 * 1024));
        d.put("maxHashSlotNum", "10000");
        d.put("maxIndexNum", "40000");
        d.put("timerWheelEnable", "false");
        d.put("mappedFileSizeTimerLog", String.valueOf(1024 * 1024));
        d.put("diskMaxUsedSpaceRatio", "95");
        d.put("flushDiskType", "ASYNC_FLUSH");
        // Fewer threads: two cores run NameServer, brokers and clients together.
        d.put("sendMessageThreadPoolNums", "2");
        d.put("pullMessageThreadPoolNums", "4");
        d.put("litePullMessageThreadPoolNums", "2");
        d.put("processReplyMessageThreadPoolNums", "2");
        d.put("queryMessageThreadPoolNums", "2");
        d.put("adminBrokerThreadPoolNums", "4");
        d.put("clientManageThreadPoolNums", "2");
        d.put("consumerManageThreadPoolNums", "2");
        d.put("heartbeatThreadPoolNums", "2");
        d.put("endTransactionThreadPoolNums", "2");
        d.put("serverWorkerThreads", "4");
        d.put("serverSelectorThreads", "2");
        d.put("clientWorkerThreads", "2");
        return d;
    }

    public BrokerSpec cluster(String name) {
        this.clusterName = name;
        return this;
    }

    public BrokerSpec name(String name) {
        this.brokerName = name;
        return this;
    }

    /** 0 = master ({@code ASYNC_MASTER}); anything else = {@code SLAVE} with that id. */
    public BrokerSpec id(long id) {
        this.brokerId = id;
        return this;
    }

    /** Main listener; 0 (the default) = a free port triple, retried until the broker binds it ({@link Ports}). */
    public BrokerSpec port(int port) {
        this.listenPort = port;
        return this;
    }

    /** {@code host:port;host:port}, as the broker's {@code namesrvAddr}. */
    public BrokerSpec namesrv(String addr) {
        this.namesrvAddr = addr;
        return this;
    }

    /** Store root; {@code null} (the default) = a fresh temporary directory. */
    public BrokerSpec store(Path dir) {
        this.storeDir = dir;
        return this;
    }

    /** Any broker / store / netty option by its Java property name. */
    public BrokerSpec set(String key, String value) {
        options.put(key, value);
        return this;
    }

    public String clusterName() {
        return clusterName;
    }

    public String brokerName() {
        return brokerName;
    }

    public long brokerId() {
        return brokerId;
    }

    public int listenPort() {
        return listenPort;
    }

    public String namesrvAddr() {
        return namesrvAddr;
    }

    public Path storeDir() {
        return storeDir;
    }

    /** The options given with {@link #set}, in order. */
    public Map<String, String> options() {
        return new LinkedHashMap<>(options);
    }

    /**
     * Whether the broker runs in controller mode ({@code enableControllerMode=true}, 5.x):
     * it gets its id and role from the controllers at {@code controllerAddr}, not from
     * {@link #id}, and registers with the NameServers only once it has a role.
     */
    public boolean controllerMode() {
        return Boolean.parseBoolean(String.valueOf(options.get("enableControllerMode")).trim());
    }

    /**
     * The spec as {@link BrokerLauncher} arguments: {@code --namesrv}, {@code --cluster},
     * {@code --name}, {@code --id}, {@code --port}, {@code --store} (those set) and one
     * {@code key=value} per option.
     */
    public List<String> toLauncherArgs() {
        List<String> args = new ArrayList<>();
        if (namesrvAddr != null) {
            args.add("--namesrv");
            args.add(namesrvAddr);
        }
        args.addAll(List.of("--cluster", clusterName, "--name", brokerName, "--id", String.valueOf(brokerId),
            "--port", String.valueOf(listenPort)));
        if (storeDir != null) {
            args.add("--store");
            args.add(storeDir.toAbsolutePath().toString());
        }
        options.forEach((k, v) -> args.add(k + "=" + v));
        return args;
    }

    /** A copy with the same identity, port, NameServers, store and options (for restarts). */
    public BrokerSpec copy() {
        BrokerSpec c = new BrokerSpec().cluster(clusterName).name(brokerName).id(brokerId)
            .port(listenPort).namesrv(namesrvAddr).store(storeDir);
        c.options.putAll(options);
        return c;
    }

    /** Every option, defaults first, the spec's fields and {@link #set} values over them. */
    Properties toProperties() {
        Properties p = new Properties();
        p.putAll(defaults());
        p.putAll(options);
        p.setProperty("brokerClusterName", clusterName);
        p.setProperty("brokerName", brokerName);
        p.setProperty("brokerId", String.valueOf(brokerId));
        p.setProperty("brokerRole", brokerId == 0 ? "ASYNC_MASTER" : "SLAVE");
        p.setProperty("listenPort", String.valueOf(listenPort));
        p.setProperty("haListenPort", String.valueOf(listenPort + 1));
        if (namesrvAddr != null) {
            p.setProperty("namesrvAddr", namesrvAddr);
        }
        String root = storeDir.toAbsolutePath().toString();
        p.setProperty("storePathRootDir", root);
        p.setProperty("storePathCommitLog", storeDir.resolve("commitlog").toAbsolutePath().toString());
        return p;
    }

    @Override
    public String toString() {
        return clusterName + "/" + brokerName + "/" + brokerId + " on 127.0.0.1:" + listenPort
            + " ns=" + namesrvAddr + " store=" + storeDir + " " + options;
    }
}
