package dev.waymark.interop.harness;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Loopback ports for the brokers and NameServers the harness starts, on a busy machine.
 *
 * <p>Where a server can bind port 0 and report what it got (the NameServers), the harness
 * does that and guesses nothing. A broker needs three related ports ({@code p - 2}, its
 * "fast" listener; {@code p}; {@code p + 1}, HA), so for brokers a port is chosen and then
 * bound by the broker, and a start that fails to bind is retried with fresh ports
 * ({@link #startOnFreePorts}). Chosen ports come from below the kernel's ephemeral range:
 * the kernel never gives those to outgoing connections, which are what most often took a
 * port between the check and the bind. When every attempt fails, the error names each
 * port tried and what held it ({@link #holders}).
 *
 * <p>Runs of the suite that go on at the same time (interop/run-java.sh runs a scenario
 * run against each NameServer at once) each choose from their own part of that range: the
 * environment variable {@code WAYMARK_PORTS_SLICE=i/n} (inherited by the processes the
 * harness starts) gives a run the {@code i}-th of {@code n} equal slices ({@link #slice}),
 * so that no port one run chose, released and binds again (a restart on the same address)
 * can meanwhile be chosen by the other.
 */
public final class Ports {
    /** Attempts with fresh ports before a start is given up. */
    public static final int ATTEMPTS = 5;

    private static final int LOWEST = 10_000;

    private Ports() {
    }

    /** One start of a server on {@code port}; throws when it cannot bind. */
    @FunctionalInterface
    public interface Start<T> {
        T on(int port) throws Exception;
    }

    /**
     * Starts something that binds {@code port + offset} for each of {@code offsets}, with a
     * freshly chosen {@code port} per attempt, up to {@link #ATTEMPTS} attempts. Only bind
     * failures ({@link #isBindFailure}) are retried; the start must clean up after itself
     * when it throws.
     *
     * @throws IllegalStateException when every attempt failed to bind, naming the ports
     *     tried and what held them
     */
    public static <T> T startOnFreePorts(String what, int[] offsets, Start<T> start) throws Exception {
        List<String> tried = new ArrayList<>();
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            int port = choose(offsets);
            try {
                return start.on(port);
            } catch (Exception e) {
                if (!isBindFailure(e)) {
                    throw e;
                }
                tried.add("attempt " + attempt + ": " + holders(port, offsets) + " (" + rootMessage(e) + ")");
            }
        }
        throw new IllegalStateException(what + ": no free ports after " + ATTEMPTS + " attempts with fresh ports; "
            + String.join("; ", tried));
    }

    /**
     * Starts something on the given {@code port} (a restart on the same address), retrying
     * bind failures until {@code timeout} has passed (the old process's sockets may linger).
     *
     * @throws IllegalStateException when it never could bind, naming what held the ports
     */
    public static <T> T startOnPort(String what, int port, int[] offsets, Duration timeout, Start<T> start)
        throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        int attempts = 0;
        while (true) {
            attempts++;
            try {
                return start.on(port);
            } catch (Exception e) {
                if (!isBindFailure(e)) {
                    throw e;
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException(what + ": could not bind after " + attempts + " attempts in "
                        + timeout.toSeconds() + " s; " + holders(port, offsets) + " (" + rootMessage(e) + ")", e);
                }
            }
            Thread.sleep(250);
        }
    }

    /** Whether {@code e} or one of its causes says that an address was in use. */
    public static boolean isBindFailure(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof BindException) {
                return true;
            }
            String message = t.getMessage();
            if (message != null && (message.contains("Address already in use") || message.startsWith("Failed to bind"))) {
                return true;
            }
        }
        return false;
    }

    /**
     * A port {@code p} such that {@code p + offset} is free for every offset (checked by
     * binding it on all interfaces, as brokers do), below the ephemeral range.
     */
    static int choose(int[] offsets) {
        int[] range = candidateRange();
        int minOffset = 0;
        int maxOffset = 0;
        for (int offset : offsets) {
            minOffset = Math.min(minOffset, offset);
            maxOffset = Math.max(maxOffset, offset);
        }
        for (int probe = 0; probe < 200; probe++) {
            int port = ThreadLocalRandom.current().nextInt(range[0] - minOffset, range[1] - maxOffset + 1);
            boolean allFree = true;
            for (int offset : offsets) {
                allFree &= isFree(port + offset);
            }
            if (allFree) {
                return port;
            }
        }
        // A machine this full fails on the bind, and the error then says who holds what.
        return ThreadLocalRandom.current().nextInt(range[0] - minOffset, range[1] - maxOffset + 1);
    }

    /**
     * Ports to choose from: from 10000 up to just below the kernel's ephemeral range
     * ({@code /proc/sys/net/ipv4/ip_local_port_range}), or 10000–32767 when that cannot be
     * read or leaves too little room.
     */
    static int[] candidateRange() {
        return slice(belowEphemeral(), System.getenv(SLICE_VARIABLE));
    }

    /** The environment variable naming this run's slice of the range, {@code i/n}. */
    public static final String SLICE_VARIABLE = "WAYMARK_PORTS_SLICE";

    private static int[] belowEphemeral() {
        try {
            String[] bounds = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim().split("\\s+");
            int ephemeralLow = Integer.parseInt(bounds[0]);
            if (ephemeralLow - 1 - LOWEST >= 2_000) {
                return new int[] {LOWEST, ephemeralLow - 1};
            }
        } catch (IOException | RuntimeException e) {
            // Not Linux, or an odd file: the conventional range below.
        }
        return new int[] {LOWEST, 32_767};
    }

    /**
     * The {@code i}-th (from 1) of {@code n} equal, disjoint slices of {@code range} for
     * {@code spec} "i/n"; the whole range for a null or empty spec.
     *
     * @throws IllegalArgumentException for any other spec, or a slice too small for a
     *     broker's ports: a run must not quietly share ports with the run beside it
     */
    static int[] slice(int[] range, String spec) {
        if (spec == null || spec.isBlank()) {
            return range;
        }
        String[] parts = spec.trim().split("/", -1);
        int i;
        int n;
        try {
            if (parts.length != 2) {
                throw new NumberFormatException("not i/n");
            }
            i = Integer.parseInt(parts[0]);
            n = Integer.parseInt(parts[1]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(SLICE_VARIABLE + "=" + spec + ": expected i/n with 1 <= i <= n", e);
        }
        int width = (range[1] - range[0] + 1) / Math.max(n, 1);
        if (n < 1 || i < 1 || i > n || width < 100) {
            throw new IllegalArgumentException(SLICE_VARIABLE + "=" + spec + ": expected i/n with 1 <= i <= n"
                + " and slices of at least 100 ports of " + range[0] + ".." + range[1]);
        }
        int low = range[0] + (i - 1) * width;
        return new int[] {low, low + width - 1};
    }

    /** Whether {@code port} can be bound on all interfaces right now. */
    public static boolean isFree(int port) {
        if (port <= 0 || port > 65_535) {
            return false;
        }
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * What holds each of {@code port + offset}: e.g. {@code "port 20911: LISTEN by pid 4242
     * (java -cp …), port 20912: free"}. Read from {@code /proc/net/tcp{,6}} and the
     * processes' {@code fd} directories; a socket whose owner is not visible (another user,
     * or no process: TIME_WAIT) is described by its state alone.
     */
    public static String holders(int port, int[] offsets) {
        List<String> parts = new ArrayList<>();
        for (int offset : offsets) {
            parts.add(holder(port + offset));
        }
        return String.join(", ", parts);
    }

    /** What holds one port (see {@link #holders}). */
    public static String holder(int port) {
        Map<Long, String> sockets = new TreeMap<>(); // inode -> state
        for (String table : new String[] {"/proc/net/tcp", "/proc/net/tcp6"}) {
            try {
                for (String line : Files.readAllLines(Path.of(table))) {
                    String[] f = line.trim().split("\\s+");
                    if (f.length < 10 || !f[1].contains(":")) {
                        continue;
                    }
                    int localPort = Integer.parseInt(f[1].substring(f[1].indexOf(':') + 1), 16);
                    if (localPort == port) {
                        sockets.put(Long.parseLong(f[9]), tcpState(f[3]));
                    }
                }
            } catch (IOException | RuntimeException e) {
                return "port " + port + ": unknown holder (" + table + " unreadable: " + e + ")";
            }
        }
        if (sockets.isEmpty()) {
            return "port " + port + ": free now";
        }
        List<String> found = new ArrayList<>();
        for (Map.Entry<Long, String> socket : sockets.entrySet()) {
            String owner = owner(socket.getKey());
            found.add(socket.getValue() + (owner == null ? " (no visible process)" : " by " + owner));
        }
        return "port " + port + ": " + String.join(" and ", found);
    }

    private static String tcpState(String hex) {
        return switch (hex) {
            case "01" -> "ESTABLISHED";
            case "02" -> "SYN_SENT";
            case "03" -> "SYN_RECV";
            case "04" -> "FIN_WAIT1";
            case "05" -> "FIN_WAIT2";
            case "06" -> "TIME_WAIT";
            case "07" -> "CLOSE";
            case "08" -> "CLOSE_WAIT";
            case "09" -> "LAST_ACK";
            case "0A" -> "LISTEN";
            case "0B" -> "CLOSING";
            default -> "state " + hex;
        };
    }

    /** {@code pid N (command line)} of the process with socket {@code inode} open, or null. */
    private static String owner(long inode) {
        if (inode == 0) {
            return null;
        }
        String link = "socket:[" + inode + "]";
        try (DirectoryStream<Path> processes = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path process : processes) {
                try (DirectoryStream<Path> fds = Files.newDirectoryStream(process.resolve("fd"))) {
                    for (Path fd : fds) {
                        if (link.equals(Files.readSymbolicLink(fd).toString())) {
                            return "pid " + process.getFileName() + " (" + commandLine(process) + ")";
                        }
                    }
                } catch (IOException | SecurityException e) {
                    // Gone, or not ours to look at.
                }
            }
        } catch (IOException e) {
            return null;
        }
        return null;
    }

    private static String commandLine(Path process) {
        try {
            String text = new String(Files.readAllBytes(process.resolve("cmdline"))).replace('\0', ' ').trim();
            return text.length() > 160 ? text.substring(0, 160) + "…" : text;
        } catch (IOException e) {
            return "?";
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        return root.getClass().getSimpleName() + ": " + root.getMessage();
    }
}
