package dev.waymark.interop.harness;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.rocketmq.remoting.protocol.statictopic.TopicConfigAndQueueMapping;
import org.apache.rocketmq.remoting.protocol.statictopic.TopicQueueMappingUtils;
import org.apache.rocketmq.remoting.protocol.statictopic.TopicRemappingDetailWrapper;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.apache.rocketmq.tools.admin.MQAdminUtils;

/** Static topics (logical queues mapped onto brokers), a 5.x feature: what mqadmin's updateStaticTopic does. */
public final class StaticTopics {
    private StaticTopics() {
    }

    public static boolean supported() {
        return true;
    }

    /**
     * Creates {@code topic} as a static topic of {@code queueNum} logical queues spread over
     * {@code brokers} (names, masters registered with the admin's NameServer), through the
     * release's own mapping builder and CREATE_STATIC_TOPIC to every broker.
     */
    public static void create(DefaultMQAdminExt admin, String topic, int queueNum, Set<String> brokers)
        throws Exception {
        Map<String, TopicConfigAndQueueMapping> existing = new HashMap<>();
        TopicRemappingDetailWrapper wrapper = TopicQueueMappingUtils.createTopicConfigMapping(topic, queueNum,
            brokers, existing);
        MQAdminUtils.completeNoTargetBrokers(wrapper.getBrokerConfigMap(), admin);
        MQAdminUtils.updateTopicConfigMappingAll(wrapper.getBrokerConfigMap(), admin, false);
    }
}
