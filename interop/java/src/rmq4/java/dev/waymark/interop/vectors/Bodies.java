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
import org.apache.rocketmq.common.DataVersion;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.TopicFilterType;
import org.apache.rocketmq.common.protocol.body.ClusterInfo;
import org.apache.rocketmq.common.protocol.body.KVTable;
import org.apache.rocketmq.common.protocol.body.RegisterBrokerBody;
import org.apache.rocketmq.common.protocol.body.TopicConfigSerializeWrapper;
import org.apache.rocketmq.common.protocol.body.TopicList;
import org.apache.rocketmq.common.protocol.route.BrokerData;
import org.apache.rocketmq.common.protocol.route.QueueData;
import org.apache.rocketmq.common.protocol.route.TopicRouteData;
import org.apache.rocketmq.namesrv.kvconfig.KVConfigSerializeWrapper;

/**
 * Bodies built with the real 4.9.8 classes (packages {@code org.apache.rocketmq.common.*}):
 * no zoneName / enableActingMaster, no static-topic mapping, no DataVersion.stateVersion,
 * no TopicConfig attributes, no member groups.
 */
public final class Bodies {
    private Bodies() {
    }

    static DataVersion dataVersion(long counter) {
        DataVersion version = new DataVersion();
        version.setTimestamp(TIMESTAMP);
        version.setCounter(new AtomicLong(counter));
        return version;
    }

    static BrokerData brokerData(String cluster, String name, Map<Long, String> addrs) {
        return new BrokerData(cluster, name, new HashMap<>(addrs));
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

    /** As 4.9.8 {@code RouteInfoManager.pickupTopicRouteData} fills it. */
    static TopicRouteData route(List<BrokerData> brokers, List<QueueData> queues) {
        TopicRouteData route = new TopicRouteData();
        route.setBrokerDatas(new ArrayList<>(brokers));
        route.setQueueDatas(new ArrayList<>(queues));
        route.setFilterServerTable(new HashMap<>());
        return route;
    }

    static TopicRouteData simpleRoute() {
        return route(List.of(brokerData(CLUSTER, BROKER_A, Maps.of(0L, MASTER_ADDR))),
            List.of(queueData(BROKER_A, 4, 4, 6, 0)));
    }

    public static byte[] routeSimple(boolean standard) {
        return standard ? Json.standard(simpleRoute()) : simpleRoute().encode();
    }

    static RegisterBrokerBody referenceRegisterBody() {
        TopicConfigSerializeWrapper wrapper = new TopicConfigSerializeWrapper();
        wrapper.setDataVersion(dataVersion(3));
        wrapper.getTopicConfigTable().put(TOPIC, new TopicConfig(TOPIC, 4, 4, 6));
        RegisterBrokerBody body = new RegisterBrokerBody();
        body.setTopicConfigSerializeWrapper(wrapper);
        return body;
    }

    public static byte[] registerBrokerReference(boolean compressed) {
        return referenceRegisterBody().encode(compressed);
    }

    /** A registration with several topics, as real brokers send; same content as the 5.x one. */
    public static byte[] registerBrokerMulti(boolean compressed) {
        RegisterBrokerBody body = referenceRegisterBody();
        TopicConfig order = new TopicConfig(ORDER_TOPIC, 8, 8, 6);
        order.setOrder(true);
        body.getTopicConfigSerializeWrapper().getTopicConfigTable().put(ORDER_TOPIC, order);
        body.getTopicConfigSerializeWrapper().getTopicConfigTable().put(CLUSTER, new TopicConfig(CLUSTER, 16, 16, 7));
        TopicConfig unit = new TopicConfig("%RETRY%group-1", 1, 1, 6);
        unit.setTopicSysFlag(3);
        body.getTopicConfigSerializeWrapper().getTopicConfigTable().put("%RETRY%group-1", unit);
        return body.encode(compressed);
    }

    public static byte[] kvTable(String key, String value) {
        KVTable table = new KVTable();
        table.getTable().put(key, value);
        return table.encode();
    }

    public static byte[] dataVersionReference() {
        return dataVersion(3).encode();
    }

    public static byte[] clusterInfoReference() {
        ClusterInfo info = new ClusterInfo();
        HashMap<String, BrokerData> brokers = new HashMap<>();
        brokers.put(BROKER_A, brokerData(CLUSTER, BROKER_A, Maps.of(0L, MASTER_ADDR, 1L, SLAVE_ADDR)));
        info.setBrokerAddrTable(brokers);
        HashMap<String, Set<String>> clusters = new HashMap<>();
        clusters.put(CLUSTER, new HashSet<>(List.of(BROKER_A)));
        info.setClusterAddrTable(clusters);
        return info.encode();
    }

    public static byte[] topicList(String brokerAddr, String... topics) {
        TopicList list = new TopicList();
        list.getTopicList().addAll(Arrays.asList(topics));
        list.setBrokerAddr(brokerAddr);
        return list.encode();
    }

    /** 4.x has no GET_BROKER_MEMBER_GROUP. */
    public static byte[] memberGroupReference() {
        return null;
    }

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

        set.json("206_topic_list_single", "TopicList", "default", topicList(null, TOPIC));
        set.json("206_topic_list_empty", "TopicList", "default", topicList(null));
        set.json("206_topic_list_multi", "TopicList", "default",
            topicList(null, TOPIC, "TBW102", "%RETRY%group-1", "SELF_TEST_TOPIC"));
        set.json("304_system_topic_list", "TopicList", "default", topicList(MASTER_ADDR, BROKER_A));
        set.json("304_system_topic_list_multi", "TopicList", "default",
            topicList(MASTER_ADDR, BROKER_A, CLUSTER));
        set.json("206_topic_list_strange", "TopicList", "default", topicList(STRANGE, STRANGE_NAME));

        set.json("322_data_version", "DataVersion", "default", dataVersionReference());
        DataVersion zero = dataVersion(0);
        zero.setTimestamp(0L);
        set.json("322_data_version_zero", "DataVersion", "default", zero.encode());

        set.json("file_kv_config_single", "KVConfigSerializeWrapper", "default",
            kvFile(Maps.of(ORDER_NAMESPACE, Maps.of(ORDER_TOPIC, ORDER_CONF))));
        set.json("file_kv_config_multi", "KVConfigSerializeWrapper", "default",
            kvFile(Maps.of(ORDER_NAMESPACE, Maps.of(ORDER_TOPIC, ORDER_CONF, "TopicOrder2", "broker-a:8"),
                "ns-2", Maps.of("k", "v"))));
        set.json("file_kv_config_strange", "KVConfigSerializeWrapper", "default",
            kvFile(Maps.of(STRANGE_NAME, Maps.of(STRANGE_NAME, STRANGE))));
        return set.list();
    }

    static byte[] kvFile(Map<String, ? extends Map<String, String>> tables) {
        HashMap<String, HashMap<String, String>> configTable = new HashMap<>();
        tables.forEach((ns, table) -> configTable.put(ns, new HashMap<>(table)));
        KVConfigSerializeWrapper wrapper = new KVConfigSerializeWrapper();
        wrapper.setConfigTable(configTable);
        return wrapper.toJson().getBytes(StandardCharsets.UTF_8);
    }

    private static void routes(BodySet set) {
        both(set, "105_route_simple", simpleRoute());

        TopicRouteData rich = route(
            List.of(brokerData(CLUSTER, BROKER_A, Maps.of(0L, MASTER_ADDR, 1L, SLAVE_ADDR))),
            List.of(queueData(BROKER_A, 4, 4, 6, 0)));
        rich.getFilterServerTable().put(MASTER_ADDR, null);
        rich.setOrderTopicConf("broker-a:4");
        both(set, "105_route_rich", rich);

        TopicRouteData single = route(List.of(brokerData(CLUSTER, BROKER_A, Maps.of(1L, SLAVE_ADDR))),
            List.of(queueData(BROKER_A, 8, 4, 4, 1)));
        single.getFilterServerTable().put(MASTER_ADDR, List.of("127.0.0.1:30000"));
        single.setOrderTopicConf(ORDER_CONF);
        both(set, "105_route_single_entries", single);

        TopicRouteData multi = route(
            List.of(brokerData(CLUSTER, BROKER_A, Maps.of(0L, MASTER_ADDR, 1L, SLAVE_ADDR, 16L, "127.0.0.1:10931")),
                brokerData(CLUSTER, BROKER_B, Maps.of(0L, B_MASTER_ADDR))),
            List.of(queueData(BROKER_A, 4, 4, 6, 0), queueData(BROKER_B, 8, 8, 2, 0)));
        multi.getFilterServerTable().put("127.0.0.2:10911", List.of("127.0.0.2:30000"));
        multi.getFilterServerTable().put("127.0.0.10:10911", List.of("127.0.0.10:30000", "127.0.0.10:30001"));
        multi.getFilterServerTable().put(MASTER_ADDR, List.of());
        both(set, "105_route_multi", multi);

        TopicRouteData escaping = route(List.of(brokerData(ESCAPING_EXAMPLE, BROKER_A, Maps.of(0L, MASTER_ADDR))),
            List.of(queueData(BROKER_A, 4, 4, 6, 0)));
        both(set, "105_route_escaping_example", escaping);
        TopicRouteData strange = route(List.of(brokerData(STRANGE_NAME, STRANGE_NAME, Maps.of(0L, STRANGE))),
            List.of(queueData(STRANGE_NAME, 4, 4, 6, 0)));
        strange.setOrderTopicConf(STRANGE);
        strange.getFilterServerTable().put(STRANGE_NAME, List.of(STRANGE));
        both(set, "105_route_strange", strange);
    }

    private static void both(BodySet set, String base, TopicRouteData route) {
        set.json(base + "_default", "TopicRouteData", "default", route.encode());
        set.json(base + "_standard", "TopicRouteData", "standard", Json.standard(route));
    }

    private static void registerBodies(BodySet set) {
        set.json("103_register_broker_body", "RegisterBrokerBody", "json", registerBrokerReference(false));
        set.bin("103_register_broker_body_compressed", "RegisterBrokerBody", "compressed", registerBrokerReference(true));

        RegisterBrokerBody multi = referenceRegisterBody();
        TopicConfig order = new TopicConfig(ORDER_TOPIC, 8, 8, 6);
        order.setOrder(true);
        order.setTopicFilterType(TopicFilterType.MULTI_TAG);
        multi.getTopicConfigSerializeWrapper().getTopicConfigTable().put(ORDER_TOPIC, order);
        TopicConfig system = new TopicConfig(CLUSTER, 16, 16, 7);
        multi.getTopicConfigSerializeWrapper().getTopicConfigTable().put(CLUSTER, system);
        TopicConfig unit = new TopicConfig("%RETRY%group-1", 1, 1, 6);
        unit.setTopicSysFlag(3);
        multi.getTopicConfigSerializeWrapper().getTopicConfigTable().put("%RETRY%group-1", unit);
        multi.getFilterServerList().add("127.0.0.1:30000");
        set.json("103_register_broker_body_multi", "RegisterBrokerBody", "json", multi.encode(false));
        set.bin("103_register_broker_body_multi_compressed", "RegisterBrokerBody", "compressed",
            multi.encode(true));

        RegisterBrokerBody empty = new RegisterBrokerBody();
        empty.getTopicConfigSerializeWrapper().setDataVersion(dataVersion(0));
        empty.getTopicConfigSerializeWrapper().getDataVersion().setTimestamp(0L);
        set.json("103_register_broker_body_empty", "RegisterBrokerBody", "json", empty.encode(false));
        set.bin("103_register_broker_body_empty_compressed", "RegisterBrokerBody", "compressed", empty.encode(true));

        RegisterBrokerBody strange = new RegisterBrokerBody();
        strange.getTopicConfigSerializeWrapper().setDataVersion(dataVersion(1));
        strange.getTopicConfigSerializeWrapper().getTopicConfigTable()
            .put(STRANGE_NAME, new TopicConfig(STRANGE_NAME, 4, 4, 6));
        strange.getFilterServerList().add(STRANGE);
        set.json("103_register_broker_body_strange", "RegisterBrokerBody", "json", strange.encode(false));
    }

    private static void clusterInfos(BodySet set) {
        set.json("106_cluster_info", "ClusterInfo", "default", clusterInfoReference());
        ClusterInfo empty = new ClusterInfo();
        empty.setBrokerAddrTable(new HashMap<>());
        empty.setClusterAddrTable(new HashMap<>());
        set.json("106_cluster_info_empty", "ClusterInfo", "default", empty.encode());

        ClusterInfo single = new ClusterInfo();
        single.setBrokerAddrTable(new HashMap<>(Maps.of(BROKER_A, brokerData(CLUSTER, BROKER_A, Maps.of(0L, MASTER_ADDR)))));
        single.setClusterAddrTable(new HashMap<>(Maps.of(CLUSTER, (Set<String>) new HashSet<>(List.of(BROKER_A)))));
        set.json("106_cluster_info_single", "ClusterInfo", "default", single.encode());

        ClusterInfo multi = new ClusterInfo();
        HashMap<String, BrokerData> brokers = new HashMap<>();
        brokers.put(BROKER_A, brokerData(CLUSTER, BROKER_A, Maps.of(0L, MASTER_ADDR, 1L, SLAVE_ADDR)));
        brokers.put(BROKER_B, brokerData(CLUSTER, BROKER_B, Maps.of(0L, B_MASTER_ADDR)));
        brokers.put("broker-c", brokerData("OtherCluster", "broker-c", Maps.of(0L, "127.0.0.3:10911")));
        multi.setBrokerAddrTable(brokers);
        HashMap<String, Set<String>> clusters = new HashMap<>();
        clusters.put(CLUSTER, new HashSet<>(List.of(BROKER_A, BROKER_B)));
        clusters.put("OtherCluster", new HashSet<>(List.of("broker-c")));
        multi.setClusterAddrTable(clusters);
        set.json("106_cluster_info_multi", "ClusterInfo", "default", multi.encode());

        ClusterInfo strange = new ClusterInfo();
        strange.setBrokerAddrTable(new HashMap<>(Maps.of(STRANGE_NAME,
            brokerData(STRANGE_NAME, STRANGE_NAME, Maps.of(0L, STRANGE)))));
        strange.setClusterAddrTable(new HashMap<>(Maps.of(STRANGE_NAME,
            (Set<String>) new HashSet<>(List.of(STRANGE_NAME)))));
        set.json("106_cluster_info_strange", "ClusterInfo", "default", strange.encode());
    }
}
