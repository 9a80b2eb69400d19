package dev.waymark.interop.proxy;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;

/**
 * The official RocketMQ 5.x gRPC Java client (rocketmq-client-java) against one proxy, driven
 * over stdin so that one JVM start serves a whole test class.
 *
 * <pre>
 * GrpcClientLauncher 127.0.0.1:&lt;grpc port&gt;
 * </pre>
 *
 * prints {@code CLIENT READY}, then for each line {@code roundtrip TOPIC GROUP N} on stdin: a
 * producer sends N messages to TOPIC, a SimpleConsumer of GROUP receives and acks them (until
 * it has all of them or 60 s have passed), and one line answers: {@code ROUNDTRIP TOPIC sent=N
 * received=M} (M counts distinct sent bodies received), or {@code ERROR TOPIC <exception>}
 * when a client could not start, send or receive. End of stdin ends it.
 */
public final class GrpcClientLauncher {
    private static final Duration RECEIVE_DEADLINE = Duration.ofSeconds(60);

    private GrpcClientLauncher() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: GrpcClientLauncher host:port");
            System.exit(2);
        }
        ClientServiceProvider provider = ClientServiceProvider.loadService();
        // Plain text: the proxy's gRPC port serves both (its TLS mode is permissive), and the
        // client's default is TLS.
        ClientConfiguration config = ClientConfiguration.newBuilder().setEndpoints(args[0]).enableSsl(false)
            .setRequestTimeout(Duration.ofSeconds(10)).build();
        System.out.println("CLIENT READY");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.trim().split("\\s+");
            if (words.length != 4 || !words[0].equals("roundtrip")) {
                System.out.println("ERROR - unknown command: " + line);
                continue;
            }
            try {
                System.out.println(roundtrip(provider, config, words[1], words[2], Integer.parseInt(words[3])));
            } catch (Exception e) {
                System.out.println("ERROR " + words[1] + " " + e.toString().replace('\n', ' '));
                e.printStackTrace();
            }
        }
        // The clients' own threads are not all daemons.
        System.exit(0);
    }

    private static String roundtrip(ClientServiceProvider provider, ClientConfiguration config, String topic,
                                    String group, int count) throws Exception {
        // The consumer first, so that its group exists before the messages do; a new group
        // starts at the queue's first message anyway while it is still in memory.
        try (SimpleConsumer consumer = provider.newSimpleConsumerBuilder().setClientConfiguration(config)
                .setConsumerGroup(group).setAwaitDuration(Duration.ofSeconds(2))
                .setSubscriptionExpressions(Map.of(topic, FilterExpression.SUB_ALL)).build();
             Producer producer = provider.newProducerBuilder().setClientConfiguration(config).setTopics(topic)
                 .build()) {
            Set<String> sent = new HashSet<>();
            for (int i = 0; i < count; i++) {
                String body = topic + " message " + i;
                producer.send(provider.newMessageBuilder().setTopic(topic).setTag("waymark").setKeys("key-" + i)
                    .setBody(body.getBytes(StandardCharsets.UTF_8)).build());
                sent.add(body);
            }
            Set<String> received = new HashSet<>();
            long deadline = System.nanoTime() + RECEIVE_DEADLINE.toNanos();
            while (!received.containsAll(sent) && System.nanoTime() - deadline < 0) {
                List<MessageView> views = consumer.receive(32, Duration.ofSeconds(30));
                for (MessageView view : views) {
                    String body = StandardCharsets.UTF_8.decode(view.getBody()).toString();
                    if (sent.contains(body)) {
                        received.add(body);
                    }
                    consumer.ack(view);
                }
            }
            return "ROUNDTRIP " + topic + " sent=" + sent.size() + " received=" + received.size();
        }
    }
}
