package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.EmbeddedBroker;
import dev.waymark.interop.harness.GrpcClientProcess;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.ProxyProcess;
import dev.waymark.interop.harness.RawClient;
import dev.waymark.interop.harness.RouteView;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The 5.x access path: the official gRPC Java client (rocketmq-client-java 5.2.0) reaches a
 * real broker only through a real Proxy in cluster mode (rocketmq-proxy 5.5.0, the newest
 * published), and the Proxy learns clusters, brokers and routes only from the NameServer
 * (GET_BROKER_CLUSTER_INFO at start-up, GET_ROUTEINFO_BY_TOPIC per topic). The proxy and the
 * client each run in a JVM of their own (see interop/java/proxy/pom.xml); one NameServer,
 * broker, proxy and client serve the class.
 *
 * <p>The broker pops messages for the gRPC consumers, which needs its timer wheel
 * ({@code timerWheelEnable}, off in the harness's defaults).
 */
class ProxyTest extends ScenarioBase {
    private static final String CLUSTER = "ProxyCluster";
    private static final String BROKER = "proxy-a";
    private static final int MESSAGES = 50;

    private NameServer ns;
    private DefaultMQAdminExt admin;
    private RawClient raw;
    private EmbeddedBroker broker;
    private ProxyProcess proxy;
    private GrpcClientProcess client;

    @BeforeAll
    void startProxyAndClient() throws Exception {
        assumeTrue("5.5.1".equals(System.getProperty("rocketmq.version")),
            "the proxy and the gRPC client are built for the rmq5 profile (interop/java/proxy/pom.xml)");
        Path proxyDir = ProxyProcess.dir();
        assertNotNull(proxyDir, "no -Dwaymark.proxy.dir (set by surefire)");
        assertTrue(Files.isDirectory(proxyDir), "no " + proxyDir + " (mvn -P rmq5 test-compile builds it)");
        ns = namesrv(perClass, Map.of());
        broker = broker(perClass, new BrokerSpec().cluster(CLUSTER).name(BROKER).namesrv(ns.addr())
            .set("timerWheelEnable", "true"));
        admin = Clients.admin(perClass, ns.addr());
        raw = raw(perClass);
        long start = System.nanoTime();
        proxy = perClass.add(ProxyProcess.start(proxyDir, ns.addr(), CLUSTER));
        System.out.printf("ProxyTest: %s started in %d ms%n", proxy, (System.nanoTime() - start) / 1_000_000);
        client = perClass.add(GrpcClientProcess.start(proxyDir, proxy.grpcAddr()));
    }

    /** Creates {@code topic} on the broker and waits until the NameServer routes it. */
    private void createTopic(String topic) throws Exception {
        admin.createAndUpdateTopicConfig(broker.addr(), new TopicConfig(topic, 4, 4, 6));
        Poll.untilTrue(seconds(10), "the NameServer routes " + topic, () -> raw.route(ns.addr(), topic) != null);
    }

    /** Sends {@link #MESSAGES} through the proxy and receives them all with a new group. */
    private void roundtrip(String topic) throws Exception {
        long start = System.nanoTime();
        String answer = client.roundtrip(topic, Clients.unique("ProxyGroup"), MESSAGES, seconds(90));
        System.out.printf("ProxyTest: %s in %d ms%n", answer, (System.nanoTime() - start) / 1_000_000);
        assertEquals("ROUNDTRIP " + topic + " sent=" + MESSAGES + " received=" + MESSAGES, answer,
            () -> "proxy log:\n" + proxy.logTail() + "\nclient log:\n" + client.logTail());
    }

    @Test
    void grpcClientSendsAndReceivesThroughTheProxy() throws Exception {
        String topic = Clients.unique("ProxyTopic");
        createTopic(topic);
        // The proxy answers on its remoting port too, with the route it got from the
        // NameServer: the broker's queues, the proxy standing in for the broker's address.
        RouteView viaProxy = raw.route(proxy.remotingAddr(), topic);
        assertNotNull(viaProxy, "the proxy does not route " + topic);
        assertEquals(Map.of(0L, proxy.remotingAddr()), viaProxy.addrsOf(BROKER), viaProxy.toString());
        roundtrip(topic);
    }

    /**
     * A topic that did not exist when the proxy started is usable through it: the proxy asks
     * the NameServer for the routes of a topic it has not seen.
     */
    @Test
    void aTopicCreatedAfterTheProxyStartedIsUsable() throws Exception {
        String topic = Clients.unique("ProxyLaterTopic");
        assertEquals(null, raw.route(ns.addr(), topic), "a new topic is not routed yet");
        createTopic(topic);
        roundtrip(topic);
        assertTrue(proxy.alive(), () -> "the proxy exited; its log:\n" + proxy.logTail());
    }
}
