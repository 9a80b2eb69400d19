package dev.waymark.interop.harness;

import java.util.ArrayDeque;
import java.util.Deque;

/** Closes what a test started, last first; a failing close is reported, not thrown. */
public final class Closer implements AutoCloseable {
    private final Deque<AutoCloseable> owned = new ArrayDeque<>();

    public synchronized <T extends AutoCloseable> T add(T resource) {
        owned.push(resource);
        return resource;
    }

    public synchronized void remove(AutoCloseable resource) {
        owned.remove(resource);
    }

    @Override
    public synchronized void close() {
        while (!owned.isEmpty()) {
            AutoCloseable resource = owned.pop();
            try {
                resource.close();
            } catch (Exception e) {
                System.err.println("closing " + resource + ": " + e);
            }
        }
    }
}
