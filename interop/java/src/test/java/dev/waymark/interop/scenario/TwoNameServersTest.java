package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.EmbeddedBroker;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.RawClient;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.Test;

/**
 * Broker and clients configured with two NameServers ({@code ns1;ns2}); one is stopped
 * mid-run: the producer and the consumer carry on through the other, including for a topic
 * created after the stop (its route can only come from the survivor).
 */
class TwoNameServersTest extends ScenarioBase {
    @Test
    void clientsCarryOnThroughTheSurvivingNameServer() throws Exception {
        NameServer ns1 = namesrv(perTest, Map.of());
        NameServer ns2 = namesrv(perTest, Map.of());
        String both = ns1.addr() + ";" + ns2.addr();
        EmbeddedBroker broker = broker(perTest, new BrokerSpec().cluster("TwoNsCluster").name("twons-a")
            .namesrv(both));
        RawClient raw = raw(perTest);
        DefaultMQAdminExt admin = Clients.admin(perTest, both);
        String topic = Clients.unique("TwoNsTopic");
        admin.createAndUpdateTopicConfig(broker.addr(), new TopicConfig(topic, 4, 4, 6));
        for (NameServer ns : new NameServer[] {ns1, ns2}) {
            Poll.until(seconds(10), "route of " + topic + " on " + ns, () -> raw.route(ns.addr(), topic));
        }

        DefaultMQProducer producer = Clients.producer(perTest, both);
        Clients.Received received = Clients.pushConsumer(perTest, both, topic);
        Set<String> sent = new LinkedHashSet<>(Clients.send(producer, topic, 100));
        received.awaitExactly(sent, seconds(45));

        stopNamesrv(ns1);
        sent.addAll(Clients.send(producer, topic, 100));
        received.awaitExactly(sent, seconds(45));

        // A new topic: its route has to come from ns2.
        String late = Clients.unique("TwoNsLateTopic");
        admin.createAndUpdateTopicConfig(broker.addr(), new TopicConfig(late, 2, 2, 6));
        assertNotNull(Poll.until(seconds(10), "route of " + late + " on ns2", () -> raw.route(ns2.addr(), late)));
        Set<String> lateSent = Poll.until(seconds(30), 500, "sends to " + late + " through ns2", () -> {
            try {
                return Clients.send(producer, late, 50);
            } catch (Exception e) {
                return null;
            }
        });
        // A new 5.5.1 client connects to one NameServer of its list, chosen at random, and its
        // start() fails when that is the stopped one: each attempt is a coin toss (about 3 s
        // each here). 20 s allowed six, all failing one run in 64; 120 s allows about forty.
        Clients.Received lateReceived = Clients.pushConsumerRetrying(perTest, both, late, seconds(120));
        lateReceived.awaitExactly(lateSent, seconds(45));
        assertEquals(Map.of(0L, broker.addr()), raw.clusterInfo(ns2.addr()).addrsOf("twons-a"));
    }
}
