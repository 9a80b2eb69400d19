package dev.waymark.interop.controller;

import static dev.waymark.interop.harness.ControllerCodes.ALTER_SYNC_STATE_SET;
import static dev.waymark.interop.harness.ControllerCodes.ALTER_SYNC_STATE_SET_FAILED;
import static dev.waymark.interop.harness.ControllerCodes.APPLY_BROKER_ID;
import static dev.waymark.interop.harness.ControllerCodes.BROKER_HEARTBEAT;
import static dev.waymark.interop.harness.ControllerCodes.BROKER_ID_INVALID;
import static dev.waymark.interop.harness.ControllerCodes.BROKER_METADATA_NOT_EXIST;
import static dev.waymark.interop.harness.ControllerCodes.BROKER_NEED_TO_BE_REGISTERED;
import static dev.waymark.interop.harness.ControllerCodes.BROKER_NOT_ALIVE;
import static dev.waymark.interop.harness.ControllerCodes.CLEAN_BROKER_DATA;
import static dev.waymark.interop.harness.ControllerCodes.ELECT_MASTER;
import static dev.waymark.interop.harness.ControllerCodes.ELECT_MASTER_FAILED;
import static dev.waymark.interop.harness.ControllerCodes.FENCED_MASTER_EPOCH;
import static dev.waymark.interop.harness.ControllerCodes.FENCED_SYNC_STATE_SET_EPOCH;
import static dev.waymark.interop.harness.ControllerCodes.GET_CONTROLLER_CONFIG;
import static dev.waymark.interop.harness.ControllerCodes.GET_METADATA_INFO;
import static dev.waymark.interop.harness.ControllerCodes.GET_NEXT_BROKER_ID;
import static dev.waymark.interop.harness.ControllerCodes.GET_REPLICA_INFO;
import static dev.waymark.interop.harness.ControllerCodes.GET_SYNC_STATE_DATA;
import static dev.waymark.interop.harness.ControllerCodes.INVALID_CLEAN_BROKER_METADATA;
import static dev.waymark.interop.harness.ControllerCodes.INVALID_MASTER;
import static dev.waymark.interop.harness.ControllerCodes.INVALID_REPLICAS;
import static dev.waymark.interop.harness.ControllerCodes.INVALID_REQUEST;
import static dev.waymark.interop.harness.ControllerCodes.MASTER_NOT_AVAILABLE;
import static dev.waymark.interop.harness.ControllerCodes.MASTER_STILL_EXIST;
import static dev.waymark.interop.harness.ControllerCodes.NO_PERMISSION;
import static dev.waymark.interop.harness.ControllerCodes.NOTIFY_BROKER_ROLE_CHANGED;
import static dev.waymark.interop.harness.ControllerCodes.REGISTER_BROKER;
import static dev.waymark.interop.harness.ControllerCodes.REQUEST_CODE_NOT_SUPPORTED;
import static dev.waymark.interop.harness.ControllerCodes.SUCCESS;
import static dev.waymark.interop.harness.ControllerCodes.SYSTEM_ERROR;
import static dev.waymark.interop.harness.ControllerCodes.UPDATE_CONTROLLER_CONFIG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.fail;

import dev.waymark.interop.harness.ControllerProcess;
import dev.waymark.interop.harness.RawClient;
import dev.waymark.interop.vectors.Cmd;
import dev.waymark.interop.vectors.Release;
import dev.waymark.interop.vectors.VectorFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * Real controller exchanges as test vectors for the Rust controller: one real one-node
 * controller of the profile's release ({@link ControllerProcess}, its own JVM, as
 * {@code ControllerStartup} would run it) is driven over the wire, with the real
 * {@code NettyRemotingClient}, through deterministic scenarios; each scenario becomes
 * {@code crates/rmq-controller/tests/vectors/controller_<scenario>_<tag>.json} plus a
 * {@code .meta} file (see that directory's README.md).
 *
 * <p>Determinism: both scans run once an hour, so the controller does nothing by itself;
 * replicas that must count as alive send a two-way BROKER_HEARTBEAT with a one-hour timeout,
 * replicas that must count as dead never do; broker addresses, check codes and
 * {@code invokeTime} are fixed; the controller's address, the stand-in brokers' ports and
 * its directory become placeholders. {@code notifyBrokerRoleChanged} is off, so that no
 * election sends anything to the made-up addresses, except in the notify scenario, which
 * switches it on with UPDATE_CONTROLLER_CONFIG for replicas on local sockets. Each scenario
 * has its own broker sets, so the order they run in only matters for the controller config.
 *
 * <ul>
 *   <li>{@code -Dwaymark.vectors.write=true}: (re)writes this release's controller vectors
 *       in the repository, deleting the ones an earlier run of the release wrote.</li>
 *   <li>{@code -Dwaymark.vectors.dir=DIR}: writes them under {@code DIR}, same relative
 *       paths (interop/run-java.sh --check-vectors compares them with the committed ones).</li>
 *   <li>neither: each scenario is compared with the committed file of this release, when
 *       there is one, byte for byte.</li>
 * </ul>
 * Runs where the release has a controller (5.x); skipped on 4.x.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@EnabledIf(value = "dev.waymark.interop.harness.JavaControllers#available",
    disabledReason = "this RocketMQ release has no controller")
@Timeout(value = 120)
class ControllerVectorTest {
    private static final String CLUSTER = "DefaultCluster";
    /** Every {@code invokeTime} and check-code timestamp. */
    private static final String T = "1700000000000";
    /** Heartbeat timeout of the replicas that must stay alive: longer than any run. */
    private static final String ALIVE_FOR = "3600000";
    private static final Duration NOTIFY_WAIT = Duration.ofSeconds(10);
    private static final Duration QUIET_WAIT = Duration.ofMillis(500);
    /** {@code Object.toString()} of an object without its own: {@code a.b.Class@1b2c3d4e}. */
    private static final String JAVA_OBJECT_NAME =
        "([A-Za-z_$][\\w$]*(?:\\.[A-Za-z_$][\\w$]*)+)@[0-9a-f]{1,8}(?![0-9a-zA-Z])";

    /** The controller's options (beyond the harness's one-node defaults), recorded in every file. */
    private static final Map<String, String> SETTINGS = settings();

    private ControllerProcess controller;
    private RawClient client;
    private final Placeholders placeholders = new Placeholders();
    private Path repoRoot;
    private String writeDir;
    private boolean intoRepo;
    private final List<String> notes = new ArrayList<>();

    private static Map<String, String> settings() {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("scanInactiveMasterInterval", "3600000");
        s.put("scanNotActiveBrokerInterval", "3600000");
        s.put("notifyBrokerRoleChanged", "false");
        return s;
    }

    @BeforeAll
    @Timeout(value = 150)
    void start() throws Exception {
        repoRoot = Path.of(System.getProperty("waymark.repo.root")).toAbsolutePath().normalize();
        writeDir = System.getProperty("waymark.vectors.dir", "");
        intoRepo = Boolean.getBoolean("waymark.vectors.write");
        if (intoRepo) {
            VectorFiles.deleteWithMeta(repoRoot.resolve(VectorFiles.CONTROLLER_DIR), Release.version());
        }
        controller = ControllerProcess.start(ControllerProcess.classpathFile(), SETTINGS);
        client = new RawClient();
        placeholders.literal(controller.dir().toString(), "<dir>",
            "the controller's temporary directory (store, config file, rocketmqHome)");
        placeholders.literal(controller.addr(), "<controller>",
            "the controller's address, 127.0.0.1:<its DLedger self-peer port>");
        int port = Integer.parseInt(controller.addr().substring(controller.addr().lastIndexOf(':') + 1));
        placeholders.propertyValue(port, "<controller-port>", "the controller's port (its DLedger self-peer port)");
        placeholders.pattern(JAVA_OBJECT_NAME, "$1@<identity-hash>", "<identity-hash>",
            "the identity hash in Object.toString() of an object GET_CONTROLLER_CONFIG prints as is (jraftConfig)");
    }

    @AfterAll
    void stop() {
        if (controller != null) {
            controller.discard();
        }
        if (client != null) {
            client.close();
        }
        notes.forEach(System.out::println);
    }

    // ---- scenarios -------------------------------------------------------------------------

    /**
     * A broker set's life without the real death: three replicas join, the first election, the
     * SyncStateSet grows, an admin election.
     */
    @Test
    @Order(1)
    void timeline() throws Exception {
        String set = "broker-a";
        Scenario s = scenario("timeline", "A controller group's life in one scenario, no replica dying: replicas A (10.0.0.1), B "
            + "(10.0.0.2) and C (10.0.0.3) of broker-a join (GET_NEXT_BROKER_ID, APPLY_BROKER_ID, REGISTER_BROKER, "
            + "heartbeat), A wins the first election, A grows the SyncStateSet, reads, B's election answers "
            + "MASTER_STILL_EXIST, then an admin designates B, A re-registers and B grows the set again.");
        join(s, "A", set, 1, fake(1), true);
        s.send("A: CONTROLLER_ELECT_MASTER (broker trigger): the first election, A wins",
            elect(CLUSTER, set, "1", false), SUCCESS);
        s.send("CONTROLLER_GET_REPLICA_INFO: master 1, epoch 1", replicaInfo(set), SUCCESS);
        join(s, "B", set, 2, fake(2), true);
        join(s, "C", set, 3, fake(3), true);
        s.send("A: CONTROLLER_ALTER_SYNC_STATE_SET {1,2} at SSS epoch 1", alter(set, 1, 1, sss(1, 1, 2)), SUCCESS);
        s.send("A: CONTROLLER_ALTER_SYNC_STATE_SET {1,2,3} at SSS epoch 2", alter(set, 1, 1, sss(2, 1, 2, 3)), SUCCESS);
        s.send("CONTROLLER_GET_REPLICA_INFO: master 1, SSS {1,2,3}", replicaInfo(set), SUCCESS);
        s.send("CONTROLLER_GET_SYNC_STATE_DATA [broker-a, unknown-set]",
            syncStateData("[\"broker-a\",\"unknown-set\"]"), SUCCESS);
        s.send("B: CONTROLLER_ELECT_MASTER (broker trigger) while A is alive: MASTER_STILL_EXIST",
            elect(CLUSTER, set, "2", false), MASTER_STILL_EXIST);
        s.send("admin: CONTROLLER_ELECT_MASTER designating B (alive, in the SSS)", elect(CLUSTER, set, "2", true),
            SUCCESS);
        s.send("CONTROLLER_GET_REPLICA_INFO: master 2, epoch 2", replicaInfo(set), SUCCESS);
        s.send("A: CONTROLLER_REGISTER_BROKER again (as after a restart): learns master B",
            register(set, 1, fake(1)), SUCCESS);
        s.send("B: CONTROLLER_ALTER_SYNC_STATE_SET {1,2,3} at master epoch 2, SSS epoch 4",
            alter(set, 2, 2, sss(4, 1, 2, 3)), SUCCESS);
        s.send("CONTROLLER_GET_SYNC_STATE_DATA [broker-a, unknown-set]",
            syncStateData("[\"broker-a\",\"unknown-set\"]"), SUCCESS);
        nextId(s, "D", set, 4);
        emit(s);
    }

    /** Every ALTER_SYNC_STATE_SET refusal, then the accepted request and its replay. */
    @Test
    @Order(2)
    void alterRefusals() throws Exception {
        String set = "alter-a";
        Scenario s = scenario("alter_refusals", "CONTROLLER_ALTER_SYNC_STATE_SET refusals, in the order Java checks "
            + "them: unknown set, unchanged set (2013), not the master (2002), master epoch (2000), SSS epoch "
            + "(2001), unknown replica (2003), replica that never sent a heartbeat (2006), set without the master "
            + "(2013); then the accepted change, its replay, and a set without any master (alter-b).");
        join(s, "1", set, 1, fake(1), true);
        join(s, "2", set, 2, fake(2), true);
        join(s, "3 (never sends a heartbeat)", set, 3, fake(3), false);
        s.send("1: CONTROLLER_ELECT_MASTER (broker trigger): 1 becomes master", elect(CLUSTER, set, "1", false),
            SUCCESS);
        s.send("ALTER on a set the controller does not know", alter("alter-unknown", 1, 1, sss(1, 1, 2)),
            ALTER_SYNC_STATE_SET_FAILED);
        s.send("ALTER to the current set {1}", alter(set, 1, 1, sss(1, 1)), ALTER_SYNC_STATE_SET_FAILED);
        s.send("ALTER from 2, which is not the master", alter(set, 2, 1, sss(1, 1, 2)), INVALID_MASTER);
        s.send("ALTER with master epoch 0 (current 1)", alter(set, 1, 0, sss(1, 1, 2)), FENCED_MASTER_EPOCH);
        s.send("ALTER with master epoch 2 (current 1)", alter(set, 1, 2, sss(1, 1, 2)), FENCED_MASTER_EPOCH);
        s.send("ALTER with SSS epoch 0 (current 1)", alter(set, 1, 1, sss(0, 1, 2)), FENCED_SYNC_STATE_SET_EPOCH);
        s.send("ALTER with SSS epoch 2 (current 1)", alter(set, 1, 1, sss(2, 1, 2)), FENCED_SYNC_STATE_SET_EPOCH);
        s.send("ALTER to {1,2,9}: 9 is not a replica", alter(set, 1, 1, sss(1, 1, 2, 9)), INVALID_REPLICAS);
        s.send("ALTER to {1,3}: 3 never sent a heartbeat", alter(set, 1, 1, sss(1, 1, 3)), BROKER_NOT_ALIVE);
        s.send("ALTER to {2}: without the master", alter(set, 1, 1, sss(1, 2)), ALTER_SYNC_STATE_SET_FAILED);
        s.send("ALTER to {1,2}: accepted", alter(set, 1, 1, sss(1, 1, 2)), SUCCESS);
        s.send("the same request again: its SSS epoch is now stale", alter(set, 1, 1, sss(1, 1, 2)),
            ALTER_SYNC_STATE_SET_FAILED);
        s.send("ALTER to {1} at the old SSS epoch 1", alter(set, 1, 1, sss(1, 1)), FENCED_SYNC_STATE_SET_EPOCH);
        s.send("CONTROLLER_GET_REPLICA_INFO: SSS {1,2}, epoch 2", replicaInfo(set), SUCCESS);
        String noMaster = "alter-b";
        join(s, "alter-b 1", noMaster, 1, fake(1), true);
        s.send("ALTER on alter-b, which has no master yet", alter(noMaster, 1, 0, sss(0, 1)), INVALID_MASTER);
        emit(s);
    }

    /** APPLY_BROKER_ID and REGISTER_BROKER refusals, idempotent re-apply, out-of-order ids, address change. */
    @Test
    @Order(3)
    void idRefusals() throws Exception {
        String set = "ids-a";
        Scenario s = scenario("id_refusals", "Controller broker ids: GET_NEXT_BROKER_ID, APPLY_BROKER_ID refusals "
            + "(id other than 1 on an unknown set, a taken id with another check code), the same id with the same "
            + "check code again (success, next id unchanged), ids applied out of order (next id = next + 1, so a "
            + "taken id is offered), REGISTER_BROKER of an unknown set or id, and a replica that registers from a "
            + "new address.");
        nextId(s, "1", set, 1);
        s.send("2: APPLY_BROKER_ID 2 on a set nobody applied to yet", apply(set, 2, checkCode(fake(2))),
            BROKER_ID_INVALID);
        s.send("1: APPLY_BROKER_ID 1", apply(set, 1, checkCode(fake(1))), SUCCESS);
        s.send("1: APPLY_BROKER_ID 1 again, same check code (a broker that crashed before writing its identity file)",
            apply(set, 1, checkCode(fake(1))), SUCCESS);
        nextId(s, "2", set, 2);
        s.send("9: APPLY_BROKER_ID 1, another check code", apply(set, 1, fake(9) + ";1700000000001"),
            BROKER_ID_INVALID);
        s.send("2: APPLY_BROKER_ID 2", apply(set, 2, checkCode(fake(2))), SUCCESS);
        nextId(s, "3", set, 3);
        s.send("5: APPLY_BROKER_ID 5 (out of order)", apply(set, 5, checkCode(fake(5))), SUCCESS);
        nextId(s, "next", set, 4);
        s.send("4: APPLY_BROKER_ID 4", apply(set, 4, checkCode(fake(4))), SUCCESS);
        s.send("next: CONTROLLER_GET_NEXT_BROKER_ID offers 5, which 5 holds", nextIdRequest(set), SUCCESS);
        s.send("6: APPLY_BROKER_ID 5 as offered: taken", apply(set, 5, checkCode(fake(6))), BROKER_ID_INVALID);
        s.send("CONTROLLER_REGISTER_BROKER on a set the controller does not know", register("ids-unknown", 1, fake(1)),
            BROKER_NEED_TO_BE_REGISTERED);
        s.send("CONTROLLER_REGISTER_BROKER with an id nobody applied for", register(set, 7, fake(7)),
            BROKER_NEED_TO_BE_REGISTERED);
        s.send("1: CONTROLLER_REGISTER_BROKER", register(set, 1, fake(1)), SUCCESS);
        s.send("1: CONTROLLER_REGISTER_BROKER from a new address 10.0.0.11", register(set, 1, "10.0.0.11:30911"),
            SUCCESS);
        s.send("CONTROLLER_GET_SYNC_STATE_DATA [ids-a]: 1 is at its new address", syncStateData("[\"ids-a\"]"),
            SUCCESS);
        emit(s);
    }

    /** ELECT refusals: unknown set, designated ineligible or unknown id, the current master, a non-numeric id. */
    @Test
    @Order(4)
    void electRefusals() throws Exception {
        String set = "elect-a";
        Scenario s = scenario("elect_refusals", "CONTROLLER_ELECT_MASTER refusals: unknown set (2010); with master 1 "
            + "alive and SSS {1,2}: a broker-triggered election answers 2011, a designated election of a replica "
            + "outside the SSS that never sent a heartbeat or of an unknown id answers 2012, of the current master "
            + "2011, and a brokerId that is not a number counts as -1 (controller trigger).");
        s.send("CONTROLLER_ELECT_MASTER on a set the controller does not know",
            elect(CLUSTER, "elect-unknown", "1", false), BROKER_NEED_TO_BE_REGISTERED);
        join(s, "1", set, 1, fake(1), true);
        join(s, "2", set, 2, fake(2), true);
        join(s, "3 (never sends a heartbeat)", set, 3, fake(3), false);
        s.send("1: CONTROLLER_ELECT_MASTER (broker trigger): 1 becomes master", elect(CLUSTER, set, "1", false),
            SUCCESS);
        s.send("1: ALTER to {1,2}", alter(set, 1, 1, sss(1, 1, 2)), SUCCESS);
        s.send("2: CONTROLLER_ELECT_MASTER (broker trigger) while 1 is alive", elect(CLUSTER, set, "2", false),
            MASTER_STILL_EXIST);
        s.send("3: CONTROLLER_ELECT_MASTER (broker trigger) from outside the SSS", elect(CLUSTER, set, "3", false),
            MASTER_STILL_EXIST);
        s.send("admin: designate 3 (outside the SSS, never sent a heartbeat)", elect(CLUSTER, set, "3", true),
            ELECT_MASTER_FAILED);
        s.send("admin: designate 9 (not a replica)", elect(CLUSTER, set, "9", true), ELECT_MASTER_FAILED);
        s.send("admin: designate 1 (the current master)", elect(CLUSTER, set, "1", true), MASTER_STILL_EXIST);
        s.send("CONTROLLER_ELECT_MASTER with brokerId=abc: read as -1, the master is kept",
            elect(CLUSTER, set, "abc", false), MASTER_STILL_EXIST);
        s.send("CONTROLLER_GET_REPLICA_INFO: still master 1, epoch 1, SSS {1,2} epoch 2", replicaInfo(set), SUCCESS);
        emit(s);
    }

    /** The first election of a set elects the requester, alive or not; what follows from that. */
    @Test
    @Order(5)
    void phantomElection() throws Exception {
        String set = "phantom-a";
        Scenario s = scenario("phantom_election", "The first election of a set elects the requester without any "
            + "liveness check: replica 1 never sends a heartbeat and still becomes master. Afterwards "
            + "REGISTER_BROKER hides the dead master, elections from 1 (dead, in the SSS) and 2 (alive, outside the "
            + "SSS) fail with 2012, and a controller-style election (brokerId -1) answers 2004 and drops the master "
            + "(master epoch + 1).");
        join(s, "1 (never sends a heartbeat)", set, 1, fake(1), false);
        s.send("1: CONTROLLER_ELECT_MASTER (broker trigger): first election, 1 wins", elect(CLUSTER, set, "1", false),
            SUCCESS);
        s.send("CONTROLLER_GET_REPLICA_INFO: master 1", replicaInfo(set), SUCCESS);
        s.send("1: CONTROLLER_REGISTER_BROKER: the master is not alive, no master fields", register(set, 1, fake(1)),
            SUCCESS);
        s.send("CONTROLLER_GET_SYNC_STATE_DATA [phantom-a]", syncStateData("[\"phantom-a\"]"), SUCCESS);
        s.send("1: CONTROLLER_ELECT_MASTER again (SSS {1}, nobody alive in it)", elect(CLUSTER, set, "1", false),
            ELECT_MASTER_FAILED);
        join(s, "2", set, 2, fake(2), true);
        s.send("2: CONTROLLER_ELECT_MASTER (broker trigger) from outside the SSS", elect(CLUSTER, set, "2", false),
            ELECT_MASTER_FAILED);
        s.send("CONTROLLER_ELECT_MASTER as the controller triggers it (clusterName \"\", brokerId -1)",
            elect("", set, "-1", false), MASTER_NOT_AVAILABLE);
        s.send("CONTROLLER_GET_REPLICA_INFO: no master, master epoch 2, SSS kept", replicaInfo(set), SUCCESS);
        s.send("2: CONTROLLER_ELECT_MASTER (broker trigger) again", elect(CLUSTER, set, "2", false),
            ELECT_MASTER_FAILED);
        s.send("2: CONTROLLER_REGISTER_BROKER: no master", register(set, 2, fake(2)), SUCCESS);
        emit(s);
    }

    /** CLEAN_BROKER_DATA refusals and cleans: a dead id, whole sets, a clean that empties the SSS. */
    @Test
    @Order(6)
    void clean() throws Exception {
        String set = "clean-a";
        Scenario s = scenario("clean", "CLEAN_BROKER_DATA: refusals (alive id, blank ids while a master exists, "
            + "unknown set, ids that are not numbers); cleaning a dead id; a whole set with "
            + "isCleanLivingBroker=true, after which GET_NEXT_BROKER_ID answers 1 (clean-a, and clean-c, whose "
            + "unparsable ids are then ignored); blank ids on a set without a master (clean-b); and a clean that "
            + "empties the SSS (clean-d: the id table survives, the set is gone, the next APPLY_BROKER_ID builds it "
            + "anew).");
        join(s, "1", set, 1, fake(1), true);
        join(s, "2", set, 2, fake(2), true);
        join(s, "3 (never sends a heartbeat)", set, 3, fake(3), false);
        s.send("1: CONTROLLER_ELECT_MASTER (broker trigger): 1 becomes master", elect(CLUSTER, set, "1", false),
            SUCCESS);
        s.send("1: ALTER to {1,2}", alter(set, 1, 1, sss(1, 1, 2)), SUCCESS);
        s.send("CLEAN id 2, which is alive", clean(set, "2", false), INVALID_CLEAN_BROKER_METADATA);
        s.send("CLEAN ids 1;3 (1 is alive)", clean(set, "1;3", false), INVALID_CLEAN_BROKER_METADATA);
        s.send("CLEAN without ids while the set has a master", clean(set, null, false), INVALID_CLEAN_BROKER_METADATA);
        s.send("CLEAN with empty ids while the set has a master", clean(set, "", false), INVALID_CLEAN_BROKER_METADATA);
        s.send("CLEAN ids 1;x", clean(set, "1;x", false), INVALID_CLEAN_BROKER_METADATA);
        s.send("CLEAN id 1 of a set the controller does not know", clean("clean-unknown", "1", false),
            INVALID_CLEAN_BROKER_METADATA);
        s.send("CLEAN a whole set the controller does not know (isCleanLivingBroker=true)",
            clean("clean-unknown", null, true), INVALID_CLEAN_BROKER_METADATA);
        s.send("CLEAN id 3, which never sent a heartbeat", clean(set, "3", false), SUCCESS);
        s.send("CONTROLLER_GET_SYNC_STATE_DATA [clean-a]: replicas 1 and 2", syncStateData("[\"clean-a\"]"), SUCCESS);
        nextId(s, "next", set, 4);
        s.send("CLEAN the whole set, isCleanLivingBroker=true", clean(set, null, true), SUCCESS);
        s.send("CONTROLLER_GET_REPLICA_INFO [clean-a]: gone", replicaInfo(set), BROKER_METADATA_NOT_EXIST);
        nextId(s, "next", set, 1);

        String noMaster = "clean-b";
        join(s, "clean-b 1 (never sends a heartbeat)", noMaster, 1, fake(1), false);
        s.send("CLEAN clean-b without ids: no master, so the whole set", clean(noMaster, null, false), SUCCESS);
        nextId(s, "next", noMaster, 1);

        String living = "clean-c";
        join(s, "clean-c 1", living, 1, fake(1), true);
        s.send("clean-c 1: CONTROLLER_ELECT_MASTER (broker trigger)", elect(CLUSTER, living, "1", false), SUCCESS);
        s.send("CLEAN clean-c ids 1;x with isCleanLivingBroker=true: ids not read", clean(living, "1;x", true),
            SUCCESS);
        nextId(s, "next", living, 1);

        String emptied = "clean-d";
        join(s, "clean-d 1 (never sends a heartbeat)", emptied, 1, fake(1), false);
        s.send("clean-d 1: CONTROLLER_ELECT_MASTER (broker trigger): first election",
            elect(CLUSTER, emptied, "1", false), SUCCESS);
        join(s, "clean-d 2", emptied, 2, fake(2), true);
        s.send("CLEAN clean-d id 1, the dead master and only SSS member", clean(emptied, "1", false), SUCCESS);
        s.send("CONTROLLER_GET_REPLICA_INFO [clean-d]: the set is gone", replicaInfo(emptied),
            BROKER_METADATA_NOT_EXIST);
        s.send("clean-d 2: CONTROLLER_REGISTER_BROKER: the set is gone", register(emptied, 2, fake(2)),
            BROKER_NEED_TO_BE_REGISTERED);
        nextId(s, "clean-d 3", emptied, 3);
        s.send("clean-d 3: APPLY_BROKER_ID 3: builds the set anew, without 2", apply(emptied, 3, checkCode(fake(3))),
            SUCCESS);
        s.send("CONTROLLER_GET_SYNC_STATE_DATA [clean-d]: only 3, epochs 0", syncStateData("[\"clean-d\"]"), SUCCESS);
        nextId(s, "next", emptied, 2);
        emit(s);
    }

    /** Reads of unknown sets, GET_SYNC_STATE_DATA without names, a heartbeat without id, unknown codes. */
    @Test
    @Order(7)
    void otherRefusals() throws Exception {
        Scenario s = scenario("other_refusals", "CONTROLLER_GET_REPLICA_INFO of an unknown set (2008), "
            + "CONTROLLER_GET_SYNC_STATE_DATA without a body, with [] and with unknown names only, BROKER_HEARTBEAT "
            + "(two-way) without brokerId (2005) and without clusterName, request codes the controller does not "
            + "serve.");
        s.send("CONTROLLER_GET_REPLICA_INFO of a set the controller does not know", replicaInfo("other-unknown"),
            BROKER_METADATA_NOT_EXIST);
        s.send("CONTROLLER_GET_SYNC_STATE_DATA without a body", syncStateData(null), SYSTEM_ERROR);
        s.send("CONTROLLER_GET_SYNC_STATE_DATA []", syncStateData("[]"), SYSTEM_ERROR);
        s.send("CONTROLLER_GET_SYNC_STATE_DATA [other-unknown]", syncStateData("[\"other-unknown\"]"), SUCCESS);
        s.send("BROKER_HEARTBEAT (two-way) without brokerId",
            without(heartbeat("other-a", 1, fake(1)), "brokerId"), INVALID_REQUEST);
        s.send("BROKER_HEARTBEAT (two-way) without clusterName: accepted",
            without(heartbeat("other-a", 1, fake(1)), "clusterName"), SUCCESS);
        s.send("request code 99999", request(99999), REQUEST_CODE_NOT_SUPPORTED);
        s.send("GET_ROUTEINFO_BY_TOPIC (105), a NameServer request", request(105).ext("topic", "TopicTest"),
            REQUEST_CODE_NOT_SUPPORTED);
        emit(s);
    }

    /** CONTROLLER_GET_METADATA_INFO and the config requests. */
    @Test
    @Order(8)
    void metadataAndConfig() throws Exception {
        Scenario s = scenario("metadata_config", "CONTROLLER_GET_METADATA_INFO of a one-node group; "
            + "GET_CONTROLLER_CONFIG; UPDATE_CONTROLLER_CONFIG of a permitted key (electMasterMaxRetryCount), of "
            + "black-listed keys (configStorePath, rocketmqHome, and a permitted key together with configBlackList: "
            + "nothing changes), without a body; the permitted key set back.");
        s.send("CONTROLLER_GET_METADATA_INFO", request(GET_METADATA_INFO), SUCCESS);
        s.send("GET_CONTROLLER_CONFIG", request(GET_CONTROLLER_CONFIG), SUCCESS);
        s.send("UPDATE_CONTROLLER_CONFIG electMasterMaxRetryCount=5", updateConfig("electMasterMaxRetryCount=5\n"),
            SUCCESS);
        s.send("GET_CONTROLLER_CONFIG: electMasterMaxRetryCount=5", request(GET_CONTROLLER_CONFIG), SUCCESS);
        s.send("UPDATE_CONTROLLER_CONFIG configStorePath (black list)",
            updateConfig("configStorePath=/tmp/elsewhere/controller.properties\n"), NO_PERMISSION);
        s.send("UPDATE_CONTROLLER_CONFIG rocketmqHome (black list)", updateConfig("rocketmqHome=/tmp/elsewhere\n"),
            NO_PERMISSION);
        s.send("UPDATE_CONTROLLER_CONFIG electMasterMaxRetryCount=7 with configBlackList",
            updateConfig("electMasterMaxRetryCount=7\nconfigBlackList=nothing\n"), NO_PERMISSION);
        s.send("UPDATE_CONTROLLER_CONFIG without a body", request(UPDATE_CONTROLLER_CONFIG), SUCCESS);
        s.send("UPDATE_CONTROLLER_CONFIG electMasterMaxRetryCount=3 (back to the default)",
            updateConfig("electMasterMaxRetryCount=3\n"), SUCCESS);
        emit(s);
    }

    /** NOTIFY_BROKER_ROLE_CHANGED to replicas that listen on local sockets. */
    @Test
    @Order(9)
    void notifyRoleChanged() throws Exception {
        String set = "notify-a";
        try (NotifySink one = new NotifySink(); NotifySink two = new NotifySink()) {
            placeholders.literal(one.addr(), "<broker:1>", "replica 1 of notify-a: a local socket, 127.0.0.1:<port>");
            placeholders.literal(two.addr(), "<broker:2>", "replica 2 of notify-a: a local socket, 127.0.0.1:<port>");
            Scenario s = scenario("notify", "NOTIFY_BROKER_ROLE_CHANGED (one-way) after elections: replicas 1 and 2 "
                + "of notify-a register with the addresses of local sockets and send heartbeats, replica 3 "
                + "(10.0.0.3) never does. notifyBrokerRoleChanged is switched on for the scenario and off again. The "
                + "first election notifies 1; the designated election of 2 notifies 1 and 2, not 3 (not alive); "
                + "MASTER_STILL_EXIST notifies nobody.");
            s.send("UPDATE_CONTROLLER_CONFIG notifyBrokerRoleChanged=true",
                updateConfig("notifyBrokerRoleChanged=true\n"), SUCCESS);
            join(s, "1", set, 1, one.addr(), true);
            s.send("1: CONTROLLER_ELECT_MASTER (broker trigger): first election", elect(CLUSTER, set, "1", false),
                SUCCESS);
            notified(s, one, "<broker:1>", "NOTIFY_BROKER_ROLE_CHANGED to 1: master 1, epoch 1");
            join(s, "2", set, 2, two.addr(), true);
            join(s, "3 (never sends a heartbeat)", set, 3, fake(3), false);
            s.send("1: ALTER to {1,2}", alter(set, 1, 1, sss(1, 1, 2)), SUCCESS);
            s.send("admin: CONTROLLER_ELECT_MASTER designating 2", elect(CLUSTER, set, "2", true), SUCCESS);
            notified(s, one, "<broker:1>", "NOTIFY_BROKER_ROLE_CHANGED to 1: master 2, epoch 2");
            notified(s, two, "<broker:2>", "NOTIFY_BROKER_ROLE_CHANGED to 2: master 2, epoch 2");
            s.send("1: CONTROLLER_ELECT_MASTER (broker trigger): MASTER_STILL_EXIST, no notification",
                elect(CLUSTER, set, "1", false), MASTER_STILL_EXIST);
            s.send("UPDATE_CONTROLLER_CONFIG notifyBrokerRoleChanged=false",
                updateConfig("notifyBrokerRoleChanged=false\n"), SUCCESS);
            assertNull(one.poll(QUIET_WAIT), "a further frame to replica 1");
            assertNull(two.poll(QUIET_WAIT), "a further frame to replica 2");
            emit(s);
        }
    }

    // ---- requests, as brokers and mqadmin send them ----------------------------------------

    private static String fake(int n) {
        return "10.0.0." + n + ":30911";
    }

    private static String checkCode(String addr) {
        return addr + ";" + T;
    }

    /** A two-way request of this release's version ({@code MQVersion.CURRENT_VERSION}, as brokers send). */
    private static Cmd request(int code) {
        return new Cmd(RemotingCommand.createRequestCommand(code, null)).version(Release.current());
    }

    private static Cmd nextIdRequest(String set) {
        return request(GET_NEXT_BROKER_ID).ext("clusterName", CLUSTER).ext("brokerName", set);
    }

    private static Cmd apply(String set, long id, String checkCode) {
        return request(APPLY_BROKER_ID).ext("clusterName", CLUSTER).ext("brokerName", set)
            .ext("appliedBrokerId", String.valueOf(id)).ext("registerCheckCode", checkCode);
    }

    private static Cmd register(String set, long id, String addr) {
        return request(REGISTER_BROKER).ext("clusterName", CLUSTER).ext("brokerName", set)
            .ext("brokerId", String.valueOf(id)).ext("brokerAddress", addr).ext("invokeTime", T);
    }

    /** A fresh broker's heartbeat (no epoch file yet, empty commit log), alive for an hour. */
    private static Cmd heartbeat(String set, long id, String addr) {
        return request(BROKER_HEARTBEAT).ext("clusterName", CLUSTER).ext("brokerAddr", addr).ext("brokerName", set)
            .ext("brokerId", String.valueOf(id)).ext("epoch", "-1").ext("maxOffset", "0").ext("confirmOffset", "0")
            .ext("heartbeatTimeoutMills", ALIVE_FOR).ext("electionPriority", String.valueOf(Integer.MAX_VALUE));
    }

    private static Cmd elect(String cluster, String set, String brokerId, boolean designate) {
        return request(ELECT_MASTER).ext("clusterName", cluster).ext("brokerName", set).ext("brokerId", brokerId)
            .ext("designateElect", String.valueOf(designate)).ext("invokeTime", T);
    }

    private static Cmd alter(String set, long master, int masterEpoch, String body) {
        return request(ALTER_SYNC_STATE_SET).ext("brokerName", set).ext("masterBrokerId", String.valueOf(master))
            .ext("masterEpoch", String.valueOf(masterEpoch)).ext("invokeTime", T)
            .body(body.getBytes(StandardCharsets.UTF_8));
    }

    /** A SyncStateSet body as the broker's fastjson writes it: {@code {"syncStateSet":[1,2],"syncStateSetEpoch":1}}. */
    private static String sss(int epoch, long... ids) {
        return "{\"syncStateSet\":[" + Arrays.stream(ids).mapToObj(String::valueOf).collect(Collectors.joining(","))
            + "],\"syncStateSetEpoch\":" + epoch + "}";
    }

    private static Cmd replicaInfo(String set) {
        return request(GET_REPLICA_INFO).ext("brokerName", set);
    }

    private static Cmd syncStateData(String body) {
        Cmd cmd = request(GET_SYNC_STATE_DATA);
        return body == null ? cmd : cmd.body(body.getBytes(StandardCharsets.UTF_8));
    }

    /** mqadmin cleanBrokerMetadata: {@code ids} null leaves brokerControllerIdsToClean out. */
    private static Cmd clean(String set, String ids, boolean living) {
        Cmd cmd = request(CLEAN_BROKER_DATA).ext("clusterName", CLUSTER).ext("brokerName", set);
        if (ids != null) {
            cmd.ext("brokerControllerIdsToClean", ids);
        }
        return cmd.ext("isCleanLivingBroker", String.valueOf(living)).ext("invokeTime", T);
    }

    private static Cmd updateConfig(String properties) {
        return request(UPDATE_CONTROLLER_CONFIG).body(properties.getBytes(StandardCharsets.UTF_8));
    }

    private static Cmd without(Cmd cmd, String field) {
        cmd.command.getExtFields().remove(field);
        return cmd;
    }

    // ---- steps -----------------------------------------------------------------------------

    /**
     * A replica joining as the broker's ReplicasManager does: GET_NEXT_BROKER_ID (must offer
     * {@code id}), APPLY_BROKER_ID, REGISTER_BROKER, and, if it is to count as alive, a
     * heartbeat.
     */
    private static void join(Scenario s, String who, String set, long id, String addr, boolean alive) {
        nextId(s, who, set, id);
        s.send(who + ": APPLY_BROKER_ID " + id, apply(set, id, checkCode(addr)), SUCCESS);
        s.send(who + ": CONTROLLER_REGISTER_BROKER", register(set, id, addr), SUCCESS);
        if (alive) {
            s.send(who + ": BROKER_HEARTBEAT (two-way, timeout 1 h)", heartbeat(set, id, addr), SUCCESS);
        }
    }

    private static void nextId(Scenario s, String who, String set, long expected) {
        RemotingCommand response = s.send(who + ": CONTROLLER_GET_NEXT_BROKER_ID", nextIdRequest(set), SUCCESS);
        assertEquals(String.valueOf(expected), response.getExtFields().get("nextBrokerId"),
            s.name + ": next broker id of " + set);
    }

    private static void notified(Scenario s, NotifySink sink, String to, String title) throws InterruptedException {
        RemotingCommand frame = sink.poll(NOTIFY_WAIT);
        assertNotNull(frame, s.name + ": no frame reached " + to + " within " + NOTIFY_WAIT.toSeconds() + " s");
        assertEquals(NOTIFY_BROKER_ROLE_CHANGED, frame.getCode(), s.name + ": frame to " + to);
        s.notified(title, to, frame);
    }

    // ---- files -----------------------------------------------------------------------------

    private Scenario scenario(String name, String description) {
        return new Scenario(name, description, client, controller.addr(), placeholders);
    }

    /** Writes or checks the scenario's two files (see the class comment). */
    private void emit(Scenario s) throws IOException {
        String release = Release.version();
        String base = VectorFiles.CONTROLLER_DIR + "/controller_" + s.name + "_" + Release.tag();
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("nodes", 1);
        Map<String, Object> settings = new LinkedHashMap<>(SETTINGS);
        settings.put("controllerDLegerGroup", "group1");
        settings.put("controllerDLegerPeers", "n0-<controller>");
        settings.put("controllerDLegerSelfId", "n0");
        info.put("settings", settings);
        Map<String, byte[]> files = new LinkedHashMap<>();
        files.put(base + ".json", s.render(release, info).getBytes(StandardCharsets.UTF_8));
        files.put(base + ".meta", ("java " + release + "\ncontroller-scenario " + s.name + "\n")
            .getBytes(StandardCharsets.UTF_8));
        if (intoRepo || !writeDir.isEmpty()) {
            Path root = intoRepo ? repoRoot : Path.of(writeDir).toAbsolutePath();
            VectorFiles.write(root, files);
            notes.add("wrote " + base + ".json (" + s.size() + " steps) under " + root);
            return;
        }
        Path committed = repoRoot.resolve(base + ".json");
        if (!Files.exists(committed)) {
            notes.add("no committed " + base + ".json to compare with");
            return;
        }
        for (Map.Entry<String, byte[]> file : files.entrySet()) {
            byte[] old = Files.readAllBytes(repoRoot.resolve(file.getKey()));
            if (!Arrays.equals(old, file.getValue())) {
                fail(file.getKey() + " differs from what Java " + release + " answers now; rewrite the vectors "
                    + "(interop/run-java.sh --write-vectors) if the change is intended. Now:\n"
                    + new String(file.getValue(), StandardCharsets.UTF_8));
            }
        }
        notes.add(base + ".json matches the committed file");
    }
}
