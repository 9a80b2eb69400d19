package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import dev.waymark.interop.harness.BrokerProcess;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.ControllerProcess;
import dev.waymark.interop.harness.EmbeddedBroker;
import dev.waymark.interop.harness.JavaNameServer;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.NameServers;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.RawClient;
import dev.waymark.interop.harness.RouteView;
import dev.waymark.interop.harness.Routes;
import dev.waymark.interop.harness.WaymarkNameServer;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.impl.consumer.ProcessQueue;
import org.apache.rocketmq.client.impl.factory.MQClientInstance;
import org.apache.rocketmq.client.impl.producer.TopicPublishInfo;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Three NameServers and real 5.x brokers, each broker configured with a different single
 * NameServer: against Waymark the three form one cluster ({@code clusterGossipAddr}) and every
 * one of them routes every broker; against Java NameServers (the control) each routes only the
 * brokers registered with it, and they stay divergent.
 *
 * <p>One set of brokers serves the class: {@code cluster-a}, {@code -b} and {@code -c} in this
 * JVM, registered with ns1, ns2 and ns3 alone, and {@code cluster-x} in its own JVM in a network
 * namespace ({@link PeerNamespace}), registered with ns1 and ns2, which listen on two host-side
 * addresses of the namespace's link, so that a blackhole route cuts the broker off from ns2
 * alone. The tests run in order on that set:
 * <ol>
 *   <li>every NameServer's routes and cluster view, after the brokers registered;</li>
 *   <li>a producer and a consumer on each NameServer: the queues each producer publishes to,
 *   each consumer's subscribe view, consumer list and share of the queues, and
 *   rmq-route-client's allocation asked of each NameServer;</li>
 *   <li>{@code cluster-x}'s connection to ns2 cut: routable on all three while it lives (Waymark
 *   keeps it through ns1, which still holds it directly), then killed: gone from all three
 *   within its heartbeat timeout;</li>
 *   <li>ns3 killed and started again on its address with an empty disk: what it answers for
 *   each topic, and its {@code /ready}, from the moment it accepts connections until every
 *   answer is the full route.</li>
 * </ol>
 * Waymark's nodes detect a dead connection with short TCP keepalive settings, as in
 * {@link VanishedBrokerTest}. The measured times are printed to the class's {@code -output.txt}
 * report.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterTest extends ScenarioBase {
    private static final String CLUSTER = "ClusterTestCluster";
    private static final String A = "cluster-a";
    private static final String B = "cluster-b";
    private static final String C = "cluster-c";
    private static final String X = "cluster-x";
    /**
     * Read queues of the shared topic on a, b and c: 7 queues over 3 consumers, so that an
     * average split ({0,1,2}, {3,4}, {5,6}) does not fall on broker boundaries and differs from
     * what consumers that each see a single broker take.
     */
    private static final int[] SHARED_QUEUES = {2, 3, 2};
    /**
     * {@code cluster-x}'s heartbeat timeout: it heartbeats every second, so a late heartbeat or
     * two on a busy machine does not expire it.
     */
    private static final long X_TIMEOUT_MILLIS = 4_000;
    /** The least registration period a broker accepts: how long ns3 waits for c after its restart. */
    private static final long REGISTER_PERIOD_MILLIS = 10_000;
    private static final long SCAN_MILLIS = 1_000;
    /** Short keepalive, as in VanishedBrokerTest: a cut connection is closed within about 4 s. */
    private static final Map<String, String> WAYMARK_KEEPALIVE = Map.of(
        "tcpKeepaliveIdleSeconds", "1",
        "tcpKeepaliveIntervalSeconds", "1",
        "tcpKeepaliveProbes", "2",
        "tcpUserTimeoutMillis", "3000");
    /** How long Waymark may take to notice the cut: 1 s idle, then at most 3 s unanswered, plus slack. */
    private static final long CUT_NOTICED_BOUND_MILLIS = 10_000;
    private static final int SYSTEM_ERROR = 1;
    private static final int TOPIC_NOT_EXIST = 17;

    static {
        // As in AllocationAgreementTest: a rebalance also runs every waitInterval (20 s by
        // default), a consumer that met a transient failure catches up within the settle wait.
        if (System.getProperty("rocketmq.client.rebalance.waitInterval") == null) {
            System.setProperty("rocketmq.client.rebalance.waitInterval", "2000");
        }
    }

    /** One of the three NameServers, and the address brokers and clients use for it. */
    private static final class Node {
        final String name;
        final String host;
        NameServer server;
        String addr;
        /** The brokers registered with it directly. */
        final Set<String> own = new TreeSet<>();

        Node(String name, String host) {
            this.name = name;
            this.host = host;
        }

        void serve(NameServer server) {
            this.server = server;
            // The Java NameServer reports 127.0.0.1:<port> whatever it binds.
            this.addr = host + server.addr().substring(server.addr().lastIndexOf(':'));
        }

        WaymarkNameServer waymark() {
            return (WaymarkNameServer) server;
        }

        @Override
        public String toString() {
            return name + " (" + server + ")";
        }
    }

    private final String clusterId = "interop-" + ProcessHandle.current().pid();
    private PeerNamespace netns;
    private final List<Node> nodes = new ArrayList<>();
    private Node ns1;
    private Node ns2;
    private Node ns3;
    private BrokerProcess brokerX;
    private RawClient raw;
    private Http http;
    private String shared;
    /** Each broker's own topic, by broker name. */
    private final Map<String, String> ownTopic = new TreeMap<>();
    /** The shared topic's queues in Java's order (MessageQueue.compareTo): a, b, c. */
    private List<MessageQueue> sharedQueues;

    @BeforeAll
    void threeNameServersAndTheirBrokers() throws Exception {
        assumeTrue(v5(), "the brokers are 5.x (per-broker heartbeat timeout) and the Java NameServer binds"
            + " with 5.x's bindAddress");
        long began = System.nanoTime();
        netns = perClass.add(PeerNamespace.create());
        PeerNamespace.Subnet second = netns.addSubnet();
        ns1 = new Node("ns1", netns.host());
        ns2 = new Node("ns2", second.host());
        ns3 = new Node("ns3", "127.0.0.1");
        nodes.addAll(List.of(ns1, ns2, ns3));
        if (waymark()) {
            ns1.serve(perClass.add(WaymarkNameServer.start(NameServers.binary(), ns1.host, waymarkSettings(
                "127.0.0.1:0", List.of()))));
            String seed = ns1.waymark().gossipAddr();
            for (Node node : List.of(ns2, ns3)) {
                node.serve(perClass.add(WaymarkNameServer.start(NameServers.binary(), node.host,
                    waymarkSettings("127.0.0.1:0", List.of(seed)))));
            }
            http = new Http();
        } else {
            for (Node node : nodes) {
                node.serve(perClass.add(JavaNameServer.start(javaSettings(node, null))));
            }
        }
        raw = raw(perClass);

        // The broker in the namespace takes longest (its own JVM): started first, awaited last.
        BrokerSpec xSpec = new BrokerSpec().cluster(CLUSTER).name(X).namesrv(ns1.addr + ";" + ns2.addr)
            .set("brokerIP1", netns.peer()).set("brokerIP2", netns.peer())
            // Heartbeats every second, and a heartbeat timeout of its own.
            .set("enableSlaveActingMaster", "true")
            .set("brokerNotActiveTimeoutMillis", String.valueOf(X_TIMEOUT_MILLIS))
            .set("registerNameServerPeriod", String.valueOf(REGISTER_PERIOD_MILLIS));
        CompletableFuture<BrokerProcess> x = new CompletableFuture<>();
        // Killed with the class, also when it started after a failure here.
        perClass.add(() -> x.thenAccept(BrokerProcess::close));
        Thread starter = new Thread(() -> {
            try {
                x.complete(BrokerProcess.start(ControllerProcess.classpathFile(), xSpec, List.of(), netns.exec()));
            } catch (Throwable e) {
                x.completeExceptionally(e);
            }
        }, "cluster-x-start");
        starter.start();
        BrokerFleet fleet = perClass.add(new BrokerFleet());
        List<EmbeddedBroker> brokers = new ArrayList<>();
        Map<String, Node> homes = new TreeMap<>(Map.of(A, ns1, B, ns2, C, ns3));
        for (Map.Entry<String, Node> home : homes.entrySet()) {
            BrokerSpec spec = new BrokerSpec().cluster(CLUSTER).name(home.getKey()).namesrv(home.getValue().addr)
                .set("registerNameServerPeriod", String.valueOf(REGISTER_PERIOD_MILLIS));
            brokers.add(fleet.add(EmbeddedBroker.startUnchecked(spec)));
            home.getValue().own.add(home.getKey());
        }
        BrokerFleet.inParallel(brokers, broker -> broker.awaitRegistered(broker.namesrvs(), seconds(30)));
        long embedded = millisSince(began);
        brokerX = x.get(120, TimeUnit.SECONDS);
        ns1.own.add(X);
        ns2.own.add(X);

        DefaultMQAdminExt admin = Clients.admin(perClass, ns3.addr);
        shared = Clients.unique("ClusterShared");
        sharedQueues = new ArrayList<>();
        for (int i = 0; i < brokers.size(); i++) {
            EmbeddedBroker broker = brokers.get(i);
            String name = broker.spec().brokerName();
            admin.createAndUpdateTopicConfig(broker.addr(), new TopicConfig(shared, SHARED_QUEUES[i],
                SHARED_QUEUES[i], 6));
            for (int q = 0; q < SHARED_QUEUES[i]; q++) {
                sharedQueues.add(new MessageQueue(shared, name, q));
            }
            String own = Clients.unique("Cluster-" + name);
            admin.createAndUpdateTopicConfig(broker.addr(), new TopicConfig(own, 2, 2, 6));
            ownTopic.put(name, own);
        }
        String xTopic = Clients.unique("Cluster-" + X);
        admin.createAndUpdateTopicConfig(brokerX.addr(), new TopicConfig(xTopic, 2, 2, 6));
        ownTopic.put(X, xTopic);
        System.out.printf("ClusterTest: kind=%s, three NameServers and four brokers up in %d ms (a, b, c"
            + " registered after %d ms)%n", NameServers.kind(), millisSince(began), embedded);
    }

    /**
     * Waymark's settings for a node: the cluster (gossip on {@code gossip}, with {@code seeds}),
     * an HTTP port of its own, fast expiry scans and short keepalive.
     */
    private Map<String, String> waymarkSettings(String gossip, List<String> seeds) {
        Map<String, String> s = new LinkedHashMap<>(WAYMARK_KEEPALIVE);
        s.put("scanNotActiveBrokerInterval", String.valueOf(SCAN_MILLIS));
        s.put("httpListenAddr", "127.0.0.1:0");
        s.put("clusterId", clusterId);
        s.put("clusterGossipAddr", gossip);
        if (!seeds.isEmpty()) {
            s.put("clusterSeeds", String.join(",", seeds));
        }
        return s;
    }

    /** The Java NameServer's settings for a node, on {@code port} when given (a restart). */
    private static Map<String, String> javaSettings(Node node, Integer port) {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("bindAddress", node.host);
        s.put("scanNotActiveBrokerInterval", String.valueOf(SCAN_MILLIS));
        if (port != null) {
            s.put("listenPort", String.valueOf(port));
        }
        return s;
    }

    /** A Waymark node that died during a test is a finding of its own. */
    @AfterEach
    void nodesAlive() {
        if (waymark()) {
            for (Node node : nodes) {
                assertTrue(node.waymark().alive(), () -> node + " exited; its log:\n" + node.waymark().logTail());
            }
        }
    }

    @Test
    @Order(1)
    void everyNameServerRoutesWhatItShould() {
        long began = System.nanoTime();
        for (Node node : nodes) {
            // Waymark: every broker everywhere. Java: the brokers registered with the node.
            Set<String> expected = waymark() ? Set.of(A, B, C, X) : node.own;
            Poll.untilTrue(seconds(20), 200, node + " to route " + expected, () -> {
                for (String broker : expected) {
                    RouteView route = raw.route(node.addr, ownTopic.get(broker));
                    if (route == null || route.addrsOf(broker).isEmpty()) {
                        return false;
                    }
                }
                return raw.clusterInfo(node.addr).brokers().keySet().containsAll(expected);
            });
        }
        long converged = millisSince(began);
        for (Node node : nodes) {
            Set<String> expected = waymark() ? Set.of(A, B, C, X) : node.own;
            assertEquals(expected, raw.clusterInfo(node.addr).brokers().keySet(), node + "'s cluster view");
            for (Map.Entry<String, String> topic : ownTopic.entrySet()) {
                RouteView route = raw.route(node.addr, topic.getValue());
                if (expected.contains(topic.getKey())) {
                    assertNotNull(route, node + " must route " + topic);
                } else {
                    assertNull(route, node + " knows nothing of " + topic.getKey() + " (TOPIC_NOT_EXIST): " + route);
                }
            }
            assertEquals(sharedOn(expected), brokersOf(raw.route(node.addr, shared)),
                node + ": brokers in the route of the shared topic");
        }
        System.out.printf("ClusterTest: every NameServer routes %s within %d ms of the topics' creation%n",
            waymark() ? "every broker" : "its own brokers only", converged);
    }

    @Test
    @Order(2)
    void producersAndConsumersOnDifferentNameServers() throws Exception {
        // Producers: the queues each one publishes to, and one message to each of them.
        for (Node node : nodes) {
            DefaultMQProducer producer = Clients.producer(perTest, node.addr);
            SendResult first = producer.send(Clients.message(shared, 0));
            assertEquals(SendStatus.SEND_OK, first.getSendStatus(), first.toString());
            TopicPublishInfo info = producer.getDefaultMQProducerImpl().getTopicPublishInfoTable().get(shared);
            assertNotNull(info, "the producer on " + node + " has no route of " + shared);
            List<MessageQueue> published = new ArrayList<>(new TreeSet<>(info.getMessageQueueList()));
            assertEquals(queuesOf(expectedBrokers(node)), published, "the queues the producer on " + node
                + " publishes to");
            for (MessageQueue mq : published) {
                SendResult result = producer.send(Clients.message(shared, 1), mq);
                assertEquals(SendStatus.SEND_OK, result.getSendStatus(), mq + " through " + node + ": " + result);
            }
        }

        // Consumers: one group, one member on each NameServer.
        String group = Clients.unique("ClusterGroup");
        List<DefaultMQPushConsumer> consumers = new ArrayList<>();
        for (Node node : nodes) {
            consumers.add(Clients.allocatingPushConsumer(perTest, node.addr, shared, group,
                new AllocateMessageQueueAveragely(), consumer -> {
                }));
        }
        long began = System.nanoTime();
        Map<String, List<MessageQueue>> settled = settle(consumers, group);
        System.out.printf("ClusterTest: consumers on three NameServers settled in %d ms: %s%n", millisSince(began),
            show(settled));
        List<String> ids = new ArrayList<>(settled.keySet());
        if (waymark()) {
            // One view: average blocks of 3, 2 and 2 of the 7 queues in client id order.
            Map<String, List<MessageQueue>> expected = new TreeMap<>();
            expected.put(ids.get(0), sharedQueues.subList(0, 3));
            expected.put(ids.get(1), sharedQueues.subList(3, 5));
            expected.put(ids.get(2), sharedQueues.subList(5, 7));
            assertEquals(expected, settled, "the group's split");
        } else {
            // Three views: each consumer alone with its NameServer's broker, taking all of its queues.
            for (int i = 0; i < nodes.size(); i++) {
                String id = factory(consumers.get(i)).getClientId();
                assertEquals(queuesOf(expectedBrokers(nodes.get(i))), settled.get(id),
                    "the consumer on " + nodes.get(i));
            }
        }
        // rmq-route-client, asked of each NameServer, for the same consumers.
        for (Node node : nodes) {
            RouteClientAllocate.Answer answer = RouteClientAllocate.run(node.addr, shared, "AVG", group, ids,
                List.of());
            assertEquals(queuesOf(expectedBrokers(node)), answer.queues(), "rmq-route-client's view through " + node);
            if (waymark()) {
                assertEquals(settled, answer.allocation(), "rmq-route-client's split through " + node);
            }
        }
    }

    /**
     * The consumers' shares once settled: each consumer's subscribe view and consumer list are
     * what its NameServer lets it see (Waymark: every queue and all three consumers; Java: its
     * broker's queues and itself), the shares are disjoint and cover the topic, and two looks a
     * second apart find the same. Keys are client ids in sorted order.
     */
    private Map<String, List<MessageQueue>> settle(List<DefaultMQPushConsumer> consumers, String group) {
        Set<String> allIds = consumers.stream().map(c -> factory(c).getClientId()).collect(Collectors.toSet());
        AtomicReference<Map<String, List<MessageQueue>>> last = new AtomicReference<>();
        AtomicReference<String> state = new AtomicReference<>("nothing yet");
        try {
            Poll.untilTrue(seconds(60), 1000, "the rebalance of " + group + " to settle", () -> {
                Map<String, List<MessageQueue>> now = new TreeMap<>();
                for (int i = 0; i < consumers.size(); i++) {
                    DefaultMQPushConsumer consumer = consumers.get(i);
                    String id = factory(consumer).getClientId();
                    Set<MessageQueue> view = consumer.getDefaultMQPushConsumerImpl().getRebalanceImpl()
                        .getTopicSubscribeInfoTable().get(shared);
                    List<String> members = factory(consumer).findConsumerIdList(shared, group);
                    Set<String> expectedMembers = waymark() ? allIds : Set.of(id);
                    List<MessageQueue> expectedView = queuesOf(expectedBrokers(nodes.get(i)));
                    if (view == null || !new ArrayList<>(new TreeSet<>(view)).equals(expectedView)
                        || members == null || !Set.copyOf(members).equals(expectedMembers)) {
                        state.set(nodes.get(i) + "'s consumer sees " + view + " and members " + members);
                        last.set(null);
                        return false;
                    }
                    now.put(id, assigned(consumer));
                }
                List<MessageQueue> union = new ArrayList<>();
                now.values().forEach(union::addAll);
                union.sort(null);
                state.set(show(now));
                return union.equals(sharedQueues) && now.equals(last.getAndSet(now));
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; last: " + state.get(), e);
        }
        return last.get();
    }

    @Test
    @Order(3)
    void aBrokerCutOffFromOneNameServerStaysUntilItDies() throws Exception {
        String topic = ownTopic.get(X);
        if (waymark()) {
            assertEquals(2, http.brokers(ns2, "direct"), "ns2 holds b and x directly before the cut");
        }
        netns.blackhole(ns2.host);
        long cut = System.nanoTime();
        long noticed = -1;
        long javaDropped = -1;
        // Waymark: x everywhere until ns2 has lost it directly and x's timeout has passed once more
        // since (its liveness is then ns1's word alone). Java: until ns2 has dropped it, and at least
        // x's timeout. Both: a second more; the first values are deadlines.
        long holdMillis = waymark() ? CUT_NOTICED_BOUND_MILLIS + X_TIMEOUT_MILLIS + 1_000
            : X_TIMEOUT_MILLIS + SCAN_MILLIS + 3_000;
        int rounds = 0;
        while (millisSince(cut) < holdMillis) {
            rounds++;
            for (Node node : nodes) {
                boolean routed = routesX(node, topic);
                long at = millisSince(cut);
                if (waymark()) {
                    assertTrue(routed, node + " stopped routing the live broker x " + at + " ms after its"
                        + " connection to ns2 was cut");
                } else if (node == ns2) {
                    if (!routed && javaDropped < 0) {
                        javaDropped = at;
                        holdMillis = Math.max(javaDropped, X_TIMEOUT_MILLIS) + 1_000;
                    }
                    if (javaDropped >= 0) {
                        assertFalse(routed, "ns2 routed x again after it dropped it");
                    }
                } else {
                    assertEquals(node == ns1, routed, node + " routing x " + at + " ms after the cut");
                }
            }
            if (waymark() && noticed < 0 && http.brokers(ns2, "direct") == 1) {
                noticed = millisSince(cut);
                holdMillis = noticed + X_TIMEOUT_MILLIS + 1_000;
                assertEquals(3, http.brokers(ns2, "relayed"), "ns2 holds a, c and x relayed");
            }
            Poll.sleep(250);
        }
        if (waymark()) {
            assertTrue(noticed >= 0, "ns2 did not notice the cut within " + holdMillis + " ms (x still direct)");
            System.out.printf("ClusterTest: ns2 lost x's connection %d ms after the cut; x stayed routable on all"
                + " three for %d ms after that (%d rounds)%n", noticed, millisSince(cut) - noticed, rounds);
        } else {
            assertTrue(javaDropped >= 0, "the Java ns2 still routes x " + holdMillis + " ms after the cut");
            assertTrue(javaDropped >= X_TIMEOUT_MILLIS - 1_200, "ns2 dropped x before its timeout: " + javaDropped);
            System.out.printf("ClusterTest: the Java ns2 dropped x %d ms after the cut, ns1 still routes it, ns3 never"
                + " did%n", javaDropped);
        }

        brokerX.kill();
        long died = System.nanoTime();
        Poll.untilTrue(seconds(X_TIMEOUT_MILLIS / 1000), 100, "x to leave every NameServer", () -> {
            for (Node node : nodes) {
                if (routesX(node, topic) || raw.clusterInfo(node.addr).brokers().containsKey(X)) {
                    return false;
                }
            }
            return true;
        });
        System.out.printf("ClusterTest: x gone from all three %d ms after it was killed (its timeout: %d ms)%n",
            millisSince(died), X_TIMEOUT_MILLIS);
    }

    private boolean routesX(Node node, String topic) {
        RouteView route = raw.route(node.addr, topic);
        return route != null && Map.of(0L, brokerX.addr()).equals(route.addrsOf(X));
    }

    @Test
    @Order(4)
    void aNameServerRestartedOnAnEmptyDisk() throws Exception {
        int port = Integer.parseInt(ns3.addr.substring(ns3.addr.lastIndexOf(':') + 1));
        List<String> topics = new ArrayList<>(List.of(shared, ownTopic.get(A), ownTopic.get(B), ownTopic.get(C)));
        Restarted log = new Restarted();
        long stopped;
        if (waymark()) {
            String gossip = ns3.waymark().gossipAddr();
            ns3.waymark().kill();
            stopped = System.nanoTime();
            ns3.serve(perClass.add(WaymarkNameServer.startOn(NameServers.binary(), ns3.host, port,
                waymarkSettings(gossip, List.of(ns1.waymark().gossipAddr(), ns2.waymark().gossipAddr())))));
        } else {
            ns3.server.stop();
            stopped = System.nanoTime();
            ns3.serve(perClass.add(JavaNameServer.start(javaSettings(ns3, port))));
        }
        long serving = System.nanoTime();
        assertEquals("127.0.0.1:" + port, ns3.addr, "ns3 back on its address");

        // One connection asks for every topic, back to back, with /ready before each round,
        // until every answer is what it should be in the end (c registered again) or c's
        // registration period and some slack have passed.
        RawClient queries = raw(perTest);
        long end = serving + (REGISTER_PERIOD_MILLIS + 5_000) * 1_000_000;
        while (System.nanoTime() - end < 0) {
            if (waymark()) {
                log.ready(http.readyStatus(ns3), System.nanoTime() - serving);
            }
            boolean done = true;
            for (String topic : topics) {
                long asked = System.nanoTime() - serving;
                Answer answer = Answer.of(queries, ns3.addr, topic);
                log.add(topic, answer, asked, System.nanoTime() - serving);
                done &= Objects.equals(answer.brokers, finalBrokers(ns3, topic));
            }
            // The others are not restarted: ns1 keeps routing what it did.
            assertEquals(sharedOn(expectedBrokers(ns1)), brokersOf(raw.route(ns1.addr, shared)),
                "ns1's route of the shared topic while ns3 restarts");
            if (done && (!waymark() || log.readyAt >= 0)) {
                break;
            }
            // Rounds a few milliseconds apart: fine enough for the not-ready window, and the
            // machine's two cores are left to the servers.
            Poll.sleep(10);
        }
        String summary = log.summary(stopped, serving);
        System.out.println("ClusterTest: ns3 restarted on an empty disk: " + summary);
        for (String topic : topics) {
            assertEquals(finalBrokers(ns3, topic), brokersOf(raw.route(ns3.addr, topic)),
                "ns3's route of " + topic + " in the end: " + summary);
        }
        assertEquals(0, log.other, "answers other than success, TOPIC_NOT_EXIST and not ready: " + summary);
        if (waymark()) {
            assertTrue(ns3.waymark().alive(), () -> ns3 + " exited; its log:\n" + ns3.waymark().logTail());
            assertEquals(0, log.topicNotExist, "TOPIC_NOT_EXIST from the restarted ns3: " + summary);
            assertEquals(0, log.partial, "routes missing a live broker from the restarted ns3: " + summary);
            assertTrue(log.readyAt >= 0, "ns3 never reported ready: " + summary);
            assertTrue(log.notReadyAfterReady == 0 && log.servedBeforeReady == 0,
                "route answers and /ready disagree: " + summary);
        } else {
            // The control: no routes until a broker registers again; never those of a and b.
            assertTrue(log.topicNotExist > 0, "the Java ns3 answered every topic at once: " + summary);
        }
    }

    /** The shared topic as "shared", a broker's own topic by the broker's name. */
    private String label(String topic) {
        return topic.equals(shared) ? "shared" : ownTopic.entrySet().stream()
            .filter(e -> e.getValue().equals(topic)).map(Map.Entry::getKey).findFirst().orElse(topic);
    }

    /** The brokers a node routes for {@code topic} once everything registered again with it. */
    private Set<String> finalBrokers(Node node, String topic) {
        Set<String> brokers = expectedBrokers(node);
        if (topic.equals(shared)) {
            return sharedOn(brokers);
        }
        String owner = ownTopic.entrySet().stream().filter(e -> e.getValue().equals(topic)).findFirst().orElseThrow()
            .getKey();
        return brokers.contains(owner) ? Set.of(owner) : null;
    }

    /** One route answer: its code, and the brokers of its route when it succeeded. */
    private record Answer(int code, String remark, Set<String> brokers) {
        static Answer of(RawClient client, String addr, String topic) {
            RemotingCommand request = RemotingCommand.createRequestCommand(RawClient.GET_ROUTEINFO_BY_TOPIC, null);
            request.addExtField("topic", topic);
            RemotingCommand response = client.invoke(addr, request, 3000);
            Set<String> brokers = response.getCode() == 0 && response.getBody() != null
                ? brokersOf(Routes.route(response.getBody())) : null;
            return new Answer(response.getCode(), response.getRemark(), brokers);
        }
    }

    /** What the restarted node answered, and when (nanoseconds since it accepted connections). */
    private final class Restarted {
        int answers;
        int notReady;
        int topicNotExist;
        int partial;
        int full;
        int other;
        int notReadyAfterReady;
        int servedBeforeReady;
        long readyAt = -1;
        long lastNotReadyProbe = -1;
        long firstFullAt = -1;
        long firstAnswerAt = -1;
        /** For each topic and kind of answer, when it came first and last (ms). */
        final Map<String, long[]> spans = new TreeMap<>();

        void ready(int status, long at) {
            if (status == 200 && readyAt < 0) {
                readyAt = at;
            } else if (status != 200) {
                lastNotReadyProbe = at;
                if (readyAt >= 0) {
                    notReadyAfterReady++;
                }
            }
        }

        void add(String topic, Answer answer, long asked, long received) {
            answers++;
            if (firstAnswerAt < 0) {
                firstAnswerAt = received;
            }
            Set<String> expected = finalBrokers(ns3, topic);
            String kind;
            if (answer.code == SYSTEM_ERROR && answer.remark != null && answer.remark.contains("not ready")) {
                notReady++;
                kind = "not ready";
                // Asked after /ready said 200: the two disagree.
                if (readyAt >= 0 && asked > readyAt) {
                    notReadyAfterReady++;
                }
            } else if (answer.code == TOPIC_NOT_EXIST) {
                topicNotExist++;
                kind = "TOPIC_NOT_EXIST";
            } else if (answer.code == 0 && answer.brokers != null) {
                if (answer.brokers.equals(expected)) {
                    full++;
                    kind = "full";
                    if (firstFullAt < 0) {
                        firstFullAt = received;
                    }
                } else {
                    partial++;
                    kind = "partial" + answer.brokers;
                }
                // Answered before a /ready probe that was still 503.
                if (received < lastNotReadyProbe) {
                    servedBeforeReady++;
                }
            } else {
                other++;
                kind = "code" + answer.code + "(" + answer.remark + ")";
            }
            long ms = received / 1_000_000;
            spans.computeIfAbsent(label(topic) + " " + kind, k -> new long[] {ms, ms})[1] = ms;
        }

        String summary(long stopped, long serving) {
            return String.format("kind=%s restartMs=%d answers=%d notReady=%d topicNotExist=%d partial=%d full=%d"
                    + " other=%d readyAfterMs=%d firstAnswerAfterMs=%d firstFullAfterMs=%d notReadyAfterReady=%d"
                    + " servedBeforeReady=%d answersFirstToLastMs=%s",
                NameServers.kind(), (serving - stopped) / 1_000_000, answers, notReady, topicNotExist, partial, full,
                other, readyAt < 0 ? -1 : readyAt / 1_000_000, firstAnswerAt / 1_000_000,
                firstFullAt < 0 ? -1 : firstFullAt / 1_000_000, notReadyAfterReady, servedBeforeReady,
                spans.entrySet().stream().map(e -> e.getKey() + " " + e.getValue()[0] + ".." + e.getValue()[1])
                    .collect(Collectors.joining(", ", "[", "]")));
        }
    }

    /** The brokers a client of {@code node} must see: all that live (Waymark), or those registered with it (Java). */
    private Set<String> expectedBrokers(Node node) {
        Set<String> all = new TreeSet<>(waymark() ? Set.of(A, B, C, X) : node.own);
        if (brokerX == null || !brokerX.alive()) {
            all.remove(X);
        }
        return all;
    }

    /** Of {@code brokers}, those serving the shared topic. */
    private static Set<String> sharedOn(Set<String> brokers) {
        Set<String> out = new TreeSet<>(brokers);
        out.retainAll(Set.of(A, B, C));
        return out;
    }

    /** The shared topic's queues on {@code brokers}, in Java's order. */
    private List<MessageQueue> queuesOf(Set<String> brokers) {
        return sharedQueues.stream().filter(q -> brokers.contains(q.getBrokerName())).toList();
    }

    private static Set<String> brokersOf(RouteView route) {
        if (route == null) {
            return null;
        }
        return route.brokers().stream().map(b -> b.brokerName()).collect(Collectors.toCollection(TreeSet::new));
    }

    private static MQClientInstance factory(DefaultMQPushConsumer consumer) {
        return consumer.getDefaultMQPushConsumerImpl().getmQClientFactory();
    }

    /** The shared topic's queues a push consumer holds now (its process queue table, not dropped), sorted. */
    private List<MessageQueue> assigned(DefaultMQPushConsumer consumer) {
        TreeSet<MessageQueue> mine = new TreeSet<>();
        for (Map.Entry<MessageQueue, ProcessQueue> e : consumer.getDefaultMQPushConsumerImpl().getRebalanceImpl()
            .getProcessQueueTable().entrySet()) {
            if (e.getKey().getTopic().equals(shared) && !e.getValue().isDropped()) {
                mine.add(e.getKey());
            }
        }
        return new ArrayList<>(mine);
    }

    private static String show(Map<String, List<MessageQueue>> allocation) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        allocation.forEach((cid, queues) -> out.put(cid,
            queues.stream().map(q -> q.getBrokerName() + ":" + q.getQueueId()).toList()));
        return out.toString();
    }

    private static long millisSince(long nanos) {
        return (System.nanoTime() - nanos) / 1_000_000;
    }

    /** Waymark's HTTP port: {@code /ready} and the cluster's metrics. */
    private static final class Http {
        private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

        private HttpResponse<String> get(Node node, String path) {
            try {
                return client.send(HttpRequest.newBuilder(URI.create("http://" + node.waymark().httpAddr() + path))
                    .timeout(Duration.ofSeconds(3)).build(), HttpResponse.BodyHandlers.ofString());
            } catch (IOException e) {
                throw new IllegalStateException(node + path + ": " + e, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        /** {@code GET /ready}'s status: 200 once the node serves routes, 503 before. */
        int readyStatus(Node node) {
            return get(node, "/ready").statusCode();
        }

        /** {@code waymark_cluster_brokers{source="..."}}: brokers held directly or relayed. */
        long brokers(Node node, String source) {
            String series = "waymark_cluster_brokers{source=\"" + source + "\"} ";
            for (String line : get(node, "/metrics").body().split("\n")) {
                if (line.startsWith(series)) {
                    return Long.parseLong(line.substring(series.length()).trim());
                }
            }
            throw new IllegalStateException(node + " exports no " + series.trim());
        }
    }
}
