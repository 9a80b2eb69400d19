package dev.waymark.interop.harness;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.rocketmq.remoting.protocol.body.ClusterInfo;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.apache.rocketmq.remoting.protocol.route.QueueData;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

/** ClusterInfo and TopicRouteData of this release turned into the harness's views. */
public final class Routes {
    private Routes() {
    }

    /** A GET_BROKER_CLUSTER_INFO body, decoded by this release's ClusterInfo. */
    public static ClusterView clusterInfo(byte[] body) {
        return view(ClusterInfo.decode(body, ClusterInfo.class));
    }

    /** A GET_ROUTEINFO_BY_TOPIC body, decoded by this release's TopicRouteData. */
    public static RouteView route(byte[] body) {
        return view(TopicRouteData.decode(body, TopicRouteData.class));
    }

    /** {@code DefaultMQAdminExt.examineBrokerClusterInfo()}. */
    public static ClusterView clusterInfo(DefaultMQAdminExt admin) throws Exception {
        return view(admin.examineBrokerClusterInfo());
    }

    /** {@code DefaultMQAdminExt.examineTopicRouteInfo(topic)}. */
    public static RouteView route(DefaultMQAdminExt admin, String topic) throws Exception {
        return view(admin.examineTopicRouteInfo(topic));
    }

    private static ClusterView view(ClusterInfo info) {
        Map<String, BrokerGroup> brokers = new HashMap<>();
        if (info.getBrokerAddrTable() != null) {
            info.getBrokerAddrTable().forEach((name, data) -> brokers.put(name, group(data)));
        }
        Map<String, Set<String>> clusters = new HashMap<>();
        if (info.getClusterAddrTable() != null) {
            clusters.putAll(info.getClusterAddrTable());
        }
        return new ClusterView(brokers, clusters);
    }

    private static RouteView view(TopicRouteData route) {
        List<BrokerGroup> brokers = route.getBrokerDatas() == null ? List.of()
            : route.getBrokerDatas().stream().map(Routes::group).toList();
        List<QueueView> queues = route.getQueueDatas() == null ? List.of()
            : route.getQueueDatas().stream().map(Routes::queue).toList();
        return new RouteView(brokers, queues);
    }

    private static BrokerGroup group(BrokerData data) {
        return new BrokerGroup(data.getCluster(), data.getBrokerName(), data.getBrokerAddrs());
    }

    private static QueueView queue(QueueData q) {
        return new QueueView(q.getBrokerName(), q.getReadQueueNums(), q.getWriteQueueNums(), q.getPerm(),
            q.getTopicSysFlag());
    }
}
