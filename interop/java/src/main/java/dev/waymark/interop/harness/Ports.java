package dev.waymark.interop.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/** Free loopback ports for NameServers and brokers started by the harness. */
public final class Ports {
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    private Ports() {
    }

    /** A port that was free on 127.0.0.1 a moment ago. */
    public static int free() {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(LOOPBACK, 0));
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A broker listen port {@code p} such that {@code p - 2} (the broker's "fast" VIP
     * listener), {@code p} and {@code p + 1} (its HA listener) are all free.
     */
    public static int freeBrokerPort() {
        for (int attempt = 0; attempt < 50; attempt++) {
            int port = free();
            if (port > 1026 && port < 65534 && isFree(port - 2) && isFree(port + 1)) {
                return port;
            }
        }
        throw new IllegalStateException("no free broker port triple found");
    }

    /** Whether 127.0.0.1:{@code port} can be bound (on all interfaces too, as brokers do). */
    public static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
