package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.protocol.RemotingSerializable;

/**
 * The Rust example {@code allocate} (route fetch, subscribe view and strategy of
 * rmq-route-client): what a consumer built on rmq-route-client would hold for a topic, asked of
 * one NameServer, for given client ids.
 *
 * <p>The binary is {@code <dir of waymark.namesrv.bin>/examples/allocate} (cargo's layout), or
 * {@code -Dwaymark.allocate.bin}.
 */
final class RouteClientAllocate {
    private RouteClientAllocate() {
    }

    /**
     * Its answer: the topic's queues a consumer subscribes to (the subscribe view, in Java's
     * order), and each client id's share.
     */
    record Answer(List<MessageQueue> queues, Map<String, List<MessageQueue>> allocation) {
    }

    /**
     * Runs the example against {@code namesrv} for {@code topic} with {@code strategy} (the
     * Java strategy's name) and the consumers {@code clientIds} of {@code group};
     * {@code extraArgs} are the strategy's own options.
     */
    static Answer run(String namesrv, String topic, String strategy, String group, Collection<String> clientIds,
                      List<String> extraArgs) throws Exception {
        List<String> command = new ArrayList<>(List.of(binary().toString(), "--namesrv", namesrv,
            "--topic", topic, "--strategy", strategy, "--group", group));
        for (String cid : clientIds) {
            command.add("--consumer");
            command.add(cid);
        }
        command.addAll(extraArgs);
        Process process = new ProcessBuilder(command).start();
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> drain(process.getInputStream()));
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> drain(process.getErrorStream()));
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("allocate did not finish in 30 s: " + command);
        }
        String stdout = out.get(5, TimeUnit.SECONDS);
        String stderr = err.get(5, TimeUnit.SECONDS);
        assertEquals(0, process.exitValue(), () -> "allocate failed: " + command + "\n" + stderr + stdout);

        Map<?, ?> doc = RemotingSerializable.fromJson(stdout.trim(), Map.class);
        assertEquals(strategy, doc.get("strategy"), stdout);
        Map<String, List<MessageQueue>> allocation = new TreeMap<>();
        for (Map.Entry<?, ?> e : ((Map<?, ?>) doc.get("allocation")).entrySet()) {
            allocation.put((String) e.getKey(), queues(topic, (List<?>) e.getValue()));
        }
        return new Answer(queues(topic, (List<?>) doc.get("queues")), allocation);
    }

    private static List<MessageQueue> queues(String topic, List<?> json) {
        List<MessageQueue> out = new ArrayList<>();
        for (Object o : json) {
            Map<?, ?> q = (Map<?, ?>) o;
            out.add(new MessageQueue(topic, (String) q.get("brokerName"), ((Number) q.get("queueId")).intValue()));
        }
        return out;
    }

    private static String drain(InputStream in) {
        try (in) {
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            in.transferTo(buf);
            return buf.toString(StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    private static Path binary() {
        String explicit = System.getProperty("waymark.allocate.bin");
        Path path;
        if (explicit != null && !explicit.isBlank()) {
            path = Path.of(explicit);
        } else {
            String namesrvBin = System.getProperty("waymark.namesrv.bin");
            assertTrue(namesrvBin != null && !namesrvBin.isBlank(),
                "set -Dwaymark.namesrv.bin (its directory holds examples/allocate) or -Dwaymark.allocate.bin");
            path = Path.of(namesrvBin).toAbsolutePath().getParent().resolve("examples").resolve("allocate");
        }
        assertTrue(Files.isExecutable(path),
            () -> path + " is not built: cargo build -p rmq-route-client --example allocate");
        return path;
    }
}
