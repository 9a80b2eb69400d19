package dev.waymark.interop.harness;

import java.time.Duration;
import java.util.function.Supplier;

/** Bounded waiting: every wait in the harness and the scenarios has a deadline. */
public final class Poll {
    private Poll() {
    }

    /**
     * Calls {@code probe} every {@code everyMillis} until it returns a non-null value, and
     * returns that value; throws {@link AssertionError} naming {@code what} and the last
     * probe's exception (if any) when {@code timeout} passes first.
     */
    public static <T> T until(Duration timeout, long everyMillis, String what, Supplier<T> probe) {
        long deadline = System.nanoTime() + timeout.toNanos();
        RuntimeException last = null;
        while (true) {
            try {
                T value = probe.get();
                if (value != null) {
                    return value;
                }
                last = null;
            } catch (RuntimeException e) {
                last = e;
            }
            if (System.nanoTime() - deadline > 0) {
                AssertionError error = new AssertionError("timed out after " + timeout.toMillis()
                    + " ms waiting for " + what);
                if (last != null) {
                    error.initCause(last);
                }
                throw error;
            }
            sleep(everyMillis);
        }
    }

    /** {@link #until} with a 100 ms period. */
    public static <T> T until(Duration timeout, String what, Supplier<T> probe) {
        return until(timeout, 100, what, probe);
    }

    /** Waits until {@code condition} holds. */
    public static void untilTrue(Duration timeout, String what, Supplier<Boolean> condition) {
        untilTrue(timeout, 100, what, condition);
    }

    /** Waits until {@code condition} holds, probing every {@code everyMillis}. */
    public static void untilTrue(Duration timeout, long everyMillis, String what, Supplier<Boolean> condition) {
        until(timeout, everyMillis, what, () -> Boolean.TRUE.equals(condition.get()) ? Boolean.TRUE : null);
    }

    public static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
