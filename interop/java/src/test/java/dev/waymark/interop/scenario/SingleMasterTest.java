package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Set;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.ClusterView;
import dev.waymark.interop.harness.EmbeddedBroker;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.QueueView;
import dev.waymark.interop.harness.RouteView;
import dev.waymark.interop.harness.Routes;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.Test;

/**
 * One master broker: it registers, mqadmin's cluster view shows it, a topic created on the
 * broker appears in the route with its queue counts and perm, and 1,000 messages go through a
 * producer and a push consumer.
 */
class SingleMasterTest extends ScenarioBase {
    @Test
    void registerCreateTopicSendAndConsume() throws Exception {
        NameServer ns = namesrv(perTest, Map.of());
        EmbeddedBroker broker = broker(perTest, new BrokerSpec().cluster("SingleCluster").name("single-a")
            .namesrv(ns.addr()));
        DefaultMQAdminExt admin = Clients.admin(perTest, ns.addr());

        ClusterView cluster = Routes.clusterInfo(admin);
        assertEquals(Map.of(0L, broker.addr()), cluster.addrsOf("single-a"), cluster.toString());
        assertEquals(Set.of("single-a"), cluster.clusters().get("SingleCluster"), cluster.toString());

        String topic = Clients.unique("SingleTopic");
        TopicConfig config = new TopicConfig(topic, 4, 4, 6);
        admin.createAndUpdateTopicConfig(broker.addr(), config);
        // The broker registers the new topic right away (incremental registration).
        RouteView route = Poll.until(seconds(10), "route of " + topic, () -> {
            try {
                return Routes.route(admin, topic);
            } catch (Exception e) {
                return null;
            }
        });
        assertEquals(Map.of(0L, broker.addr()), route.addrsOf("single-a"), route.toString());
        assertEquals(new QueueView("single-a", 4, 4, 6, 0), route.queue("single-a").orElseThrow(), route.toString());

        DefaultMQProducer producer = Clients.producer(perTest, ns.addr());
        Set<String> sent = Clients.send(producer, topic, 1000);
        assertEquals(1000, sent.size());
        Clients.Received received = Clients.pushConsumer(perTest, ns.addr(), topic);
        received.awaitExactly(sent, seconds(60));
        assertTrue(received.bodies.values().stream().allMatch(b -> b.startsWith("waymark interop message ")));
    }
}
