package dev.waymark.interop.vectors;

import static dev.waymark.interop.vectors.Samples.BROKER_A;
import static dev.waymark.interop.vectors.Samples.CLUSTER;
import static dev.waymark.interop.vectors.Samples.HA_ADDR;
import static dev.waymark.interop.vectors.Samples.MASTER_ADDR;
import static dev.waymark.interop.vectors.Samples.ORDER_CONF;
import static dev.waymark.interop.vectors.Samples.ORDER_NAMESPACE;
import static dev.waymark.interop.vectors.Samples.ORDER_TOPIC;
import static dev.waymark.interop.vectors.Samples.SLAVE_ADDR;
import static dev.waymark.interop.vectors.Samples.TOPIC;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.rocketmq.common.UtilAll;
import org.apache.rocketmq.common.protocol.RequestCode;
import org.apache.rocketmq.common.protocol.header.GetTopicsByClusterRequestHeader;
import org.apache.rocketmq.common.protocol.header.namesrv.AddWritePermOfBrokerRequestHeader;
import org.apache.rocketmq.common.protocol.header.namesrv.AddWritePermOfBrokerResponseHeader;
import org.apache.rocketmq.common.protocol.header.namesrv.DeleteKVConfigRequestHeader;
import org.apache.rocketmq.common.protocol.header.namesrv.DeleteTopicFromNamesrvRequestHeader;
import org.apache.rocketmq.common.protocol.header.namesrv.GetKVConfigRequestHeader;
import org.apache.rocketmq.common.protocol.header.namesrv.GetKVConfigResponseHeader;
import org.apache.rocketmq.common.protocol.header.namesrv.GetKVListByNamespaceRequestHeader;
import org.apache.rocketmq.common.protocol.header.namesrv.GetRouteInfoRequestHeader;
import org.apache.rocketmq.common.protocol.header.namesrv.PutKVConfigRequestHeader;
import org.apache.rocketmq.common.protocol.header.namesrv.QueryDataVersionRequestHeader;
import org.apache.rocketmq.common.protocol.header.namesrv.QueryDataVersionResponseHeader;
import org.apache.rocketmq.common.protocol.header.namesrv.RegisterBrokerRequestHeader;
import org.apache.rocketmq.common.protocol.header.namesrv.RegisterBrokerResponseHeader;
import org.apache.rocketmq.common.protocol.header.namesrv.UnRegisterBrokerRequestHeader;
import org.apache.rocketmq.common.protocol.header.namesrv.WipeWritePermOfBrokerRequestHeader;
import org.apache.rocketmq.common.protocol.header.namesrv.WipeWritePermOfBrokerResponseHeader;
import org.apache.rocketmq.remoting.CommandCustomHeader;

/**
 * The real 4.9.8 custom-header classes. 4.x has no REGISTER_TOPIC_IN_NAMESRV (217),
 * GET_BROKER_MEMBER_GROUP (901), BROKER_HEARTBEAT (904) or NOTIFY_MIN_BROKER_ID_CHANGE
 * (905), no TopicRequestHeader, and its REGISTER_BROKER header has no
 * enableActingMaster / heartbeatTimeoutMillis.
 */
public final class Headers {
    private Headers() {
    }

    /** One realistic request of every NameServer request code 4.9.8 has, in code order. */
    public static List<RequestSample> requests() {
        List<RequestSample> all = new ArrayList<>();
        all.add(new RequestSample(RequestCode.PUT_KV_CONFIG, "put_kv_config",
            putKvConfig(ORDER_NAMESPACE, ORDER_TOPIC, ORDER_CONF), null, false, "mqadmin updateKvConfig"));
        GetKVConfigRequestHeader getKv = new GetKVConfigRequestHeader();
        getKv.setNamespace(ORDER_NAMESPACE);
        getKv.setKey(ORDER_TOPIC);
        all.add(new RequestSample(RequestCode.GET_KV_CONFIG, "get_kv_config", getKv, null, false,
            "order-topic config lookup"));
        DeleteKVConfigRequestHeader deleteKv = new DeleteKVConfigRequestHeader();
        deleteKv.setNamespace(ORDER_NAMESPACE);
        deleteKv.setKey(ORDER_TOPIC);
        all.add(new RequestSample(RequestCode.DELETE_KV_CONFIG, "delete_kv_config", deleteKv, null, false,
            "mqadmin deleteKvConfig"));
        byte[] registerBody = Bodies.registerBrokerReference(false);
        all.add(new RequestSample(RequestCode.REGISTER_BROKER, "register_broker",
            registerBroker(registerBody, false, false, 0L, null), registerBody, false,
            "master broker-a, JSON body with TopicTest, bodyCrc32 of the body"));
        all.add(new RequestSample(RequestCode.UNREGISTER_BROKER, "unregister_broker", unregisterBroker(), null,
            false, "broker-a master shutting down"));
        all.add(new RequestSample(RequestCode.GET_ROUTEINFO_BY_TOPIC, "get_routeinfo_by_topic", routeRequest(TOPIC),
            null, false, "client route query"));
        all.add(new RequestSample(RequestCode.GET_BROKER_CLUSTER_INFO, "get_broker_cluster_info", null, null, false,
            "mqadmin clusterList"));
        WipeWritePermOfBrokerRequestHeader wipe = new WipeWritePermOfBrokerRequestHeader();
        wipe.setBrokerName(BROKER_A);
        all.add(new RequestSample(RequestCode.WIPE_WRITE_PERM_OF_BROKER, "wipe_write_perm_of_broker", wipe, null,
            false, "mqadmin wipeWritePerm"));
        all.add(new RequestSample(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER,
            "get_all_topic_list_from_nameserver", null, null, false, "mqadmin topicList"));
        all.add(new RequestSample(RequestCode.DELETE_TOPIC_IN_NAMESRV, "delete_topic_in_namesrv",
            deleteTopic(TOPIC, CLUSTER), null, false, "mqadmin deleteTopic -c"));
        GetKVListByNamespaceRequestHeader kvList = new GetKVListByNamespaceRequestHeader();
        kvList.setNamespace(ORDER_NAMESPACE);
        all.add(new RequestSample(RequestCode.GET_KVLIST_BY_NAMESPACE, "get_kvlist_by_namespace", kvList, null,
            false, "order-topic namespace"));
        GetTopicsByClusterRequestHeader byCluster = new GetTopicsByClusterRequestHeader();
        byCluster.setCluster(CLUSTER);
        all.add(new RequestSample(RequestCode.GET_TOPICS_BY_CLUSTER, "get_topics_by_cluster", byCluster, null,
            false, "mqadmin topicList -c"));
        all.add(new RequestSample(RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_NS, "get_system_topic_list_from_ns", null,
            null, false, "client system topic list"));
        all.add(new RequestSample(RequestCode.GET_UNIT_TOPIC_LIST, "get_unit_topic_list", null, null, false, ""));
        all.add(new RequestSample(RequestCode.GET_HAS_UNIT_SUB_TOPIC_LIST, "get_has_unit_sub_topic_list", null, null,
            false, ""));
        all.add(new RequestSample(RequestCode.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST,
            "get_has_unit_sub_ununit_topic_list", null, null, false, ""));
        all.add(new RequestSample(RequestCode.UPDATE_NAMESRV_CONFIG, "update_namesrv_config", null,
            "enableTopicList=false\n".getBytes(StandardCharsets.UTF_8), false,
            "mqadmin updateNamesrvConfig, properties body"));
        all.add(new RequestSample(RequestCode.GET_NAMESRV_CONFIG, "get_namesrv_config", null, null, false,
            "mqadmin getNamesrvConfig"));
        all.add(new RequestSample(RequestCode.QUERY_DATA_VERSION, "query_data_version", queryDataVersion(),
            Bodies.dataVersionReference(), false, "broker before re-registering, DataVersion body"));
        AddWritePermOfBrokerRequestHeader addPerm = new AddWritePermOfBrokerRequestHeader();
        addPerm.setBrokerName(BROKER_A);
        all.add(new RequestSample(RequestCode.ADD_WRITE_PERM_OF_BROKER, "add_write_perm_of_broker", addPerm, null,
            false, "mqadmin addWritePerm"));
        return all;
    }

    public static CommandCustomHeader routeRequest(String topic) {
        GetRouteInfoRequestHeader header = new GetRouteInfoRequestHeader();
        header.setTopic(topic);
        return header;
    }

    public static CommandCustomHeader routeRequestStandardOnly(String topic) {
        GetRouteInfoRequestHeader header = new GetRouteInfoRequestHeader();
        header.setTopic(topic);
        header.setAcceptStandardJsonOnly(true);
        return header;
    }

    /** 4.x has no TopicRequestHeader. */
    public static CommandCustomHeader routeRequestInheritedFields(String topic) {
        return null;
    }

    /** As the 4.9.8 {@code BrokerOuterAPI.registerBrokerAll}; acting-master arguments do not exist here. */
    public static CommandCustomHeader registerBroker(byte[] body, boolean compressed, boolean actingMaster,
        long brokerId, Long heartbeatTimeoutMillis) {
        RegisterBrokerRequestHeader header = new RegisterBrokerRequestHeader();
        header.setBrokerAddr(brokerId == 0 ? MASTER_ADDR : SLAVE_ADDR);
        header.setBrokerId(brokerId);
        header.setBrokerName(BROKER_A);
        header.setClusterName(CLUSTER);
        header.setHaServerAddr(brokerId == 0 ? HA_ADDR : "127.0.0.1:10922");
        header.setCompressed(compressed);
        header.setBodyCrc32(UtilAll.crc32(body));
        return header;
    }

    public static CommandCustomHeader registerBrokerResponse(String haServerAddr, String masterAddr) {
        RegisterBrokerResponseHeader header = new RegisterBrokerResponseHeader();
        header.setHaServerAddr(haServerAddr);
        header.setMasterAddr(masterAddr);
        return header;
    }

    public static CommandCustomHeader unregisterBroker() {
        UnRegisterBrokerRequestHeader header = new UnRegisterBrokerRequestHeader();
        header.setBrokerName(BROKER_A);
        header.setBrokerAddr(MASTER_ADDR);
        header.setClusterName(CLUSTER);
        header.setBrokerId(0L);
        return header;
    }

    public static CommandCustomHeader deleteTopic(String topic, String cluster) {
        DeleteTopicFromNamesrvRequestHeader header = new DeleteTopicFromNamesrvRequestHeader();
        header.setTopic(topic);
        header.setClusterName(cluster);
        return header;
    }

    public static CommandCustomHeader putKvConfig(String namespace, String key, String value) {
        PutKVConfigRequestHeader header = new PutKVConfigRequestHeader();
        header.setNamespace(namespace);
        header.setKey(key);
        header.setValue(value);
        return header;
    }

    public static CommandCustomHeader getKvConfigResponse(String value) {
        GetKVConfigResponseHeader header = new GetKVConfigResponseHeader();
        header.setValue(value);
        return header;
    }

    public static CommandCustomHeader queryDataVersion() {
        QueryDataVersionRequestHeader header = new QueryDataVersionRequestHeader();
        header.setBrokerName(BROKER_A);
        header.setBrokerAddr(MASTER_ADDR);
        header.setClusterName(CLUSTER);
        header.setBrokerId(0L);
        return header;
    }

    public static CommandCustomHeader queryDataVersionResponse(boolean changed) {
        QueryDataVersionResponseHeader header = new QueryDataVersionResponseHeader();
        header.setChanged(changed);
        return header;
    }

    public static CommandCustomHeader wipeWritePermResponse(int count) {
        WipeWritePermOfBrokerResponseHeader header = new WipeWritePermOfBrokerResponseHeader();
        header.setWipeTopicCount(count);
        return header;
    }

    public static CommandCustomHeader addWritePermResponse(int count) {
        AddWritePermOfBrokerResponseHeader header = new AddWritePermOfBrokerResponseHeader();
        header.setAddTopicCount(count);
        return header;
    }

    /** 4.x has no BROKER_HEARTBEAT. */
    public static CommandCustomHeader heartbeat() {
        return null;
    }

    /** 4.x has no NOTIFY_MIN_BROKER_ID_CHANGE. */
    public static CommandCustomHeader notifyMinBrokerIdChange() {
        return null;
    }
}
