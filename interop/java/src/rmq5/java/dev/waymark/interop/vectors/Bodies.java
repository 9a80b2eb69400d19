package dev.waymark.interop.vectors;

import static dev.waymark.interop.vectors.Samples.BROKER_A;
import static dev.waymark.interop.vectors.Samples.BROKER_B;
import static dev.waymark.interop.vectors.Samples.B_MASTER_ADDR;
import static dev.waymark.interop.vectors.Samples.CLUSTER;
import static dev.waymark.interop.vectors.Samples.MASTER_ADDR;
import static dev.waymark.interop.vectors.Samples.ORDER_CONF;
import static dev.waymark.interop.vectors.Samples.ORDER_NAMESPACE;
import static dev.waymark.interop.vectors.Samples.ORDER_TOPIC;
import static dev.waymark.interop.vectors.Samples.SLAVE_ADDR;
import static dev.waymark.interop.vectors.Samples.ESCAPING_EXAMPLE;
import static dev.waymark.interop.vectors.Samples.STRANGE;
import static dev.waymark.interop.vectors.Samples.STRANGE_NAME;
import static dev.waymark.interop.vectors.Samples.TIMESTAMP;
import static dev.waymark.interop.vectors.Samples.TOPIC;

import dev.waymark.interop.compat.Json;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.TopicFilterType;
import org.apache.rocketmq.namesrv.kvconfig.KVConfigSerializeWrapper;
import org.apache.rocketmq.remoting.protocol.DataVersion;
import org.apache.rocketmq.remoting.protocol.body.BrokerMemberGroup;
import org.apache.rocketmq.remoting.protocol.body.ClusterInfo;
import org.apache.rocketmq.remoting.protocol.body.GetBrokerMemberGroupResponseBody;
import org.apache.rocketmq.remoting.protocol.body.KVTable;
import org.apache.rocketmq.remoting.protocol.body.RegisterBrokerBody;
import org.apache.rocketmq.remoting.protocol.body.TopicConfigAndMappingSerializeWrapper;
import org.apache.rocketmq.remoting.protocol.body.TopicList;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.apache.rocketmq.remoting.protocol.route.QueueData;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;
import org.apache.rocketmq.remoting.protocol.statictopic.LogicQueueMappingItem;
import org.apache.rocketmq.remoting.protocol.statictopic.TopicQueueMappingDetail;
import org.apache.rocketmq.remoting.protocol.statictopic.TopicQueueMappingInfo;

/**
 * Bodies built with the real 5.x classes and serialized the way the NameServer and the
 * broker serialize them: {@code encode()} (default dialect), {@link Json#standard} (the
 * route handler's standard JSON), {@code RegisterBrokerBody.encode(compress)} and, for
 * the KV file, {@code toJson()}.
 */
public final class Bodies {
    private Bodies() {
    }

    // ---- building blocks ----------------------------------------------------------------

    static DataVersion dataVersion(long counter, long stateVersion) {
        DataVersion version = new DataVersion();
        version.setTimestamp(TIMESTAMP);
        version.setStateVersion(stateVersion);
        version.setCounter(new AtomicLong(counter));
        return version;
    }

    static BrokerData brokerData(String cluster, String name, Map<Long, String> addrs, String zone) {
        BrokerData data = new BrokerData(cluster, name, new HashMap<>(addrs));
        data.setZoneName(zone);
        return data;
    }

    static QueueData queueData(String broker, int read, int write, int perm, int sysFlag) {
        QueueData data = new QueueData();
        data.setBrokerName(broker);
        data.setReadQueueNums(read);
        data.setWriteQueueNums(write);
        data.setPerm(perm);
        data.setTopicSysFlag(sysFlag);
        return data;
    }

    static TopicQueueMappingInfo mappingInfo(String topic, String broker, Map<Integer, Integer> ids) {
        TopicQueueMappingInfo info = new TopicQueueMappingInfo(topic, 4, broker, 1L);
        info.getCurrIdMap().putAll(ids);
        return info;
    }

    static TopicRouteData route(List<BrokerData> brokers, List<QueueData> queues) {
        TopicRouteData route = new TopicRouteData();
        route.setBrokerDatas(new ArrayList<>(brokers));
        route.setQueueDatas(new ArrayList<>(queues));
        return route;
    }

    // ---- bodies the frames use ------------------------------------------------------------

    /** The reference route: one master, four queues. */
    static TopicRouteData simpleRoute() {
        return route(List.of(brokerData(CLUSTER, BROKER_A, Maps.of(0L, MASTER_ADDR), null)),
            List.of(queueData(BROKER_A, 4, 4, 6, 0)));
    }

    public static byte[] routeSimple(boolean standard) {
        return standard ? Json.standard(simpleRoute()) : simpleRoute().encode();
    }

    /** The reference registration: DataVersion counter 3 at {@link Samples#TIMESTAMP}, topic TopicTest 4/4/6. */
    static RegisterBrokerBody referenceRegisterBody() {
        TopicConfigAndMappingSerializeWrapper wrapper = new TopicConfigAndMappingSerializeWrapper();
        wrapper.setDataVersion(dataVersion(3, 0));
        wrapper.setMappingDataVersion(dataVersion(0, 0));
        wrapper.getTopicConfigTable().put(TOPIC, new TopicConfig(TOPIC, 4, 4, 6));
        RegisterBrokerBody body = new RegisterBrokerBody();
        body.setTopicConfigSerializeWrapper(wrapper);
        return body;
    }

    public static byte[] registerBrokerReference(boolean compressed) {
        return referenceRegisterBody().encode(compressed);
    }

    /**
     * A registration a real broker could send: several topics (the 5.x NameServer refuses a
     * broker's first registration when it carries exactly one, taking it for an incremental one).
     */
    public static byte[] registerBrokerMulti(boolean compressed) {
        return multiRegisterBody().encode(compressed);
    }

    /** REGISTER_TOPIC_IN_NAMESRV body as a 5.x broker sends it: queue data only. */
    public static byte[] registerTopicRoute() {
        return route(List.of(), List.of(queueData(BROKER_A, 8, 8, 6, 0))).encode();
    }

    public static byte[] kvTable(String key, String value) {
        KVTable table = new KVTable();
        table.getTable().put(key, value);
        return table.encode();
    }

    public static byte[] dataVersionReference() {
        return dataVersion(3, 0).encode();
    }

    static ClusterInfo referenceClusterInfo() {
        ClusterInfo info = new ClusterInfo();
        Map<String, BrokerData> brokers = new HashMap<>();
        brokers.put(BROKER_A, brokerData(CLUSTER, BROKER_A, Maps.of(0L, MASTER_ADDR, 1L, SLAVE_ADDR), null));
        info.setBrokerAddrTable(brokers);
        Map<String, Set<String>> clusters = new HashMap<>();
        clusters.put(CLUSTER, new HashSet<>(List.of(BROKER_A)));
        info.setClusterAddrTable(clusters);
        return info;
    }

    public static byte[] clusterInfoReference() {
        return referenceClusterInfo().encode();
    }

    public static byte[] topicList(String brokerAddr, String... topics) {
        TopicList list = new TopicList();
        list.getTopicList().addAll(Arrays.asList(topics));
        list.setBrokerAddr(brokerAddr);
        return list.encode();
    }

    /** A master and its slave of broker-a. Null on 4.x, which has no member groups. */
    public static byte[] memberGroupReference() {
        return memberGroup(Maps.of(0L, MASTER_ADDR, 1L, SLAVE_ADDR));
    }

    static byte[] memberGroup(Map<Long, String> addrs) {
        BrokerMemberGroup group = new BrokerMemberGroup(CLUSTER, BROKER_A);
        group.getBrokerAddrs().putAll(addrs);
        GetBrokerMemberGroupResponseBody body = new GetBrokerMemberGroupResponseBody();
        body.setBrokerMemberGroup(group);
        return body.encode();
    }

    // ---- the body vector files ---------------------------------------------------------------

    public static List<Body> all(String tag) {
        BodySet set = new BodySet(tag);
        routes(set);
        registerBodies(set);
        clusterInfos(set);
        set.json("219_kv_table_single", "KVTable", "default", kvTable(ORDER_TOPIC, ORDER_CONF));
        set.json("219_kv_table_empty", "KVTable", "default", new KVTable().encode());
        set.json("219_kv_table_strange", "KVTable", "default", kvTable(STRANGE_NAME, STRANGE));
        KVTable multi = new KVTable();
        multi.getTable().put(ORDER_TOPIC, ORDER_CONF);
        multi.getTable().put("TopicOrder2", "broker-a:8");
        multi.getTable().put("TopicOrder3", "broker-b:2");
        set.json("219_kv_table_multi", "KVTable", "default", multi.encode());

        set.json("901_member_group_two", "GetBrokerMemberGroupResponseBody", "default", memberGroupReference());
        set.json("901_member_group_single", "GetBrokerMemberGroupResponseBody", "default",
            memberGroup(Maps.of(0L, MASTER_ADDR)));
        set.json("901_member_group_unknown", "GetBrokerMemberGroupResponseBody", "default", memberGroup(Maps.of()));

        set.json("206_topic_list_single", "TopicList", "default", topicList(null, TOPIC));
        set.json("206_topic_list_empty", "TopicList", "default", topicList(null));
        set.json("206_topic_list_multi", "TopicList", "default",
            topicList(null, TOPIC, "TBW102", "%RETRY%group-1", "rmq_sys_SYNC_BROKER_MEMBER_broker-a"));
        set.json("304_system_topic_list", "TopicList", "default", topicList(MASTER_ADDR, BROKER_A));
        set.json("304_system_topic_list_multi", "TopicList", "default",
            topicList(MASTER_ADDR, BROKER_A, CLUSTER));
        set.json("206_topic_list_strange", "TopicList", "default", topicList(STRANGE, STRANGE_NAME));

        set.json("322_data_version", "DataVersion", "default", dataVersionReference());
        set.json("322_data_version_state", "DataVersion", "default", dataVersion(12, 5).encode());
        set.json("322_data_version_zero", "DataVersion", "default", zeroDataVersion().encode());

        set.json("file_kv_config_single", "KVConfigSerializeWrapper", "default",
            kvFile(Maps.of(ORDER_NAMESPACE, Maps.of(ORDER_TOPIC, ORDER_CONF))));
        set.json("file_kv_config_multi", "KVConfigSerializeWrapper", "default",
            kvFile(Maps.of(ORDER_NAMESPACE, Maps.of(ORDER_TOPIC, ORDER_CONF, "TopicOrder2", "broker-a:8"),
                "ns-2", Maps.of("k", "v"))));
        set.json("file_kv_config_strange", "KVConfigSerializeWrapper", "default",
            kvFile(Maps.of(STRANGE_NAME, Maps.of(STRANGE_NAME, STRANGE))));
        return set.list();
    }

    static DataVersion zeroDataVersion() {
        DataVersion version = dataVersion(0, 0);
        version.setTimestamp(0L);
        return version;
    }

    static byte[] kvFile(Map<String, Map<String, String>> tables) {
        HashMap<String, HashMap<String, String>> configTable = new HashMap<>();
        tables.forEach((ns, table) -> configTable.put(ns, new HashMap<>(table)));
        KVConfigSerializeWrapper wrapper = new KVConfigSerializeWrapper();
        wrapper.setConfigTable(configTable);
        return wrapper.toJson().getBytes(StandardCharsets.UTF_8);
    }

    private static void routes(BodySet set) {
        both(set, "105_route_simple", simpleRoute());

        // A richer route: slave, zone, order conf, static-topic mapping, and a
        // filter-server entry whose list is null (so it is omitted).
        TopicRouteData rich = route(
            List.of(brokerData(CLUSTER, BROKER_A, Maps.of(0L, MASTER_ADDR, 1L, SLAVE_ADDR), "zone-1")),
            List.of(queueData(BROKER_A, 4, 4, 6, 0)));
        rich.getFilterServerTable().put(MASTER_ADDR, null);
        rich.setOrderTopicConf("broker-a:4");
        Map<String, TopicQueueMappingInfo> mapping = new HashMap<>();
        mapping.put(BROKER_A, mappingInfo("StaticTopic", BROKER_A, Maps.of(0, 0, 1, 1)));
        rich.setTopicQueueMappingByBroker(mapping);
        both(set, "105_route_rich", rich);

        // Single-entry maps only, so both dialects are byte-exact.
        TopicRouteData single = route(
            List.of(brokerData(CLUSTER, BROKER_A, Maps.of(1L, SLAVE_ADDR), "zone-1")),
            List.of(queueData(BROKER_A, 8, 4, 4, 1)));
        single.getFilterServerTable().put(MASTER_ADDR, List.of("127.0.0.1:30000"));
        single.setOrderTopicConf(ORDER_CONF);
        Map<String, TopicQueueMappingInfo> singleMapping = new HashMap<>();
        singleMapping.put(BROKER_A, mappingInfo("StaticTopic", BROKER_A, Maps.of(2, 0)));
        single.setTopicQueueMappingByBroker(singleMapping);
        both(set, "105_route_single_entries", single);

        // Several groups and map keys whose hash order differs from sorted order
        // (HashMap<Long> iterates 0, 16, 1; String keys "127.0.0.10:..." vs "127.0.0.2:...").
        BrokerData a = brokerData(CLUSTER, BROKER_A, Maps.of(0L, MASTER_ADDR, 1L, SLAVE_ADDR, 16L, "127.0.0.1:10931"),
            "zone-1");
        a.setEnableActingMaster(true);
        TopicRouteData multi = route(
            List.of(a, brokerData(CLUSTER, BROKER_B, Maps.of(0L, B_MASTER_ADDR), "zone-2")),
            List.of(queueData(BROKER_A, 4, 4, 6, 0), queueData(BROKER_B, 8, 8, 2, 0)));
        multi.getFilterServerTable().put("127.0.0.2:10911", List.of("127.0.0.2:30000"));
        multi.getFilterServerTable().put("127.0.0.10:10911", List.of("127.0.0.10:30000", "127.0.0.10:30001"));
        multi.getFilterServerTable().put(MASTER_ADDR, List.of());
        both(set, "105_route_multi", multi);

        // Escaping: the escaping example, then every special character, in names and values.
        TopicRouteData escaping = route(List.of(brokerData(CLUSTER, BROKER_A, Maps.of(0L, MASTER_ADDR), ESCAPING_EXAMPLE)),
            List.of(queueData(BROKER_A, 4, 4, 6, 0)));
        both(set, "105_route_escaping_example", escaping);
        TopicRouteData strange = route(
            List.of(brokerData(STRANGE_NAME, STRANGE_NAME, Maps.of(0L, STRANGE), STRANGE)),
            List.of(queueData(STRANGE_NAME, 4, 4, 6, 0)));
        strange.setOrderTopicConf(STRANGE);
        strange.getFilterServerTable().put(STRANGE_NAME, List.of(STRANGE));
        both(set, "105_route_strange", strange);

        // A long beyond 2^53: BrowserCompatible (standard dialect) writes it as a string.
        TopicRouteData large = simpleRoute();
        Map<String, TopicQueueMappingInfo> largeMapping = new HashMap<>();
        TopicQueueMappingInfo largeInfo = mappingInfo("StaticTopic", BROKER_A, Maps.of(-1, 3));
        largeInfo.setEpoch(9_007_199_254_740_993L);
        largeMapping.put(BROKER_A, largeInfo);
        large.setTopicQueueMappingByBroker(largeMapping);
        both(set, "105_route_large_epoch", large);

        // pickupTopicRouteData never returns an empty route, but REGISTER_TOPIC bodies look like this.
        set.json("217_register_topic_route", "TopicRouteData", "default", registerTopicRoute());
        set.json("105_route_empty", "TopicRouteData", "default", new TopicRouteData().encode());
    }

    private static void both(BodySet set, String base, TopicRouteData route) {
        set.json(base + "_default", "TopicRouteData", "default", route.encode());
        set.json(base + "_standard", "TopicRouteData", "standard", Json.standard(route));
    }

    private static void registerBodies(BodySet set) {
        set.json("103_register_broker_body", "RegisterBrokerBody", "json", registerBrokerReference(false));
        set.bin("103_register_broker_body_compressed", "RegisterBrokerBody", "compressed", registerBrokerReference(true));

        RegisterBrokerBody mapped = mappedRegisterBody();
        set.json("103_register_broker_body_static_topic", "RegisterBrokerBody", "json", mapped.encode(false));
        set.bin("103_register_broker_body_static_topic_compressed", "RegisterBrokerBody", "compressed",
            mapped.encode(true));

        RegisterBrokerBody multi = multiRegisterBody();
        set.json("103_register_broker_body_multi", "RegisterBrokerBody", "json", multi.encode(false));
        set.bin("103_register_broker_body_multi_compressed", "RegisterBrokerBody", "compressed",
            multi.encode(true));

        RegisterBrokerBody empty = new RegisterBrokerBody();
        empty.getTopicConfigSerializeWrapper().setDataVersion(zeroDataVersion());
        empty.getTopicConfigSerializeWrapper().setMappingDataVersion(zeroDataVersion());
        set.json("103_register_broker_body_empty", "RegisterBrokerBody", "json", empty.encode(false));
        set.bin("103_register_broker_body_empty_compressed", "RegisterBrokerBody", "compressed", empty.encode(true));

        TopicConfigAndMappingSerializeWrapper wrapper = new TopicConfigAndMappingSerializeWrapper();
        wrapper.setDataVersion(dataVersion(1, 0));
        wrapper.setMappingDataVersion(dataVersion(0, 0));
        TopicConfig config = new TopicConfig(STRANGE_NAME, 4, 4, 6);
        config.getAttributes().put(STRANGE_NAME, STRANGE);
        wrapper.getTopicConfigTable().put(STRANGE_NAME, config);
        RegisterBrokerBody strange = new RegisterBrokerBody();
        strange.setTopicConfigSerializeWrapper(wrapper);
        strange.getFilterServerList().add(STRANGE);
        set.json("103_register_broker_body_strange", "RegisterBrokerBody", "json", strange.encode(false));
    }

    /** One static topic: mapping info and detail (with hosted queues), 5.x only. */
    static RegisterBrokerBody mappedRegisterBody() {
        RegisterBrokerBody body = referenceRegisterBody();
        TopicConfigAndMappingSerializeWrapper wrapper =
            (TopicConfigAndMappingSerializeWrapper) body.getTopicConfigSerializeWrapper();
        wrapper.getTopicConfigTable().clear();
        wrapper.getTopicConfigTable().put("StaticTopic", new TopicConfig("StaticTopic", 2, 2, 6));
        wrapper.setMappingDataVersion(dataVersion(2, 0));
        wrapper.getTopicQueueMappingInfoMap().put("StaticTopic", mappingInfo("StaticTopic", BROKER_A, Maps.of(0, 0)));
        TopicQueueMappingDetail detail = new TopicQueueMappingDetail("StaticTopic", 4, BROKER_A, 1L);
        detail.getHostedQueues().put(0, List.of(new LogicQueueMappingItem(0, 0, BROKER_A, 0L, 0L, -1L, -1L, -1L)));
        wrapper.getTopicQueueMappingDetailMap().put("StaticTopic", detail);
        return body;
    }

    /** Several topics with filter types, order flag, system flag and attributes. */
    static RegisterBrokerBody multiRegisterBody() {
        RegisterBrokerBody body = referenceRegisterBody();
        TopicConfigAndMappingSerializeWrapper wrapper =
            (TopicConfigAndMappingSerializeWrapper) body.getTopicConfigSerializeWrapper();
        TopicConfig order = new TopicConfig(ORDER_TOPIC, 8, 8, 6);
        order.setOrder(true);
        order.setTopicFilterType(TopicFilterType.MULTI_TAG);
        order.getAttributes().put("message.type", "FIFO");
        wrapper.getTopicConfigTable().put(ORDER_TOPIC, order);
        TopicConfig system = new TopicConfig(CLUSTER, 16, 16, 7, 0);
        wrapper.getTopicConfigTable().put(CLUSTER, system);
        TopicConfig unit = new TopicConfig("%RETRY%group-1", 1, 1, 6, 3);
        wrapper.getTopicConfigTable().put("%RETRY%group-1", unit);
        return body;
    }

    private static void clusterInfos(BodySet set) {
        set.json("106_cluster_info", "ClusterInfo", "default", clusterInfoReference());
        ClusterInfo empty = new ClusterInfo();
        empty.setBrokerAddrTable(new HashMap<>());
        empty.setClusterAddrTable(new HashMap<>());
        set.json("106_cluster_info_empty", "ClusterInfo", "default", empty.encode());

        ClusterInfo single = new ClusterInfo();
        single.setBrokerAddrTable(new HashMap<>(Maps.of(BROKER_A,
            brokerData(CLUSTER, BROKER_A, Maps.of(0L, MASTER_ADDR), "zone-1"))));
        single.setClusterAddrTable(new HashMap<>(Maps.of(CLUSTER, new HashSet<>(List.of(BROKER_A)))));
        set.json("106_cluster_info_single", "ClusterInfo", "default", single.encode());

        ClusterInfo multi = new ClusterInfo();
        Map<String, BrokerData> brokers = new HashMap<>();
        brokers.put(BROKER_A, brokerData(CLUSTER, BROKER_A, Maps.of(0L, MASTER_ADDR, 1L, SLAVE_ADDR), "zone-1"));
        brokers.put(BROKER_B, brokerData(CLUSTER, BROKER_B, Maps.of(0L, B_MASTER_ADDR), "zone-2"));
        brokers.put("broker-c", brokerData("OtherCluster", "broker-c", Maps.of(0L, "127.0.0.3:10911"), null));
        multi.setBrokerAddrTable(brokers);
        Map<String, Set<String>> clusters = new HashMap<>();
        clusters.put(CLUSTER, new HashSet<>(List.of(BROKER_A, BROKER_B)));
        clusters.put("OtherCluster", new HashSet<>(List.of("broker-c")));
        multi.setClusterAddrTable(clusters);
        set.json("106_cluster_info_multi", "ClusterInfo", "default", multi.encode());

        ClusterInfo strange = new ClusterInfo();
        strange.setBrokerAddrTable(new HashMap<>(Maps.of(STRANGE_NAME,
            brokerData(STRANGE_NAME, STRANGE_NAME, Maps.of(0L, STRANGE), STRANGE))));
        strange.setClusterAddrTable(new HashMap<>(Maps.of(STRANGE_NAME, new HashSet<>(List.of(STRANGE_NAME)))));
        set.json("106_cluster_info_strange", "ClusterInfo", "default", strange.encode());
    }
}
