package dev.waymark.interop.scenario;

import dev.waymark.interop.harness.Closer;
import dev.waymark.interop.harness.LoopbackClients;
import dev.waymark.interop.harness.Poll;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.client.ClientConfig;
import org.apache.rocketmq.client.consumer.AllocateMessageQueueStrategy;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

/** The real clients of the profile's release, configured for fast, loopback-only tests. */
final class Clients {
    private Clients() {
    }

    /** A name no other client or topic of this JVM uses. */
    static String unique(String prefix) {
        return LoopbackClients.unique(prefix);
    }

    private static <T extends ClientConfig> T configure(T client, String namesrv) {
        return LoopbackClients.configure(client, namesrv);
    }

    static DefaultMQProducer producer(Closer closer, String namesrv) throws Exception {
        DefaultMQProducer producer = configure(new DefaultMQProducer(unique("pg")), namesrv);
        producer.setSendMsgTimeout(5000);
        producer.setRetryTimesWhenSendFailed(2);
        producer.start();
        closer.add(producer::shutdown);
        return producer;
    }

    static DefaultMQAdminExt admin(Closer closer, String namesrv) throws Exception {
        return LoopbackClients.admin(closer, namesrv);
    }

    /** Sends {@code count} messages (sync, SEND_OK each) and returns their ids in order. */
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

    static Message message(String topic, int i) {
        return new Message(topic, "TagA", "key-" + i, ("waymark interop message " + i).getBytes(StandardCharsets.UTF_8));
    }

    /** What a consumer received, by message id (duplicates are counted once). */
    static final class Received {
        final Map<String, String> bodies = new ConcurrentHashMap<>();
        final Map<String, String> fromBroker = new ConcurrentHashMap<>();

        void add(MessageExt message) {
            bodies.put(message.getMsgId(), new String(message.getBody(), StandardCharsets.UTF_8));
            if (message.getStoreHost() != null) {
                fromBroker.put(message.getMsgId(), String.valueOf(message.getStoreHost()));
            }
        }

        Set<String> ids() {
            return Set.copyOf(bodies.keySet());
        }

        /** Waits until every one of {@code expected} arrived; fails on any unexpected id. */
        void awaitExactly(Set<String> expected, Duration timeout) {
            try {
                Poll.untilTrue(timeout, 200, expected.size() + " messages", () -> bodies.keySet().containsAll(expected));
            } catch (AssertionError e) {
                Set<String> missing = new LinkedHashSet<>(expected);
                missing.removeAll(bodies.keySet());
                throw new AssertionError(e.getMessage() + ": received " + bodies.size() + ", missing "
                    + missing.size() + " (e.g. " + missing.stream().limit(3).toList() + ")", e);
            }
            Set<String> extra = new LinkedHashSet<>(bodies.keySet());
            extra.removeAll(expected);
            if (!extra.isEmpty()) {
                throw new AssertionError("unexpected messages: " + extra);
            }
        }
    }

    /** A started push consumer of {@code topic} (new group, from the first offset). */
    static Received pushConsumer(Closer closer, String namesrv, String topic) throws Exception {
        return pushConsumer(closer, namesrv, topic, new Received());
    }

    /**
     * {@link #pushConsumer}, retried for up to {@code timeout}: a Java client whose NameServer
     * list includes a dead server fails {@code start()} when its first route query happens to
     * pick that server (RemotingConnectException out of start), as applications see it.
     */
    static Received pushConsumerRetrying(Closer closer, String namesrv, String topic, Duration timeout) {
        Received received = new Received();
        return Poll.until(timeout, 500, "push consumer of " + topic + " to start", () -> {
            try {
                return pushConsumer(closer, namesrv, topic, received);
            } catch (Exception e) {
                System.err.println("push consumer of " + topic + " did not start: " + e);
                throw new IllegalStateException(e);
            }
        });
    }

    private static Received pushConsumer(Closer closer, String namesrv, String topic, Received received)
        throws Exception {
        DefaultMQPushConsumer consumer = configure(new DefaultMQPushConsumer(unique("cg")), namesrv);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.setConsumeThreadMin(2);
        consumer.setConsumeThreadMax(2);
        consumer.subscribe(topic, "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (messages, context) -> {
            messages.forEach(received::add);
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

    /**
     * A started push consumer of {@code topic} in {@code group} that splits the queues with
     * {@code strategy} and consumes nothing (the tests that use it look only at its rebalance).
     * {@code beforeStart} sees the configured, not yet started consumer (its client id is
     * already {@code buildMQClientId()}).
     */
    static DefaultMQPushConsumer allocatingPushConsumer(Closer closer, String namesrv, String topic, String group,
        AllocateMessageQueueStrategy strategy, java.util.function.Consumer<DefaultMQPushConsumer> beforeStart)
        throws Exception {
        DefaultMQPushConsumer consumer = configure(new DefaultMQPushConsumer(group), namesrv);
        consumer.setAllocateMessageQueueStrategy(strategy);
        consumer.setConsumeThreadMin(1);
        consumer.setConsumeThreadMax(1);
        consumer.subscribe(topic, "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (messages, context) ->
            ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
        beforeStart.accept(consumer);
        try {
            consumer.start();
        } catch (RuntimeException e) {
            consumer.shutdown();
            throw e;
        }
        closer.add(consumer::shutdown);
        return consumer;
    }

    /**
     * A started lite pull consumer subscribed to {@code topic} in {@code group}, splitting the
     * queues with {@code strategy}; nobody polls it (the tests that use it look only at its
     * rebalance).
     */
    static DefaultLitePullConsumer allocatingLitePullConsumer(Closer closer, String namesrv, String topic,
        String group, AllocateMessageQueueStrategy strategy) throws Exception {
        DefaultLitePullConsumer consumer = configure(new DefaultLitePullConsumer(group), namesrv);
        consumer.setAllocateMessageQueueStrategy(strategy);
        consumer.setPullThreadNums(1);
        consumer.subscribe(topic, "*");
        try {
            consumer.start();
        } catch (RuntimeException e) {
            consumer.shutdown();
            throw e;
        }
        closer.add(consumer::shutdown);
        return consumer;
    }

    /** A started lite pull consumer of {@code topic} polling into the returned collection. */
    static Received litePullConsumer(Closer closer, String namesrv, String topic) throws Exception {
        Received received = new Received();
        DefaultLitePullConsumer consumer = configure(new DefaultLitePullConsumer(unique("lpg")), namesrv);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.setPullThreadNums(2);
        consumer.subscribe(topic, "*");
        consumer.start();
        Thread poller = new Thread(() -> {
            while (consumer.isRunning()) {
                try {
                    consumer.poll(200).forEach(received::add);
                } catch (RuntimeException e) {
                    if (consumer.isRunning()) {
                        Poll.sleep(100);
                    }
                }
            }
        }, "lite-pull-" + topic);
        poller.setDaemon(true);
        closer.add(() -> {
            consumer.shutdown();
            poller.join(5000);
        });
        poller.start();
        return received;
    }
}
