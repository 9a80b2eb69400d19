package dev.waymark.interop.harness;

/**
 * One node of a real Apache RocketMQ controller group (5.x only): in this JVM
 * ({@code JavaController}, src/rmq5) or in its own ({@link ControllerProcess}). Lives in
 * the version-independent sources so tests compile against every release and skip where
 * {@link JavaControllers#available()} says there is no controller.
 */
public interface ControllerNode extends AutoCloseable {
    /** {@code 127.0.0.1:<port>}: its DLedger self-peer port, where it also serves controller requests. */
    String addr();

    /** Its DLedger member id ({@code n0}, {@code n1}, ...). */
    String selfId();

    /** Whether it is the group's leader and serves the leader-only requests. */
    boolean isLeader();

    /** Stops it. Idempotent. */
    void stop();

    @Override
    default void close() {
        stop();
    }
}
