package dev.waymark.interop.diff;

import static dev.waymark.interop.vectors.Samples.BROKER_A;
import static dev.waymark.interop.vectors.Samples.CLUSTER;
import static dev.waymark.interop.vectors.Samples.MASTER_ADDR;
import static dev.waymark.interop.vectors.Samples.ORDER_CONF;
import static dev.waymark.interop.vectors.Samples.ORDER_NAMESPACE;
import static dev.waymark.interop.vectors.Samples.ORDER_TOPIC;
import static dev.waymark.interop.vectors.Samples.SLAVE_ADDR;
import static dev.waymark.interop.vectors.Samples.TOPIC;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.waymark.interop.harness.JavaNameServer;
import dev.waymark.interop.harness.NameServers;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.RawClient;
import dev.waymark.interop.harness.WaymarkNameServer;
import dev.waymark.interop.vectors.Bodies;
import dev.waymark.interop.vectors.Cmd;
import dev.waymark.interop.vectors.Headers;
import dev.waymark.interop.vectors.Release;
import dev.waymark.interop.vectors.RequestSample;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.rocketmq.common.UtilAll;
import org.apache.rocketmq.remoting.CommandCustomHeader;
import org.apache.rocketmq.remoting.exception.RemotingTimeoutException;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The same requests, built with the profile's real Java classes and sent with its real
 * {@code NettyRemotingClient}, to the profile's Java NameServer and to Waymark; every
 * response must be the same once the few fields that legitimately differ are set aside
 * ({@link #compare}). Runs in the scenario run against Waymark (run-java.sh), once per
 * profile. Differences Waymark keeps on purpose are listed in docs/compatibility.md.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EnabledIfSystemProperty(named = "waymark.namesrv", matches = "waymark")
@EnabledIfSystemProperty(named = "waymark.namesrv.bin", matches = ".+")
@Timeout(value = 150)
class DifferentialTest {
    /** Run-specific locations; GET_NAMESRV_CONFIG prints them, and each server has its own. */
    private static final Set<String> PROCESS_LOCAL_CONFIG = Set.of("listenPort", "kvConfigPath",
        "configStorePath");

    /**
     * Both servers get the same options, so their GET_NAMESRV_CONFIG bodies can be compared;
     * the thread counts are the harness's small-machine values.
     */
    private static final Map<String, String> SETTINGS = Map.of("serverWorkerThreads", "2",
        "serverSelectorThreads", "1", "defaultThreadPoolNums", "4", "clientRequestThreadPoolNums", "2");

    private JavaNameServer java;
    private WaymarkNameServer waymark;
    private RawClient client;

    private final List<Step> steps = new ArrayList<>();
    private final List<String> mismatches = new ArrayList<>();
    private int compared;

    /**
     * One request, sent to both servers; {@code after} runs against each server's address.
     * {@code exceptionRemark}: Java answers with the SYSTEM_ERROR its remoting layer makes of
     * an exception thrown by the handler, whose remark is the exception's class, message and
     * first stack frame (JSON-library version and source line numbers included); Waymark's
     * remark there says the same in its own words, so only its presence is compared.
     */
    private record Step(String name, Supplier<RemotingCommand> request, Consumer<String> after,
                        boolean exceptionRemark, Known known) {
    }

    /**
     * What of one response is not compared, because Waymark answers otherwise on purpose (the
     * reasons are in docs/compatibility.md, "Differences from the Java NameServer"): whole
     * {@code fields} (code, remark, extFields, body, or {@code response}: whether there is one
     * at all), JSON body members named in {@code dropMembers}, and, with {@code anyDialect},
     * whether map keys are quoted; {@code remark after its first line} compares the remark's
     * first line only.
     */
    private record Known(Set<String> fields, Set<String> dropMembers, boolean anyDialect, String reason) {
        Known and(Known other) {
            if (this == NONE) {
                return other;
            }
            Set<String> f = new java.util.HashSet<>(fields);
            f.addAll(other.fields);
            Set<String> d = new java.util.HashSet<>(dropMembers);
            d.addAll(other.dropMembers);
            return new Known(f, d, anyDialect || other.anyDialect, reason + "; " + other.reason);
        }
    }

    private static final Known NONE = new Known(Set.of(), Set.of(), false, "");

    @BeforeAll
    void start() throws Exception {
        java = JavaNameServer.start(SETTINGS);
        waymark = WaymarkNameServer.start(NameServers.binary(), SETTINGS);
        client = new RawClient();
    }

    @AfterAll
    void stop() {
        if (client != null) {
            client.close();
        }
        if (waymark != null) {
            waymark.stop();
        }
        if (java != null) {
            java.stop();
        }
    }

    @Test
    void sameResponsesAsTheJavaNameServer() {
        plan();
        for (Step step : steps) {
            RemotingCommand expected = send(java.addr(), step);
            RemotingCommand actual = send(waymark.addr(), step);
            compared++;
            System.out.println(step.name() + " -> java " + (expected == null ? "no response" : "code "
                + expected.getCode()));
            compare(step, expected, actual);
        }
        assertTrue(waymark.alive(), () -> "Waymark exited; its log:\n" + waymark.logTail());
        if (!mismatches.isEmpty()) {
            fail(mismatches.size() + " of " + compared + " responses differ:\n\n" + String.join("\n\n", mismatches));
        }
        // 4.x has no REGISTER_TOPIC_IN_NAMESRV, GET_BROKER_MEMBER_GROUP or BROKER_HEARTBEAT.
        assertEquals(Release.isV5() ? 75 : 68, compared, "requests compared");
    }

    /** The response, or null when none came (a server that stays silent is compared too). */
    private RemotingCommand send(String addr, Step step) {
        RemotingCommand response;
        try {
            response = client.invoke(addr, step.request().get(), 3000);
        } catch (IllegalStateException e) {
            if (!(e.getCause() instanceof RemotingTimeoutException)) {
                throw e;
            }
            response = null;
        }
        if (step.after() != null) {
            step.after().accept(addr);
        }
        return response;
    }

    // ---- the requests ------------------------------------------------------------------------

    private void plan() {
        byte[] single = Bodies.registerBrokerReference(false);
        byte[] registerBody = Bodies.registerBrokerMulti(false);
        byte[] compressedBody = Bodies.registerBrokerMulti(true);
        int crc = UtilAll.crc32(registerBody);

        step("unknown code", () -> request(99999, null));
        knownOn4("4.x leaves an unknown code unanswered", "response");
        step("broker code sent to the NameServer (SEND_MESSAGE)", () -> raw(10, Map.of("topic", TOPIC)));
        knownOn4("4.x leaves an unknown code unanswered", "response");
        step("cluster info, empty", () -> raw(106, Map.of()));
        step("all topics, empty", () -> raw(206, Map.of()));
        step("system topics, no broker", () -> raw(304, Map.of()));
        step("route of an unknown topic", () -> request(105, Headers.routeRequest("NoSuchTopic")));
        knownOn4("4.x points TOPIC_NOT_EXIST at its older FAQ address", "remark after its first line");
        step("route without topic", () -> raw(105, Map.of()));
        knownOn4("4.x points TOPIC_NOT_EXIST at its older FAQ address", "remark after its first line");
        step("data version of an unregistered broker", () -> request(322, Headers.queryDataVersion())
            .body(Bodies.dataVersionReference()));

        step("register master, bad crc32", () -> raw(103, with(fields(103,
            Headers.registerBroker(registerBody, false, false, 0L, null)), "bodyCrc32", String.valueOf(crc ^ 1)))
            .body(registerBody));
        failing("register master, body that is not a RegisterBrokerBody", () -> raw(103, without(fields(103,
            Headers.registerBroker(registerBody, false, false, 0L, null)), "bodyCrc32"))
            .body("not json".getBytes(StandardCharsets.UTF_8)));
        step("register master", () -> request(103, Headers.registerBroker(registerBody, false, false, 0L, null))
            .body(registerBody));
        step("put order-topic config", () -> request(100, Headers.putKvConfig(ORDER_NAMESPACE, ORDER_TOPIC,
            ORDER_CONF)));
        step("register slave (learns master, gets order config)", () -> request(103,
            Headers.registerBroker(registerBody, false, false, 1L, null)).body(registerBody));
        step("register master again, zlib body", () -> request(103,
            Headers.registerBroker(compressedBody, true, false, 0L, null)).body(compressedBody));

        if (Release.isV5()) {
            step("register slave in acting-master mode, with a zone", () -> request(103,
                Headers.registerBroker(registerBody, false, true, 1L, 10000L)).body(registerBody)
                .ext("__ZONE_NAME", "zone-1"));
        }
        step("route, standard JSON (version >= 401)", () -> request(105, Headers.routeRequest(TOPIC)));
        memberOn4("4.x BrokerData has no enableActingMaster", "enableActingMaster");
        step("route, default dialect (version 400)", () -> request(105, Headers.routeRequest(TOPIC)).version(400));
        memberOn4("4.x BrokerData has no enableActingMaster", "enableActingMaster");
        step("route, version 400 with acceptStandardJsonOnly", () -> request(105,
            Headers.routeRequestStandardOnly(TOPIC)).version(400));
        memberOn4("4.x BrokerData has no enableActingMaster", "enableActingMaster");
        step("route, zone keys next to the header", () -> request(105, Headers.routeRequest(TOPIC))
            .ext("__ZONE_MODE", "true").ext("__ZONE_NAME", "zone-1"));
        memberOn4("4.x BrokerData has no enableActingMaster", "enableActingMaster");
        // Java re-encodes a zone-filtered route in the default dialect whatever the client asked
        // for; Waymark keeps the dialect the client qualified for.
        known(new Known(Set.of(), Set.of(), true, "zone-filtered route keeps the client's dialect"));
        knownOn4("4.x has no zone filtering", "body");
        step("cluster info, master and slave", () -> raw(106, Map.of()));
        memberOn4("4.x BrokerData has no enableActingMaster", "enableActingMaster");

        step("data version, unchanged", () -> request(322, Headers.queryDataVersion())
            .body(Bodies.dataVersionReference()));
        memberOn4("4.x DataVersion has no stateVersion", "stateVersion");
        step("data version, no body", () -> request(322, Headers.queryDataVersion()));
        knownOn4("4.x fails on a QUERY_DATA_VERSION without body", "code", "remark", "extFields", "body");
        step("data version, other counter", () -> request(322, Headers.queryDataVersion())
            .body("{\"counter\":4,\"stateVersion\":0,\"timestamp\":1700000000000}".getBytes(StandardCharsets.UTF_8)));
        memberOn4("4.x DataVersion has no stateVersion", "stateVersion");
        failing("data version, missing brokerAddr", () -> raw(322, without(fields(322, Headers.queryDataVersion()),
            "brokerAddr")).body(Bodies.dataVersionReference()));
        knownOn4("4.x answers QUERY_DATA_VERSION without brokerAddr as an unknown broker", "code", "remark",
            "extFields");

        if (Release.isV5()) {
            step("broker heartbeat, two-way", () -> request(904, Headers.heartbeat()));
            step("broker member group", () -> request(901, sample("get_broker_member_group").header()));
            step("broker member group, unknown broker", () -> raw(901, Map.of("clusterName", CLUSTER,
                "brokerName", "broker-x")));
        }

        step("wipe write perm", () -> raw(205, Map.of("brokerName", BROKER_A)));
        step("route after wipe", () -> request(105, Headers.routeRequest(TOPIC)));
        memberOn4("4.x BrokerData has no enableActingMaster", "enableActingMaster");
        step("wipe write perm, unknown broker", () -> raw(205, Map.of("brokerName", "broker-x")));
        step("add write perm", () -> raw(327, Map.of("brokerName", BROKER_A)));
        step("add write perm, missing brokerName", () -> raw(327, Map.of()));
        step("wipe write perm, missing brokerName", () -> raw(205, Map.of()));

        step("all topics", () -> raw(206, Map.of()));
        step("topics of the cluster", () -> raw(224, Map.of("cluster", CLUSTER)));
        step("topics of an unknown cluster", () -> raw(224, Map.of("cluster", "NoSuchCluster")));
        step("system topics", () -> raw(304, Map.of()));
        step("unit topics", () -> raw(311, Map.of()));
        step("has-unit-sub topics", () -> raw(312, Map.of()));
        step("has-unit-sub-ununit topics", () -> raw(313, Map.of()));

        if (Release.isV5()) {
            RequestSample registerTopic = sample("register_topic_in_namesrv");
            step("register topic", () -> request(217, registerTopic.header()).body(registerTopic.body()));
            step("route of the registered topic", () -> request(105, Headers.routeRequest(TOPIC)));
            step("register topic, unknown broker", () -> raw(217, Map.of("topic", "OtherTopic"))
                .body(("{\"brokerDatas\":[],\"filterServerTable\":{},\"queueDatas\":[{\"brokerName\":\"broker-x\","
                    + "\"perm\":6,\"readQueueNums\":8,\"topicSysFlag\":0,\"writeQueueNums\":8}]}")
                    .getBytes(StandardCharsets.UTF_8)));
        }
        step("delete topic in an unknown cluster", () -> request(216, Headers.deleteTopic(TOPIC, "NoSuchCluster")));
        step("delete topic in the cluster", () -> request(216, Headers.deleteTopic(TOPIC, CLUSTER)));
        step("route of the deleted topic", () -> request(105, Headers.routeRequest(TOPIC)));
        knownOn4("4.x points TOPIC_NOT_EXIST at its older FAQ address", "remark after its first line");
        step("delete topic, no cluster", () -> request(216, Headers.deleteTopic("NoSuchTopic", null)));

        step("get kv config", () -> request(101, sample("get_kv_config").header()));
        step("get kv config, unknown key", () -> raw(101, Map.of("namespace", ORDER_NAMESPACE, "key", "nope")));
        step("get kv config, missing namespace", () -> raw(101, Map.of("key", ORDER_TOPIC)));
        step("put kv config, missing key", () -> raw(100, Map.of("namespace", ORDER_NAMESPACE, "value", "v")));
        step("kv list", () -> request(219, sample("get_kvlist_by_namespace").header()));
        step("kv list, unknown namespace", () -> raw(219, Map.of("namespace", "NoSuchNamespace")));
        step("kv list, missing namespace", () -> raw(219, Map.of()));
        step("delete kv config, missing key", () -> raw(102, Map.of("namespace", ORDER_NAMESPACE)));
        step("delete kv config", () -> request(102, sample("delete_kv_config").header()));
        step("kv list after delete", () -> request(219, sample("get_kvlist_by_namespace").header()));

        step("namesrv config", () -> raw(319, Map.of()));
        knownOn4("4.x has fewer options, in hash order", "body");
        step("update namesrv config: enableTopicList=false", () -> raw(318, Map.of())
            .body("enableTopicList=false\n".getBytes(StandardCharsets.UTF_8)));
        step("topics of the cluster, topic list disabled", () -> raw(224, Map.of("cluster", CLUSTER)));
        knownOn4("4.x does not check enableTopicList for GET_TOPICS_BY_CLUSTER", "code", "remark", "body");
        step("update namesrv config, black-listed key", () -> raw(318, Map.of())
            .body("enableTopicList=true\nkvConfigPath=/tmp/elsewhere.json\n".getBytes(StandardCharsets.UTF_8)));
        knownOn4("4.x words the black-list refusal differently", "remark");
        step("update namesrv config, malformed \\u escape", () -> raw(318, Map.of())
            .body("enableTopicList=\\uZZZZ\n".getBytes(StandardCharsets.UTF_8)));
        step("update namesrv config: enableTopicList=true", () -> raw(318, Map.of())
            .body("enableTopicList=true\n".getBytes(StandardCharsets.UTF_8)));

        // UNREGISTER_BROKER is answered before the batch worker applies it; the next step waits
        // for each server to have applied it, so what follows compares settled states.
        step("unregister slave", () -> raw(104, with(fields(104, Headers.unregisterBroker()), "brokerAddr",
            SLAVE_ADDR, "brokerId", "1")), addr -> awaitGone(addr, SLAVE_ADDR));
        step("unregister master", () -> request(104, Headers.unregisterBroker()), addr -> awaitGone(addr,
            MASTER_ADDR));
        step("cluster info after unregistration", () -> raw(106, Map.of()));
        step("route after unregistration", () -> request(105, Headers.routeRequest(TOPIC)));
        knownOn4("4.x points TOPIC_NOT_EXIST at its older FAQ address", "remark after its first line");
        failing("register, missing brokerId", () -> raw(103, without(fields(103,
            Headers.registerBroker(registerBody, false, false, 0L, null)), "brokerId")).body(registerBody));
        // Last, on an empty table: on 4.x it registers broker-a, and a registration of the same
        // DataVersion earlier on would keep 4.x from adding the other topics later (see
        // docs/compatibility.md).
        step("register master, one topic only (5.x: taken for an incremental registration)", () -> request(103,
            Headers.registerBroker(single, false, false, 0L, null)).body(single));
        step("route after the one-topic registration", () -> request(105, Headers.routeRequest(TOPIC)));
        memberOn4("4.x BrokerData has no enableActingMaster", "enableActingMaster");
        // A broker older than 3.0.11 (version < 37) sends a bare TopicConfigSerializeWrapper; no
        // class of these releases writes one any more, so the JSON is spelled out.
        byte[] oldBody = ("{\"dataVersion\":{\"counter\":1,\"timestamp\":1700000000000},\"topicConfigTable\":{"
            + "\"OldTopic\":{\"order\":false,\"perm\":6,\"readQueueNums\":2,\"topicFilterType\":\"SINGLE_TAG\","
            + "\"topicName\":\"OldTopic\",\"topicSysFlag\":0,\"writeQueueNums\":2},"
            + "\"OldTopic2\":{\"order\":false,\"perm\":6,\"readQueueNums\":1,\"topicFilterType\":\"SINGLE_TAG\","
            + "\"topicName\":\"OldTopic2\",\"topicSysFlag\":0,\"writeQueueNums\":1}}}").getBytes(StandardCharsets.UTF_8);
        step("register, version 36 broker, bare topic-config body", () -> raw(103, Map.of("brokerName", "broker-old",
            "brokerAddr", "127.0.0.3:10911", "clusterName", "OldCluster", "haServerAddr", "127.0.0.3:10912",
            "brokerId", "0", "bodyCrc32", String.valueOf(UtilAll.crc32(oldBody)))).body(oldBody).version(36));
        step("route of the old broker's topic, version 36 client", () -> request(105,
            Headers.routeRequest("OldTopic")).version(36));
        memberOn4("4.x BrokerData has no enableActingMaster", "enableActingMaster");
        step("data version of the old broker", () -> raw(322, Map.of("brokerName", "broker-old",
            "brokerAddr", "127.0.0.3:10911", "clusterName", "OldCluster", "brokerId", "0"))
            .body(Bodies.dataVersionReference()));
        memberOn4("4.x DataVersion has no stateVersion", "stateVersion");
        // What Java's unregistration worker makes of it shows only later; both get a second.
        // The state to wait for is whatever Java does, so there is nothing to poll for; the
        // worker takes a queued request as soon as it is queued and handles it in
        // milliseconds, so a second is ample for either NameServer.
        step("unregister, missing brokerName", () -> raw(104, without(fields(104, Headers.unregisterBroker()),
            "brokerName")), addr -> sleep(1000));
        step("cluster info after the unregistration without brokerName", () -> raw(106, Map.of()));
        memberOn4("4.x BrokerData has no enableActingMaster", "enableActingMaster");
    }

    private void step(String name, Supplier<Cmd> request) {
        step(name, request, null);
    }

    private void step(String name, Supplier<Cmd> request, Consumer<String> after) {
        steps.add(new Step(steps.size() + 1 + ". " + name, () -> request.get().command, after, false, NONE));
    }

    /** A request Java fails with an exception (see {@link Step}). */
    private void failing(String name, Supplier<Cmd> request) {
        steps.add(new Step(steps.size() + 1 + ". " + name, () -> request.get().command, null, true, NONE));
    }

    /** Marks the step just added as differing on 4.x in {@code fields}, for {@code reason}. */
    private void knownOn4(String reason, String... fields) {
        if (!Release.isV5()) {
            known(new Known(Set.of(fields), Set.of(), false, reason));
        }
    }

    /** Marks the step just added as differing in its body's member {@code member} on 4.x. */
    private void memberOn4(String reason, String member) {
        if (!Release.isV5()) {
            known(new Known(Set.of(), Set.of(member), false, reason));
        }
    }

    private void known(Known known) {
        Step last = steps.remove(steps.size() - 1);
        steps.add(new Step(last.name(), last.request(), last.after(), last.exceptionRemark(),
            last.known().and(known)));
    }

    private static RequestSample sample(String name) {
        return Headers.requests().stream().filter(s -> s.name().equals(name)).findFirst()
            .orElseThrow(() -> new IllegalStateException("no sample " + name));
    }

    /** As every Java sender builds a request. */
    private static Cmd request(int code, CommandCustomHeader header) {
        return new Cmd(RemotingCommand.createRequestCommand(code, header)).version(Release.current());
    }

    /** A request whose extFields are given as they are (invalid ones: no header class would allow them). */
    private static Cmd raw(int code, Map<String, String> extFields) {
        RemotingCommand command = RemotingCommand.createRequestCommand(code, null);
        command.setExtFields(new HashMap<>(extFields));
        return new Cmd(command).version(Release.current());
    }

    /** The extFields the real header class writes, to start an invalid variant from. */
    private static Map<String, String> fields(int code, CommandCustomHeader header) {
        RemotingCommand command = RemotingCommand.createRequestCommand(code, header);
        command.makeCustomHeaderToNet();
        return new HashMap<>(command.getExtFields());
    }

    private static Map<String, String> with(Map<String, String> fields, String... keyValues) {
        for (int i = 0; i < keyValues.length; i += 2) {
            fields.put(keyValues[i], keyValues[i + 1]);
        }
        return fields;
    }

    private static Map<String, String> without(Map<String, String> fields, String key) {
        fields.remove(key);
        return fields;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private void awaitGone(String namesrv, String brokerAddr) {
        Poll.until(Duration.ofSeconds(10), 50, brokerAddr + " unregistered from " + namesrv, () -> {
            RemotingCommand info = client.invoke(namesrv, RemotingCommand.createRequestCommand(106, null), 3000);
            String body = info.getBody() == null ? "" : new String(info.getBody(), StandardCharsets.UTF_8);
            return body.contains(brokerAddr) ? null : Boolean.TRUE;
        });
    }

    // ---- the comparison ----------------------------------------------------------------------

    /**
     * Compared: code, flag, remark, extFields (as maps: their order on the wire is a HashMap's),
     * serialize type and body. Not compared: opaque (each client call gets its own), version and
     * language (each server writes its own). Bodies: byte-equal, or else equal as parsed JSON
     * ({@link CanonicalJson}), or else, for the properties text of GET_NAMESRV_CONFIG, equal
     * line by line once {@link #PROCESS_LOCAL_CONFIG} values are masked.
     */
    private void compare(Step step, RemotingCommand expected, RemotingCommand actual) {
        List<String> diffs = new ArrayList<>();
        Set<String> skip = step.known().fields();
        if (step.known() != NONE) {
            System.out.println(step.name() + ": not comparing " + skip + " on this release (" + step.known().reason()
                + ")\n  java:    " + describe(expected) + "\n  waymark: " + describe(actual));
        }
        if (expected == null || actual == null) {
            if (expected != actual && !skip.contains("response")) {
                mismatches.add(step.name() + ": only one server answered\n  request: " + describe(request(step))
                    + "\n  java:    " + describe(expected) + "\n  waymark: " + describe(actual));
            }
            return;
        }
        if (expected.getCode() != actual.getCode() && !skip.contains("code")) {
            diffs.add("code");
        }
        if (expected.getFlag() != actual.getFlag()) {
            diffs.add("flag");
        }
        if (skip.contains("remark")) {
            // compared on the other release only
        } else if (step.exceptionRemark()) {
            if (expected.getCode() != 1 || actual.getRemark() == null || actual.getRemark().isEmpty()) {
                diffs.add("remark (expected SYSTEM_ERROR with an exception description)");
            }
        } else if (skip.contains("remark after its first line")) {
            if (!Objects.equals(firstLine(expected.getRemark()), firstLine(actual.getRemark()))) {
                diffs.add("remark");
            }
        } else if (!Objects.equals(expected.getRemark(), actual.getRemark())) {
            diffs.add("remark");
        }
        if (!Objects.equals(expected.getExtFields(), actual.getExtFields()) && !skip.contains("extFields")) {
            diffs.add("extFields");
        }
        if (expected.getSerializeTypeCurrentRPC() != actual.getSerializeTypeCurrentRPC()) {
            diffs.add("serializeType");
        }
        if (!skip.contains("body") && !sameBody(expected.getBody(), actual.getBody(), step.known())) {
            diffs.add("body");
        }
        if (!diffs.isEmpty()) {
            mismatches.add(step.name() + ": " + String.join(", ", diffs) + " differ\n  request: "
                + describe(request(step)) + "\n  java:    " + describe(expected) + "\n  waymark: "
                + describe(actual));
        }
    }

    private static String firstLine(String remark) {
        return remark == null ? null : remark.split("\n", -1)[0];
    }

    private static RemotingCommand request(Step step) {
        RemotingCommand request = step.request().get();
        request.makeCustomHeaderToNet();
        return request;
    }

    private static boolean sameBody(byte[] expected, byte[] actual, Known known) {
        if (expected == null || actual == null) {
            return expected == actual;
        }
        if (Arrays.equals(expected, actual)) {
            return true;
        }
        String e = new String(expected, StandardCharsets.UTF_8);
        String a = new String(actual, StandardCharsets.UTF_8);
        String ej = CanonicalJson.canonical(e, known.dropMembers(), known.anyDialect());
        if (ej != null) {
            return ej.equals(CanonicalJson.canonical(a, known.dropMembers(), known.anyDialect()));
        }
        return maskedConfig(e).equals(maskedConfig(a));
    }

    private static List<String> maskedConfig(String properties) {
        List<String> lines = new ArrayList<>();
        for (String line : properties.split("\n", -1)) {
            int eq = line.indexOf('=');
            String key = eq < 0 ? line : line.substring(0, eq);
            if (key.equals("rocketmqHome")) {
                // Java takes it from the JVM (the harness sets rocketmq.home.dir for the in-process
                // NameServer), Waymark from ROCKETMQ_HOME, which the harness leaves unset; both
                // omit the line when unset.
                continue;
            }
            if (key.equals("routeSnapshotPath")) {
                // Waymark's own key, which the harness sets so that each Waymark NameServer has
                // its own route snapshot (WaymarkNameServer); a key set is a key shown, and the
                // Java NameServer has no snapshot to point anywhere.
                continue;
            }
            lines.add(PROCESS_LOCAL_CONFIG.contains(key) ? key + "=<process-local>" : line);
        }
        return lines;
    }

    private static String describe(RemotingCommand c) {
        if (c == null) {
            return "no response within 3 s";
        }
        String body = c.getBody() == null ? "null" : new String(c.getBody(), StandardCharsets.UTF_8);
        return "code=" + c.getCode() + " flag=" + c.getFlag() + " version=" + c.getVersion() + " remark="
            + (c.getRemark() == null ? "null" : "\"" + c.getRemark() + "\"") + " extFields="
            + (c.getExtFields() == null ? "null" : new TreeMap<>(c.getExtFields())) + " serializeType="
            + c.getSerializeTypeCurrentRPC() + " body=" + body;
    }
}
