package dev.waymark.interop.harness;

import java.nio.file.Path;
import java.util.Map;

/**
 * A controller node in its own process, Waymark's ({@link WaymarkController}, the
 * {@code rmq-controller} binary) or Java's ({@link ControllerProcess}): what the AutoSwitch-HA
 * scenarios do to a controller, whichever implementation runs. {@link Controllers} starts the
 * one chosen by {@code -Dwaymark.controller}.
 */
public interface ControllerServer extends ControllerNode {
    /** {@code waymark} or {@code java}. */
    String kind();

    long pid();

    /** Whether the process is still running. */
    boolean alive();

    /**
     * Its CONTROLLER_GET_METADATA_INFO answer ({@code group}, {@code controllerLeaderId},
     * {@code controllerLeaderAddress}, {@code isLeader}, {@code peers}), or null when it does
     * not answer.
     */
    Map<String, String> metadata();

    /** SIGKILL ({@code kill -9}): it dies at once, its store stays. */
    void kill();

    /** The same node again (address, peers, store, settings) after {@link #stop} or {@link #kill}. */
    ControllerServer restart() throws Exception;

    /** Its temporary directory (store, config file, log). */
    Path dir();

    /** The last lines of its output. */
    String logTail();

    /** Kills it and deletes its directory. */
    void discard();
}
