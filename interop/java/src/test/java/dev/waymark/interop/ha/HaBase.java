package dev.waymark.interop.ha;

import static dev.waymark.interop.ha.HaCluster.CLUSTER;
import static dev.waymark.interop.ha.HaCluster.FAILOVER_BOUND;
import static dev.waymark.interop.ha.HaCluster.SET;
import static dev.waymark.interop.ha.HaCluster.millisSince;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.waymark.interop.harness.BrokerProcess;
import dev.waymark.interop.harness.Controllers;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.ReplicaInfo;
import dev.waymark.interop.harness.ReplicaState;
import dev.waymark.interop.harness.RouteView;
import dev.waymark.interop.vectors.Release;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * Common ground of the AutoSwitch-HA scenarios: real Java 5.5.1 brokers in controller mode
 * (their own JVMs), the real 5.5.0 clients, and a controller chosen by
 * {@code -Dwaymark.controller=waymark|java} (interop/run-java.sh runs each class once with
 * each: Java's controller is the control). They run only in the rmq5 profile and only when a
 * controller is chosen; the NameServer is Waymark's ({@code -Dwaymark.namesrv.bin}), except in
 * embedded mode, where the controller's own process is the NameServer.
 *
 * <p>A class keeps one {@link HaCluster} for all its tests (starting brokers is the slow part)
 * and every test first brings the set back to health ({@link HaCluster#ensureHealthy}), so a
 * test that fails leaves the next one a working set.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class HaBase {
    protected HaCluster cluster;
    protected DefaultMQAdminExt admin;
    protected DefaultMQProducer producer;

    /** Skips the class unless a controller kind was chosen, and outside the rmq5 profile. */
    @BeforeAll
    void requireChosenController() {
        assumeTrue(Controllers.chosen(), "the AutoSwitch-HA scenarios run only with -Dwaymark.controller=waymark|java");
        assumeTrue("5.5.1".equals(Release.version()), "the AutoSwitch-HA scenarios run in the rmq5 profile (5.5.1) only");
    }

    /** The deployment of the class; called from the subclass's {@code @BeforeAll}. */
    protected void deploy(Callable<HaCluster> deployment) throws Exception {
        long start = System.nanoTime();
        cluster = deployment.call();
        admin = HaTraffic.admin(cluster.closer(), cluster.namesrvAddr());
        producer = HaTraffic.producer(cluster.closer(), cluster.namesrvAddr());
        log("controller (%s) and NameServer serving after %d ms: %s", Controllers.kind(), millisSince(start),
            cluster.controllerAddrs());
    }

    @AfterAll
    void closeCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    static void log(String format, Object... args) {
        System.out.printf("[ha %s] %s%n", Controllers.chosen() ? Controllers.kind() : "-", String.format(format, args));
    }

    /** Brings the set back to health, starting the brokers if there are none yet. */
    protected HaCluster.Healthy healthy() throws Exception {
        if (cluster.brokers().isEmpty()) {
            cluster.startBrokers();
        }
        return cluster.ensureHealthy();
    }

    /** A topic created on every broker of the set. */
    protected String topic() throws Exception {
        return HaTraffic.topic(admin, cluster.brokers().stream().map(BrokerProcess::addr).toList());
    }

    // ---- scenarios shared by the standalone and the embedded deployment -------------------

    /**
     * Three replicas of {@code broker-a} start together: they get controller ids 1, 2 and 3
     * (identity files {@code DefaultCluster#broker-a#N}, as Java writes them, one per store,
     * matching the id each broker reports), one master, a sync-state set that grows to all
     * three; a producer and a consumer exchange messages.
     */
    protected void threeReplicasJoinAndExchangeMessages() throws Exception {
        long start = System.nanoTime();
        cluster.startBrokers();
        log("3 brokers ready %d ms after their start", millisSince(start));

        Set<String> files = new TreeSet<>(cluster.identityFiles().values());
        assertEquals(Set.of(CLUSTER + "#" + SET + "#1", CLUSTER + "#" + SET + "#2", CLUSTER + "#" + SET + "#3"), files,
            "identity files " + cluster.identityFiles());
        for (BrokerProcess broker : cluster.brokers()) {
            ReplicaState state = broker.state();
            assertEquals(CLUSTER + "#" + SET + "#" + state.controllerId(), broker.identityFile(), broker.toString());
        }

        HaCluster.Healthy healthy = cluster.awaitHealthy(HaCluster.HEALTHY_TIMEOUT);
        log("healthy %d ms after the start: master %d (%s), epoch %d, sync-state set %s epoch %d", millisSince(start),
            healthy.masterId(), healthy.master().addr(), healthy.info().masterEpoch(), healthy.info().syncStateSet(),
            healthy.info().syncStateSetEpoch());
        assertEquals(1, cluster.brokers().stream().filter(b -> b.state().master()).count(), "brokers acting as master");
        assertEquals(Set.of(1L, 2L, 3L), healthy.data().replicas(), "registered replicas");
        assertEquals(4, cluster.controller().nextBrokerId(CLUSTER, SET), "next broker id");

        String topic = topic();
        HaTraffic.Received received = HaTraffic.pushConsumer(cluster.closer(), cluster.namesrvAddr(), topic);
        Set<String> sent = HaTraffic.sendUntilOk(producer, topic, 100, Duration.ofSeconds(60));
        received.awaitAll(sent, Duration.ofSeconds(60));
        log("100 messages sent and consumed through master %s", healthy.master().addr());
    }

    /** What {@link #killMasterFailsOver} left behind: the killed former master. */
    protected BrokerProcess killedMaster;

    /**
     * kill -9 of the master: a new master from the sync-state set within the heartbeat
     * timeout + 5 s; the NameServer's route names it as id 0 and the killed one no more; the
     * producer resumes; every message acknowledged before the kill is consumed afterwards.
     */
    protected void killMasterFailsOver() throws Exception {
        HaCluster.Healthy healthy = healthy();
        String topic = topic();
        Set<String> acked = HaTraffic.sendUntilOk(producer, topic, 100, Duration.ofSeconds(60));
        BrokerProcess old = healthy.master();

        long kill = System.nanoTime();
        old.kill();
        killedMaster = old;
        ReplicaInfo after = awaitNewMaster(healthy.info(), "kill -9 of master " + old);
        long failover = millisSince(kill);
        BrokerProcess now = cluster.broker(after.masterBrokerId());
        log("kill -9 of master %d: master %d elected after %d ms (epoch %d -> %d)", healthy.masterId(),
            after.masterBrokerId(), failover, healthy.info().masterEpoch(), after.masterEpoch());
        now.awaitState(Duration.ofSeconds(20), "acting as master", ReplicaState::master);

        awaitRouteMaster(topic, now, old);
        log("NameServer route names %s as id 0 %d ms after the kill", now.addr(), millisSince(kill));
        Set<String> resumed = HaTraffic.sendUntilOk(producer, topic, 20, Duration.ofSeconds(45));
        log("producer resumed %d ms after the kill", millisSince(kill));

        Set<String> all = new LinkedHashSet<>(acked);
        all.addAll(resumed);
        HaTraffic.Received received = HaTraffic.pushConsumer(cluster.closer(), cluster.namesrvAddr(), topic);
        received.awaitAll(all, Duration.ofSeconds(60));
        log("all %d messages acknowledged before the kill, and %d after, consumed from %s", acked.size(),
            resumed.size(), now.addr());
    }

    /**
     * Waits (at most {@link HaCluster#FAILOVER_BOUND}) until the controller names a master
     * other than {@code before}'s, and checks it came from {@code before}'s sync-state set with
     * a higher master epoch.
     */
    protected ReplicaInfo awaitNewMaster(ReplicaInfo before, String after) {
        ReplicaInfo now = Poll.until(FAILOVER_BOUND, 100, "a new master after " + after, () -> {
            try {
                ReplicaInfo info = cluster.controller().replicaInfo(SET);
                return info != null && info.hasMaster() && !info.masterBrokerId().equals(before.masterBrokerId())
                    ? info : null;
            } catch (IllegalStateException e) {
                return null; // a controller between leaders
            }
        });
        assertTrue(before.syncStateSet().contains(now.masterBrokerId()), "new master " + now.masterBrokerId()
            + " not from the sync-state set " + before.syncStateSet());
        assertTrue(now.masterEpoch() > before.masterEpoch(), "master epoch " + before.masterEpoch() + " -> "
            + now.masterEpoch());
        return now;
    }

    /** Waits until the NameServer's route of {@code topic} names {@code master} as id 0 and {@code gone} not at all. */
    protected void awaitRouteMaster(String topic, BrokerProcess master, BrokerProcess gone) {
        Poll.untilTrue(Duration.ofSeconds(20), 100, "route of " + topic + " naming " + master.addr() + " as id 0"
            + (gone == null ? "" : " and not " + gone.addr()), () -> {
                RouteView route = cluster.raw().route(cluster.namesrvAddr(), topic);
                Map<Long, String> addrs = route == null ? Map.of() : route.addrsOf(SET);
                return master.addr().equals(addrs.get(0L)) && (gone == null || !addrs.containsValue(gone.addr()));
            });
    }

    /** The ids of the replicas the controller takes for alive. */
    protected Set<Long> alive() {
        return cluster.controller().syncStateData(SET).alive();
    }

    protected static List<Long> ids(List<BrokerProcess> brokers) {
        return brokers.stream().map(b -> b.state().controllerId()).toList();
    }

    protected static void assertNotMaster(BrokerProcess broker, ReplicaInfo info) {
        assertFalse(info.hasMaster() && broker.state() != null
            && info.masterBrokerId().equals(broker.state().controllerId()), broker + " is master: " + info);
    }
}
