package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Properties;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.EmbeddedBroker;
import dev.waymark.interop.harness.Mqadmin;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.QueueView;
import dev.waymark.interop.harness.RawClient;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.Test;

/**
 * The real mqadmin sub-commands of the profile's release against the NameServer under test,
 * with one real broker registered: what they print, and that what they change takes effect.
 * The same assertions hold against the Java NameServer (the control).
 */
class MqadminTest extends ScenarioBase {
    private static final String CLUSTER = "AdminCluster";
    private static final String BROKER = "admin-a";

    private NameServer ns;
    private EmbeddedBroker broker;
    private DefaultMQAdminExt admin;
    private RawClient raw;

    /**
     * One NameServer and broker for the whole class (start-up is the slow part); every test
     * uses its own topics and KV namespace. The broker's timer store is on because 5.x's
     * broker-side DELETE_TOPIC reads its metrics and fails without it.
     */
    private void start() throws Exception {
        if (ns != null) {
            return;
        }
        ns = namesrv(perClass, Map.of());
        broker = broker(perClass, new BrokerSpec().cluster(CLUSTER).name(BROKER).namesrv(ns.addr())
            .set("timerWheelEnable", "true"));
        admin = Clients.admin(perClass, ns.addr());
        raw = raw(perClass);
    }

    private Mqadmin.Result ok(String... args) {
        Mqadmin.Result result = Mqadmin.run(args);
        assertTrue(result.ok(), result::toString);
        return result;
    }

    /** Creates a topic on the broker and waits for it in the NameServer's route. */
    private String topic(int perm) throws Exception {
        String topic = Clients.unique("AdminTopic");
        admin.createAndUpdateTopicConfig(broker.addr(), new TopicConfig(topic, 3, 5, perm));
        Poll.until(seconds(10), "route of " + topic, () -> {
            try {
                return raw.route(ns.addr(), topic);
            } catch (Exception e) {
                return null;
            }
        });
        return topic;
    }

    @Test
    void clusterListShowsTheBroker() throws Exception {
        start();
        Mqadmin.Result result = ok("clusterList", "-n", ns.addr());
        // One row per broker: cluster name, broker name, broker id, address.
        String row = result.out().lines().filter(l -> l.contains(BROKER)).findFirst().orElse(null);
        assertTrue(row != null, result::toString);
        assertTrue(row.startsWith(CLUSTER), result::toString);
        assertTrue(row.contains(broker.addr()), result::toString);
    }

    @Test
    void topicRouteListAndClusterList() throws Exception {
        start();
        String topic = topic(6);
        Mqadmin.Result route = ok("topicRoute", "-n", ns.addr(), "-t", topic);
        // topicRoute prints the TopicRouteData as JSON (field names are Java's).
        String out = route.out().replaceAll("\\s", "");
        assertTrue(out.contains("\"readQueueNums\":3"), route::toString);
        assertTrue(out.contains("\"writeQueueNums\":5"), route::toString);
        assertTrue(out.contains("\"perm\":6"), route::toString);
        assertTrue(out.contains("\"brokerName\":\"" + BROKER + "\""), route::toString);
        assertTrue(out.contains(broker.addr()), route::toString);

        Mqadmin.Result list = ok("topicList", "-n", ns.addr());
        assertTrue(list.out().lines().anyMatch(l -> l.trim().equals(topic)), list::toString);

        Mqadmin.Result clusters = ok("topicClusterList", "-n", ns.addr(), "-t", topic);
        assertEquals(CLUSTER, clusters.out().trim(), clusters::toString);
    }

    @Test
    void kvConfigUpdateReadBackDelete() throws Exception {
        start();
        String namespace = Clients.unique("adminNs");
        ok("updateKvConfig", "-n", ns.addr(), "-s", namespace, "-k", "answer", "-v", "42");
        assertEquals("42", admin.getKVConfig(namespace, "answer"));
        ok("updateKvConfig", "-n", ns.addr(), "-s", namespace, "-k", "answer", "-v", "43");
        assertEquals("43", admin.getKVConfig(namespace, "answer"));

        ok("deleteKvConfig", "-n", ns.addr(), "-s", namespace, "-k", "answer");
        Exception gone = null;
        try {
            admin.getKVConfig(namespace, "answer");
        } catch (Exception e) {
            gone = e;
        }
        // GET_KV_CONFIG of a missing key answers QUERY_NOT_FOUND (22), an exception here.
        assertTrue(gone != null && String.valueOf(gone.getMessage()).contains("22"), String.valueOf(gone));
    }

    @Test
    void namesrvConfigGetUpdateAndBlackList() throws Exception {
        start();
        Mqadmin.Result get = ok("getNamesrvConfig", "-n", ns.addr());
        // Printed as "key = value" lines under the NameServer's address.
        assertTrue(get.out().contains(ns.addr()), get::toString);
        for (String key : new String[] {"orderMessageEnable", "kvConfigPath", "clusterTest", "listenPort"}) {
            assertTrue(get.out().lines().anyMatch(l -> l.trim().startsWith(key + " ")
                || l.trim().startsWith(key + "=")), () -> key + " missing\n" + get);
        }

        Properties before = admin.getNameServerConfig(null).get(ns.addr());
        assertEquals("false", before.getProperty("orderMessageEnable"), before.toString());
        ok("updateNamesrvConfig", "-n", ns.addr(), "-k", "orderMessageEnable", "-v", "true");
        Properties after = admin.getNameServerConfig(null).get(ns.addr());
        assertEquals("true", after.getProperty("orderMessageEnable"), after.toString());

        // Keys naming files the NameServer writes are refused (NO_PERMISSION, 16), and
        // nothing changes.
        for (String key : new String[] {"configStorePath", "kvConfigPath"}) {
            Mqadmin.Result refused = Mqadmin.run("updateNamesrvConfig", "-n", ns.addr(), "-k", key, "-v", "/tmp/x");
            assertFalse(refused.ok(), refused::toString);
            assertTrue(refused.errorText().contains("CODE: 16"), refused::toString);
            // 5.x NameServers name the black list; the 4.9.7 Java NameServer refuses the
            // path keys with an older remark. Waymark implements the 5.x NameServer, so its
            // remark is the 5.x one whichever client release asks.
            String remark = v5() || waymark() ? "Can not update config in black list" : "Can not update config path";
            assertTrue(refused.errorText().contains(remark), refused::toString);
            String value = admin.getNameServerConfig(null).get(ns.addr()).getProperty(key);
            assertEquals(before.getProperty(key), value, key);
        }
    }

    private static boolean sends(DefaultMQProducer producer, String topic) {
        try {
            SendResult result = producer.send(Clients.message(topic, 0));
            return result.getSendStatus() == SendStatus.SEND_OK;
        } catch (Exception e) {
            return false;
        }
    }

    @Test
    void wipeAndAddWritePerm() throws Exception {
        start();
        String topic = topic(6);
        DefaultMQProducer producer = Clients.producer(perTest, ns.addr());
        producer.setRetryTimesWhenSendFailed(0);
        producer.setSendMsgTimeout(2000);
        assertTrue(sends(producer, topic));

        Mqadmin.Result wipe = ok("wipeWritePerm", "-n", ns.addr(), "-b", BROKER);
        // Prints the count of topics whose write perm was wiped on that NameServer.
        assertTrue(wipe.out().contains(ns.addr()), wipe::toString);
        QueueView wiped = raw.route(ns.addr(), topic).queue(BROKER).orElseThrow();
        assertEquals(4, wiped.perm(), wiped.toString());
        // The producer's 1 s route poll sees no writable queue: sends fail.
        Poll.untilTrue(seconds(15), "sends to " + topic + " fail", () -> !sends(producer, topic));

        Mqadmin.Result add = ok("addWritePerm", "-n", ns.addr(), "-b", BROKER);
        assertTrue(add.out().contains(ns.addr()), add::toString);
        QueueView added = raw.route(ns.addr(), topic).queue(BROKER).orElseThrow();
        assertEquals(6, added.perm(), added.toString());
        Poll.untilTrue(seconds(15), "sends to " + topic + " succeed again", () -> sends(producer, topic));
    }

    @Test
    void deleteTopicRemovesTheRoute() throws Exception {
        start();
        String topic = topic(6);
        Mqadmin.Result delete = ok("deleteTopic", "-n", ns.addr(), "-t", topic, "-c", CLUSTER);
        assertTrue(delete.out().contains(topic), delete::toString);
        // DELETE_TOPIC_IN_NAMESRV is synchronous: the route is gone (TOPIC_NOT_EXIST) at once.
        assertNull(raw.route(ns.addr(), topic));
        Mqadmin.Result list = ok("topicList", "-n", ns.addr());
        assertFalse(list.out().lines().anyMatch(l -> l.trim().equals(topic)), list::toString);
    }
}
