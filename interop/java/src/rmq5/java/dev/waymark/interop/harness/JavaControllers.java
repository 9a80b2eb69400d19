package dev.waymark.interop.harness;

import java.util.List;
import java.util.Map;

/**
 * The profile's controller for code that must compile against every release: 5.x has one
 * ({@link JavaController}); the 4.x twin of this class says it has none.
 */
public final class JavaControllers {
    private JavaControllers() {
    }

    /** Whether this release has the AutoSwitch-HA controller (5.x: yes). */
    public static boolean available() {
        return true;
    }

    /** {@link JavaController#start}: one node in this JVM. */
    public static ControllerNode start(Map<String, String> settings) throws Exception {
        return JavaController.start(settings);
    }

    /** {@link JavaController#startGroup}: an n-node group in this JVM. */
    public static List<ControllerNode> startGroup(int nodes, Map<String, String> settings) throws Exception {
        return List.copyOf(JavaController.startGroup(nodes, settings));
    }
}
