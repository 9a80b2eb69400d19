package dev.waymark.interop.ha;

import static dev.waymark.interop.ha.HaCluster.CLUSTER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.waymark.interop.harness.ControllerClient;
import dev.waymark.interop.harness.ControllerCodes;
import dev.waymark.interop.harness.ControllerServer;
import dev.waymark.interop.harness.Controllers;
import dev.waymark.interop.harness.Mqadmin;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.SyncStateData;
import dev.waymark.interop.vectors.Release;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The real mqadmin controller commands of the profile's release (rocketmq-tools 5.5.0 for
 * rmq5: getControllerMetaData, getSyncStateSet, electMaster, cleanBrokerMetadata,
 * getControllerConfig, updateControllerConfig) against one controller node of the kind chosen
 * by {@code -Dwaymark.controller}: what they print, exactly where the output is deterministic,
 * and that what they change takes effect. The same assertions hold against Java's controller
 * (the control).
 *
 * <p>No brokers: each test makes its own broker set over the wire as brokers make theirs
 * (GET_NEXT_BROKER_ID, APPLY_BROKER_ID, REGISTER_BROKER, a two-way heartbeat with a one-hour
 * timeout for the replicas that must count as alive), with made-up addresses; both scans run
 * once an hour and notifications are off, so nothing happens by itself.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120)
class MqadminControllerTest {
    private static final AtomicInteger SETS = new AtomicInteger();

    private ControllerServer controller;
    private ControllerClient client;
    private String addr;

    @BeforeAll
    @Timeout(value = 150)
    void start() throws Exception {
        assumeTrue(Controllers.chosen(), "the mqadmin controller tests run only with -Dwaymark.controller=waymark|java");
        assumeTrue("5.5.1".equals(Release.version()), "the mqadmin controller tests run in the rmq5 profile only");
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("scanInactiveMasterInterval", "3600000");
        settings.put("scanNotActiveBrokerInterval", "3600000");
        settings.put("notifyBrokerRoleChanged", "false");
        controller = Controllers.start(settings);
        addr = controller.addr();
        client = new ControllerClient(() -> List.of(addr));
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

    // ---- broker sets over the wire ---------------------------------------------------------

    /** The made-up address of replica {@code id} of set {@code mqadmin-N}: {@code 10.0.N.id:30911}. */
    private static String fake(String set, long id) {
        return "10.0." + set.substring(set.lastIndexOf('-') + 1) + "." + id + ":30911";
    }

    private RemotingCommand send(int code, Map<String, String> fields, String body, int expected) {
        RemotingCommand request = ControllerClient.request(code, fields);
        if (body != null) {
            request.setBody(body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        RemotingCommand response = client.call(addr, request);
        assertEquals(expected, response.getCode(), () -> "request " + code + " " + fields + ": " + response);
        return response;
    }

    /** A replica joining as a broker's ReplicasManager does; {@code alive}: a heartbeat with a one-hour timeout. */
    private void join(String set, long id, boolean alive) {
        RemotingCommand next = send(ControllerCodes.GET_NEXT_BROKER_ID, Map.of("clusterName", CLUSTER, "brokerName",
            set), null, ControllerCodes.SUCCESS);
        assertEquals(String.valueOf(id), next.getExtFields().get("nextBrokerId"));
        send(ControllerCodes.APPLY_BROKER_ID, Map.of("clusterName", CLUSTER, "brokerName", set, "appliedBrokerId",
            String.valueOf(id), "registerCheckCode", fake(set, id) + ";1700000000000"), null, ControllerCodes.SUCCESS);
        send(ControllerCodes.REGISTER_BROKER, Map.of("clusterName", CLUSTER, "brokerName", set, "brokerId",
            String.valueOf(id), "brokerAddress", fake(set, id), "invokeTime", "1700000000000"), null,
            ControllerCodes.SUCCESS);
        if (alive) {
            Map<String, String> heartbeat = new LinkedHashMap<>();
            heartbeat.put("clusterName", CLUSTER);
            heartbeat.put("brokerAddr", fake(set, id));
            heartbeat.put("brokerName", set);
            heartbeat.put("brokerId", String.valueOf(id));
            heartbeat.put("epoch", "-1");
            heartbeat.put("maxOffset", "0");
            heartbeat.put("confirmOffset", "0");
            heartbeat.put("heartbeatTimeoutMills", "3600000");
            heartbeat.put("electionPriority", String.valueOf(Integer.MAX_VALUE));
            send(ControllerCodes.BROKER_HEARTBEAT, heartbeat, null, ControllerCodes.SUCCESS);
        }
    }

    /**
     * A new set: replicas 1 and 2 alive, 3 registered but never heard; 1 elected by its own
     * request (the first election); 1 grows the sync-state set to {1, 2}. Master epoch 1,
     * sync-state set epoch 2.
     */
    private String set() {
        String set = "mqadmin-" + SETS.incrementAndGet();
        join(set, 1, true);
        join(set, 2, true);
        join(set, 3, false);
        send(ControllerCodes.ELECT_MASTER, Map.of("clusterName", CLUSTER, "brokerName", set, "brokerId", "1",
            "designateElect", "false", "invokeTime", "1700000000000"), null, ControllerCodes.SUCCESS);
        send(ControllerCodes.ALTER_SYNC_STATE_SET, Map.of("brokerName", set, "masterBrokerId", "1", "masterEpoch", "1",
            "invokeTime", "1700000000000"), "{\"syncStateSet\":[1,2],\"syncStateSetEpoch\":1}", ControllerCodes.SUCCESS);
        return set;
    }

    private static Mqadmin.Result ok(String... args) {
        Mqadmin.Result result = Mqadmin.run(args);
        System.out.println(result);
        assertTrue(result.ok(), result::toString);
        return result;
    }

    private static Mqadmin.Result refused(String code, String... args) {
        Mqadmin.Result result = Mqadmin.run(args);
        System.out.println(result);
        assertFalse(result.ok(), result::toString);
        assertTrue(result.errorText().contains("CODE: " + code), () -> "expected CODE: " + code + "\n" + result);
        return result;
    }

    /** mqadmin's line for one replica ({@code ReplicaIdentity.toString()}). */
    private static String replica(String set, long id, boolean alive) {
        return "ReplicaIdentity{brokerName='" + set + "', brokerId=" + id + ", brokerAddress='" + fake(set, id)
            + "', alive=" + alive + "}";
    }

    // ---- the commands ----------------------------------------------------------------------

    @Test
    void getControllerMetaData() {
        Mqadmin.Result result = ok("getControllerMetaData", "-a", addr);
        assertEquals("\n#ControllerGroup\tgroup1\n#ControllerLeaderId\tn0\n#ControllerLeaderAddress\t" + addr
            + "\n#Peer:\tn0:" + addr + "\n", result.out(), result::toString);
    }

    @Test
    void getSyncStateSet() {
        String set = set();
        Mqadmin.Result result = ok("getSyncStateSet", "-a", addr, "-b", set);
        assertEquals("\n#brokerName\t" + set + "\n#MasterBrokerId\t1\n#MasterAddr\t" + fake(set, 1)
            + "\n#MasterEpoch\t1\n#SyncStateSetEpoch\t2\n#SyncStateSetNums\t2\n"
            + "\nInSyncReplica:\t" + replica(set, 1, true) + "\n"
            + "\nInSyncReplica:\t" + replica(set, 2, true) + "\n"
            + "\nNotInSyncReplica:\t" + replica(set, 3, false) + "\n", result.out(), result::toString);
    }

    @Test
    void electMaster() {
        String set = set();
        Mqadmin.Result result = ok("electMaster", "-a", addr, "-c", CLUSTER, "-bn", set, "-b", "2");
        assertEquals("\n#ClusterName\t" + CLUSTER + "\n#BrokerName\t" + set + "\n#BrokerMasterAddr\t" + fake(set, 2)
            + "\n#MasterEpoch\t2\n#SyncStateSetEpoch\t3\n", result.out(), result::toString);
        // (mqadmin 5.5.0 decodes the answer's ElectMasterResponseBody as a BrokerMemberGroup, whose
        // broker map is then empty: no "#Broker" lines.)
        SyncStateData data = client.syncStateData(set);
        assertEquals(Long.valueOf(2), data.masterBrokerId(), data.toString());
        assertEquals(2, data.masterEpoch(), data.toString());
        assertEquals(Set.of(2L), data.syncStateSet(), data.toString());

        // The current master again: MASTER_STILL_EXIST; a replica that is neither alive nor in
        // the set: ELECT_MASTER_FAILED; a set the controller does not know: 2010.
        refused("2011", "electMaster", "-a", addr, "-c", CLUSTER, "-bn", set, "-b", "2");
        refused("2012", "electMaster", "-a", addr, "-c", CLUSTER, "-bn", set, "-b", "3");
        refused("2010", "electMaster", "-a", addr, "-c", CLUSTER, "-bn", set + "-unknown", "-b", "1");
        assertEquals(2, client.syncStateData(set).masterEpoch(), "nothing changed");
    }

    @Test
    void cleanBrokerMetadata() {
        String set = set();
        // An alive replica is not cleaned without -l (cleanLivingBroker).
        refused("2009", "cleanBrokerMetadata", "-a", addr, "-c", CLUSTER, "-bn", set, "-b", "2");
        Mqadmin.Result result = ok("cleanBrokerMetadata", "-a", addr, "-c", CLUSTER, "-bn", set, "-b", "3");
        assertEquals("clear broker " + set + " metadata from controller success! \n", result.out(), result::toString);
        SyncStateData data = client.syncStateData(set);
        assertEquals(Set.of(1L, 2L), data.replicas(), data.toString());
        assertEquals(4, client.nextBrokerId(CLUSTER, set), "ids are not handed out again");

        // With -l (cleanLivingBroker) the ids are not read: the whole set goes, and its ids
        // start again from 1 (Java's CLEAN_BROKER_DATA; Waymark's is the same).
        ok("cleanBrokerMetadata", "-a", addr, "-bn", set, "-l", "-b", "2");
        assertNull(client.replicaInfo(set), "the whole set is gone");
        assertEquals(1, client.nextBrokerId(CLUSTER, set), "next broker id of a cleaned set");
    }

    /** {@code key = value} as getControllerConfig prints it ({@code %-50s=  %s}). */
    private static String configLine(String key, String value) {
        return String.format("%-50s=  %s", key, value);
    }

    @Test
    void getAndUpdateControllerConfig() {
        Mqadmin.Result get = ok("getControllerConfig", "-a", addr);
        List<String> lines = get.out().lines().toList();
        assertEquals("============" + addr + "============", lines.get(0), get::toString);
        for (String line : List.of(configLine("controllerDLegerGroup", "group1"), configLine("controllerDLegerSelfId",
            "n0"), configLine("controllerDLegerPeers", "n0-" + addr), configLine("scanNotActiveBrokerInterval",
            "3600000"), configLine("notifyBrokerRoleChanged", "false"), configLine("electMasterMaxRetryCount", "3"),
            configLine("enableElectUncleanMaster", "false"), configLine("controllerStorePath",
            controller.dir().resolve("store").toString()))) {
            assertTrue(lines.contains(line), () -> "no line \"" + line + "\"\n" + get);
        }

        Mqadmin.Result update = ok("updateControllerConfig", "-a", addr, "-k", "electMasterMaxRetryCount", "-v", "5");
        assertEquals("update controller config success![" + addr + "]\nelectMasterMaxRetryCount : 5\n", update.out(),
            update::toString);
        Poll.untilTrue(java.time.Duration.ofSeconds(5), "electMasterMaxRetryCount=5 read back",
            () -> ok("getControllerConfig", "-a", addr).out().lines()
                .anyMatch(l -> l.equals(configLine("electMasterMaxRetryCount", "5"))));

        // Keys that name the node's files are refused (NO_PERMISSION), and nothing changes.
        refused("16", "updateControllerConfig", "-a", addr, "-k", "configStorePath", "-v", "/tmp/elsewhere");
        assertTrue(ok("getControllerConfig", "-a", addr).out().lines().anyMatch(l -> l.equals(configLine(
            "configStorePath", controller.dir().resolve("controller.properties").toString()))));
        ok("updateControllerConfig", "-a", addr, "-k", "electMasterMaxRetryCount", "-v", "3");
    }
}
