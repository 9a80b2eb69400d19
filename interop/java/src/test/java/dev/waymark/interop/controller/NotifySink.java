package dev.waymark.interop.controller;

import dev.waymark.interop.vectors.Wire;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * A stand-in for a broker's main port: a plain loopback {@code ServerSocket} (port picked by
 * the kernel) that keeps every frame sent to it, decoded by the real
 * {@code RemotingCommand.decode}. A replica registered with this address and kept alive by
 * heartbeats receives the controller's one-way NOTIFY_BROKER_ROLE_CHANGED here. Nothing is
 * ever answered.
 */
final class NotifySink implements AutoCloseable {
    private final ServerSocket server;
    private final BlockingQueue<RemotingCommand> frames = new LinkedBlockingQueue<>();
    private final List<Socket> connections = new CopyOnWriteArrayList<>();
    private final List<Throwable> errors = new CopyOnWriteArrayList<>();

    NotifySink() throws IOException {
        server = new ServerSocket();
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        Thread acceptor = new Thread(this::accept, "notify-sink-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** {@code 127.0.0.1:<port>}. */
    String addr() {
        return "127.0.0.1:" + server.getLocalPort();
    }

    int port() {
        return server.getLocalPort();
    }

    /** The next frame, waiting up to {@code timeout}; null when none came. */
    RemotingCommand poll(Duration timeout) throws InterruptedException {
        RemotingCommand frame = frames.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (frame == null && !errors.isEmpty()) {
            throw new IllegalStateException(addr() + ": undecodable input", errors.get(0));
        }
        return frame;
    }

    /** How many connections the controller opened here. */
    int connections() {
        return connections.size();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                connections.add(socket);
                Thread reader = new Thread(() -> read(socket), "notify-sink-reader-" + socket.getPort());
                reader.setDaemon(true);
                reader.start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    /** Frames as NettyDecoder sees them: a 4-byte length, then that many bytes. */
    private void read(Socket socket) {
        try (DataInputStream in = new DataInputStream(socket.getInputStream())) {
            while (true) {
                int length = in.readInt();
                byte[] frame = new byte[4 + length];
                ByteBuffer.wrap(frame).putInt(length);
                in.readFully(frame, 4, length);
                frames.add(Wire.decodeDirect(frame));
            }
        } catch (java.io.EOFException | java.net.SocketException e) {
            // The controller closed the connection, or we did.
        } catch (Exception e) {
            errors.add(e);
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket socket : connections) {
            socket.close();
        }
    }
}
