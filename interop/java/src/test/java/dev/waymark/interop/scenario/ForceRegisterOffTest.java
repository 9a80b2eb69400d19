package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.EmbeddedBroker;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.RawClient;
import dev.waymark.interop.harness.WaymarkNameServer;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.Test;

/**
 * A broker with {@code forceRegister=false} re-sends its topic table only when a NameServer
 * says it changed: every period it asks each NameServer with QUERY_DATA_VERSION (322), and the
 * NameServer refreshes the broker's liveness on that question as on a registration. Here the
 * broker's period is 10 s (the shortest a broker accepts) and its heartbeat timeout, announced
 * with {@code enableSlaveActingMaster=true}, 15 s; its lightweight heartbeats are put off to 10
 * minutes, so that the periodic question is all that keeps it alive. Over 35 s — past twice the
 * timeout, by which a NameServer that let the question go unnoticed would have expired it — it
 * must stay listed at every look, and a topic created on it meanwhile must be routed. Against
 * Waymark, its metrics must also show the periodic questions answered with no full
 * registration among them: the profile's saving.
 */
class ForceRegisterOffTest extends ScenarioBase {
    private static final long TIMEOUT = 15_000;
    private static final long PERIOD = 10_000;
    private static final long WATCH = 35_000;
    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void queryDataVersionAloneKeepsTheBrokerRoutedAndCurrent() throws Exception {
        assumeTrue(v5(), "4.x brokers announce no heartbeat timeout: the NameServer's 120 s would make this 5 minutes");
        NameServer ns = namesrv(perTest, Map.of("scanNotActiveBrokerInterval", "1000"));
        EmbeddedBroker broker = broker(perTest, new BrokerSpec().cluster("ForceRegisterCluster").name("unforced-a")
            .namesrv(ns.addr())
            .set("forceRegister", "false")
            .set("registerNameServerPeriod", String.valueOf(PERIOD))
            .set("enableSlaveActingMaster", "true")
            .set("brokerNotActiveTimeoutMillis", String.valueOf(TIMEOUT))
            .set("brokerHeartbeatInterval", "600000"));
        RawClient raw = raw(perTest);
        DefaultMQAdminExt admin = Clients.admin(perTest, ns.addr());
        long registrationsBefore = count(ns, "REGISTER_BROKER");
        long questionsBefore = count(ns, "QUERY_DATA_VERSION");

        long start = System.nanoTime();
        String topic = null;
        int looks = 0;
        while ((System.nanoTime() - start) / 1_000_000 < WATCH) {
            assertEquals(Map.of(0L, broker.addr()), raw.clusterInfo(ns.addr()).addrsOf("unforced-a"),
                "the broker left the cluster info " + (System.nanoTime() - start) / 1_000_000
                    + " ms into the watch: its QUERY_DATA_VERSION did not keep it alive");
            looks++;
            if (topic == null && (System.nanoTime() - start) / 1_000_000 > WATCH / 2) {
                // A change on the broker: it registers the new topic at once (an incremental
                // registration, whatever forceRegister says), and its next periodic question
                // finds the NameServer current.
                topic = Clients.unique("UnforcedTopic");
                admin.createAndUpdateTopicConfig(broker.addr(), new TopicConfig(topic, 2, 2, 6));
                String created = topic;
                Poll.until(seconds(10), "route of " + created, () -> raw.route(ns.addr(), created));
                registrationsBefore = count(ns, "REGISTER_BROKER");
            }
            Poll.sleep(500);
        }
        System.out.println("broker listed at all " + looks + " looks over " + WATCH + " ms");

        if (waymark()) {
            long questions = count(ns, "QUERY_DATA_VERSION") - questionsBefore;
            long registrations = count(ns, "REGISTER_BROKER") - registrationsBefore;
            System.out.println("over the watch: " + questions + " QUERY_DATA_VERSION, " + registrations
                + " REGISTER_BROKER after the topic's");
            assertTrue(questions >= 2, "the broker asked only " + questions + " times in " + WATCH + " ms");
            assertEquals(0, registrations,
                "an unchanged broker re-sent its topic table: QUERY_DATA_VERSION must have answered changed");
        }
    }

    /** The Waymark NameServer's count of successful requests of {@code request}; 0 for Java's. */
    private long count(NameServer ns, String request) {
        if (!(ns instanceof WaymarkNameServer waymark)) {
            return 0;
        }
        String series = "waymark_requests_total{request=\"" + request + "\",response=\"SUCCESS\"} ";
        for (String line : get(waymark, "/metrics").split("\n")) {
            if (line.startsWith(series)) {
                return Long.parseLong(line.substring(series.length()).trim());
            }
        }
        return 0;
    }

    private String get(WaymarkNameServer ns, String path) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create("http://" + ns.httpAddr() + path))
                .timeout(Duration.ofSeconds(3)).build(), HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            throw new IllegalStateException(ns + path + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
