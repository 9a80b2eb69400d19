package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.util.LinkedHashMap;
import java.util.Map;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.EmbeddedBroker;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.QueueView;
import dev.waymark.interop.harness.RawClient;
import dev.waymark.interop.harness.RouteView;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.Test;

/**
 * A broker with {@code compressedRegister=true} sends its registrations as a zlib body
 * (a DataVersion, each topic config as a text line, the filter-server list) instead of JSON: the incremental registration of each new topic and
 * the full registration of its whole topic table must both land, queue counts and perm
 * intact.
 *
 * <p>4.x only: 5.x brokers (5.5.1's BrokerOuterAPI) compress the body but always send
 * {@code compressed=false}, so no NameServer, Java's included, can read their registration.
 */
class CompressedRegistrationTest extends ScenarioBase {
    @Test
    void compressedRegistrationsAreRoutable() throws Exception {
        assumeFalse(v5(), "5.x brokers send compressed bodies flagged compressed=false");
        NameServer ns = namesrv(perTest, Map.of());
        EmbeddedBroker broker = broker(perTest, new BrokerSpec().cluster("ZipCluster").name("zip-a")
            .namesrv(ns.addr()).set("compressedRegister", "true"));
        RawClient raw = raw(perTest);
        DefaultMQAdminExt admin = Clients.admin(perTest, ns.addr());

        Map<String, QueueView> expected = new LinkedHashMap<>();
        for (int i = 1; i <= 3; i++) {
            String topic = Clients.unique("ZipTopic");
            // Different counts per topic, read != write, so a mixed-up body cannot pass.
            admin.createAndUpdateTopicConfig(broker.addr(), new TopicConfig(topic, i + 1, i + 2, 6));
            expected.put(topic, new QueueView("zip-a", i + 1, i + 2, 6, 0));
        }
        // Each creation was an incremental registration of one topic; now the full table.
        broker.controller().registerBrokerAll(true, false, true);

        for (Map.Entry<String, QueueView> topic : expected.entrySet()) {
            RouteView route = Poll.until(seconds(10), "route of " + topic.getKey(),
                () -> raw.route(ns.addr(), topic.getKey()));
            assertEquals(Map.of(0L, broker.addr()), route.addrsOf("zip-a"), route.toString());
            assertEquals(topic.getValue(), route.queue("zip-a").orElseThrow(), route.toString());
        }
        assertEquals(Map.of(0L, broker.addr()), raw.clusterInfo(ns.addr()).addrsOf("zip-a"));
    }
}
