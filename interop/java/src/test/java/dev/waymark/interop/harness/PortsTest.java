package dev.waymark.interop.harness;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The harness's port handling: retries with fresh ports, and failures that say who held what. */
class PortsTest {
    private static final int[] TRIPLE = {-2, 0, 1};

    @Test
    void bindFailuresAreRetriedWithFreshPorts() throws Exception {
        List<Integer> tried = new ArrayList<>();
        int port = Ports.startOnFreePorts("test server", TRIPLE, p -> {
            tried.add(p);
            if (tried.size() < 3) {
                throw new IllegalStateException("Failed to bind to 0.0.0.0:" + p, new BindException("Address already in use"));
            }
            return p;
        });
        assertEquals(3, tried.size(), tried::toString);
        assertEquals(tried.get(2), port);
        int[] range = Ports.candidateRange();
        for (int p : tried) {
            assertTrue(p - 2 >= range[0] && p + 1 <= range[1], p + " outside " + range[0] + ".." + range[1]);
        }
    }

    @Test
    void otherFailuresAreNotRetried() {
        List<Integer> tried = new ArrayList<>();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> Ports.startOnFreePorts("test server", TRIPLE, p -> {
                tried.add(p);
                throw new IllegalArgumentException("bad option");
            }));
        assertEquals("bad option", e.getMessage());
        assertEquals(1, tried.size());
    }

    @Test
    void aPortThatStaysTakenIsReportedWithItsHolder() throws Exception {
        try (ServerSocket held = new ServerSocket()) {
            held.bind(new InetSocketAddress("127.0.0.1", 0));
            int port = held.getLocalPort();
            long pid = ProcessHandle.current().pid();
            IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Ports.startOnPort("restarted server", port, new int[] {0}, Duration.ofMillis(600), p -> {
                    try (ServerSocket mine = new ServerSocket()) {
                        mine.bind(new InetSocketAddress("127.0.0.1", p));
                        return p;
                    }
                }));
            assertTrue(e.getMessage().startsWith("restarted server: could not bind after "), e.getMessage());
            assertTrue(e.getMessage().contains("port " + port + ": LISTEN by pid " + pid + " ("), e.getMessage());
        }
    }

    @Test
    void everyAttemptIsNamedWhenNoneBinds() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
            () -> Ports.startOnFreePorts("test server", TRIPLE, p -> {
                throw new BindException("Address already in use");
            }));
        for (int attempt = 1; attempt <= Ports.ATTEMPTS; attempt++) {
            assertTrue(e.getMessage().contains("attempt " + attempt + ": port "), e.getMessage());
        }
        assertTrue(e.getMessage().startsWith("test server: no free ports after " + Ports.ATTEMPTS + " attempts"),
            e.getMessage());
    }

    @Test
    void concurrentRunsChooseFromDisjointSlices() {
        int[] range = {10_000, 32_767};
        assertArrayEquals(range, Ports.slice(range, null));
        assertArrayEquals(range, Ports.slice(range, ""));
        int[] first = Ports.slice(range, "1/2");
        int[] second = Ports.slice(range, "2/2");
        assertEquals(10_000, first[0]);
        assertEquals(first[1] + 1, second[0]);
        assertTrue(second[1] <= range[1], second[1] + " past " + range[1]);
        assertEquals(first[1] - first[0], second[1] - second[0]);
        for (String bad : new String[] {"0/2", "3/2", "1/0", "2", "a/b", "1/2/3", "1/1000"}) {
            assertThrows(IllegalArgumentException.class, () -> Ports.slice(range, bad), bad);
        }
    }

    @Test
    void theHolderOfAClosedPortIsNotThisProcess() throws IOException {
        int port;
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress("127.0.0.1", 0));
            port = socket.getLocalPort();
        }
        String holder = Ports.holder(port);
        assertFalse(holder.contains("pid " + ProcessHandle.current().pid() + " ("), holder);
    }
}
