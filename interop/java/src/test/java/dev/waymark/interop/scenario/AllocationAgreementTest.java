package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.reflect.Field;
import java.nio.charset.Charset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.EmbeddedBroker;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.QueueView;
import dev.waymark.interop.harness.RawClient;
import dev.waymark.interop.harness.RouteView;
import dev.waymark.interop.harness.StaticTopics;
import org.apache.rocketmq.client.consumer.AllocateMessageQueueStrategy;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMachineRoomNearby;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueByMachineRoom;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragelyByCircle;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueByConfig;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueConsistentHash;
import org.apache.rocketmq.client.impl.consumer.DefaultLitePullConsumerImpl;
import org.apache.rocketmq.client.impl.consumer.ProcessQueue;
import org.apache.rocketmq.client.impl.factory.MQClientInstance;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A group of real Java consumers and rmq-route-client split a topic's queues the same way.
 *
 * <p>Two masters of one cluster serve a topic with 5 read queues on one and 3 on the other
 * (uneven, so contiguous blocks and round robin give different answers; the write queue counts
 * differ from the read ones, so a view built from write queues would not pass). A second topic
 * is read-only on one broker and write-only on the other: only the readable broker's queues
 * are consumed. A static topic (5.x) is split by its logical queues. For each strategy a
 * new group of three real push consumers starts (one group of subscribing lite pull consumers
 * too); once their rebalance has settled, each consumer's assigned queues (the push consumer's
 * {@code RebalanceImpl} process queue table, the lite pull consumer's assigned queues) and
 * client id are read, and the Rust example {@code allocate} ({@link RouteClientAllocate}) is run
 * with the same NameServer, topic and client ids. Both answers must be identical queue for
 * queue; for the index-arithmetic strategies they must also be the allocation worked out by
 * hand below, so a fault shared by both sides (or a route missing queues) still fails.
 */
class AllocationAgreementTest extends ScenarioBase {
    // room@name: the form AllocateMessageQueueByMachineRoom reads rooms from.
    private static final String BROKER_A = "R1@alloc-a";
    private static final String BROKER_B = "R2@alloc-b";
    private static final int QUEUES_A = 5;
    private static final int QUEUES_B = 3;
    private static final int READ_ONLY_QUEUES = 3;
    private static final int CONSUMERS = 3;
    /** For consumers that need nothing set before they start. */
    private static final Consumer<DefaultMQPushConsumer> AS_IS = consumer -> {
    };

    static {
        // A rebalance also runs every waitInterval (20 s by default) besides the one a
        // consumer-list change triggers; a short interval lets a consumer that met a transient
        // failure (an offset query during start-up) catch up within the settle timeout.
        if (System.getProperty("rocketmq.client.rebalance.waitInterval") == null) {
            System.setProperty("rocketmq.client.rebalance.waitInterval", "2000");
        }
    }

    /** A topic and the queues consumers must split, in Java's order (MessageQueue.compareTo). */
    private record Topic(String name, List<MessageQueue> all) {
    }

    private NameServer ns;
    private DefaultMQAdminExt admin;
    private RawClient raw;
    /** 5 + 3 readable queues. */
    private Topic uneven;
    /** Read-only on alloc-a (3 queues), write-only on alloc-b (4): 3 readable queues. */
    private Topic halfReadable;

    @BeforeAll
    void twoMastersAndAnUnevenTopic() throws Exception {
        ns = namesrv(perClass, Map.of());
        EmbeddedBroker a = broker(perClass, new BrokerSpec().cluster("AllocCluster").name(BROKER_A)
            .namesrv(ns.addr()));
        EmbeddedBroker b = broker(perClass, new BrokerSpec().cluster("AllocCluster").name(BROKER_B)
            .namesrv(ns.addr()));
        admin = Clients.admin(perClass, ns.addr());
        String topic = Clients.unique("AllocTopic");
        // TopicConfig(name, readQueueNums, writeQueueNums, perm); 6 = read + write.
        admin.createAndUpdateTopicConfig(a.addr(), new TopicConfig(topic, QUEUES_A, 2, 6));
        admin.createAndUpdateTopicConfig(b.addr(), new TopicConfig(topic, QUEUES_B, 6, 6));
        String half = Clients.unique("AllocHalfTopic");
        admin.createAndUpdateTopicConfig(a.addr(), new TopicConfig(half, READ_ONLY_QUEUES, READ_ONLY_QUEUES, 4));
        admin.createAndUpdateTopicConfig(b.addr(), new TopicConfig(half, 4, 4, 2));
        raw = raw(perClass);
        Map<String, int[]> readCounts = Map.of(topic, new int[] {QUEUES_A, QUEUES_B}, half,
            new int[] {READ_ONLY_QUEUES, 4});
        readCounts.forEach((t, counts) -> Poll.untilTrue(seconds(20), 200, "route of " + t + " with both brokers'"
            + " queues", () -> {
                RouteView route = raw.route(ns.addr(), t);
                return route != null
                    && route.queue(BROKER_A).map(QueueView::readQueueNums).orElse(-1) == counts[0]
                    && route.queue(BROKER_B).map(QueueView::readQueueNums).orElse(-1) == counts[1];
            }));
        uneven = new Topic(topic, queues(topic, BROKER_A, QUEUES_A, BROKER_B, QUEUES_B));
        halfReadable = new Topic(half, queues(half, BROKER_A, READ_ONLY_QUEUES, BROKER_B, 0));
    }

    private static List<MessageQueue> queues(String topic, String broker1, int n1, String broker2, int n2) {
        List<MessageQueue> out = new ArrayList<>();
        for (int i = 0; i < n1; i++) {
            out.add(new MessageQueue(topic, broker1, i));
        }
        for (int i = 0; i < n2; i++) {
            out.add(new MessageQueue(topic, broker2, i));
        }
        return out;
    }

    @Test
    void averagely() throws Exception {
        Map<String, List<MessageQueue>> java = agree(uneven, new AllocateMessageQueueAveragely(), "AVG", AS_IS,
            List.of());
        // 8 queues, 3 consumers: blocks of 3, 3, 2 in sorted client id order.
        assertEquals(expectedByIndex(uneven, new int[][] {{0, 1, 2}, {3, 4, 5}, {6, 7}}, java.keySet()), java);
    }

    @Test
    void averagelyByCircle() throws Exception {
        Map<String, List<MessageQueue>> java = agree(uneven, new AllocateMessageQueueAveragelyByCircle(),
            "AVG_BY_CIRCLE", AS_IS, List.of());
        // Round robin: indexes i, i + 3, i + 6.
        assertEquals(expectedByIndex(uneven, new int[][] {{0, 3, 6}, {1, 4, 7}, {2, 5}}, java.keySet()), java);
    }

    @Test
    void onlyReadableQueuesAreShared() throws Exception {
        Map<String, List<MessageQueue>> java = agree(halfReadable, new AllocateMessageQueueAveragely(), "AVG",
            AS_IS, List.of());
        // alloc-a's 3 read-only queues, one each; alloc-b's write-only queues nobody's.
        assertEquals(expectedByIndex(halfReadable, new int[][] {{0}, {1}, {2}}, java.keySet()), java);
    }

    @Test
    void staticTopicIsSplitByLogicalQueues() throws Exception {
        assumeTrue(StaticTopics.supported(), "static topics need RocketMQ 5");
        String name = Clients.unique("AllocStaticTopic");
        StaticTopics.create(admin, name, 6, Set.of(BROKER_A, BROKER_B));
        Poll.untilTrue(seconds(20), 200, "route of static topic " + name + " on both brokers", () -> {
            RouteView route = raw.route(ns.addr(), name);
            return route != null && route.queue(BROKER_A).isPresent() && route.queue(BROKER_B).isPresent();
        });
        // Consumers see logical queues of the mock broker __syslo__global__, whatever broker
        // serves each; the route's queue data (physical queues) must not leak into the view.
        List<MessageQueue> logical = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            logical.add(new MessageQueue(name, "__syslo__global__", i));
        }
        Topic topic = new Topic(name, logical);
        Map<String, List<MessageQueue>> java = agree(topic, new AllocateMessageQueueAveragely(), "AVG", AS_IS,
            List.of());
        assertEquals(expectedByIndex(topic, new int[][] {{0, 1}, {2, 3}, {4, 5}}, java.keySet()), java);
    }

    @Test
    void litePullConsumersAveragelyByCircle() throws Exception {
        String group = Clients.unique("AllocGroup_LITE_AVG_BY_CIRCLE");
        List<Member> members = new ArrayList<>();
        for (int i = 0; i < CONSUMERS; i++) {
            members.add(lite(Clients.allocatingLitePullConsumer(perTest, ns.addr(), uneven.name(), group,
                new AllocateMessageQueueAveragelyByCircle())));
        }
        Map<String, List<MessageQueue>> java = agree(uneven, members, group, "AVG_BY_CIRCLE", List.of());
        assertEquals(expectedByIndex(uneven, new int[][] {{0, 3, 6}, {1, 4, 7}, {2, 5}}, java.keySet()), java);
    }

    @Test
    void consistentHash() throws Exception {
        // The ring depends on the client ids (pid and sequence in the instance names), so there
        // is no fixed expectation; agreement and the partition checks of agree() remain.
        agree(uneven, new AllocateMessageQueueConsistentHash(), "CONSISTENT_HASH", AS_IS, List.of());
    }

    @Test
    void machineRoom() throws Exception {
        // Both rooms consumed, so every queue has an owner: 8 queues over 3 consumers gives
        // blocks of 2 plus one of the last 2 queues to each of the first two consumers.
        AllocateMessageQueueByMachineRoom strategy = new AllocateMessageQueueByMachineRoom();
        strategy.setConsumeridcs(Set.of("R1", "R2"));
        Map<String, List<MessageQueue>> java = agree(uneven, strategy, "MACHINE_ROOM", AS_IS,
            List.of("--idc", "R1", "--idc", "R2"));
        assertEquals(expectedByIndex(uneven, new int[][] {{0, 1, 6}, {2, 3, 7}, {4, 5}}, java.keySet()), java);
    }

    @Test
    void machineRoomNearbyAveragely() throws Exception {
        // Room R1: broker alloc-a and the first consumer started; room R2: broker alloc-b and
        // the other two. Client ids are known before start (ip@instance), so the resolver is
        // complete from the first rebalance.
        // Read by the consumers' rebalance threads, written here before each consumer starts.
        Map<String, String> rooms = new ConcurrentHashMap<>(Map.of(BROKER_A, "R1", BROKER_B, "R2"));
        AllocateMachineRoomNearby.MachineRoomResolver resolver = new AllocateMachineRoomNearby.MachineRoomResolver() {
            @Override
            public String brokerDeployIn(MessageQueue mq) {
                return rooms.get(mq.getBrokerName());
            }

            @Override
            public String consumerDeployIn(String clientId) {
                return rooms.get(clientId);
            }
        };
        List<String> roomArgs = new ArrayList<>(List.of("--room", BROKER_A + "=R1", "--room", BROKER_B + "=R2"));
        int[] started = {0};
        Map<String, List<MessageQueue>> java = agree(uneven,
            new AllocateMachineRoomNearby(new AllocateMessageQueueAveragely(), resolver), "MACHINE_ROOM_NEARBY-AVG",
            consumer -> {
                String cid = consumer.buildMQClientId();
                String room = started[0]++ == 0 ? "R1" : "R2";
                rooms.put(cid, room);
                roomArgs.add("--room");
                roomArgs.add(cid + "=" + room);
            }, roomArgs);
        // R1's consumer takes all of alloc-a; R2's two consumers split alloc-b averagely.
        Map<String, List<MessageQueue>> expected = new TreeMap<>();
        List<String> r2 = new ArrayList<>();
        for (String cid : java.keySet()) {
            if (rooms.get(cid).equals("R1")) {
                expected.put(cid, uneven.all().subList(0, QUEUES_A));
            } else {
                r2.add(cid);
            }
        }
        assertEquals(2, r2.size(), java.toString());
        expected.put(r2.get(0), uneven.all().subList(QUEUES_A, QUEUES_A + 2));
        expected.put(r2.get(1), uneven.all().subList(QUEUES_A + 2, QUEUES_A + 3));
        assertEquals(expected, java);
    }

    /**
     * Starts a group of {@link #CONSUMERS} consumers of {@code topic} with {@code strategy}, waits for their
     * rebalance to settle, runs the Rust example with {@code rustName} (and {@code extraArgs},
     * read after the consumers started) for their client ids, asserts that both allocations
     * are the same, and returns the Java one (client id order).
     */
    private Map<String, List<MessageQueue>> agree(Topic topic, AllocateMessageQueueStrategy strategy, String rustName,
        Consumer<DefaultMQPushConsumer> beforeStart, List<String> extraArgs) throws Exception {
        assertEquals(rustName, strategy.getName(), "the Java strategy's own name");
        String group = Clients.unique("AllocGroup_" + rustName.replace('-', '_'));
        List<Member> members = new ArrayList<>();
        for (int i = 0; i < CONSUMERS; i++) {
            members.add(push(Clients.allocatingPushConsumer(perTest, ns.addr(), topic.name(), group, strategy,
                beforeStart)));
        }
        return agree(topic, members, group, rustName, extraArgs);
    }

    /** {@link #agree} for consumers already started. */
    private Map<String, List<MessageQueue>> agree(Topic topic, List<Member> members, String group, String rustName,
        List<String> extraArgs) throws Exception {
        Map<String, List<MessageQueue>> java = settled(topic, members, group);
        Map<String, List<MessageQueue>> rust = rust(topic, rustName, java.keySet(), group, extraArgs);
        if (!java.equals(rust)) {
            throw new AssertionError(rustName + ": the Java consumers and rmq-route-client disagree\n"
                + "  java: " + show(java) + "\n  rust: " + show(rust));
        }
        int compared = java.values().stream().mapToInt(List::size).sum();
        assertEquals(topic.all().size(), compared, "queues compared");
        System.out.println(rustName + " agrees on " + compared + " queues: " + show(java));
        return java;
    }

    /**
     * The consumers' assignments once settled: each sees all {@link #CONSUMERS} client ids of
     * the group, the assignments are disjoint and cover every queue of the topic, and two
     * looks a second apart find the same thing. Keys are client ids in sorted order.
     */
    private Map<String, List<MessageQueue>> settled(Topic topic, List<Member> members, String group) {
        AtomicReference<Map<String, List<MessageQueue>>> last = new AtomicReference<>();
        Poll.untilTrue(seconds(60), 1000, "the rebalance of " + group + " to settle", () -> {
            Map<String, List<MessageQueue>> now = new TreeMap<>();
            for (Member member : members) {
                now.put(member.factory().getClientId(), member.assigned(topic));
            }
            // Every consumer must see exactly the group's members in the broker's list (else
            // some rebalance ran on a partial list and another one is due).
            for (Member member : members) {
                List<String> ids = member.factory().findConsumerIdList(topic.name(), group);
                if (ids == null || ids.size() != CONSUMERS || !now.keySet().equals(Set.copyOf(ids))) {
                    last.set(null);
                    return false;
                }
            }
            List<MessageQueue> union = new ArrayList<>();
            now.values().forEach(union::addAll);
            union.sort(null);
            boolean partition = union.equals(topic.all());
            boolean stable = now.equals(last.getAndSet(now));
            if (!partition) {
                System.out.println(group + " not settled yet: " + show(now));
            }
            return partition && stable;
        });
        return last.get();
    }

    /** A strategy as Java builds it and the Rust example's arguments for the same one. */
    private record Case(String rustName, AllocateMessageQueueStrategy strategy, List<String> rustArgs) {
    }

    /**
     * The strategies alone, without consumers, over many consumer lists: Java's subscribe set
     * of the route (the client's own conversion, sorted as its rebalance sorts) and Java's
     * strategy objects on one side, the Rust example on the other. The lists include ids whose
     * String.compareTo order differs from byte order (numbers, case, and, where the platform
     * passes UTF-8 arguments, characters beyond the BMP), more consumers than queues, and
     * seeded random ones. Results are compared as sets, as both rebalances keep them.
     */
    @Test
    void strategiesAgreeOnManyConsumerLists() throws Exception {
        var route = admin.examineTopicRouteInfo(uneven.name());
        List<MessageQueue> mqAll = new ArrayList<>(MQClientInstance.topicRouteData2TopicSubscribeInfo(uneven.name(),
            route));
        Collections.sort(mqAll);
        assertEquals(uneven.all(), mqAll, "Java's subscribe set");

        int runs = 0;
        int compared = 0;
        for (List<String> cids : consumerLists()) {
            List<String> cidAll = new ArrayList<>(cids);
            Collections.sort(cidAll);
            for (Case c : cases(cids)) {
                Map<String, List<MessageQueue>> java = new TreeMap<>();
                for (String cid : cids) {
                    java.put(cid, new ArrayList<>(new TreeSet<>(c.strategy().allocate("G", cid, mqAll, cidAll))));
                }
                // Unsorted on purpose: the Rust side sorts as Java's rebalance does.
                Map<String, List<MessageQueue>> rust = rust(uneven, c.rustName(), cids, "G", c.rustArgs());
                if (!java.equals(rust)) {
                    throw new AssertionError(c.rustName() + " " + c.rustArgs() + " for " + cids
                        + ": Java and rmq-route-client disagree\n  java: " + show(java) + "\n  rust: " + show(rust));
                }
                runs++;
                compared += java.values().stream().mapToInt(List::size).sum();
            }
        }
        System.out.println("strategies agree in " + runs + " runs, " + compared + " allocated queues compared");
        assertTrue(runs >= 7 * 12, "runs: " + runs);
    }

    private List<List<String>> consumerLists() {
        List<List<String>> lists = new ArrayList<>();
        lists.add(List.of("127.0.0.1@only"));
        lists.add(List.of("127.0.0.1@inst_10", "127.0.0.1@inst_9"));
        lists.add(List.of("a@x", "B@x", "_@x"));
        lists.add(List.of("10.0.0.3@c", "10.0.0.1@a", "10.0.0.2@b"));
        List<String> eight = new ArrayList<>();
        List<String> eleven = new ArrayList<>();
        for (int i = 11; i > 0; i--) {
            eleven.add("192.168.1." + i + "@DEFAULT");
            if (i <= 8) {
                eight.add("192.168.1." + i + "@DEFAULT");
            }
        }
        lists.add(eight);
        lists.add(eleven);
        lists.add(List.of("127.0.0.1@inst_1@STREAM", "127.0.0.1@inst_1", "127.0.0.1@inst_1@unit"));
        // U+FF21 sorts after a surrogate pair in Java (0xFF21 > 0xD83D), before it in UTF-8.
        // Only where arguments reach the Rust process as UTF-8.
        boolean utf8 = Charset.defaultCharset().name().equals("UTF-8")
            && "UTF-8".equalsIgnoreCase(System.getProperty("sun.jnu.encoding", "UTF-8"));
        if (utf8) {
            lists.add(List.of("\uFF21@x", "\uD83D\uDE00@x", "z@x", "\u00E9@x"));
        }
        Random random = new Random(20260401L);
        while (lists.size() < 12 + (utf8 ? 1 : 0)) {
            Set<String> ids = new LinkedHashSet<>();
            int n = 2 + random.nextInt(6);
            while (ids.size() < n) {
                ids.add("10." + random.nextInt(3) + "." + random.nextInt(20) + "." + random.nextInt(256) + "@inst_"
                    + random.nextInt(1000));
            }
            lists.add(new ArrayList<>(ids));
        }
        return lists;
    }

    /** Every strategy of the Java client, set up for {@code cids} where it needs more. */
    private List<Case> cases(List<String> cids) {
        List<Case> cases = new ArrayList<>();
        cases.add(new Case("AVG", new AllocateMessageQueueAveragely(), List.of()));
        cases.add(new Case("AVG_BY_CIRCLE", new AllocateMessageQueueAveragelyByCircle(), List.of()));
        cases.add(new Case("CONSISTENT_HASH", new AllocateMessageQueueConsistentHash(), List.of()));
        cases.add(new Case("CONSISTENT_HASH", new AllocateMessageQueueConsistentHash(3),
            List.of("--virtual-nodes", "3")));
        AllocateMessageQueueByMachineRoom room = new AllocateMessageQueueByMachineRoom();
        room.setConsumeridcs(Set.of("R1"));
        cases.add(new Case("MACHINE_ROOM", room, List.of("--idc", "R1")));
        // Consumers in rooms R1, R2, R3 in turn: R3 has no broker, and with one consumer R2's
        // queues have no local consumer and are shared by everyone.
        Map<String, String> rooms = new HashMap<>(Map.of(BROKER_A, "R1", BROKER_B, "R2"));
        List<String> roomArgs = new ArrayList<>(List.of("--room", BROKER_A + "=R1", "--room", BROKER_B + "=R2"));
        for (int i = 0; i < cids.size(); i++) {
            String r = "R" + (1 + i % 3);
            rooms.put(cids.get(i), r);
            roomArgs.add("--room");
            roomArgs.add(cids.get(i) + "=" + r);
        }
        AllocateMachineRoomNearby.MachineRoomResolver resolver = new AllocateMachineRoomNearby.MachineRoomResolver() {
            @Override
            public String brokerDeployIn(MessageQueue mq) {
                return rooms.get(mq.getBrokerName());
            }

            @Override
            public String consumerDeployIn(String clientId) {
                return rooms.get(clientId);
            }
        };
        cases.add(new Case("MACHINE_ROOM_NEARBY-AVG_BY_CIRCLE",
            new AllocateMachineRoomNearby(new AllocateMessageQueueAveragelyByCircle(), resolver), roomArgs));
        // A configured list naming a queue twice: both sides keep it once.
        AllocateMessageQueueByConfig config = new AllocateMessageQueueByConfig();
        List<MessageQueue> all = uneven.all();
        config.setMessageQueueList(List.of(all.get(7), all.get(0), all.get(7)));
        cases.add(new Case("CONFIG", config, List.of("--config-queue", BROKER_B + ":2", "--config-queue",
            BROKER_A + ":0", "--config-queue", BROKER_B + ":2")));
        return cases;
    }

    /** One started consumer of a group, as far as the comparison needs it. */
    private interface Member {
        /** Its client instance: client id, and the group's consumer list as a broker gives it. */
        MQClientInstance factory();

        /** The queues of {@code topic} it holds now, sorted. */
        List<MessageQueue> assigned(Topic topic);
    }

    /** A push consumer holds what its rebalance put in the process queue table (not dropped). */
    private static Member push(DefaultMQPushConsumer consumer) {
        return new Member() {
            @Override
            public MQClientInstance factory() {
                return consumer.getDefaultMQPushConsumerImpl().getmQClientFactory();
            }

            @Override
            public List<MessageQueue> assigned(Topic topic) {
                TreeSet<MessageQueue> mine = new TreeSet<>();
                for (Map.Entry<MessageQueue, ProcessQueue> e : consumer.getDefaultMQPushConsumerImpl()
                    .getRebalanceImpl().getProcessQueueTable().entrySet()) {
                    if (e.getKey().getTopic().equals(topic.name()) && !e.getValue().isDropped()) {
                        mine.add(e.getKey());
                    }
                }
                return new ArrayList<>(mine);
            }
        };
    }

    /**
     * A subscribing lite pull consumer holds its assigned message queues (what poll() reads).
     * Neither 4.9 nor 5.x exposes the consumer's impl or client instance, hence reflection.
     */
    private static Member lite(DefaultLitePullConsumer consumer) throws ReflectiveOperationException {
        Field implField = DefaultLitePullConsumer.class.getDeclaredField("defaultLitePullConsumerImpl");
        implField.setAccessible(true);
        DefaultLitePullConsumerImpl impl = (DefaultLitePullConsumerImpl) implField.get(consumer);
        Field factoryField = DefaultLitePullConsumerImpl.class.getDeclaredField("mQClientFactory");
        factoryField.setAccessible(true);
        return new Member() {
            @Override
            public MQClientInstance factory() {
                try {
                    return (MQClientInstance) factoryField.get(impl);
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(e);
                }
            }

            @Override
            public List<MessageQueue> assigned(Topic topic) {
                TreeSet<MessageQueue> mine = new TreeSet<>();
                for (MessageQueue mq : impl.getAssignedMessageQueue().getAssignedMessageQueues()) {
                    if (mq.getTopic().equals(topic.name())) {
                        mine.add(mq);
                    }
                }
                return new ArrayList<>(mine);
            }
        };
    }

    /** Runs the Rust example and returns its allocation; its subscribe view must be {@code topic.all()}. */
    private Map<String, List<MessageQueue>> rust(Topic topic, String strategy, Collection<String> clientIds, String group,
        List<String> extraArgs) throws Exception {
        RouteClientAllocate.Answer answer = RouteClientAllocate.run(ns.addr(), topic.name(), strategy, group, clientIds,
            extraArgs);
        assertEquals(topic.all(), answer.queues(), () -> "the Rust subscribe view: " + answer);
        return answer.allocation();
    }

    /** {@code indexes[i]} = positions in {@code topic.all()} of the i-th client id in sorted order. */
    private static Map<String, List<MessageQueue>> expectedByIndex(Topic topic, int[][] indexes,
        Set<String> clientIds) {
        List<String> sorted = new ArrayList<>(new TreeSet<>(clientIds));
        assertEquals(indexes.length, sorted.size(), sorted.toString());
        Map<String, List<MessageQueue>> expected = new TreeMap<>();
        for (int i = 0; i < indexes.length; i++) {
            List<MessageQueue> queues = new ArrayList<>();
            for (int j : indexes[i]) {
                queues.add(topic.all().get(j));
            }
            expected.put(sorted.get(i), queues);
        }
        return expected;
    }

    private static String show(Map<String, List<MessageQueue>> allocation) {
        if (allocation == null) {
            return "null";
        }
        Map<String, List<String>> out = new LinkedHashMap<>();
        allocation.forEach((cid, queues) -> out.put(cid,
            queues.stream().map(q -> q.getBrokerName() + ":" + q.getQueueId()).toList()));
        return out.toString();
    }
}
