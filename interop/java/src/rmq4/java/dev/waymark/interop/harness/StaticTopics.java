package dev.waymark.interop.harness;

import java.util.Set;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

/** Static topics do not exist before RocketMQ 5.0. */
public final class StaticTopics {
    private StaticTopics() {
    }

    public static boolean supported() {
        return false;
    }

    public static void create(DefaultMQAdminExt admin, String topic, int queueNum, Set<String> brokers) {
        throw new UnsupportedOperationException("static topics need RocketMQ 5");
    }
}
