package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Set;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.EmbeddedBroker;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.RawClient;
import dev.waymark.interop.harness.RouteView;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.Test;

/**
 * Classic master/slave HA (static roles): both brokers in the route; the slave learns the
 * master's address and HA address from its registration response; when the master's process
 * dies (its NameServer connection closes, no UNREGISTER_BROKER) its address leaves the route
 * at once and a consumer reads everything from the slave; when the master comes back it is in
 * the route again.
 */
class MasterSlaveTest extends ScenarioBase {
    private static final String GROUP = "ha-a";

    @Test
    void slaveServesReadsWhileTheMasterIsDown() throws Exception {
        NameServer ns = namesrv(perTest, Map.of());
        // 5.x slaves refuse pulls unless slaveReadEnable (4.x ignores the option).
        BrokerSpec masterSpec = new BrokerSpec().cluster("HaCluster").name(GROUP).id(0).namesrv(ns.addr())
            .set("slaveReadEnable", "true");
        EmbeddedBroker master = broker(perTest, masterSpec);
        EmbeddedBroker slave = broker(perTest, new BrokerSpec().cluster("HaCluster").name(GROUP).id(1)
            .namesrv(ns.addr()).set("slaveReadEnable", "true"));
        RawClient raw = raw(perTest);

        // The slave's registration response carried the master's addresses.
        Poll.untilTrue(seconds(15), "slave to learn its master from the registration response",
            () -> master.addr().equals(slave.masterAddress()) && master.haAddr().equals(slave.haMasterAddress()));

        DefaultMQAdminExt admin = Clients.admin(perTest, ns.addr());
        String topic = Clients.unique("HaTopic");
        admin.createAndUpdateTopicConfig(master.addr(), new TopicConfig(topic, 2, 2, 6));
        if (v5()) {
            // 5.x brokers accept topic updates on a slave; a slave copies topic configs from its
            // master only every 60 s, so create it on both.
            admin.createAndUpdateTopicConfig(slave.addr(), new TopicConfig(topic, 2, 2, 6));
        } else {
            // 4.x slaves refuse topic updates ("Can't modify topic or subscription group from
            // slave broker"): run the slave's own metadata sync from its master now instead of
            // waiting up to 60 s for its schedule, then its periodic registration.
            slave.controller().getSlaveSynchronize().syncAll();
            slave.controller().registerBrokerAll(true, false, true);
        }
        RouteView route = Poll.until(seconds(10), "route of " + topic + " with master and slave", () -> {
            RouteView r = raw.route(ns.addr(), topic);
            return r != null && r.addrsOf(GROUP).size() == 2 ? r : null;
        });
        assertEquals(Map.of(0L, master.addr(), 1L, slave.addr()), route.addrsOf(GROUP), route.toString());
        assertEquals(Map.of(0L, master.addr(), 1L, slave.addr()), raw.clusterInfo(ns.addr()).addrsOf(GROUP));

        DefaultMQProducer producer = Clients.producer(perTest, ns.addr());
        Set<String> sent = Clients.send(producer, topic, 200);
        Poll.untilTrue(seconds(15), "slave to replicate the master's commit log",
            () -> slave.maxPhyOffset() >= master.maxPhyOffset());

        // The master "dies": its connection to the NameServer closes without an unregistration.
        master.dropNamesrvConnections();
        long dropped = System.nanoTime();
        Poll.untilTrue(seconds(3), 50, "master to leave the route after its connection closed",
            () -> raw.route(ns.addr(), topic).addrsOf(GROUP).equals(Map.of(1L, slave.addr())));
        long millis = (System.nanoTime() - dropped) / 1_000_000;
        assertEquals(Map.of(1L, slave.addr()), raw.clusterInfo(ns.addr()).addrsOf(GROUP));
        master.stop();
        System.out.println("master left the route " + millis + " ms after its connection closed");

        Clients.Received fromSlave = Clients.litePullConsumer(perTest, ns.addr(), topic);
        fromSlave.awaitExactly(sent, seconds(45));
        assertTrue(fromSlave.fromBroker.values().stream().allMatch(h -> h.contains(String.valueOf(
            masterSpec.listenPort()))), "store host of replicated messages is the master's");

        // The master comes back at the same address.
        EmbeddedBroker back = perTest.add(master.restart());
        Poll.untilTrue(seconds(15), "restarted master back in the route", () -> raw.route(ns.addr(), topic)
            .addrsOf(GROUP).equals(Map.of(0L, back.addr(), 1L, slave.addr())));
        Set<String> more = Clients.send(producer, topic, 20);
        assertEquals(20, more.size());
    }
}
