package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.EmbeddedBroker;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.RawClient;
import dev.waymark.interop.harness.RouteView;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.junit.jupiter.api.Test;

/**
 * A broker whose topic table is more than 16 MiB of JSON cannot register with a Java
 * NameServer (apache/rocketmq#5296: every REGISTER_BROKER frame is over Java's frame limit
 * and the NameServer closes the connection). A real 5.5.1 broker starts with 150,000 topics
 * already in its {@code config/topics.json}; Waymark, given a raised
 * {@code com.rocketmq.remoting.frameMaxLength}, routes every one of them. The Java NameServer
 * gets the same setting (it reads that key only as a JVM system property, so it keeps its
 * 16 MiB) and, as the control, routes none.
 */
class LargeRegistrationTest extends ScenarioBase {
    private static final int TOPICS = 150_000;
    /** GET_ALL_TOPIC_LIST_FROM_NAMESERVER; RequestCode's package differs between 4.x and 5.x. */
    private static final int GET_ALL_TOPIC_LIST = 206;
    private static final String BROKER = "broker-large";

    private static String topic(int index) {
        return String.format("LargeRegistrationTopic-%06d", index);
    }

    /** The topic table as 5.x's TopicConfigManager writes it, one read and one write queue each. */
    private static void writeTopicTable(Path store) throws Exception {
        StringBuilder json = new StringBuilder(TOPICS * 200);
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

    /** The large broker's topics in the NameServer's GET_ALL_TOPIC_LIST_FROM_NAMESERVER answer. */
    private static Set<String> listedTopics(RawClient raw, NameServer ns) {
        RemotingCommand list =
            raw.invoke(ns.addr(), RemotingCommand.createRequestCommand(GET_ALL_TOPIC_LIST, null), 30_000);
        assertEquals(0, list.getCode(), list.getRemark());
        Set<String> listed = new HashSet<>();
        Matcher names = Pattern.compile("\"(LargeRegistrationTopic-\\d{6})\"")
            .matcher(new String(list.getBody(), StandardCharsets.UTF_8));
        while (names.find()) {
            listed.add(names.group(1));
        }
        return listed;
    }

    @Test
    void aBrokerWith150000TopicsRegistersWithARaisedFrameLimit() throws Exception {
        assumeTrue(v5(), "the case of apache/rocketmq#5296 is a 5.x broker's");
        NameServer ns = namesrv(perTest, Map.of("com.rocketmq.remoting.frameMaxLength", "67108864"));
        Path store = Files.createTempDirectory("waymark-large-registration-");
        // The broker deletes its store when it is closed.
        writeTopicTable(store);
        BrokerSpec spec = new BrokerSpec().cluster("LargeCluster").name(BROKER).namesrv(ns.addr()).store(store);
        long started = System.nanoTime();
        EmbeddedBroker broker = perTest.add(EmbeddedBroker.startUnchecked(spec));
        RawClient raw = raw(perTest);

        if (!waymark()) {
            // The start-up registration has been sent and refused once the broker is up;
            // one more, synchronous, to be sure none is still on its way.
            broker.controller().registerBrokerAll(true, false, true);
            assertNull(raw.route(ns.addr(), topic(0)), "the Java NameServer routes a topic of the large broker");
            assertFalse(raw.clusterInfo(ns.addr()).has(BROKER, 0, broker.addr()),
                "the Java NameServer lists the large broker");
            return;
        }
        String last = topic(TOPICS - 1);
        RouteView route = Poll.until(seconds(120), "route of " + last, () -> raw.route(ns.addr(), last));
        System.out.printf("LargeRegistrationTest: the last of %d topics routable %.1f s after the broker start%n",
            TOPICS, (System.nanoTime() - started) / 1e9);
        assertEquals(Map.of(0L, broker.addr()), route.addrsOf(BROKER), route.toString());

        // Waymark writes a registration this large a slice of topics at a time, answering route
        // queries in between: its topics become routable over some milliseconds, in the order
        // the broker sent them, so the last by name may come before the others.
        Set<String> listed = Poll.until(seconds(30), 200, "all " + TOPICS + " topics listed", () -> {
            Set<String> names = listedTopics(raw, ns);
            return names.size() == TOPICS ? names : null;
        });
        assertEquals(TOPICS, listed.size(), "topics the NameServer lists");
        for (int i = 0; i < TOPICS; i += 7_499) {
            RouteView sample = raw.route(ns.addr(), topic(i));
            assertEquals(Map.of(0L, broker.addr()), sample.addrsOf(BROKER), topic(i));
        }
    }
}
