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

    /**
     * Stops it gracefully, as {@link #stop} does, and starts it again on the same port with the
     * same settings and the same files, as an operator's restart of the server would; returns
     * once the new one accepts connections. The new instance owns those files from then on;
     * this one stays stopped. Only implementations that say so support it.
     */
    default NameServer restart() throws Exception {
        throw new UnsupportedOperationException("the harness cannot restart " + this);
    }

    @Override
    default void close() {
        stop();
    }
}
