package dev.waymark.interop.ha;

import dev.waymark.interop.harness.BrokerProcess;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.Closer;
import dev.waymark.interop.harness.ControllerClient;
import dev.waymark.interop.harness.ControllerProcess;
import dev.waymark.interop.harness.ControllerServer;
import dev.waymark.interop.harness.Controllers;
import dev.waymark.interop.harness.EmbeddedNamesrvProcess;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.NameServers;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.RawClient;
import dev.waymark.interop.harness.ReplicaInfo;
import dev.waymark.interop.harness.ReplicaState;
import dev.waymark.interop.harness.SyncStateData;
import dev.waymark.interop.harness.WaymarkNameServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * One AutoSwitch-HA deployment for the scenarios: controller nodes of the kind under test
 * ({@link Controllers}: Waymark's binary or Java's, one process per node), a NameServer
 * (Waymark's {@code rmq-namesrv}; in embedded mode the process that also runs the controller),
 * and three real Java 5.5.1 brokers of broker set {@code broker-a} in cluster
 * {@code DefaultCluster}, each in its own JVM ({@link BrokerProcess}) with its own store
 * (kept across its restarts) and ports.
 *
 * <p>Broker settings, short for test speed: heartbeats to the controllers every 500 ms with a
 * 4 s timeout (the controller takes a silent broker for dead after 4 s plus its 500 ms scan),
 * the replica-info sync and the master's sync-state-set check every second, the controller
 * leader's address refreshed every 2 s, slaves reporting their HA offset every second and
 * dropped from the sync-state set after 5 s behind, NameServer registrations every 10 s (the
 * least Java allows; a slave re-reads its master's HA address from each answer);
 * {@code allAckInSyncStateSet=true}: a send is acknowledged once every member of the
 * sync-state set has it.
 *
 * <p>"Healthy" ({@link #awaitHealthy}): the controller names a master and a sync-state set of
 * all three, takes all three for alive; the master broker acts as master and the others as its
 * slaves, replicating from its HA port; the NameServer lists the master under id 0 and each
 * slave under its controller id.
 */
final class HaCluster implements AutoCloseable {
    static final String CLUSTER = "DefaultCluster";
    static final String SET = "broker-a";
    static final int REPLICAS = 3;
    /** {@code controllerHeartBeatTimeoutMills} of the brokers. */
    static final long HEARTBEAT_TIMEOUT_MILLIS = 4000;
    /** How soon a master that died must be replaced: heartbeat timeout + 5 s. */
    static final Duration FAILOVER_BOUND = Duration.ofMillis(HEARTBEAT_TIMEOUT_MILLIS + 5000);
    static final Duration READY_TIMEOUT = Duration.ofSeconds(90);
    static final Duration HEALTHY_TIMEOUT = Duration.ofSeconds(90);

    private final Closer closer = new Closer();
    private final NameServer namesrv;
    /** The controller nodes (standalone); null in embedded mode. */
    private final List<ControllerServer> controllers;
    /** The embedded controller's address; null when standalone. */
    private final String embeddedController;
    private final List<BrokerProcess> brokers = new ArrayList<>();
    private final ControllerClient controller;
    private final RawClient raw;

    private HaCluster(NameServer namesrv, List<ControllerServer> controllers, String embeddedController) {
        this.namesrv = namesrv;
        this.controllers = controllers == null ? null : new ArrayList<>(controllers);
        this.embeddedController = embeddedController;
        this.controller = new ControllerClient(this::controllerAddrs);
        this.raw = new RawClient();
    }

    /**
     * Controller settings of the scenarios (Java keys; both kinds read them): heartbeat
     * expiry checked every 500 ms; the leader's dead-master scan at its default 5 s;
     * notifications on, no unclean elections (the defaults, named for the reader).
     */
    static Map<String, String> controllerSettings() {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("scanNotActiveBrokerInterval", "500");
        s.put("scanInactiveMasterInterval", "5000");
        s.put("enableElectUncleanMaster", "false");
        s.put("notifyBrokerRoleChanged", "true");
        return s;
    }

    /** A Waymark NameServer and an n-node controller group of the kind under test. */
    static HaCluster standalone(int nodes) throws Exception {
        NameServer ns = WaymarkNameServer.start(NameServers.binary(), Map.of());
        try {
            List<ControllerServer> group = nodes == 1 ? List.of(Controllers.start(controllerSettings()))
                : Controllers.startGroup(nodes, controllerSettings());
            return new HaCluster(ns, group, null);
        } catch (Exception | AssertionError e) {
            ns.stop();
            throw e;
        }
    }

    /** One process: a NameServer with the controller of the kind under test embedded. */
    static HaCluster embedded() throws Exception {
        EmbeddedNamesrvProcess ns = Controllers.startEmbedded(controllerSettings());
        return new HaCluster(ns, null, ns.controllerAddr());
    }

    NameServer namesrv() {
        return namesrv;
    }

    String namesrvAddr() {
        return namesrv.addr();
    }

    ControllerClient controller() {
        return controller;
    }

    RawClient raw() {
        return raw;
    }

    Closer closer() {
        return closer;
    }

    /** The controller nodes, in peer order (standalone only). */
    synchronized List<ControllerServer> controllers() {
        if (controllers == null) {
            throw new IllegalStateException("embedded mode: the controller runs inside " + namesrv);
        }
        return List.copyOf(controllers);
    }

    /** Puts a restarted node in place of the one it replaces. */
    synchronized void replace(ControllerServer old, ControllerServer now) {
        controllers.set(controllers.indexOf(old), now);
    }

    synchronized List<String> controllerAddrs() {
        return controllers == null ? List.of(embeddedController)
            : controllers.stream().map(ControllerServer::addr).toList();
    }

    /** {@code controllerAddr} of the brokers: every node, {@code ;}-separated. */
    String controllerAddrList() {
        return String.join(";", controllerAddrs());
    }

    /** The spec of every replica of the set. */
    BrokerSpec brokerSpec() {
        return new BrokerSpec().cluster(CLUSTER).name(SET).namesrv(namesrv.addr())
            .set("enableControllerMode", "true")
            .set("controllerAddr", controllerAddrList())
            .set("allAckInSyncStateSet", "true")
            .set("controllerHeartBeatTimeoutMills", String.valueOf(HEARTBEAT_TIMEOUT_MILLIS))
            .set("brokerHeartbeatInterval", "500")
            .set("syncBrokerMetadataPeriod", "1000")
            .set("checkSyncStateSetPeriod", "1000")
            .set("syncControllerMetadataPeriod", "2000")
            .set("haSendHeartbeatInterval", "1000")
            .set("haMaxTimeSlaveNotCatchup", "5000")
            .set("registerNameServerPeriod", "10000");
    }

    /** Starts the three replicas together and waits until each is ready. */
    void startBrokers() throws Exception {
        List<BrokerProcess> started = parallel(List.of(this::startBroker, this::startBroker, this::startBroker));
        for (BrokerProcess broker : started) {
            broker.awaitReady(READY_TIMEOUT);
        }
    }

    /** Starts one replica and adds it to the set (at once, so that {@link #close} stops it whatever follows). */
    private BrokerProcess startBroker() throws Exception {
        BrokerProcess broker = BrokerProcess.start(ControllerProcess.classpathFile(), brokerSpec());
        synchronized (this) {
            brokers.add(broker);
        }
        return broker;
    }

    synchronized List<BrokerProcess> brokers() {
        return List.copyOf(brokers);
    }

    /** Puts a restarted broker in place of the one it replaces. */
    synchronized void replace(BrokerProcess old, BrokerProcess now) {
        brokers.set(brokers.indexOf(old), now);
    }

    /** Restarts {@code old} (killed or stopped) and puts it in its place; returns once it runs. */
    BrokerProcess restart(BrokerProcess old) throws Exception {
        BrokerProcess now = old.restart();
        replace(old, now);
        return now;
    }

    /** The broker whose controller id is {@code id} (its own view). */
    BrokerProcess broker(long id) {
        return brokers().stream().filter(b -> b.state() != null && Long.valueOf(id).equals(b.state().controllerId()))
            .findFirst().orElseThrow(() -> new AssertionError("no broker with controller id " + id + " among "
                + brokers()));
    }

    /** The broker the controller names master now; null when there is none. */
    BrokerProcess master() {
        ReplicaInfo info = controller.replicaInfo(SET);
        return info == null || !info.hasMaster() ? null : broker(info.masterBrokerId());
    }

    /** A healthy set as {@link #awaitHealthy} found it. */
    record Healthy(BrokerProcess master, ReplicaInfo info, SyncStateData data) {
        long masterId() {
            return info.masterBrokerId();
        }

        List<BrokerProcess> slaves(List<BrokerProcess> all) {
            return all.stream().filter(b -> b != master).toList();
        }
    }

    /** Waits until the set is healthy (class comment) and returns what it looked like. */
    Healthy awaitHealthy(Duration timeout) {
        String[] why = {""};
        try {
            return Poll.until(timeout, 200, "broker set " + SET + " healthy", () -> healthyNow(why));
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; last: " + why[0] + "; brokers " + brokers().stream()
                .map(b -> b + " " + b.state()).toList(), e);
        }
    }

    private Healthy healthyNow(String[] why) {
        ReplicaInfo info = controller.replicaInfo(SET);
        if (info == null || !info.hasMaster()) {
            why[0] = "no master: " + info;
            return null;
        }
        if (!info.syncStateSet().equals(Set.of(1L, 2L, 3L))) {
            why[0] = "sync-state set " + info.syncStateSet();
            return null;
        }
        SyncStateData data = controller.syncStateData(SET);
        if (data == null || !data.alive().equals(Set.of(1L, 2L, 3L))) {
            why[0] = "alive " + (data == null ? null : data.alive());
            return null;
        }
        BrokerProcess master = null;
        Map<Long, String> expected = new TreeMap<>();
        for (BrokerProcess broker : brokers()) {
            ReplicaState state = broker.state();
            if (!broker.alive() || broker.paused() || !broker.ready() || state == null || state.controllerId() == null) {
                why[0] = broker + " not running: " + state;
                return null;
            }
            if (state.controllerId() == info.masterBrokerId().longValue()) {
                if (!state.master() || state.masterEpoch() != info.masterEpoch()) {
                    why[0] = broker + " is the controller's master but says " + state;
                    return null;
                }
                master = broker;
                expected.put(0L, broker.addr());
            } else {
                if (!state.slave() || !state.masterAddress().equals(info.masterAddress())) {
                    why[0] = broker + " should follow " + info.masterAddress() + " but says " + state;
                    return null;
                }
                if (!state.haConnection().equals(haAddrOf(info.masterAddress()))) {
                    why[0] = broker + " replicates from " + (state.haConnection().isEmpty() ? "nobody"
                        : state.haConnection()) + ", not from the master's HA port " + haAddrOf(info.masterAddress());
                    return null;
                }
                expected.put(state.controllerId(), broker.addr());
            }
        }
        Map<Long, String> listed = raw.clusterInfo(namesrv.addr()).addrsOf(SET);
        if (master == null || !listed.equals(expected)) {
            why[0] = "NameServer lists " + listed + ", expected " + expected;
            return null;
        }
        return new Healthy(master, info, data);
    }

    /** The HA address of the broker at {@code addr} ({@code 127.0.0.1:<listenPort + 1>}). */
    static String haAddrOf(String addr) {
        int colon = addr.lastIndexOf(':');
        return addr.substring(0, colon + 1) + (Integer.parseInt(addr.substring(colon + 1)) + 1);
    }

    /**
     * Brings the set back to health after an earlier scenario (whether it passed or not):
     * continues paused brokers, restarts dead ones, waits until healthy.
     *
     * <p>One repair is Java's broker's own: a controller-mode slave replicates from the HA
     * address in the NameServer's answer to its re-registration, which names whichever broker
     * holds id 0 there at that moment. When a slave re-registers after a failover before the
     * new master did, while the old master is still registered (frozen, its connection open),
     * it connects to the old master, keeps that connection when the old master becomes a slave
     * itself (the address it is told later is used only for its next connection, and this one
     * never breaks), and never joins the new master's sync-state set. A slave found still
     * connected to anything but the master's HA port after {@link #MISWIRED_GRACE} is restarted,
     * and the repair is logged.
     */
    Healthy ensureHealthy() throws Exception {
        List<Callable<BrokerProcess>> restarts = new ArrayList<>();
        for (BrokerProcess broker : brokers()) {
            if (broker.alive() && broker.paused()) {
                broker.resume();
            } else if (!broker.alive()) {
                restarts.add(() -> restart(broker));
            }
        }
        if (!restarts.isEmpty()) {
            parallel(restarts).forEach(b -> b.awaitReady(READY_TIMEOUT));
        }
        try {
            return awaitHealthy(MISWIRED_GRACE);
        } catch (AssertionError e) {
            List<BrokerProcess> miswired = miswiredSlaves();
            if (miswired.isEmpty()) {
                return awaitHealthy(HEALTHY_TIMEOUT);
            }
            for (BrokerProcess broker : miswired) {
                System.out.println("[ha] repair: " + broker + " replicates from " + broker.state().haConnection()
                    + " instead of its master " + broker.state().masterAddress() + " (Java broker: its HA address came"
                    + " from a NameServer answer naming a former master); restarting it");
                broker.kill();
                restart(broker).awaitReady(READY_TIMEOUT);
            }
            return awaitHealthy(HEALTHY_TIMEOUT);
        }
    }

    /** How long a slave may replicate from something other than its master before {@link #ensureHealthy} restarts it. */
    static final Duration MISWIRED_GRACE = Duration.ofSeconds(20);

    /** Running slaves whose replication client is connected, but not to their master's HA port. */
    List<BrokerProcess> miswiredSlaves() {
        List<BrokerProcess> out = new ArrayList<>();
        for (BrokerProcess broker : brokers()) {
            ReplicaState state = broker.state();
            if (broker.alive() && state != null && state.slave() && !state.masterAddress().isEmpty()
                && !state.haConnection().isEmpty() && !state.haConnection().equals(haAddrOf(state.masterAddress()))) {
                out.add(broker);
            }
        }
        return out;
    }

    /**
     * Fails as soon as {@code deviation} names one, checking every 200 ms for the whole
     * {@code window}: that something does <em>not</em> happen (an election that must not
     * take place), observed over a period longer than whatever would make it happen.
     */
    static void holdsFor(Duration window, String what, Supplier<String> deviation) {
        long end = System.nanoTime() + window.toNanos();
        while (System.nanoTime() - end < 0) {
            String seen = deviation.get();
            if (seen != null) {
                throw new AssertionError(what + ": " + seen);
            }
            Poll.sleep(200);
        }
    }

    /** Runs the calls together, returns their results in order, and fails if any failed. */
    static <T> List<T> parallel(List<Callable<T>> calls) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(calls.size());
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (Callable<T> call : calls) {
                futures.add(pool.submit(call));
            }
            List<T> results = new ArrayList<>();
            Exception failure = null;
            for (Future<T> future : futures) {
                try {
                    results.add(future.get());
                } catch (ExecutionException e) {
                    if (failure == null) {
                        failure = e.getCause() instanceof Exception cause ? cause : e;
                    }
                }
            }
            if (failure != null) {
                throw failure;
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    /** Milliseconds since {@code nanos}. */
    static long millisSince(long nanos) {
        return (System.nanoTime() - nanos) / 1_000_000;
    }

    /** The identity files of the brokers' stores, by broker address. */
    Map<String, String> identityFiles() {
        return brokers().stream().collect(Collectors.toMap(BrokerProcess::addr,
            b -> String.valueOf(b.identityFile()), (a, b) -> a, TreeMap::new));
    }

    /** Stores of every broker (kept across restarts). */
    List<Path> stores() {
        return brokers().stream().map(BrokerProcess::storeDir).toList();
    }

    /**
     * Stops everything; with {@code -Dwaymark.keep.dirs=true} the brokers' and controllers'
     * directories (stores, logs) are kept and named on stdout, for a look after a failure.
     */
    @Override
    public void close() {
        boolean keep = Boolean.getBoolean("waymark.keep.dirs");
        for (BrokerProcess broker : brokers()) {
            if (keep) {
                broker.kill();
                System.out.println("kept " + broker + ": " + broker.dir());
            } else {
                broker.close();
            }
        }
        closer.close();
        if (controllers != null) {
            for (ControllerServer node : controllers()) {
                if (keep) {
                    node.kill();
                    System.out.println("kept " + node + ": " + node.dir());
                } else {
                    node.discard();
                }
            }
        }
        namesrv.stop();
        controller.close();
        raw.close();
    }
}
