package dev.waymark.interop.scenario;

import java.io.File;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import dev.waymark.interop.harness.SkipOrFail;

/**
 * A network namespace joined to this one by a veth pair, both ends up and addressed, as
 * crates/rmq-testkit/src/netns.rs makes them; {@link #create} skips the test when it
 * cannot (fails it under {@code CI=true}). Addresses come from 10.192.0.0/11, one /30 per
 * subnet chosen by process id and a counter, apart from the Rust tests' 10.224.0.0/11 so that
 * both can run at once. A namespace has one subnet on the pair ({@link #host} and
 * {@link #peer}); {@link #addSubnet} adds others on the same pair, so that a server listening on
 * one host-side address can be cut off from the peer while another one stays reachable.
 */
final class PeerNamespace implements AutoCloseable {
    private static final AtomicInteger NEXT = new AtomicInteger();
    private static final int CAP_NET_ADMIN = 12;

    /** Two addresses of one /30 on the pair: this namespace's side and the peer's. */
    record Subnet(String host, String peer) {
    }

    private final String ip;
    private final String name;
    /** This namespace's end of the pair. */
    private final String hostLink;
    /** The peer namespace's end. */
    private final String peerLink;
    private final String host;
    private final String peer;

    private PeerNamespace(String ip, String name, String hostLink, String peerLink, String host, String peer) {
        this.ip = ip;
        this.name = name;
        this.hostLink = hostLink;
        this.peerLink = peerLink;
        this.host = host;
        this.peer = peer;
    }

    /**
     * Creates one, or skips the test naming what is missing or what failed; under
     * {@code CI=true} the test fails instead ({@link SkipOrFail}).
     */
    static PeerNamespace create() throws Exception {
        SkipOrFail.unless(hasNetAdmin(),
            () -> "needs a network namespace: this process lacks CAP_NET_ADMIN (run as root)");
        String ip = findProgram("ip");
        SkipOrFail.unless(ip != null, () -> "needs a network namespace: iproute2's `ip` is not installed");
        long pid = ProcessHandle.current().pid();
        int n = NEXT.getAndIncrement();
        Subnet subnet = subnet(pid, n);
        String host = subnet.host();
        String peerAddr = subnet.peer();
        String name = "waymark-j" + pid + "-" + n;
        String hostLink = "wj" + pid + "x" + n + "h";
        String peerLink = "wj" + pid + "x" + n + "p";
        String failure = run(ip, "netns", "add", name);
        SkipOrFail.unless(failure == null, () -> "needs a network namespace and cannot make one: " + failure);
        // From here the namespace exists: closing removes it whatever fails next.
        PeerNamespace namespace = new PeerNamespace(ip, name, hostLink, peerLink, host, peerAddr);
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

    /** The /30 of this process's {@code n}-th subnet. */
    private static Subnet subnet(long pid, int n) throws IOException {
        int index = (int) ((pid % (1 << 17)) << 2) | (n % 4);
        byte[] base = InetAddress.getByName("10.192.0.0").getAddress();
        int first = ((base[0] & 0xff) << 24 | (base[1] & 0xff) << 16) + (index << 2);
        return new Subnet(dotted(first + 1), dotted(first + 2));
    }

    /**
     * One more /30 on the pair, both ends addressed: the peer reaches the new host-side address
     * over the same link, and {@link #blackhole(String)} can cut it alone.
     */
    Subnet addSubnet() throws IOException {
        Subnet subnet = subnet(ProcessHandle.current().pid(), NEXT.getAndIncrement());
        check(run(ip, "addr", "add", subnet.host() + "/30", "dev", hostLink));
        check(run(ip, "netns", "exec", name, ip, "addr", "add", subnet.peer() + "/30", "dev", peerLink));
        return subnet;
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
        blackhole(host);
    }

    /** {@link #blackhole()} for one host-side address ({@link #host} or one of {@link #addSubnet}). */
    void blackhole(String hostAddr) {
        check(run(ip, "netns", "exec", name, ip, "route", "add", "blackhole", hostAddr + "/32"));
    }

    @Override
    public void close() {
        // The link first: a peer socket that closed into the blackhole keeps retransmitting
        // its FIN and holds the namespace, and with it the pair, for minutes after its name
        // is gone.
        run(ip, "link", "del", hostLink);
        String failure = run(ip, "netns", "del", name);
        if (failure != null) {
            System.err.println("PeerNamespace: " + failure);
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
