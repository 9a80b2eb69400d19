package dev.waymark.interop.ha;

import dev.waymark.interop.harness.Closer;
import dev.waymark.interop.harness.LoopbackClients;
import dev.waymark.interop.harness.Poll;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.client.ClientConfig;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

/**
 * The real clients (rocketmq-client of the profile: 5.5.0 for rmq5) as the AutoSwitch-HA
 * scenarios use them: loopback, a 1 s route poll (a failover reaches them quickly), and a
 * message counted as acknowledged only when its send answered SEND_OK, which with
 * {@code allAckInSyncStateSet=true} means every member of the sync-state set stored it.
 */
final class HaTraffic {
    private HaTraffic() {
    }

    static String unique(String prefix) {
        return LoopbackClients.unique(prefix);
    }

    private static <T extends ClientConfig> T configure(T client, String namesrv) {
        return LoopbackClients.configure(client, namesrv);
    }

    static DefaultMQProducer producer(Closer closer, String namesrv) throws Exception {
        DefaultMQProducer producer = configure(new DefaultMQProducer(unique("pg")), namesrv);
        producer.setSendMsgTimeout(5000);
        producer.setRetryTimesWhenSendFailed(0);
        producer.start();
        closer.add(producer::shutdown);
        return producer;
    }

    static DefaultMQAdminExt admin(Closer closer, String namesrv) throws Exception {
        return LoopbackClients.admin(closer, namesrv);
    }

    /**
     * A new topic (4 queues, read/write) created on every broker of the set, masters and
     * slaves alike, so that whichever becomes master serves it at once (a slave copies its
     * master's topics only every few seconds).
     */
    static String topic(DefaultMQAdminExt admin, List<String> brokers) throws Exception {
        String topic = unique("HaTopic");
        for (String broker : brokers) {
            admin.createAndUpdateTopicConfig(broker, new TopicConfig(topic, 4, 4, 6));
        }
        return topic;
    }

    static Message message(String topic, int i) {
        return new Message(topic, "TagA", "key-" + i, ("waymark ha message " + i).getBytes(StandardCharsets.UTF_8));
    }

    /** Sends {@code count} messages, each of which must answer SEND_OK at once; their ids in order. */
    static Set<String> send(DefaultMQProducer producer, String topic, int count) throws Exception {
        Set<String> ids = new LinkedHashSet<>();
        for (int i = 0; i < count; i++) {
            SendResult result = producer.send(message(topic, i));
            if (result.getSendStatus() != SendStatus.SEND_OK) {
                throw new AssertionError("message " + i + " to " + topic + ": " + result);
            }
            ids.add(result.getMsgId());
        }
        return ids;
    }

    /**
     * Sends {@code count} messages, each retried (every 200 ms) until it answers SEND_OK, all
     * within {@code timeout}: a producer resuming after a failover. Returns the acknowledged
     * ids; messages that failed on the way are not among them.
     */
    static Set<String> sendUntilOk(DefaultMQProducer producer, String topic, int count, Duration timeout) {
        Set<String> ids = new LinkedHashSet<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        String lastFailure = null;
        for (int i = 0; i < count; i++) {
            while (true) {
                try {
                    SendResult result = producer.send(message(topic, i));
                    if (result.getSendStatus() == SendStatus.SEND_OK) {
                        ids.add(result.getMsgId());
                        break;
                    }
                    lastFailure = String.valueOf(result);
                } catch (Exception e) {
                    lastFailure = e.toString();
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("message " + i + " of " + count + " to " + topic + " not acknowledged within "
                        + timeout.toSeconds() + " s; last failure: " + lastFailure);
                }
                Poll.sleep(200);
            }
        }
        return ids;
    }

    /** What a consumer received, by message id (duplicates count once). */
    static final class Received {
        final Map<String, String> bodies = new ConcurrentHashMap<>();

        /** Waits until every one of {@code expected} arrived (others may arrive too). */
        void awaitAll(Set<String> expected, Duration timeout) {
            try {
                Poll.untilTrue(timeout, 200, expected.size() + " messages", () -> bodies.keySet().containsAll(expected));
            } catch (AssertionError e) {
                Set<String> missing = new LinkedHashSet<>(expected);
                missing.removeAll(bodies.keySet());
                throw new AssertionError(e.getMessage() + ": received " + bodies.size() + ", missing "
                    + missing.size() + " (e.g. " + missing.stream().limit(3).toList() + ")", e);
            }
        }
    }

    /** A started push consumer of {@code topic}, in a new group, from the first offset. */
    static Received pushConsumer(Closer closer, String namesrv, String topic) throws Exception {
        Received received = new Received();
        DefaultMQPushConsumer consumer = configure(new DefaultMQPushConsumer(unique("cg")), namesrv);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.setConsumeThreadMin(2);
        consumer.setConsumeThreadMax(2);
        consumer.subscribe(topic, "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (messages, context) -> {
            messages.forEach(m -> received.bodies.put(m.getMsgId(), new String(m.getBody(), StandardCharsets.UTF_8)));
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        try {
            consumer.start();
        } catch (RuntimeException e) {
            consumer.shutdown();
            throw e;
        }
        closer.add(consumer::shutdown);
        return received;
    }
}
