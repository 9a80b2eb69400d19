package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.EmbeddedBroker;
import dev.waymark.interop.harness.Mqadmin;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.RawClient;
import dev.waymark.interop.harness.RouteView;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.junit.jupiter.api.Test;

/**
 * A topic deleted from the NameServer is not brought back by a registration carrying the
 * DataVersion the broker had sent before the deletion (apache/rocketmq#7884, #288, #7052).
 *
 * <p>mqadmin's {@code deleteTopic} deletes on the broker first, then on the NameServer; a
 * registration the broker sent before it deleted still lists the topic, under its old
 * DataVersion, and the 5.x Java NameServer writes back every topic a registration lists that it
 * lacks. That race is not reproducible on demand, so the test makes the same registration
 * arrive after the deletion another way: it deletes the topic on the NameServer only
 * (DELETE_TOPIC_IN_NAMESRV with the cluster's name, the request mqadmin's admin API sends from
 * {@code deleteTopicInNameServer}, whose parameters 4.x and 5.x order differently), so the broker
 * keeps it and its DataVersion stays what the NameServer last saw, then has the broker send
 * the registration its periodic task sends ({@code registerBrokerAll(true, false, true)},
 * called directly rather than after the task's period of at least 10 s). The 5.x Java
 * NameServer (the control) routes the topic again; the 4.x one does not, as it writes a master's
 * topics only when its DataVersion changed; Waymark keeps it deleted until the broker's
 * DataVersion changes. Then a real {@code deleteTopic} (broker and NameServer) and {@code updateTopic}
 * re-creating the topic: both route it again, the broker having registered it under a new
 * DataVersion.
 */
class DeletedTopicTest extends ScenarioBase {
    private static final String CLUSTER = "DeletedTopicCluster";
    private static final String BROKER = "deleted-topic-a";
    private static final int DELETE_TOPIC_IN_NAMESRV = 216;

    /** The route, or null while the NameServer does not answer with one (in a poll). */
    private static RouteView routeOrNull(RawClient raw, NameServer ns, String topic) {
        try {
            return raw.route(ns.addr(), topic);
        } catch (Exception e) {
            return null;
        }
    }

    private static Mqadmin.Result ok(String... args) {
        Mqadmin.Result result = Mqadmin.run(args);
        assertTrue(result.ok(), result::toString);
        return result;
    }

    @Test
    void aRegistrationWithThePreDeletionDataVersionDoesNotReviveTheTopic() throws Exception {
        NameServer ns = namesrv(perTest, Map.of());
        // The timer store: 5.x's broker-side DELETE_TOPIC reads its metrics.
        EmbeddedBroker broker = broker(perTest, new BrokerSpec().cluster(CLUSTER).name(BROKER)
            .namesrv(ns.addr()).set("timerWheelEnable", "true"));
        RawClient raw = raw(perTest);
        String topic = Clients.unique("DeletedTopic");

        ok("updateTopic", "-n", ns.addr(), "-c", CLUSTER, "-t", topic);
        Poll.until(seconds(10), "route of " + topic, () -> routeOrNull(raw, ns, topic));

        // Deleted on the NameServer only: the broker keeps the topic and its DataVersion.
        RemotingCommand delete = RemotingCommand.createRequestCommand(DELETE_TOPIC_IN_NAMESRV, null);
        delete.addExtField("topic", topic);
        delete.addExtField("clusterName", CLUSTER);
        RemotingCommand deleted = raw.invoke(ns.addr(), delete, 3000);
        assertEquals(0, deleted.getCode(), deleted.getRemark());
        assertNull(raw.route(ns.addr(), topic), "DELETE_TOPIC_IN_NAMESRV left the route");

        // The broker's next periodic registration, still listing the topic.
        broker.controller().registerBrokerAll(true, false, true);
        RouteView after = raw.route(ns.addr(), topic);
        System.out.printf("DeletedTopicTest: %s NameServer after a registration with the pre-deletion "
            + "DataVersion: %s%n", ns.kind(), after == null ? "topic stays deleted" : "topic revived");
        if (waymark()) {
            assertNull(after, "Waymark revived the deleted topic");
        } else if (v5()) {
            assertNotNull(after, "the Java NameServer (the control) did not revive the deleted topic");
        } else {
            // 4.x writes a master's topics only when its DataVersion changed.
            assertNull(after, "the 4.x Java NameServer (the control) revived the deleted topic");
        }

        // Deleted for real: on the broker, then on the NameServer.
        ok("deleteTopic", "-n", ns.addr(), "-t", topic, "-c", CLUSTER);
        assertNull(raw.route(ns.addr(), topic), "deleteTopic left the route");
        broker.controller().registerBrokerAll(true, false, true);
        assertNull(raw.route(ns.addr(), topic), "the broker no longer has the topic");

        // Re-created on the broker, which registers it under a new DataVersion.
        ok("updateTopic", "-n", ns.addr(), "-c", CLUSTER, "-t", topic);
        Poll.until(seconds(10), "route of the re-created " + topic, () -> routeOrNull(raw, ns, topic));
    }
}
