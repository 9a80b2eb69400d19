package dev.waymark.interop.harness;

import java.util.List;
import java.util.Map;

/**
 * RocketMQ 4.x has no AutoSwitch-HA controller (it came with 5.0): tests that need one
 * check {@link #available()} and skip.
 */
public final class JavaControllers {
    private JavaControllers() {
    }

    public static boolean available() {
        return false;
    }

    public static ControllerNode start(Map<String, String> settings) {
        throw new UnsupportedOperationException("RocketMQ 4.x has no controller");
    }

    public static List<ControllerNode> startGroup(int nodes, Map<String, String> settings) {
        throw new UnsupportedOperationException("RocketMQ 4.x has no controller");
    }
}
