package dev.waymark.interop.ha;

import static dev.waymark.interop.ha.HaCluster.CLUSTER;
import static dev.waymark.interop.ha.HaCluster.SET;
import static dev.waymark.interop.ha.HaCluster.millisSince;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.waymark.interop.harness.BrokerProcess;
import dev.waymark.interop.harness.ControllerClient;
import dev.waymark.interop.harness.ControllerCodes;
import dev.waymark.interop.harness.ControllerServer;
import dev.waymark.interop.harness.Controllers;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.ReplicaInfo;
import dev.waymark.interop.harness.ReplicaState;
import dev.waymark.interop.harness.SyncStateData;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * AutoSwitch HA with one controller node (its own process) of the kind under test, a Waymark
 * NameServer and three real broker JVMs of {@code broker-a}: joining, a master killed, the old
 * master back as a slave, a master frozen and thawed, five controller crashes in a row, and a
 * set whose only living replica is outside the sync-state set. The tests share the deployment
 * and run in order; each starts from a healthy set.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 240)
class SingleControllerHaTest extends HaBase {
    /** How long a controller must be seen doing nothing: its dead-master scan (5 s) or grace (4 s), plus 2 s. */
    private static final Duration QUIET_WINDOW = Duration.ofSeconds(7);

    @BeforeAll
    @Timeout(value = 150)
    void start() throws Exception {
        deploy(() -> HaCluster.standalone(1));
    }

    private ControllerServer node() {
        return cluster.controllers().get(0);
    }

    @Test
    @Order(1)
    void threeReplicasJoin() throws Exception {
        threeReplicasJoinAndExchangeMessages();
    }

    @Test
    @Order(2)
    void killedMasterIsReplaced() throws Exception {
        killMasterFailsOver();
    }

    /** The master killed before starts again: it joins as a slave and the sync-state set grows back to three. */
    @Test
    @Order(3)
    void oldMasterRejoinsAsSlave() throws Exception {
        BrokerProcess old = killedMaster;
        if (old == null || old.alive()) {
            // The previous test did not leave a killed master: make one.
            HaCluster.Healthy healthy = healthy();
            old = healthy.master();
            old.kill();
            awaitNewMaster(healthy.info(), "kill -9 of " + old);
        }
        long id = old.state().controllerId();
        ReplicaInfo before = cluster.controller().replicaInfo(SET);
        long start = System.nanoTime();
        BrokerProcess back = cluster.restart(old);
        killedMaster = null;
        back.awaitReady(HaCluster.READY_TIMEOUT);
        ReplicaState state = back.state();
        log("old master %d ready again after %d ms: %s", id, millisSince(start), state);
        assertEquals(Long.valueOf(id), state.controllerId(), "controller id after the restart");
        assertTrue(state.slave(), "role after the restart: " + state);
        assertEquals(before.masterAddress(), state.masterAddress(), "master it follows");
        assertEquals(CLUSTER + "#" + SET + "#" + id, back.identityFile());

        HaCluster.Healthy healthy = cluster.awaitHealthy(HaCluster.HEALTHY_TIMEOUT);
        assertEquals(before.masterBrokerId(), healthy.info().masterBrokerId(), "master");
        assertEquals(before.masterEpoch(), healthy.info().masterEpoch(), "master epoch");
        assertTrue(healthy.info().syncStateSetEpoch() > before.syncStateSetEpoch(), "sync-state set epoch "
            + before.syncStateSetEpoch() + " -> " + healthy.info().syncStateSetEpoch());
        assertEquals(back.addr(), cluster.raw().clusterInfo(cluster.namesrvAddr()).addrsOf(SET).get(id),
            "NameServer entry of id " + id);
        log("sync-state set back to %s (epoch %d) %d ms after the restart", healthy.info().syncStateSet(),
            healthy.info().syncStateSetEpoch(), millisSince(start));
    }

    /**
     * SIGSTOP of the master: it stops heartbeating with every connection open, so the controller
     * replaces it after the heartbeat timeout (within timeout + 5 s); the route names the new
     * master, the producer resumes, nothing acknowledged is lost. SIGCONT: it learns the newer
     * epoch and steps down to a slave of the new master, and the set is whole again.
     */
    @Test
    @Order(4)
    void frozenMasterIsReplacedAndStepsDown() throws Exception {
        HaCluster.Healthy healthy = healthy();
        String topic = topic();
        Set<String> acked = HaTraffic.sendUntilOk(producer, topic, 100, Duration.ofSeconds(60));
        BrokerProcess old = healthy.master();
        long id = old.state().controllerId();

        long pause = System.nanoTime();
        old.pause();
        ReplicaInfo after = awaitNewMaster(healthy.info(), "SIGSTOP of master " + old);
        BrokerProcess now = cluster.broker(after.masterBrokerId());
        log("SIGSTOP of master %d: master %d elected after %d ms (epoch %d -> %d)", id, after.masterBrokerId(),
            millisSince(pause), healthy.info().masterEpoch(), after.masterEpoch());
        assertTrue(millisSince(pause) >= HaCluster.HEARTBEAT_TIMEOUT_MILLIS - 1000,
            "a frozen master (connection open) was replaced before its heartbeat timeout: " + millisSince(pause) + " ms");
        now.awaitState(Duration.ofSeconds(20), "acting as master", ReplicaState::master);
        awaitRouteMaster(topic, now, null);
        Set<String> resumed = HaTraffic.sendUntilOk(producer, topic, 20, Duration.ofSeconds(45));
        log("producer resumed %d ms after SIGSTOP", millisSince(pause));

        long resume = System.nanoTime();
        old.resume();
        ReplicaState stepped = old.awaitState(Duration.ofSeconds(30), "stepped down to a slave of " + now.addr(),
            s -> s.slave() && s.masterAddress().equals(now.addr()) && s.masterEpoch() == after.masterEpoch());
        log("SIGCONT: old master %d is a slave %d ms later: %s", id, millisSince(resume), stepped);
        assertEquals(id, stepped.brokerId(), "NameServer id it registers with as a slave");
        Poll.untilTrue(Duration.ofSeconds(20), 100, "NameServer listing " + old.addr() + " under id " + id,
            () -> old.addr().equals(cluster.raw().clusterInfo(cluster.namesrvAddr()).addrsOf(SET).get(id)));
        ReplicaInfo kept = cluster.controller().replicaInfo(SET);
        assertEquals(after.masterBrokerId(), kept.masterBrokerId(), "master after SIGCONT");
        assertEquals(after.masterEpoch(), kept.masterEpoch(), "master epoch after SIGCONT");

        Set<String> all = new LinkedHashSet<>(acked);
        all.addAll(resumed);
        HaTraffic.pushConsumer(cluster.closer(), cluster.namesrvAddr(), topic).awaitAll(all, Duration.ofSeconds(60));

        HaCluster.Healthy whole = cluster.ensureHealthy();
        assertEquals(after.masterBrokerId(), whole.info().masterBrokerId(), "master once the set is whole");
        assertEquals(after.masterEpoch(), whole.info().masterEpoch(), "master epoch once the set is whole");
        log("set whole again %d ms after SIGCONT", millisSince(resume));
    }

    /**
     * Five kill -9 and restarts of the (only) controller node in a row, each once it serves
     * and hears every broker again: the brokers keep their master and its epoch throughout, and
     * for a while after the last restart (past the controller's first dead-master scan).
     */
    @Test
    @Order(5)
    void controllerCrashesKeepTheMaster() throws Exception {
        HaCluster.Healthy healthy = healthy();
        long masterId = healthy.masterId();
        int epoch = healthy.info().masterEpoch();
        for (int round = 1; round <= 5; round++) {
            ControllerServer old = node();
            long start = System.nanoTime();
            old.kill();
            ControllerServer again = old.restart();
            cluster.replace(old, again);
            Controllers.awaitServingLeader(List.of(again), Controllers.SERVING_TIMEOUT);
            long serving = millisSince(start);
            Poll.untilTrue(Duration.ofSeconds(30), 100, "every broker heard again after restart " + round,
                () -> alive().equals(Set.of(1L, 2L, 3L)));
            ReplicaInfo info = cluster.controller().replicaInfo(SET);
            log("controller restart %d: serving after %d ms, every broker alive after %d ms: %s", round, serving,
                millisSince(start), info);
            assertEquals(Long.valueOf(masterId), info.masterBrokerId(), "master after restart " + round);
            assertEquals(epoch, info.masterEpoch(), "master epoch after restart " + round);
        }
        HaCluster.holdsFor(QUIET_WINDOW, "master and epoch after the fifth restart", () -> {
            ReplicaInfo info = cluster.controller().replicaInfo(SET);
            return info.masterBrokerId() != null && info.masterBrokerId() == masterId && info.masterEpoch() == epoch
                ? null : "now " + info;
        });
        ReplicaState state = healthy.master().state();
        assertTrue(state.master() && state.masterEpoch() == epoch, "the master broker's own view: " + state);
        cluster.awaitHealthy(HaCluster.HEALTHY_TIMEOUT);
    }

    /**
     * Only a replica outside the sync-state set is alive: with {@code enableElectUncleanMaster=false}
     * there is no election. A slave is killed (the master drops it from the set), then the
     * master and the other slave; the first one comes back: it registers, asks for an election
     * again and again, is refused, and stays fenced while the set stays without a master.
     */
    @Test
    @Order(6)
    void noUncleanElection() throws Exception {
        HaCluster.Healthy healthy = healthy();
        List<BrokerProcess> slaves = healthy.slaves(cluster.brokers());
        BrokerProcess outside = slaves.get(0);
        BrokerProcess otherSlave = slaves.get(1);
        long outsideId = outside.state().controllerId();
        outside.kill();
        ReplicaInfo shrunk = Poll.until(Duration.ofSeconds(20), 100, "sync-state set without " + outsideId, () -> {
            ReplicaInfo info = cluster.controller().replicaInfo(SET);
            return info.hasMaster() && !info.syncStateSet().contains(outsideId) ? info : null;
        });
        log("replica %d killed: sync-state set %s (epoch %d)", outsideId, shrunk.syncStateSet(),
            shrunk.syncStateSetEpoch());
        otherSlave.kill();
        healthy.master().kill();
        ReplicaInfo leaderless = Poll.until(Duration.ofSeconds(20), 100, "the set without a master", () -> {
            ReplicaInfo info = cluster.controller().replicaInfo(SET);
            return info.hasMaster() ? null : info;
        });
        log("every member of the sync-state set killed: %s", leaderless);
        assertFalse(leaderless.syncStateSet().contains(outsideId), leaderless.toString());

        long start = System.nanoTime();
        BrokerProcess back = cluster.restart(outside);
        // It registers with the controller (the state after which it asks for an election) and is
        // heard: a replica outside the set, alive.
        back.awaitState(Duration.ofSeconds(60), "registered with the controller",
            s -> "REGISTER_TO_CONTROLLER_DONE".equals(s.state()));
        Poll.untilTrue(Duration.ofSeconds(30), 100, "replica " + outsideId + " alive at the controller",
            () -> alive().contains(outsideId));
        SyncStateData data = cluster.controller().syncStateData(SET);
        assertTrue(data.notInSync().stream().anyMatch(m -> m.id() == outsideId && m.alive()), data.toString());

        // The election it asks for, sent as it sends it: refused.
        RemotingCommand elect = ControllerClient.request(ControllerCodes.ELECT_MASTER, Map.of("clusterName", CLUSTER,
            "brokerName", SET, "brokerId", String.valueOf(outsideId), "designateElect", "false",
            "invokeTime", String.valueOf(System.currentTimeMillis())));
        RemotingCommand refused = cluster.controller().call(elect);
        assertEquals(ControllerCodes.ELECT_MASTER_FAILED, refused.getCode(), "ELECT_MASTER from replica " + outsideId
            + " outside the sync-state set: " + refused);

        HaCluster.holdsFor(Duration.ofSeconds(12), "the set without a master while only " + outsideId + " lives", () -> {
            ReplicaInfo info = cluster.controller().replicaInfo(SET);
            ReplicaState state = back.state();
            if (info.hasMaster()) {
                return "master " + info.masterBrokerId() + " elected: " + info;
            }
            if (state != null && (state.running() || state.master())) {
                return "replica " + outsideId + " runs: " + state;
            }
            return null;
        });
        assertFalse(back.ready(), back + " is ready");
        log("no election in %d ms with only replica %d (outside the set) alive", millisSince(start), outsideId);

        // Leave a working set: the members of the set come back, one of them becomes master,
        // and the fenced replica follows it.
        List<Callable<BrokerProcess>> restarts = new ArrayList<>();
        for (BrokerProcess dead : cluster.brokers()) {
            if (!dead.alive()) {
                restarts.add(() -> cluster.restart(dead));
            }
        }
        HaCluster.parallel(restarts);
        HaCluster.Healthy whole = healthy();
        log("set whole again with master %d %d ms after the members returned", whole.masterId(), millisSince(start));
    }
}
