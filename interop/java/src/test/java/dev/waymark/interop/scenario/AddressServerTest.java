package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import dev.waymark.interop.harness.AddressLists;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.EmbeddedBroker;
import dev.waymark.interop.harness.LoopbackClients;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.RawClient;
import dev.waymark.interop.harness.WaymarkNameServer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The NameServer list read from an address server (Java's {@code DefaultTopAddressing}): a
 * real broker with {@code fetchNamesrvAddrByAddressServer=true} and real clients (producer,
 * push consumer, admin) with no {@code namesrvAddr}, only {@code -Drocketmq.namesrv.domain}.
 * Against Waymark, ns1 and ns2 form a cluster and ns1's HTTP port is the address server (the
 * cluster's ready members); against Java NameServers (the control), an HTTP server of this test
 * serves the list the test sets, since a Java NameServer serves none. Nothing is restarted while:
 * <ol>
 *   <li>ns3 is added (joins the cluster; is added to the control's list): the broker registers
 *   with it and the clients list it and query it;</li>
 *   <li>ns2 is removed (stopped; dropped from the control's list): it is no longer listed, the
 *   broker and the clients drop it, and the clients' route queries go to the others only.</li>
 * </ol>
 * Periods: the broker's {@code fetchNamesrvAddrInterval} is 1 s (5.x {@code BrokerConfig},
 * default 10 s; its first fetch is 10 s after start, fixed) and its
 * {@code registerNameServerPeriod} 10 s, the least it takes. The clients have no key for theirs:
 * {@code MQClientInstance} fetches at start, 10 s later, then every 2 minutes, fixed; ns3 is
 * added within the first 10 s, the removal waits for the 2-minute refresh, so one run takes about
 * two and a half minutes. rmq5 only: a 4.x broker fetches every 2 minutes, fixed, too.
 */
class AddressServerTest extends ScenarioBase {
    private static final String DOMAIN_PROPERTY = "rocketmq.namesrv.domain";
    private static final String BROKER = "addrsrv-a";
    private static final String WAYMARK_CLUSTER_ID = "addrsrv-" + ProcessHandle.current().pid();
    /** The clients' refresh: 2 minutes, fixed in MQClientInstance, plus slack for a busy machine. */
    private static final Duration CLIENT_REFRESH = Duration.ofSeconds(135);
    /** The broker's: one fetch (1 s here), then its next registration (10 s), plus slack. */
    private static final Duration BROKER_REFRESH = Duration.ofSeconds(25);
    /** A Waymark member joining (ready) or judged gone by the others, on a busy machine. */
    private static final Duration MEMBERSHIP = Duration.ofSeconds(30);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    @Timeout(value = 420)
    void brokerAndClientsFollowTheListWithoutRestarting() throws Exception {
        assumeTrue(v5(), "a 4.x broker re-reads the address server every 2 minutes, fixed");
        long began = System.nanoTime();
        RawClient raw = raw(perTest);
        List<NameServer> serving = new ArrayList<>();
        NameServer ns1 = namesrv(perTest, settings(null));
        NameServer ns2 = namesrv(perTest, settings(ns1));
        serving.addAll(List.of(ns1, ns2));
        ListServer control = waymark() ? null : perTest.add(new ListServer());
        String domain = waymark() ? ((WaymarkNameServer) ns1).httpAddr() : control.addr();
        if (control != null) {
            control.serve(serving);
        }
        String previousDomain = System.setProperty(DOMAIN_PROPERTY, domain);
        perTest.add((AutoCloseable) () -> restore(previousDomain));
        Poll.untilTrue(MEMBERSHIP, 200, "the address server at " + domain + " lists " + serving,
            () -> addrs(serving).equals(fetched()));

        EmbeddedBroker broker = broker(perTest, new BrokerSpec().cluster("AddrServerCluster").name(BROKER)
            .set("fetchNamesrvAddrByAddressServer", "true")
            .set("fetchNamesrvAddrInterval", "1000")
            .set("registerNameServerPeriod", "10000"));
        broker.awaitRegistered(List.of(ns1.addr(), ns2.addr()), Duration.ofSeconds(40));
        assertEquals(addrs(serving), brokerList(broker));

        RouteQueries queries = new RouteQueries();
        DefaultMQProducer producer = LoopbackClients.configure(
            new DefaultMQProducer(Clients.unique("pg"), queries), null);
        producer.setSendMsgTimeout(5000);
        producer.start();
        perTest.add(producer::shutdown);
        DefaultMQAdminExt admin = Clients.admin(perTest, null);
        long clientsStarted = System.nanoTime();
        assertEquals(addrs(serving), producerList(producer), "fetched as the producer started");
        String topic = Clients.unique("AddrServerTopic");
        admin.createAndUpdateTopicConfig(broker.addr(), new TopicConfig(topic, 4, 4, 6));
        for (NameServer ns : serving) {
            Poll.until(Duration.ofSeconds(15), "route of " + topic + " on " + ns, () -> raw.route(ns.addr(), topic));
        }
        Clients.Received received = Clients.pushConsumer(perTest, null, topic);
        Set<String> sent = new LinkedHashSet<>(Clients.send(producer, topic, 20));
        received.awaitExactly(sent, seconds(45));

        // ns3 is added, within the clients' first 10 s when the machine allows.
        NameServer ns3 = namesrv(perTest, settings(ns1));
        serving.add(ns3);
        if (control != null) {
            control.serve(serving);
        }
        long added = System.nanoTime();
        Poll.untilTrue(MEMBERSHIP, 200, "the address server lists ns3 " + ns3, () -> addrs(serving).equals(fetched()));
        Poll.untilTrue(BROKER_REFRESH, 200, "the broker lists ns3", () -> addrs(serving).equals(brokerList(broker)));
        Poll.untilTrue(BROKER_REFRESH, 200, "the broker registers with ns3 " + ns3,
            () -> registeredDirectly(raw, ns3, broker));
        long brokerOnNs3 = System.nanoTime();
        Poll.untilTrue(CLIENT_REFRESH, 500, "the producer lists ns3", () -> addrs(serving).equals(producerList(producer)));
        // The admin client asks every NameServer of its list: ns3 answers it.
        Poll.untilTrue(CLIENT_REFRESH, 500, "the admin client queries ns3",
            () -> addrs(serving).equals(new TreeSet<>(nameServerConfigs(admin))));
        long clientsOnNs3 = System.nanoTime();
        sent.addAll(Clients.send(producer, topic, 20));
        received.awaitExactly(sent, seconds(45));

        // ns2 is removed: no longer listed, no longer used.
        stopNamesrv(ns2);
        serving.remove(ns2);
        if (control != null) {
            control.serve(serving);
        }
        long removed = System.nanoTime();
        Poll.untilTrue(MEMBERSHIP, 200, "the address server stops listing ns2", () -> addrs(serving).equals(fetched()));
        Poll.untilTrue(BROKER_REFRESH, 200, "the broker drops ns2", () -> addrs(serving).equals(brokerList(broker)));
        Poll.untilTrue(CLIENT_REFRESH, 500, "the producer drops ns2", () -> addrs(serving).equals(producerList(producer)));
        long producerDropped = System.nanoTime();
        Poll.untilTrue(CLIENT_REFRESH, 500, "the admin client no longer queries ns2",
            () -> addrs(serving).equals(new TreeSet<>(nameServerConfigs(admin))));
        // Route queries (one a second) from now on go to the NameServers listed only.
        int before = queries.count();
        Poll.untilTrue(Duration.ofSeconds(20), 200, "three route queries after the drop", () -> queries.count() >= before + 3);
        List<String> since = queries.since(before);
        assertFalse(since.contains(ns2.addr()), () -> "route queries after ns2 was dropped: " + since);
        assertTrue(addrs(serving).containsAll(since), () -> "route queries go only to " + serving + ": " + since);
        sent.addAll(Clients.send(producer, topic, 20));
        received.awaitExactly(sent, seconds(45));
        assertEquals(Map.of(0L, broker.addr()), raw.clusterInfo(ns3.addr()).addrsOf(BROKER));

        System.out.printf("AddressServerTest (%s): broker on ns3 %.1f s after it was added, clients %.1f s"
                + " (clients started %.1f s before); producer dropped ns2 %.1f s after its removal; whole test %.1f s%n",
            waymark() ? "waymark" : "java", secondsBetween(added, brokerOnNs3), secondsBetween(added, clientsOnNs3),
            secondsBetween(clientsStarted, added), secondsBetween(removed, producerDropped),
            secondsBetween(began, System.nanoTime()));
    }

    /** The settings of a NameServer: against Waymark, a cluster member, joining {@code seed}'s cluster. */
    private Map<String, String> settings(NameServer seed) {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("scanNotActiveBrokerInterval", "1000");
        if (waymark()) {
            s.put("httpListenAddr", "127.0.0.1:0");
            s.put("clusterId", WAYMARK_CLUSTER_ID);
            s.put("clusterGossipAddr", "127.0.0.1:0");
            s.put("clusterGossipIntervalMillis", "200");
            if (seed != null) {
                s.put("clusterSeeds", ((WaymarkNameServer) seed).gossipAddr());
            }
        }
        return s;
    }

    /** The list as a Java client fetches it from the address server, split as Java splits it. */
    private static Set<String> fetched() {
        String list = AddressLists.fetch(MixAll.getWSAddr());
        return list == null ? Set.of() : new TreeSet<>(Arrays.asList(list.split(";")));
    }

    private static Set<String> addrs(List<NameServer> namesrvs) {
        return namesrvs.stream().map(NameServer::addr).collect(Collectors.toCollection(TreeSet::new));
    }

    private static Set<String> brokerList(EmbeddedBroker broker) {
        List<String> list = AddressLists.broker(broker.controller());
        return list == null ? Set.of() : new TreeSet<>(list);
    }

    private static Set<String> producerList(DefaultMQProducer producer) {
        List<String> list = producer.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl()
            .getNameServerAddressList();
        return list == null ? Set.of() : new TreeSet<>(list);
    }

    /** GET_NAMESRV_CONFIG to every NameServer of the admin client's list: who answered. */
    private static Set<String> nameServerConfigs(DefaultMQAdminExt admin) {
        try {
            return admin.getNameServerConfig(null).keySet();
        } catch (Exception e) {
            return Set.of();
        }
    }

    /**
     * Whether {@code ns} holds the broker from the broker's own registration: a Java NameServer
     * learns brokers no other way; a Waymark node also holds those of its peers (relayed), so its
     * count of direct brokers says it.
     */
    private boolean registeredDirectly(RawClient raw, NameServer ns, EmbeddedBroker broker) {
        if (!raw.clusterInfo(ns.addr()).has(BROKER, 0, broker.addr())) {
            return false;
        }
        if (!waymark()) {
            return true;
        }
        String series = "waymark_cluster_brokers{source=\"direct\"} ";
        for (String line : get((WaymarkNameServer) ns, "/metrics").split("\n")) {
            if (line.startsWith(series)) {
                return Long.parseLong(line.substring(series.length()).trim()) == 1;
            }
        }
        return false;
    }

    private String get(WaymarkNameServer ns, String path) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create("http://" + ns.httpAddr() + path))
                .timeout(Duration.ofSeconds(3)).build(), HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            throw new IllegalStateException(ns + path + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void restore(String previous) {
        if (previous == null) {
            System.clearProperty(DOMAIN_PROPERTY);
        } else {
            System.setProperty(DOMAIN_PROPERTY, previous);
        }
    }

    private static double secondsBetween(long from, long to) {
        return (to - from) / 1e9;
    }

    /** Where the producer sent its route queries (GET_ROUTEINFO_BY_TOPIC), in order. */
    private static final class RouteQueries implements RPCHook {
        private final List<String> targets = new ArrayList<>();

        @Override
        public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
            if (request.getCode() == RawClient.GET_ROUTEINFO_BY_TOPIC && remoteAddr != null) {
                synchronized (targets) {
                    targets.add(remoteAddr);
                }
            }
        }

        @Override
        public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
        }

        int count() {
            synchronized (targets) {
                return targets.size();
            }
        }

        List<String> since(int from) {
            synchronized (targets) {
                return new ArrayList<>(targets.subList(from, targets.size()));
            }
        }
    }

    /**
     * The control's address server: the JDK's HTTP server on a loopback port the kernel picks,
     * answering {@code /rocketmq/nsaddr} with the list last set, as Waymark writes it.
     */
    private static final class ListServer implements AutoCloseable {
        private final HttpServer server;
        private volatile String list = "";

        ListServer() throws IOException {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            server.createContext("/rocketmq/nsaddr", exchange -> {
                byte[] body = list.getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
                exchange.sendResponseHeaders(200, body.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            });
            server.start();
        }

        String addr() {
            return "127.0.0.1:" + server.getAddress().getPort();
        }

        void serve(List<NameServer> namesrvs) {
            list = String.join(";", addrs(namesrvs));
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }
}
