package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import dev.waymark.interop.harness.BrokerProcess;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.ControllerProcess;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.QueueView;
import dev.waymark.interop.harness.RawClient;
import dev.waymark.interop.harness.RouteView;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.junit.jupiter.api.Test;

/**
 * A real 5.5.0 broker with {@code enableSplitRegistration=true} sends every chunk of a
 * registration with the same DataVersion (apache/rocketmq#10425; 5.5.1 advances it per chunk
 * again). The Java NameServer writes the topics it already routes only from a registration
 * whose DataVersion changed, so a change reaches it only through the first chunk: made
 * read-only ({@code brokerPermission=4}, which the broker registers at once with a new
 * DataVersion), the broker stays writable in the Java NameServer's routes of every topic of the
 * later chunks. Waymark applies every chunk: no topic of the broker stays writable.
 *
 * <p>A change to one topic (updateTopic) does not show it: the broker registers that topic
 * alone, at once, with the new DataVersion, which both NameServers apply.
 *
 * <p>The broker runs in its own JVM, on the harness's class path with the broker's jars (and
 * those it is built on) of 5.5.0 in place of 5.5.1's (pom.xml copies them to
 * {@code target/rmq5/rocketmq-5.5.0}).
 */
class SplitRegistrationTest extends ScenarioBase {
    private static final String CLUSTER = "SplitCluster";
    private static final String BROKER = "broker-split";
    private static final int TOPICS = 30;
    /** Topics per chunk: the broker's 30 and its system topics make five or six chunks. */
    private static final int CHUNK = 8;
    private static final int UPDATE_BROKER_CONFIG = 25;
    private static final int GET_TOPICS_BY_CLUSTER = 224;

    private static String topic(int index) {
        return String.format("SplitRegistrationTopic-%02d", index);
    }

    /** The topic table as TopicConfigManager writes it: one read and one write queue each. */
    private static void writeTopicTable(Path store) throws Exception {
        StringBuilder json = new StringBuilder();
        json.append("{\"dataVersion\":{\"counter\":1,\"stateVersion\":0,\"timestamp\":1},\"topicConfigTable\":{");
        for (int i = 0; i < TOPICS; i++) {
            if (i > 0) {
                json.append(',');
            }
            String name = topic(i);
            json.append('"').append(name).append("\":{\"attributes\":{},\"order\":false,\"perm\":6,")
                .append("\"readQueueNums\":1,\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":\"")
                .append(name).append("\",\"topicSysFlag\":0,\"writeQueueNums\":1}");
        }
        json.append("}}");
        Path config = Files.createDirectories(store.resolve("config"));
        Files.writeString(config.resolve("topics.json"), json);
    }

    /**
     * The harness's class path file with the 5.5.0 jars of {@code jarDir} in place of their
     * 5.5.1 copies, written to {@code dir}.
     */
    private static Path classpathWith550(Path dir) throws Exception {
        Path harness = ControllerProcess.classpathFile();
        Path jarDir = harness.getParent().resolve("rocketmq-5.5.0");
        List<String> entries = new ArrayList<>();
        int replaced = 0;
        for (String entry : Files.readString(harness).trim().split(java.io.File.pathSeparator)) {
            Matcher jar = Pattern.compile("(rocketmq-[a-z-]+)-5\\.5\\.1\\.jar$").matcher(entry);
            if (jar.find()) {
                Path older = jarDir.resolve(jar.group(1) + "-5.5.0.jar");
                assertTrue(Files.isRegularFile(older), "no " + older + " (mvn -P rmq5 test-compile copies it)");
                entries.add(older.toString());
                replaced++;
            } else {
                entries.add(entry);
            }
        }
        assertTrue(replaced > 0, "no 5.5.1 jar on the class path of " + harness);
        Path file = dir.resolve("classpath-5.5.0.txt");
        Files.writeString(file, String.join(java.io.File.pathSeparator, entries));
        return file;
    }

    /** GET_TOPICS_BY_CLUSTER: the names of every topic the NameServer routes for the cluster. */
    private static List<String> topicsOfCluster(RawClient raw, NameServer ns) {
        RemotingCommand request = RemotingCommand.createRequestCommand(GET_TOPICS_BY_CLUSTER, null);
        request.addExtField("cluster", CLUSTER);
        RemotingCommand response = raw.invoke(ns.addr(), request, 3000);
        assertEquals(0, response.getCode(), response.getRemark());
        List<String> topics = new ArrayList<>();
        Matcher names = Pattern.compile("\"([^\"]+)\"")
            .matcher(new String(response.getBody(), StandardCharsets.UTF_8).replace("\"topicList\"", ""));
        while (names.find()) {
            topics.add(names.group(1));
        }
        return topics;
    }

    /** The topics among {@code topics} whose route lets producers write to the broker. */
    private static List<String> writable(RawClient raw, NameServer ns, List<String> topics) {
        List<String> writable = new ArrayList<>();
        for (String topic : topics) {
            RouteView route = raw.route(ns.addr(), topic);
            if (route != null && route.queue(BROKER).map(QueueView::writable).orElse(false)) {
                writable.add(topic);
            }
        }
        return writable;
    }

    @Test
    void everyChunkOfASplitRegistrationWithOneDataVersionIsApplied() throws Exception {
        assumeTrue("5.5.1".equals(System.getProperty("rocketmq.version")) && ControllerProcess.classpathFile() != null,
            "the scenario runs a 5.5.0 broker on the rmq5 profile's class path");
        NameServer ns = namesrv(perTest, Map.of());
        Path dir = Files.createTempDirectory("waymark-split-registration-");
        perTest.add((AutoCloseable) () -> {
            try (var paths = Files.walk(dir)) {
                for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(path);
                }
            }
        });
        Path store = dir.resolve("store");
        writeTopicTable(store);
        BrokerSpec spec = new BrokerSpec().cluster(CLUSTER).name(BROKER).namesrv(ns.addr()).store(store)
            .set("enableSplitRegistration", "true")
            .set("splitRegistrationSize", String.valueOf(CHUNK));
        BrokerProcess broker = perTest.add(BrokerProcess.start(classpathWith550(dir), spec));
        RawClient raw = raw(perTest);

        List<String> ours = new ArrayList<>();
        for (int i = 0; i < TOPICS; i++) {
            ours.add(topic(i));
        }
        Poll.untilTrue(seconds(30), "every topic of the broker routed",
            () -> writable(raw, ns, ours).size() == TOPICS);
        List<String> all = topicsOfCluster(raw, ns);
        assertTrue(all.size() > 2 * CHUNK, "the broker's registration is one of several chunks: " + all);
        int writableBefore = writable(raw, ns, all).size();

        // Read-only: the broker re-registers every topic, perm masked, under a new DataVersion,
        // before it answers.
        RemotingCommand update = RemotingCommand.createRequestCommand(UPDATE_BROKER_CONFIG, null);
        update.setBody("brokerPermission=4\n".getBytes(StandardCharsets.UTF_8));
        RemotingCommand updated = raw.invoke(broker.addr(), update, 30_000);
        assertEquals(0, updated.getCode(), updated.getRemark());

        if (waymark()) {
            Poll.untilTrue(seconds(10), "no topic of the read-only broker writable",
                () -> writable(raw, ns, all).isEmpty());
            System.out.printf("SplitRegistrationTest: Waymark: 0 of %d topics writable%n", all.size());
            return;
        }
        // The Java NameServer: the first chunk's topics are read-only, the later chunks' stay
        // writable, although the broker registered them read-only.
        Poll.untilTrue(seconds(10), "the first chunk applied",
            () -> writable(raw, ns, all).size() < writableBefore);
        List<String> stillWritable = writable(raw, ns, all);
        System.out.printf("SplitRegistrationTest: Java: %d of %d topics still writable: %s%n",
            stillWritable.size(), all.size(), stillWritable);
        assertTrue(stillWritable.size() >= all.size() - CHUNK,
            "the Java NameServer applied more than the first chunk: " + stillWritable);
        assertTrue(!stillWritable.isEmpty(), "the Java NameServer applied every chunk");
    }
}
