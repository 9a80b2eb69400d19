package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.List;
import java.util.Map;
import dev.waymark.interop.harness.BrokerProcess;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.ControllerProcess;
import dev.waymark.interop.harness.JavaNameServer;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.NameServers;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.RawClient;
import dev.waymark.interop.harness.RouteView;
import dev.waymark.interop.harness.WaymarkNameServer;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.Test;

/**
 * A broker host that vanishes (power or network gone: no FIN, no RST, nothing) leaves
 * Waymark's routes within seconds, and the Java NameServer's only at its 120 s expiry.
 *
 * <p>A real 5.x broker JVM runs in its own network namespace ({@link PeerNamespace}), joined to
 * this one by a veth pair (a /30: the host side for the NameServer, the peer side for the
 * broker, which advertises it as {@code brokerIP1}); the NameServer under test listens on the
 * host side.
 * Loopback cannot vanish: both ends are one kernel, which answers every probe. Once the
 * broker's topic is routable, a blackhole route in the namespace drops everything the broker's
 * kernel sends to the NameServer, keepalive replies included. Waymark, with keepalive probes
 * after 1 s of silence and a 3 s TCP_USER_TIMEOUT, closes the broker's connection and so
 * unregisters it; the Java NameServer (the control) sets no keepalive and keeps the broker
 * until {@code serverChannelMaxIdleTimeSeconds} or the broker's heartbeat timeout (both
 * 120 s), so it must still route it well after Waymark's bound.
 *
 * <p>Needs root (CAP_NET_ADMIN) and iproute2's {@code ip}; skipped, saying what is missing,
 * without them, and failed instead under {@code CI=true}.
 */
class VanishedBrokerTest extends ScenarioBase {
    private static final String BROKER = "vanish-a";
    /** Short keepalive so the test is quick; the defaults find a dead peer within 15 s. */
    private static final Map<String, String> WAYMARK_KEEPALIVE = Map.of(
        "tcpKeepaliveIdleSeconds", "1",
        "tcpKeepaliveIntervalSeconds", "1",
        "tcpKeepaliveProbes", "2",
        "tcpUserTimeoutMillis", "3000");
    /** Waymark must have dropped the broker by then: 1 s idle, then at most 3 s unanswered, plus slack. */
    private static final long WAYMARK_BOUND_MILLIS = 10_000;
    /** How long the Java NameServer must still route the broker: twice Waymark's bound, far below 120 s. */
    private static final long JAVA_HOLD_MILLIS = 20_000;

    @Test
    void aBrokerHostThatVanishesLeavesTheRoutes() throws Exception {
        assumeTrue(v5(), "the scenario runs a 5.x broker and binds the Java NameServer with 5.x's bindAddress");
        PeerNamespace peer = perTest.add(PeerNamespace.create());
        NameServer ns = perTest.add(waymark()
            ? WaymarkNameServer.start(NameServers.binary(), peer.host(), WAYMARK_KEEPALIVE)
            : JavaNameServer.start(Map.of("bindAddress", peer.host())));
        // The Java NameServer reports 127.0.0.1:<port> whatever it binds; the port is the one
        // bound on the host side.
        String nsAddr = peer.host() + ns.addr().substring(ns.addr().lastIndexOf(':'));

        BrokerSpec spec = new BrokerSpec().cluster("VanishCluster").name(BROKER).namesrv(nsAddr)
            .set("brokerIP1", peer.peer()).set("brokerIP2", peer.peer());
        BrokerProcess broker = perTest.add(BrokerProcess.start(ControllerProcess.classpathFile(), spec, List.of(),
            peer.exec()));
        assertTrue(broker.addr().startsWith(peer.peer() + ":"), "the broker advertises " + broker.addr());

        RawClient raw = raw(perTest);
        // The admin client reaches the broker at its advertised address, over the link.
        DefaultMQAdminExt admin = Clients.admin(perTest, nsAddr);
        String topic = Clients.unique("VanishTopic");
        admin.createAndUpdateTopicConfig(broker.addr(), new TopicConfig(topic, 2, 2, 6));
        RouteView route = Poll.until(seconds(15), "route of " + topic, () -> raw.route(nsAddr, topic));
        assertEquals(Map.of(0L, broker.addr()), route.addrsOf(BROKER), route.toString());

        // A live broker's kernel answers the probes: keepalive must not drop it, even idle for
        // longer than Waymark's whole probe-and-timeout cycle (1 s idle, then 3 s without an
        // answer): in 6 s a connection closed by a wrongly failing probe would be gone, and with
        // it the broker (a closed connection unregisters at once).
        Poll.sleep(6_000);
        assertEquals(Map.of(0L, broker.addr()), raw.clusterInfo(nsAddr).addrsOf(BROKER),
            "a reachable broker must stay registered");

        peer.blackhole();
        long vanished = System.nanoTime();
        if (waymark()) {
            Poll.untilTrue(seconds(WAYMARK_BOUND_MILLIS / 1000), 100, "the vanished broker to leave " + ns,
                () -> raw.route(nsAddr, topic) == null);
            long millis = (System.nanoTime() - vanished) / 1_000_000;
            System.out.printf("VanishedBrokerTest: Waymark dropped the vanished broker %d ms after the blackhole%n",
                millis);
            assertEquals(Map.of(), raw.clusterInfo(nsAddr).addrsOf(BROKER), "the broker must leave the cluster too");
            assertTrue(((WaymarkNameServer) ns).alive(), () -> ns + " exited; its log:\n"
                + ((WaymarkNameServer) ns).logTail());
        } else {
            while (System.nanoTime() - vanished < JAVA_HOLD_MILLIS * 1_000_000) {
                RouteView still = raw.route(nsAddr, topic);
                long millis = (System.nanoTime() - vanished) / 1_000_000;
                assertTrue(still != null && Map.of(0L, broker.addr()).equals(still.addrsOf(BROKER)),
                    "the Java NameServer dropped the vanished broker after only " + millis + " ms: " + still);
                Poll.sleep(500);
            }
            System.out.printf("VanishedBrokerTest: the Java NameServer still routes the vanished broker %d ms after"
                + " the blackhole (it waits for its 120 s expiry)%n", (System.nanoTime() - vanished) / 1_000_000);
        }
    }
}
