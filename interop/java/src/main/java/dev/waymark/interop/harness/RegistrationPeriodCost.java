package dev.waymark.interop.harness;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Command-line measurement: what one real broker with many topics costs its NameServer per
 * registration period, with {@code forceRegister=true} (Java's default: the whole topic table
 * every period) or {@code false} (QUERY_DATA_VERSION first, the table only when the NameServer
 * says it changed). A NameServer (Waymark's binary or the profile's Java NameServer, each its
 * own process) and a broker JVM whose store holds TOPICS topics; after the broker's start-up
 * registration and its first periodic one, the NameServer's CPU time ({@code /proc/PID/stat})
 * and the bytes its established connections received ({@code bytes_received} of {@code ss -ti}
 * on its port: the broker's) are taken over PERIODS periods, and printed per period.
 *
 * <pre>
 * java -cp "$(cat interop/java/target/rmq5/classpath.txt)" dev.waymark.interop.harness.RegistrationPeriodCost \
 *     waymark|java FORCE_REGISTER [TOPICS [PERIODS [PERIOD_MS]]]
 * </pre>
 *
 * Waymark's binary is {@code -Dwaymark.namesrv.bin}; the class path file of the broker's and
 * the Java NameServer's JVMs is {@code -Dwaymark.harness.classpath} (default
 * {@code interop/java/target/rmq5/classpath.txt}). Defaults: 10,000 topics, 4 periods of
 * 30,000 ms (Java's {@code registerNameServerPeriod}).
 */
public final class RegistrationPeriodCost {
    private static final long CLOCK_TICKS_PER_SECOND = 100;
    private static final Pattern BYTES_RECEIVED = Pattern.compile("bytes_received:(\\d+)");

    private RegistrationPeriodCost() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2 || !(args[0].equals("waymark") || args[0].equals("java"))) {
            System.err.println("usage: RegistrationPeriodCost waymark|java true|false [TOPICS [PERIODS [PERIOD_MS]]]");
            System.exit(2);
        }
        String kind = args[0];
        boolean force = Boolean.parseBoolean(args[1]);
        int topics = args.length > 2 ? Integer.parseInt(args[2]) : 10_000;
        int periods = args.length > 3 ? Integer.parseInt(args[3]) : 4;
        long period = args.length > 4 ? Long.parseLong(args[4]) : 30_000;
        Path classpath = Path.of(System.getProperty("waymark.harness.classpath",
            "interop/java/target/rmq5/classpath.txt"));

        NameServer ns = kind.equals("waymark")
            ? WaymarkNameServer.start(NameServers.binary(), Map.of())
            : JavaNamesrvProcess.start(classpath, List.of(), Map.of());
        long pid = ns instanceof WaymarkNameServer w ? w.pid() : ((JavaNamesrvProcess) ns).pid();
        Path store = Files.createTempDirectory("waymark-period-cost-");
        writeTopicTable(store, topics);
        BrokerSpec spec = new BrokerSpec().cluster("PeriodCostCluster").name("period-cost").namesrv(ns.addr())
            .store(store)
            .set("forceRegister", String.valueOf(force))
            .set("registerNameServerPeriod", String.valueOf(period));
        try (ns; BrokerProcess broker = BrokerProcess.start(classpath, spec)) {
            // The periodic task starts 10 s after the broker; the window opens just after its
            // first run, so that it holds only steady periods.
            Thread.sleep(10_000 + 2_000);
            int port = Integer.parseInt(ns.addr().substring(ns.addr().lastIndexOf(':') + 1));
            long[] before = sample(pid, port);
            Thread.sleep(periods * period);
            long[] after = sample(pid, port);
            double cpuMs = (after[0] - before[0]) * 1000.0 / CLOCK_TICKS_PER_SECOND / periods;
            double bytes = (after[1] - before[1]) / (double) periods;
            System.out.printf("%s NameServer, broker %s with %d topics, forceRegister=%s: per %d ms period over %d "
                    + "periods: %.0f bytes received, %.1f ms CPU%n",
                kind, broker.addr(), topics, force, period, periods, bytes, cpuMs);
        } finally {
            EmbeddedBroker.deleteTree(store);
        }
    }

    /**
     * utime + stime of {@code pid} (clock ticks), and the bytes received by the established
     * connections to {@code port}.
     */
    private static long[] sample(long pid, int port) throws Exception {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        // Fields after the command name, which ends at the last ')': state is field 3, utime 14.
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        long cpu = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
        Process ss = new ProcessBuilder("ss", "-tinH", "state", "established", "( sport = :" + port + " )")
            .redirectErrorStream(true).start();
        String out = new String(ss.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (ss.waitFor() != 0) {
            throw new IllegalStateException("ss failed: " + out);
        }
        long received = 0;
        Matcher m = BYTES_RECEIVED.matcher(out);
        while (m.find()) {
            received += Long.parseLong(m.group(1));
        }
        return new long[] {cpu, received};
    }

    /** The topic table as 5.x's TopicConfigManager writes it, eight read and write queues each. */
    private static void writeTopicTable(Path store, int topics) throws Exception {
        StringBuilder json = new StringBuilder(topics * 200);
        json.append("{\"dataVersion\":{\"counter\":1,\"stateVersion\":0,\"timestamp\":1},\"topicConfigTable\":{");
        for (int i = 0; i < topics; i++) {
            if (i > 0) {
                json.append(',');
            }
            String name = String.format("PeriodCostTopic-%06d", i);
            json.append('"').append(name).append("\":{\"attributes\":{},\"order\":false,\"perm\":6,")
                .append("\"readQueueNums\":8,\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":\"")
                .append(name).append("\",\"topicSysFlag\":0,\"writeQueueNums\":8}");
        }
        json.append("}}");
        Path config = Files.createDirectories(store.resolve("config"));
        Files.writeString(config.resolve("topics.json"), json);
    }
}
