package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Map;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.EmbeddedBroker;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.RawClient;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.Test;

/**
 * A broker that hangs with its connection open (no clean close) expires after its own
 * heartbeat timeout: a 5.x broker with {@code enableSlaveActingMaster=true} announces
 * {@code heartbeatTimeoutMillis = brokerNotActiveTimeoutMillis} (3 s here) and heartbeats every
 * second with one-way QUERY_DATA_VERSION; the NameServer scans every second. While the broker
 * heartbeats it stays (longer than its timeout); once frozen it must be gone within
 * timeout + scan interval (+ slack), and not before the timeout.
 */
class HeartbeatExpiryTest extends ScenarioBase {
    private static final long TIMEOUT = 3000;
    private static final long SCAN = 1000;

    @Test
    void frozenBrokerExpiresAfterItsHeartbeatTimeout() throws Exception {
        assumeTrue(EmbeddedBroker.canFreeze(), "4.x brokers have no per-broker heartbeat timeout");
        NameServer ns = namesrv(perTest, Map.of("scanNotActiveBrokerInterval", String.valueOf(SCAN)));
        EmbeddedBroker broker = broker(perTest, new BrokerSpec().cluster("ExpiryCluster").name("expiry-a")
            .namesrv(ns.addr()).set("enableSlaveActingMaster", "true")
            .set("brokerNotActiveTimeoutMillis", String.valueOf(TIMEOUT)));
        RawClient raw = raw(perTest);
        DefaultMQAdminExt admin = Clients.admin(perTest, ns.addr());
        String topic = Clients.unique("ExpiryTopic");
        admin.createAndUpdateTopicConfig(broker.addr(), new TopicConfig(topic, 2, 2, 6));
        Poll.until(seconds(10), "route of " + topic, () -> raw.route(ns.addr(), topic));

        // Heartbeats keep it alive well past its timeout: by 2 × 3 s, with a scan every second,
        // a broker whose heartbeats were not counted would have expired (and stays expired until
        // its next full registration, 30 s after the start-up one).
        Poll.sleep(2 * TIMEOUT);
        assertEquals(Map.of(0L, broker.addr()), raw.clusterInfo(ns.addr()).addrsOf("expiry-a"),
            "a heartbeating broker must stay registered past its heartbeatTimeoutMillis");

        broker.freeze();
        long frozen = System.nanoTime();
        Poll.untilTrue(seconds(15), 100, "frozen broker to expire",
            () -> raw.clusterInfo(ns.addr()).addrsOf("expiry-a").isEmpty());
        long millis = (System.nanoTime() - frozen) / 1_000_000;
        System.out.println("frozen broker expired after " + millis + " ms");
        // The last heartbeat was at most ~1 s before the freeze.
        assertTrue(millis >= TIMEOUT - 1200, "expired too early: " + millis + " ms");
        assertTrue(millis <= TIMEOUT + SCAN + 1500, "expired too late: " + millis + " ms");
        assertNull(raw.route(ns.addr(), topic), "its topic's route must be gone with it");
    }
}
