package dev.waymark.interop.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** What the harness's own-JVM peers (Java NameServer, Proxy, gRPC client) share. */
final class ChildJvms {
    private ChildJvms() {
    }

    /** The last 40 lines of {@code log}, or why there are none. */
    static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** Kills {@code process}, waits up to 10 s for it to go, and deletes its directory. */
    static void killAndDelete(Process process, Path dir) {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        EmbeddedBroker.deleteTree(dir);
    }
}
