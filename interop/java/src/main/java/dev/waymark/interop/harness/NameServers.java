package dev.waymark.interop.harness;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The NameServer the scenarios run against, chosen by system property
 * {@code waymark.namesrv} = {@code waymark} (the binary at {@code waymark.namesrv.bin}) or
 * {@code java} (the default: this release's Java NameServer in-process, the control).
 */
public final class NameServers {
    private NameServers() {
    }

    /** {@code waymark} or {@code java}. */
    public static String kind() {
        String kind = System.getProperty("waymark.namesrv", "java").trim();
        if (!kind.equals("waymark") && !kind.equals("java")) {
            throw new IllegalArgumentException("waymark.namesrv must be waymark or java, not " + kind);
        }
        return kind;
    }

    public static boolean isWaymark() {
        return kind().equals("waymark");
    }

    /** Starts one NameServer of the selected kind with these NamesrvConfig settings. */
    public static NameServer start(Map<String, String> settings) throws Exception {
        return isWaymark() ? WaymarkNameServer.start(binary(), settings) : JavaNameServer.start(settings);
    }

    public static NameServer start() throws Exception {
        return start(Map.of());
    }

    /** {@code waymark.namesrv.bin}, checked. */
    public static Path binary() {
        String bin = System.getProperty("waymark.namesrv.bin");
        if (bin == null || bin.isBlank()) {
            throw new IllegalStateException("set -Dwaymark.namesrv.bin=<path to rmq-namesrv> to run against Waymark");
        }
        Path path = Path.of(bin).toAbsolutePath();
        if (!Files.isExecutable(path)) {
            throw new IllegalStateException("waymark.namesrv.bin " + path + " is not an executable file");
        }
        return path;
    }
}
