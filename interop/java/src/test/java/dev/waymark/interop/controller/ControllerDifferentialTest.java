package dev.waymark.interop.controller;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.waymark.interop.harness.ControllerCodes;
import dev.waymark.interop.harness.ControllerServer;
import dev.waymark.interop.harness.Controllers;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.RawClient;
import dev.waymark.interop.vectors.Release;
import dev.waymark.interop.vectors.VectorFiles;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The live differential test of the controller: the nine scenarios {@link ControllerVectorTest}
 * recorded against the real Java 5.5.1 controller
 * ({@code crates/rmq-controller/tests/vectors/controller_*_v551.json}) are replayed, request by
 * request and in the recorded order, against one controller of the kind chosen by
 * {@code -Dwaymark.controller}, and every answer (code, version, flag, remark, extFields, with
 * an absent map and {@code {}} told apart, body) is compared with the recorded one, after the
 * same placeholders ({@code <controller>}, {@code <dir>}, ...) replace what differs from run to
 * run; NOTIFY_BROKER_ROLE_CHANGED frames are received on local sockets standing in for the
 * replicas and compared too.
 *
 * <p>Against Waymark's binary the differences docs/controller.md lists as deliberate are
 * allowed by {@link #ALLOWED}, keyed by scenario and step, each with the answer Waymark gives
 * instead and why; any other difference fails, naming the step and both answers, and so does
 * an allowed difference that no longer occurs. Against Java's controller (the control) nothing
 * may differ: that checks the replay itself.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 180)
class ControllerDifferentialTest {
    /** The order ControllerVectorTest recorded them in, against one controller. */
    private static final List<String> SCENARIOS = List.of("timeline", "alter_refusals", "id_refusals",
        "elect_refusals", "phantom_election", "clean", "other_refusals", "metadata_config", "notify");
    /** As {@link Scenario}: a request that may append to the log is followed by a short pause. */
    private static final Set<Integer> WRITES = Set.of(ControllerCodes.ALTER_SYNC_STATE_SET,
        ControllerCodes.ELECT_MASTER, ControllerCodes.REGISTER_BROKER, ControllerCodes.CLEAN_BROKER_DATA,
        ControllerCodes.APPLY_BROKER_ID);
    private static final long SETTLE_MILLIS = 100;
    private static final Duration NOTIFY_WAIT = Duration.ofSeconds(10);
    private static final Duration QUIET_WAIT = Duration.ofMillis(500);
    private static final String JAVA_OBJECT_NAME =
        "([A-Za-z_$][\\w$]*(?:\\.[A-Za-z_$][\\w$]*)+)@[0-9a-f]{1,8}(?![0-9a-zA-Z])";

    /**
     * A difference Waymark keeps on purpose: the step (scenario, step name as recorded, and
     * which step of that name, 1 = the first), the response code Waymark gives there, a text
     * its answer shows (in the rendered frame), and the row of docs/controller.md it follows
     * from. Steps after a deliberate difference whose answers follow from it are listed too.
     */
    record Allowed(String scenario, String step, int occurrence, Integer code, String shows, String bodyFrom,
                   String bodyTo, String why) {
        Allowed(String scenario, String step, int occurrence, int code, String shows, String why) {
            this(scenario, step, occurrence, code, shows, null, null, why);
        }

        /**
         * A difference in the body alone: Waymark's answer must be Java's exactly, once
         * {@code from} in Java's body is replaced by {@code to}.
         */
        static Allowed body(String scenario, String step, int occurrence, String from, String to, String why) {
            return new Allowed(scenario, step, occurrence, null, null, from, to, why);
        }

        /** Whether {@code ours} is the answer this entry allows where Java answered {@code java}. */
        boolean matches(Map<String, Object> java, Map<String, Object> ours) {
            if (ours == null) {
                return false;
            }
            if (bodyFrom != null) {
                Object body = java.get("body");
                if (!(body instanceof String text) || !text.contains(bodyFrom)) {
                    return false;
                }
                Map<String, Object> expected = new TreeMap<>(java);
                expected.put("body", text.replace(bodyFrom, bodyTo));
                return expected.equals(ours);
            }
            return Long.valueOf(code).equals(ours.get("code")) && JsonText.write(ours).contains(shows);
        }
    }

    /** What Java's GET_CONTROLLER_CONFIG prints for its JraftConfig field: the object's identity. */
    private static final String JAVA_JRAFT_LINE = "jraftConfig=org.apache.rocketmq.common.JraftConfig@<identity-hash>\n";
    /** What Waymark prints instead: the JraftConfig keys it reads, at their defaults (sorted, as every key). */
    private static final String WAYMARK_JRAFT_LINES = "jRaftControllerRPCAddr=localhost:9770,localhost:9771,localhost:9772\n"
        + "jRaftElectionTimeoutMs=1000\njRaftGroupId=jRaft-Controller\njRaftInitConf=localhost:9880,localhost:9881,localhost:9882\n"
        + "jRaftScanWaitTimeoutMs=1000\njRaftServerId=localhost:9880\njRaftSnapshotIntervalSecs=3600\n";

    static final List<Allowed> ALLOWED = List.of(
        // "first election of a set: only a registered, alive replica" (Java lets a replica that
        // never heartbeated win), and the steps whose answers follow from it.
        new Allowed("phantom_election", "1: CONTROLLER_ELECT_MASTER (broker trigger): first election, 1 wins", 1,
            ControllerCodes.ELECT_MASTER_FAILED, "Failed to elect a new master",
            "first election of a set: 1 never heartbeated, so it cannot win"),
        new Allowed("phantom_election", "CONTROLLER_GET_REPLICA_INFO: master 1", 1, ControllerCodes.SUCCESS,
            "\"masterEpoch\": \"0\"", "follows: no master was elected"),
        new Allowed("phantom_election", "1: CONTROLLER_REGISTER_BROKER: the master is not alive, no master fields", 1,
            ControllerCodes.SUCCESS, "\\\"syncStateSet\\\":[]", "follows: no master was elected, the SSS is empty"),
        new Allowed("phantom_election", "CONTROLLER_GET_SYNC_STATE_DATA [phantom-a]", 1, ControllerCodes.SUCCESS,
            "\\\"masterEpoch\\\":0", "follows: no master was elected"),
        new Allowed("phantom_election", "2: CONTROLLER_REGISTER_BROKER", 1, ControllerCodes.SUCCESS,
            "\\\"syncStateSet\\\":[]", "follows: no master was elected, the SSS is empty"),
        new Allowed("phantom_election", "2: CONTROLLER_ELECT_MASTER (broker trigger) from outside the SSS", 1,
            ControllerCodes.SUCCESS, "\"masterBrokerId\": \"2\"",
            "follows: the set never had a master, so its first election goes to 2, registered and alive"),
        new Allowed("phantom_election", "CONTROLLER_ELECT_MASTER as the controller triggers it (clusterName \"\", brokerId -1)",
            1, ControllerCodes.MASTER_STILL_EXIST, "The old master 2 is still alive", "follows: 2 is the alive master"),
        new Allowed("phantom_election", "CONTROLLER_GET_REPLICA_INFO: no master, master epoch 2, SSS kept", 1,
            ControllerCodes.SUCCESS, "\"masterBrokerId\": \"2\"", "follows: 2 is master at epoch 1"),
        new Allowed("phantom_election", "2: CONTROLLER_ELECT_MASTER (broker trigger) again", 1,
            ControllerCodes.MASTER_STILL_EXIST, "The old master 2 is still alive", "follows: 2 is the alive master"),
        new Allowed("phantom_election", "2: CONTROLLER_REGISTER_BROKER: no master", 1, ControllerCodes.SUCCESS,
            "\"masterBrokerId\": \"2\"", "follows: 2 is master"),
        // "an id applied out of order: next id becomes id + 1, ids are never handed out twice"
        new Allowed("id_refusals", "next: CONTROLLER_GET_NEXT_BROKER_ID", 1, ControllerCodes.SUCCESS,
            "\"nextBrokerId\": \"6\"", "an id applied out of order (5 while 3 was next): the next id is 6, Java offers 3"),
        new Allowed("id_refusals", "4: APPLY_BROKER_ID 4", 1, ControllerCodes.BROKER_ID_INVALID,
            "Fail to apply brokerId: 4", "follows: 4 is below the next id and was never applied, so it is refused"),
        new Allowed("id_refusals", "next: CONTROLLER_GET_NEXT_BROKER_ID offers 5, which 5 holds", 1,
            ControllerCodes.SUCCESS, "\"nextBrokerId\": \"6\"", "follows: the next id is 6; Java offers 5, which 5 holds"),
        new Allowed("id_refusals", "CONTROLLER_GET_SYNC_STATE_DATA [ids-a]: 1 is at its new address", 1,
            ControllerCodes.SUCCESS, "\\\"brokerId\\\":5", "follows: 4 was refused, the set has 1, 2 and 5"),
        // "unparsable brokerControllerIdsToClean: 2009 naming the part that is not a number"
        new Allowed("clean", "CLEAN ids 1;x", 1, ControllerCodes.INVALID_CLEAN_BROKER_METADATA,
            "\\\"x\\\" is not a broker id", "the remark names the part that is not a number, not a Java exception"),
        // "first election of a set" again: clean-d 1 never heartbeated.
        new Allowed("clean", "clean-d 1: CONTROLLER_ELECT_MASTER (broker trigger): first election", 1,
            ControllerCodes.ELECT_MASTER_FAILED, "Failed to elect a new master",
            "first election of a set: clean-d 1 never heartbeated, so it cannot win"),
        new Allowed("clean", "clean-d 2: CONTROLLER_REGISTER_BROKER", 1, ControllerCodes.SUCCESS,
            "\\\"syncStateSet\\\":[]", "follows: no master was elected"),
        // "a clean that empties the SSS: the replica leaves the id map and the SSS together"
        new Allowed("clean", "CONTROLLER_GET_REPLICA_INFO [clean-d]: the set is gone", 1, ControllerCodes.SUCCESS,
            "\\\"syncStateSet\\\":[]", "cleaning 1 leaves the set whole (with 2), without a master; Java removed the "
                + "SSS half of the set"),
        new Allowed("clean", "clean-d 2: CONTROLLER_REGISTER_BROKER: the set is gone", 1, ControllerCodes.SUCCESS,
            "brokerName", "follows: 2 is still registered in the whole set"),
        new Allowed("clean", "CONTROLLER_GET_SYNC_STATE_DATA [clean-d]: only 3, epochs 0", 1, ControllerCodes.SUCCESS,
            "\\\"brokerId\\\":2", "follows: 2 was never removed, the set has 2 and 3; Java lost 2"),
        new Allowed("clean", "next: CONTROLLER_GET_NEXT_BROKER_ID", 5, ControllerCodes.SUCCESS,
            "\"nextBrokerId\": \"4\"", "follows: ids are never handed out twice; Java's rebuilt set offers 2 again"),
        // "CONTROLLER_GET_SYNC_STATE_DATA without names: SYSTEM_ERROR naming the missing list"
        new Allowed("other_refusals", "CONTROLLER_GET_SYNC_STATE_DATA without a body", 1, ControllerCodes.SYSTEM_ERROR,
            "no broker names", "SYSTEM_ERROR as Java's, with a remark naming the missing list"),
        new Allowed("other_refusals", "CONTROLLER_GET_SYNC_STATE_DATA []", 1, ControllerCodes.SYSTEM_ERROR,
            "no broker names", "SYSTEM_ERROR as Java's, with a remark naming the missing list"),
        // "Malformed requests (a missing header field ...) are answered CONTROLLER_INVALID_REQUEST
        // (2005) naming the problem."
        new Allowed("other_refusals", "BROKER_HEARTBEAT (two-way) without clusterName: accepted", 1,
            ControllerCodes.INVALID_REQUEST, "clusterName",
            "a heartbeat without clusterName (liveness is keyed by cluster) is malformed: 2005 naming the field"),
        // docs/controller.md, "Options": the jRaft* keys are read and printed. Java's
        // GET_CONTROLLER_CONFIG prints its ControllerConfig's JraftConfig field as the object's
        // toString (class name and identity hash, different in every run); Waymark, which has
        // no such object, prints the seven keys it stands for, at their defaults. Every other
        // line of the body must be Java's.
        Allowed.body("metadata_config", "GET_CONTROLLER_CONFIG", 1, JAVA_JRAFT_LINE, WAYMARK_JRAFT_LINES,
            "GET_CONTROLLER_CONFIG prints the jRaft* keys where Java prints jraftConfig=<JraftConfig object>"),
        Allowed.body("metadata_config", "GET_CONTROLLER_CONFIG: electMasterMaxRetryCount=5", 1, JAVA_JRAFT_LINE,
            WAYMARK_JRAFT_LINES, "GET_CONTROLLER_CONFIG prints the jRaft* keys where Java prints jraftConfig=<JraftConfig "
                + "object>"));

    private ControllerServer controller;
    private RawClient client;
    private Path repoRoot;
    private boolean waymark;

    @BeforeAll
    @Timeout(value = 150)
    void start() throws Exception {
        assumeTrue(Controllers.chosen(), "the controller differential test runs only with -Dwaymark.controller=waymark|java");
        assumeTrue("5.5.1".equals(Release.version()), "the controller differential test runs in the rmq5 profile only");
        repoRoot = Path.of(System.getProperty("waymark.repo.root")).toAbsolutePath().normalize();
        waymark = Controllers.isWaymark();
        // The recorded controller's settings (those its files name), and the harness default
        // the Java recording ran with (DLedger files of 16 MiB, printed by GET_CONTROLLER_CONFIG).
        Map<String, String> settings = new LinkedHashMap<>();
        Map<?, ?> recorded = (Map<?, ?>) ((Map<?, ?>) load("timeline").get("controller")).get("settings");
        recorded.forEach((k, v) -> {
            if (!Set.of("controllerDLegerGroup", "controllerDLegerPeers", "controllerDLegerSelfId").contains(k)) {
                settings.put((String) k, (String) v);
            }
        });
        settings.put("mappedFileSize", String.valueOf(16 << 20));
        controller = Controllers.start(settings);
        client = new RawClient();
    }

    @AfterAll
    void stop() {
        if (controller != null) {
            controller.discard();
        }
        if (client != null) {
            client.close();
        }
    }

    private Map<String, Object> load(String scenario) throws Exception {
        Path file = repoRoot.resolve(VectorFiles.CONTROLLER_DIR).resolve("controller_" + scenario + "_" + Release.tag()
            + ".json");
        @SuppressWarnings("unchecked")
        Map<String, Object> doc = (Map<String, Object>) JsonRead.parse(Files.readString(file, StandardCharsets.UTF_8));
        return doc;
    }

    /** One step whose answer differs from the recorded one. */
    private record Difference(String scenario, int index, String step, int occurrence, Map<String, Object> java,
                              Map<String, Object> ours) {
        String describe() {
            String text = scenario + ", step " + index + " \"" + step + "\"" + (occurrence > 1 ? " (#" + occurrence + ")" : "")
                + ":\n  Java    " + oneLine(java) + "\n  " + (Controllers.isWaymark() ? "Waymark " : "replayed")
                + " " + oneLine(ours);
            // Long bodies (the configuration): the lines that differ.
            if (java != null && ours != null && java.get("body") instanceof String a && ours.get("body") instanceof String b
                && a.contains("\n") && b.contains("\n") && !a.equals(b)) {
                List<String> onlyJava = new ArrayList<>(a.lines().toList());
                onlyJava.removeAll(b.lines().toList());
                List<String> onlyOurs = new ArrayList<>(b.lines().toList());
                onlyOurs.removeAll(a.lines().toList());
                text += "\n  body lines only in Java's: " + onlyJava + "; only in this one's: " + onlyOurs;
            }
            return text;
        }

        private static String oneLine(Map<String, Object> frame) {
            return frame == null ? "(nothing)" : JsonText.write(frame).replaceAll("\\s*\\n\\s*", " ").trim();
        }
    }

    @Test
    void everyRecordedExchange() throws Exception {
        List<Difference> differences = new ArrayList<>();
        int compared = 0;
        try (NotifySink one = new NotifySink(); NotifySink two = new NotifySink()) {
            Placeholders placeholders = new Placeholders();
            placeholders.literal(controller.dir().toString(), "<dir>", "the controller's directory");
            placeholders.literal(controller.addr(), "<controller>", "the controller's address");
            int port = Integer.parseInt(controller.addr().substring(controller.addr().lastIndexOf(':') + 1));
            placeholders.propertyValue(port, "<controller-port>", "the controller's port");
            placeholders.pattern(JAVA_OBJECT_NAME, "$1@<identity-hash>", "<identity-hash>", "an identity hash");
            placeholders.literal(one.addr(), "<broker:1>", "replica 1 of notify-a");
            placeholders.literal(two.addr(), "<broker:2>", "replica 2 of notify-a");
            Map<String, String> fill = new LinkedHashMap<>();
            fill.put("<controller-port>", String.valueOf(port));
            fill.put("<controller>", controller.addr());
            fill.put("<dir>", controller.dir().toString());
            fill.put("<broker:1>", one.addr());
            fill.put("<broker:2>", two.addr());
            Map<String, NotifySink> sinks = Map.of("<broker:1>", one, "<broker:2>", two);

            for (String scenario : SCENARIOS) {
                List<?> steps = (List<?>) load(scenario).get("steps");
                Map<String, Integer> seen = new HashMap<>();
                for (int i = 0; i < steps.size(); i++) {
                    Map<?, ?> step = (Map<?, ?>) steps.get(i);
                    String name = (String) step.get("name");
                    int occurrence = seen.merge(name, 1, Integer::sum);
                    Map<String, Object> java;
                    Map<String, Object> ours;
                    if (step.containsKey("notify")) {
                        Map<?, ?> notify = (Map<?, ?>) step.get("notify");
                        java = frame((Map<?, ?>) notify.get("frame"));
                        RemotingCommand frame = sinks.get((String) notify.get("to")).poll(NOTIFY_WAIT);
                        ours = frame == null ? null : frame(frame, placeholders);
                    } else {
                        Map<?, ?> request = (Map<?, ?>) step.get("request");
                        java = frame((Map<?, ?>) step.get("response"));
                        RemotingCommand sent = request(request, fill);
                        ours = frame(client.invoke(controller.addr(), sent, 5000), placeholders);
                        if (WRITES.contains(sent.getCode())) {
                            Poll.sleep(SETTLE_MILLIS);
                        }
                    }
                    compared++;
                    if (!Objects.equals(java, ours)) {
                        differences.add(new Difference(scenario, i + 1, name, occurrence, java, ours));
                    }
                }
                if (scenario.equals("notify")) {
                    for (Map.Entry<String, NotifySink> sink : sinks.entrySet()) {
                        RemotingCommand extra = sink.getValue().poll(QUIET_WAIT);
                        if (extra != null) {
                            differences.add(new Difference(scenario, steps.size() + 1, "no further frame to "
                                + sink.getKey(), 1, null, frame(extra, placeholders)));
                        }
                    }
                }
            }
        }
        judge(differences, compared);
    }

    /** Fails on a difference the allow-list does not name (Waymark) or on any (Java), and on stale entries. */
    private void judge(List<Difference> differences, int compared) {
        List<String> unexpected = new ArrayList<>();
        List<String> allowed = new ArrayList<>();
        Set<Allowed> used = new LinkedHashSet<>();
        for (Difference d : differences) {
            Allowed entry = !waymark ? null : ALLOWED.stream().filter(a -> a.scenario().equals(d.scenario())
                && a.step().equals(d.step()) && a.occurrence() == d.occurrence()).findFirst().orElse(null);
            if (entry != null && entry.matches(d.java(), d.ours())) {
                used.add(entry);
                allowed.add(d.scenario() + " / " + d.step() + ": " + entry.why());
            } else {
                unexpected.add(d.describe() + (entry == null ? "" : "\n  (allowed only as " + (entry.bodyFrom() == null
                    ? "code " + entry.code() + " showing " + entry.shows() : "Java's answer with " + entry.bodyFrom()
                    + " replaced by " + entry.bodyTo()) + ": " + entry.why() + ")"));
            }
        }
        List<String> stale = new ArrayList<>();
        if (waymark) {
            for (Allowed entry : ALLOWED) {
                if (!used.contains(entry)) {
                    stale.add(entry.scenario() + " / " + entry.step() + " #" + entry.occurrence() + ": " + entry.why());
                }
            }
        }
        System.out.printf("controller differential test (%s): %d exchanges compared, %d differ, %d of them allowed%n",
            Controllers.kind(), compared, differences.size(), allowed.size());
        allowed.forEach(a -> System.out.println("  allowed: " + a));
        if (!unexpected.isEmpty() || !stale.isEmpty()) {
            fail(unexpected.size() + " of " + compared + " answers differ from Java 5.5.1's"
                + (waymark ? " beyond the allowed differences" : " (the control: the replay itself is wrong)") + ":\n"
                + String.join("\n", unexpected)
                + (stale.isEmpty() ? "" : "\nallowed differences that no longer occur (remove them):\n  "
                    + String.join("\n  ", stale)));
        }
        assertTrue(compared > 190, "only " + compared + " exchanges compared");
    }

    /** A recorded request as a command, placeholders filled in. */
    private static RemotingCommand request(Map<?, ?> recorded, Map<String, String> fill) {
        RemotingCommand command = RemotingCommand.createRequestCommand(((Long) recorded.get("code")).intValue(), null);
        command.setVersion(((Long) recorded.get("version")).intValue());
        if ((((Long) recorded.get("flag")).intValue() & 2) != 0) {
            command.markOnewayRPC();
        }
        Map<?, ?> ext = (Map<?, ?>) recorded.get("extFields");
        if (ext != null) {
            ext.forEach((k, v) -> command.addExtField(fillIn((String) k, fill), fillIn((String) v, fill)));
        }
        String body = (String) recorded.get("body");
        if (body != null) {
            command.setBody(fillIn(body, fill).getBytes(StandardCharsets.UTF_8));
        }
        return command;
    }

    private static String fillIn(String text, Map<String, String> fill) {
        String out = text;
        for (Map.Entry<String, String> entry : fill.entrySet()) {
            out = out.replace(entry.getKey(), entry.getValue());
        }
        return out;
    }

    /** A recorded frame, as {@link #frame(RemotingCommand, Placeholders)} renders a live one. */
    private static Map<String, Object> frame(Map<?, ?> recorded) {
        Map<String, Object> out = new TreeMap<>();
        out.put("code", recorded.get("code"));
        out.put("version", recorded.get("version"));
        out.put("flag", recorded.get("flag"));
        out.put("remark", recorded.get("remark"));
        Map<?, ?> ext = (Map<?, ?>) recorded.get("extFields");
        if (ext == null) {
            out.put("extFields", null);
        } else {
            Map<String, Object> fields = new TreeMap<>();
            ext.forEach((k, v) -> fields.put((String) k, v));
            out.put("extFields", fields);
        }
        out.put("body", recorded.get("body"));
        return out;
    }

    /** A live frame with the run's values replaced by placeholders, as the recording did. */
    private static Map<String, Object> frame(RemotingCommand command, Placeholders placeholders) {
        Map<String, Object> out = new TreeMap<>();
        out.put("code", (long) command.getCode());
        out.put("version", (long) command.getVersion());
        out.put("flag", (long) command.getFlag());
        out.put("remark", placeholders.apply(command.getRemark()));
        Map<String, String> ext = command.getExtFields();
        if (ext == null) {
            out.put("extFields", null);
        } else {
            Map<String, Object> fields = new TreeMap<>();
            ext.forEach((k, v) -> fields.put(placeholders.apply(k), placeholders.apply(v)));
            out.put("extFields", fields);
        }
        out.put("body", placeholders.apply(Scenario.text(command.getBody())));
        return out;
    }
}
