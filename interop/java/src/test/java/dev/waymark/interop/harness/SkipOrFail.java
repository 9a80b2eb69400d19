package dev.waymark.interop.harness;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.function.Supplier;
import org.junit.jupiter.api.Assumptions;

/**
 * A test that cannot run on this machine (no root for a network namespace, a directory the
 * run script did not pass): skipped, naming what is missing, or failed under {@code CI=true},
 * where the suite must run whole. The Rust tests follow the same rule
 * ({@code rmq_testkit::skip::skip_or_fail}), the Go tests too ({@code skipOrFail}).
 */
public final class SkipOrFail {
    private SkipOrFail() {
    }

    /** Whether a test that cannot run must fail rather than skip: {@code CI=true}. */
    public static boolean required() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    /** Skips the test, or fails it under {@code CI=true}, unless {@code runnable}. */
    public static void unless(boolean runnable, Supplier<String> why) {
        if (!runnable) {
            now(why.get());
        }
    }

    /** Skips the test, or fails it under {@code CI=true}, saying {@code why}. */
    public static void now(String why) {
        if (required()) {
            fail(why + " (required when CI=true)");
        }
        Assumptions.abort(why);
    }
}
