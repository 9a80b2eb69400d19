package dev.waymark.interop.ha;

import static dev.waymark.interop.ha.HaCluster.CLUSTER;
import static dev.waymark.interop.ha.HaCluster.SET;
import static dev.waymark.interop.ha.HaCluster.millisSince;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.waymark.interop.harness.BrokerProcess;
import dev.waymark.interop.harness.ControllerServer;
import dev.waymark.interop.harness.Controllers;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.ReplicaInfo;
import dev.waymark.interop.harness.ReplicaState;
import dev.waymark.interop.harness.SyncStateData;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * AutoSwitch HA with a three-node controller group of the kind under test (one process per
 * node; the brokers' {@code controllerAddr} names all three): kill -9 of the controller leader
 * gives a new leader, and a master failover afterwards still works; kill -9 of every node and
 * a restart of all three keeps the master, the epochs, the sync-state set and the next id.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 240)
class ControllerGroupHaTest extends HaBase {
    @BeforeAll
    @Timeout(value = 150)
    void start() throws Exception {
        deploy(() -> HaCluster.standalone(3));
        long start = System.nanoTime();
        cluster.startBrokers();
        HaCluster.Healthy healthy = cluster.awaitHealthy(HaCluster.HEALTHY_TIMEOUT);
        log("3 brokers healthy %d ms after their start, master %d", millisSince(start), healthy.masterId());
    }

    @Test
    @Order(1)
    void leaderKilledThenMasterFailover() throws Exception {
        HaCluster.Healthy healthy = healthy();
        List<ControllerServer> nodes = cluster.controllers();
        ControllerServer leader = Controllers.awaitServingLeader(nodes, Controllers.SERVING_TIMEOUT);
        long kill = System.nanoTime();
        leader.kill();
        List<ControllerServer> rest = nodes.stream().filter(n -> n != leader).toList();
        ControllerServer next = Controllers.awaitServingLeader(rest, Duration.ofSeconds(30));
        log("controller leader %s killed: %s serves %d ms later", leader.selfId(), next.selfId(), millisSince(kill));
        assertNotEquals(leader.selfId(), next.selfId());
        ReplicaInfo kept = cluster.controller().replicaInfo(SET);
        assertEquals(healthy.info().masterBrokerId(), kept.masterBrokerId(), "master under the new controller leader");
        assertEquals(healthy.info().masterEpoch(), kept.masterEpoch(), "master epoch under the new controller leader");

        // Every broker heartbeats every node, so the new leader hears them all; a master
        // failover works under it.
        Poll.untilTrue(Duration.ofSeconds(20), 100, "every broker alive at the new leader",
            () -> alive().equals(Set.of(1L, 2L, 3L)));
        killMasterFailsOver();

        long restart = System.nanoTime();
        ControllerServer again = leader.restart();
        cluster.replace(leader, again);
        Poll.untilTrue(Duration.ofSeconds(30), 200, again + " following the leader", () -> {
            var meta = again.metadata();
            return meta != null && next.selfId().equals(meta.get("controllerLeaderId"));
        });
        log("killed controller %s restarted, follows %s after %d ms", again.selfId(), next.selfId(),
            millisSince(restart));
    }

    @Test
    @Order(2)
    void everyControllerKilledAndRestarted() throws Exception {
        HaCluster.Healthy healthy = healthy();
        SyncStateData before = cluster.controller().syncStateData(SET);
        long nextId = cluster.controller().nextBrokerId(CLUSTER, SET);
        List<ControllerServer> nodes = cluster.controllers();

        long kill = System.nanoTime();
        nodes.forEach(ControllerServer::kill);
        List<Callable<ControllerServer>> restarts = new ArrayList<>();
        for (ControllerServer node : nodes) {
            restarts.add(() -> {
                ControllerServer again = node.restart();
                cluster.replace(node, again);
                return again;
            });
        }
        List<ControllerServer> again = HaCluster.parallel(restarts);
        ControllerServer leader = Controllers.awaitServingLeader(again, Controllers.SERVING_TIMEOUT);
        log("every controller killed and restarted: %s serves after %d ms", leader.selfId(), millisSince(kill));

        SyncStateData after = cluster.controller().syncStateData(SET);
        assertEquals(before.masterBrokerId(), after.masterBrokerId(), "master");
        assertEquals(before.masterAddress(), after.masterAddress(), "master address");
        assertEquals(before.masterEpoch(), after.masterEpoch(), "master epoch");
        assertEquals(before.syncStateSetEpoch(), after.syncStateSetEpoch(), "sync-state set epoch");
        assertEquals(before.syncStateSet(), after.syncStateSet(), "sync-state set");
        assertEquals(before.replicas(), after.replicas(), "replicas");
        assertEquals(nextId, cluster.controller().nextBrokerId(CLUSTER, SET), "next broker id");

        Poll.untilTrue(Duration.ofSeconds(30), 100, "every broker heard again",
            () -> alive().equals(Set.of(1L, 2L, 3L)));
        long masterId = healthy.masterId();
        int epoch = healthy.info().masterEpoch();
        HaCluster.holdsFor(Duration.ofSeconds(7), "master and epoch after the restart of every node", () -> {
            ReplicaInfo info = cluster.controller().replicaInfo(SET);
            return info.masterBrokerId() != null && info.masterBrokerId() == masterId && info.masterEpoch() == epoch
                ? null : "now " + info;
        });
        BrokerProcess master = cluster.broker(masterId);
        ReplicaState state = master.state();
        assertEquals(epoch, state.masterEpoch(), "the master broker's own epoch");
        cluster.awaitHealthy(HaCluster.HEALTHY_TIMEOUT);
        log("master %d, epoch %d, sync-state set %s (epoch %d), next id %d kept", masterId, epoch,
            after.syncStateSet(), after.syncStateSetEpoch(), nextId);
    }
}
