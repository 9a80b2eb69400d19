package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import dev.waymark.interop.harness.BrokerProcess;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.ControllerProcess;
import dev.waymark.interop.harness.JavaNameServer;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.NameServers;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.RawClient;
import dev.waymark.interop.harness.RouteView;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.Test;

/**
 * A broker host that vanishes (power or network gone: no FIN, no RST, nothing) leaves
 * Waymark's routes within seconds, and the Java NameServer's only at its 120 s expiry.
 *
 * <p>A real 5.x broker JVM runs in its own network namespace, joined to this one by a veth
 * pair (a /30: the host side for the NameServer, the peer side for the broker, which
 * advertises it as {@code brokerIP1}); the NameServer under test listens on the host side.
 * Loopback cannot vanish: both ends are one kernel, which answers every probe. Once the
 * broker's topic is routable, a blackhole route in the namespace drops everything the broker's
 * kernel sends to the NameServer, keepalive replies included. Waymark, with keepalive probes
 * after 1 s of silence and a 3 s TCP_USER_TIMEOUT, closes the broker's connection and so
 * unregisters it; the Java NameServer (the control) sets no keepalive and keeps the broker
 * until {@code serverChannelMaxIdleTimeSeconds} or the broker's heartbeat timeout (both
 * 120 s), so it must still route it well after Waymark's bound.
 *
 * <p>Needs root (CAP_NET_ADMIN) and iproute2's {@code ip}; skipped, saying what is missing,
 * without them.
 */
class VanishedBrokerTest extends ScenarioBase {
    private static final String BROKER = "vanish-a";
    /** Short keepalive so the test is quick; the defaults find a dead peer within 15 s. */
    private static final Map<String, String> WAYMARK_KEEPALIVE = Map.of(
        "tcpKeepaliveIdleSeconds", "1",
        "tcpKeepaliveIntervalSeconds", "1",
        "tcpKeepaliveProbes", "2",
        "tcpUserTimeoutMillis", "3000");
    /** Waymark must have dropped the broker by then: 1 s idle, then at most 3 s unanswered, plus slack. */
    private static final long WAYMARK_BOUND_MILLIS = 10_000;
    /** How long the Java NameServer must still route the broker: twice Waymark's bound, far below 120 s. */
    private static final long JAVA_HOLD_MILLIS = 20_000;

    @Test
    void aBrokerHostThatVanishesLeavesTheRoutes() throws Exception {
        assumeTrue(v5(), "the scenario runs a 5.x broker and binds the Java NameServer with 5.x's bindAddress");
        PeerNamespace peer = perTest.add(PeerNamespace.create());
        NameServer ns = perTest.add(waymark()
            ? WaymarkOnAddress.start(NameServers.binary(), peer.host(), WAYMARK_KEEPALIVE)
            : JavaNameServer.start(Map.of("bindAddress", peer.host())));
        // The Java NameServer reports 127.0.0.1:<port> whatever it binds; the port is the one
        // bound on the host side.
        String nsAddr = peer.host() + ns.addr().substring(ns.addr().lastIndexOf(':'));

        BrokerSpec spec = new BrokerSpec().cluster("VanishCluster").name(BROKER).namesrv(nsAddr)
            .set("brokerIP1", peer.peer()).set("brokerIP2", peer.peer());
        BrokerProcess broker = perTest.add(BrokerProcess.start(ControllerProcess.classpathFile(), spec, List.of(),
            peer.exec()));
        assertTrue(broker.addr().startsWith(peer.peer() + ":"), "the broker advertises " + broker.addr());

        RawClient raw = raw(perTest);
        // The admin client reaches the broker at its advertised address, over the link.
        DefaultMQAdminExt admin = Clients.admin(perTest, nsAddr);
        String topic = Clients.unique("VanishTopic");
        admin.createAndUpdateTopicConfig(broker.addr(), new TopicConfig(topic, 2, 2, 6));
        RouteView route = Poll.until(seconds(15), "route of " + topic, () -> raw.route(nsAddr, topic));
        assertEquals(Map.of(0L, broker.addr()), route.addrsOf(BROKER), route.toString());

        // A live broker's kernel answers the probes: keepalive must not drop it, even idle for
        // longer than Waymark's whole probe-and-timeout cycle.
        Poll.sleep(6_000);
        assertEquals(Map.of(0L, broker.addr()), raw.clusterInfo(nsAddr).addrsOf(BROKER),
            "a reachable broker must stay registered");

        peer.blackhole();
        long vanished = System.nanoTime();
        if (waymark()) {
            Poll.untilTrue(seconds(WAYMARK_BOUND_MILLIS / 1000), 100, "the vanished broker to leave " + ns,
                () -> raw.route(nsAddr, topic) == null);
            long millis = (System.nanoTime() - vanished) / 1_000_000;
            System.out.printf("VanishedBrokerTest: Waymark dropped the vanished broker %d ms after the blackhole%n",
                millis);
            assertEquals(Map.of(), raw.clusterInfo(nsAddr).addrsOf(BROKER), "the broker must leave the cluster too");
            assertTrue(((WaymarkOnAddress) ns).alive(), () -> ns + " exited; its log:\n"
                + ((WaymarkOnAddress) ns).logTail());
        } else {
            while (System.nanoTime() - vanished < JAVA_HOLD_MILLIS * 1_000_000) {
                RouteView still = raw.route(nsAddr, topic);
                long millis = (System.nanoTime() - vanished) / 1_000_000;
                assertTrue(still != null && Map.of(0L, broker.addr()).equals(still.addrsOf(BROKER)),
                    "the Java NameServer dropped the vanished broker after only " + millis + " ms: " + still);
                Poll.sleep(500);
            }
            System.out.printf("VanishedBrokerTest: the Java NameServer still routes the vanished broker %d ms after"
                + " the blackhole (it waits for its 120 s expiry)%n", (System.nanoTime() - vanished) / 1_000_000);
        }
    }

    /**
     * A network namespace joined to this one by a veth pair, both ends up and addressed, as
     * crates/rmq-testkit/src/netns.rs makes them; {@link #create} skips the test when it
     * cannot. Addresses come from 10.192.0.0/11, one /30 per namespace chosen by process id
     * and a counter, apart from the Rust tests' 10.224.0.0/11 so that both can run at once.
     */
    static final class PeerNamespace implements AutoCloseable {
        private static final AtomicInteger NEXT = new AtomicInteger();
        private static final int CAP_NET_ADMIN = 12;

        private final String ip;
        private final String name;
        /** This namespace's end of the pair. */
        private final String hostLink;
        private final String host;
        private final String peer;

        private PeerNamespace(String ip, String name, String hostLink, String host, String peer) {
            this.ip = ip;
            this.name = name;
            this.hostLink = hostLink;
            this.host = host;
            this.peer = peer;
        }

        /** Creates one, or skips the test naming what is missing or what failed. */
        static PeerNamespace create() throws Exception {
            assumeTrue(hasNetAdmin(), "needs a network namespace: this process lacks CAP_NET_ADMIN (run as root)");
            String ip = findProgram("ip");
            assumeTrue(ip != null, "needs a network namespace: iproute2's `ip` is not installed");
            long pid = ProcessHandle.current().pid();
            int n = NEXT.getAndIncrement();
            int index = (int) ((pid % (1 << 17)) << 2) | (n % 4);
            byte[] base = InetAddress.getByName("10.192.0.0").getAddress();
            int first = ((base[0] & 0xff) << 24 | (base[1] & 0xff) << 16) + (index << 2);
            String host = dotted(first + 1);
            String peerAddr = dotted(first + 2);
            String name = "waymark-j" + pid + "-" + n;
            String hostLink = "wj" + pid + "x" + n + "h";
            String peerLink = "wj" + pid + "x" + n + "p";
            String failure = run(ip, "netns", "add", name);
            assumeTrue(failure == null, () -> "needs a network namespace and cannot make one: " + failure);
            // From here the namespace exists: closing removes it whatever fails next.
            PeerNamespace namespace = new PeerNamespace(ip, name, hostLink, host, peerAddr);
            try {
                check(run(ip, "link", "add", hostLink, "type", "veth", "peer", "name", peerLink, "netns", name));
                check(run(ip, "addr", "add", host + "/30", "dev", hostLink));
                check(run(ip, "link", "set", hostLink, "up"));
                check(run(ip, "netns", "exec", name, ip, "addr", "add", peerAddr + "/30", "dev", peerLink));
                check(run(ip, "netns", "exec", name, ip, "link", "set", peerLink, "up"));
                // The broker's own loopback connections (to itself, to its HA port).
                check(run(ip, "netns", "exec", name, ip, "link", "set", "lo", "up"));
            } catch (RuntimeException e) {
                namespace.close();
                throw e;
            }
            return namespace;
        }

        /** The host side, where the NameServer listens. */
        String host() {
            return host;
        }

        /** The peer side, the broker's address. */
        String peer() {
            return peer;
        }

        /** The prefix that runs a command inside ({@code ip netns exec} execs it: same pid). */
        List<String> exec() {
            return List.of(ip, "netns", "exec", name);
        }

        /**
         * From now on everything the peer sends to {@link #host} is dropped in the peer's own
         * kernel: packets from here still arrive, nothing comes back, no error is seen here.
         */
        void blackhole() {
            check(run(ip, "netns", "exec", name, ip, "route", "add", "blackhole", host + "/32"));
        }

        @Override
        public void close() {
            // The link first: a peer socket that closed into the blackhole keeps retransmitting
            // its FIN and holds the namespace, and with it the pair, for minutes after its name
            // is gone.
            run(ip, "link", "del", hostLink);
            String failure = run(ip, "netns", "del", name);
            if (failure != null) {
                System.err.println("VanishedBrokerTest: " + failure);
            }
        }

        @Override
        public String toString() {
            return "network namespace " + name + " (" + host + " <-> " + peer + ")";
        }

        private static void check(String failure) {
            if (failure != null) {
                throw new IllegalStateException(failure);
            }
        }

        /** Runs a command; null when it succeeded, else the command and its output. */
        private static String run(String... command) {
            try {
                Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
                String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    return "`" + String.join(" ", command) + "` did not finish within 30 s";
                }
                return process.exitValue() == 0 ? null
                    : "`" + String.join(" ", command) + "` failed (exit " + process.exitValue() + "): " + output;
            } catch (IOException e) {
                return "cannot run `" + String.join(" ", command) + "`: " + e;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "interrupted: " + String.join(" ", command);
            }
        }

        /** Whether CAP_NET_ADMIN is in this process's effective set. */
        private static boolean hasNetAdmin() {
            try {
                for (String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.UTF_8)) {
                    if (line.startsWith("CapEff:")) {
                        long caps = Long.parseUnsignedLong(line.substring("CapEff:".length()).trim(), 16);
                        return (caps & (1L << CAP_NET_ADMIN)) != 0;
                    }
                }
            } catch (IOException | NumberFormatException e) {
                return false;
            }
            return false;
        }

        /** {@code name} on PATH, or in the sbin directories PATH often lacks; null if none. */
        private static String findProgram(String name) {
            List<String> dirs = new ArrayList<>(List.of(System.getenv().getOrDefault("PATH", "").split(":")));
            dirs.addAll(List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin"));
            for (String dir : dirs) {
                Path candidate = Path.of(dir.isEmpty() ? "." : dir, name);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return candidate.toString();
                }
            }
            return null;
        }

        private static String dotted(int address) {
            try {
                byte[] bytes = {(byte) (address >>> 24), (byte) (address >>> 16), (byte) (address >>> 8), (byte) address};
                return ((Inet4Address) InetAddress.getByAddress(bytes)).getHostAddress();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /**
     * The Waymark binary listening on a given address ({@code --listen HOST:0}), which
     * {@link NameServers#start} (always loopback) cannot do; its output goes to
     * {@code namesrv.log} in its temporary directory, where the boot line names the port.
     */
    static final class WaymarkOnAddress implements NameServer {
        private static final Pattern BOOT = Pattern.compile("The Name Server boot success.* address \\S+:(\\d+)\\s*$",
            Pattern.MULTILINE);

        private final Process process;
        private final Path dir;
        private final String addr;
        private boolean stopped;

        private WaymarkOnAddress(Process process, Path dir, String addr) {
            this.process = process;
            this.dir = dir;
            this.addr = addr;
        }

        static WaymarkOnAddress start(Path binary, String host, Map<String, String> settings) throws Exception {
            Path dir = Files.createTempDirectory("waymark-vanished-namesrv-");
            List<String> command = new ArrayList<>(List.of(binary.toString(), "--listen", host + ":0",
                "--set", "kvConfigPath=" + dir.resolve("kv.json"),
                "--set", "configStorePath=" + dir.resolve("ns.properties"),
                // Its own route snapshot, not the shared HOME's (see WaymarkNameServer).
                "--set", "routeSnapshotPath=" + dir.resolve("routes.snapshot")));
            settings.forEach((k, v) -> command.addAll(List.of("--set", k + "=" + v)));
            Path log = dir.resolve("namesrv.log");
            Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile())
                .start();
            try {
                int port = Poll.until(Duration.ofSeconds(20), "boot line of " + String.join(" ", command), () -> {
                    if (!process.isAlive()) {
                        throw new IllegalStateException("exited with " + process.exitValue());
                    }
                    Matcher boot = BOOT.matcher(read(log));
                    return boot.find() ? Integer.valueOf(boot.group(1)) : null;
                });
                return new WaymarkOnAddress(process, dir, host + ":" + port);
            } catch (RuntimeException | AssertionError e) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                throw new IllegalStateException("Waymark NameServer did not boot; log:\n" + read(log), e);
            }
        }

        private static String read(Path log) {
            try {
                return Files.readString(log, StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "(no log: " + e + ")";
            }
        }

        /** {@code <host>:<port>}, the address it listens on. */
        @Override
        public String addr() {
            return addr;
        }

        @Override
        public String kind() {
            return "waymark";
        }

        boolean alive() {
            return process.isAlive();
        }

        String logTail() {
            String all = read(dir.resolve("namesrv.log"));
            return all.substring(Math.max(0, all.length() - 4000));
        }

        @Override
        public synchronized void stop() {
            if (stopped) {
                return;
            }
            stopped = true;
            process.destroy();
            try {
                if (!process.waitFor(5, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(file);
                }
            } catch (IOException e) {
                System.err.println("VanishedBrokerTest: cannot delete " + dir + ": " + e);
            }
        }

        @Override
        public String toString() {
            return "waymark NameServer " + addr + " (pid " + process.pid() + ")";
        }
    }
}
