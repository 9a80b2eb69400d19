package dev.waymark.interop.harness;

/**
 * A NameServer under test: the Waymark binary ({@link WaymarkNameServer}) or the Java
 * NameServer of the profile's release in this JVM ({@link JavaNameServer}).
 */
public interface NameServer extends AutoCloseable {
    /** {@code 127.0.0.1:<port>}. */
    String addr();

    /** {@code waymark} or {@code java}. */
    String kind();

    /** Stops it (Waymark: SIGTERM to its pid). Idempotent. */
    void stop();

    @Override
    default void close() {
        stop();
    }
}
