package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.EmbeddedBroker;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.QueueView;
import dev.waymark.interop.harness.RawClient;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.Test;

/**
 * The Rust {@code rmq-admin} binary as a process against the NameServer under test (Waymark
 * or, as the control, Java) with a real Java broker: its {@code --json} output and exit codes.
 */
class RmqAdminTest extends ScenarioBase {
    private static final String CLUSTER = "RmqAdminCluster";

    /** What one rmq-admin run printed on stdout (whitespace removed) and its exit code. */
    record Run(String args, int exit, String json, String stderr) {
        @Override
        public String toString() {
            return "rmq-admin " + args + " -> exit " + exit + "\nstdout: " + json + "\nstderr: " + stderr;
        }
    }

    private static String bin() {
        String bin = System.getProperty("waymark.admin.bin");
        assumeTrue(bin != null && !bin.isEmpty(), "waymark.admin.bin is not set");
        return bin;
    }

    private static Run run(String namesrv, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(bin(), "-n", namesrv, "--json"));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(
            new java.io.File("/dev/null"))).start();
        // Both pipes are small (one JSON document); read them after exit, bounded by the timeout.
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("rmq-admin " + args + " did not finish in 30 s");
        }
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Run(String.join(" ", args), process.exitValue(), out.replaceAll("\\s", ""), err);
    }

    private static Run ok(String namesrv, String... args) throws Exception {
        Run run = run(namesrv, args);
        assertEquals(0, run.exit(), run::toString);
        assertTrue(run.json().contains("\"ok\":true"), run::toString);
        assertFalse(run.json().contains("\"ok\":false"), run::toString);
        return run;
    }

    @Test
    void commandsAgainstOneNameServer() throws Exception {
        bin();
        NameServer ns = namesrv(perTest, Map.of());
        String broker = "rmqadmin-a";
        EmbeddedBroker b = broker(perTest, new BrokerSpec().cluster(CLUSTER).name(broker).namesrv(ns.addr()));
        DefaultMQAdminExt admin = Clients.admin(perTest, ns.addr());
        RawClient raw = raw(perTest);
        String n = ns.addr();

        Run cluster = ok(n, "cluster", "list");
        assertTrue(cluster.json().contains(CLUSTER), cluster::toString);
        assertTrue(cluster.json().contains(broker), cluster::toString);
        assertTrue(cluster.json().contains(b.addr()), cluster::toString);

        String topic = Clients.unique("RmqAdminTopic");
        admin.createAndUpdateTopicConfig(b.addr(), new TopicConfig(topic, 3, 5, 6));
        Poll.until(seconds(10), "route of " + topic, () -> raw.route(n, topic));

        Run route = ok(n, "topic", "route", topic);
        assertTrue(route.json().contains(b.addr()), route::toString);
        assertTrue(route.json().contains("\"readQueueNums\":3"), route::toString);
        assertTrue(route.json().contains("\"writeQueueNums\":5"), route::toString);
        assertTrue(route.json().contains("\"perm\":6"), route::toString);

        Run list = ok(n, "topic", "list");
        assertTrue(list.json().contains("\"" + topic + "\""), list::toString);

        // A missing topic: every NameServer answers TOPIC_NOT_EXIST, exit 3.
        Run missing = run(n, "topic", "route", Clients.unique("NoSuchTopic"));
        assertEquals(3, missing.exit(), missing::toString);

        String namespace = Clients.unique("rmqAdminNs");
        ok(n, "kv", "put", namespace, "color", "blue");
        assertEquals("blue", admin.getKVConfig(namespace, "color"));
        Run get = ok(n, "kv", "get", namespace, "color");
        assertTrue(get.json().contains("\"blue\""), get::toString);
        Run kvList = ok(n, "kv", "list", namespace);
        assertTrue(kvList.json().contains("\"color\"") && kvList.json().contains("\"blue\""), kvList::toString);
        ok(n, "kv", "delete", namespace, "color");
        Run gone = run(n, "kv", "get", namespace, "color");
        assertEquals(3, gone.exit(), gone::toString);

        Run config = ok(n, "config", "get");
        assertTrue(config.json().contains("\"orderMessageEnable\":\"false\""), config::toString);
        ok(n, "config", "set", "orderMessageEnable=true");
        assertEquals("true", admin.getNameServerConfig(null).get(n).getProperty("orderMessageEnable"));
        Run refused = run(n, "config", "set", "kvConfigPath=/tmp/x");
        assertEquals(3, refused.exit(), refused::toString);
        assertTrue(refused.json().contains("\"code\":16,\"codeName\":\"NO_PERMISSION\""), refused::toString);
        // The remark of the 4.9.7 Java NameServer predates the black list; Waymark and 5.x
        // name it (the JSON above has its whitespace removed, stderr has the remark as sent).
        String remark = v5() || waymark() ? "Can not update config in black list" : "Can not update config path";
        assertTrue(refused.stderr().contains(remark), refused::toString);

        if (v5() || waymark()) {
            Run members = ok(n, "broker", "member-group", "-c", CLUSTER, broker);
            assertTrue(members.json().contains(b.addr()), members::toString);
        } else {
            // GET_BROKER_MEMBER_GROUP (901) came with 5.0: the 4.9.7 Java NameServer has no
            // processor for it and never answers, so rmq-admin times out (exit 3).
            Run members = run(n, "--timeout-ms", "1000", "broker", "member-group", "-c", CLUSTER, broker);
            assertEquals(3, members.exit(), members::toString);
            assertTrue(members.json().contains("\"kind\":\"timeout\""), members::toString);
        }

        ok(n, "broker", "wipe-write-perm", broker);
        QueueView wiped = raw.route(n, topic).queue(broker).orElseThrow();
        assertEquals(4, wiped.perm(), wiped.toString());
        ok(n, "broker", "add-write-perm", broker);
        QueueView added = raw.route(n, topic).queue(broker).orElseThrow();
        assertEquals(6, added.perm(), added.toString());

        ok(n, "topic", "delete", topic);
        assertNull(raw.route(n, topic));
    }

    @Test
    void namesrvDiff() throws Exception {
        bin();
        NameServer a = namesrv(perTest, Map.of());
        NameServer c = namesrv(perTest, Map.of());
        // The broker registers with a and c; a third NameServer never hears of it.
        broker(perTest, new BrokerSpec().cluster(CLUSTER).name("rmqadmin-diff").namesrv(a.addr() + ";" + c.addr()));
        NameServer lonely = namesrv(perTest, Map.of());

        Run agree = run(a.addr() + ";" + c.addr(), "namesrv", "diff");
        assertEquals(0, agree.exit(), agree::toString);
        Run disagree = run(a.addr() + ";" + lonely.addr(), "namesrv", "diff");
        assertEquals(1, disagree.exit(), disagree::toString);
        assertTrue(disagree.json().contains("rmqadmin-diff"), disagree::toString);
    }
}
