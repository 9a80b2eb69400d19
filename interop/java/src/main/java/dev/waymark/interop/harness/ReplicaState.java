package dev.waymark.interop.harness;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A controller-mode broker's own view of its place in its broker set, as its
 * {@code ReplicasManager} holds it: the start-up state ({@code INITIAL},
 * {@code FIRST_TIME_SYNC_CONTROLLER_METADATA_DONE}, {@code REGISTER_TO_CONTROLLER_DONE},
 * {@code RUNNING}, {@code SHUTDOWN}), its role ({@code SYNC_MASTER}, {@code SLAVE}, or the
 * configured role before the controller gave one), the id it registers with the NameServers
 * (0 as master, its controller id as slave), its controller id (null before it has one), the
 * master it follows and that master's epoch, the HA address its replication client is to
 * connect to (a slave's; empty when none: Java's slave takes it from the NameServer's answer to
 * its registration), the address that client is connected to now (empty when not connected:
 * it changes only when the connection breaks, not when the address above does), and whether
 * it is fenced (isolated: no writes, no registration, no periodic heartbeats).
 *
 * <p>{@link BrokerLauncher} prints it as one line, {@code BROKER STATE key=value ...},
 * whenever it changes; {@link BrokerProcess} reads those lines back.
 */
public record ReplicaState(String state, String role, long brokerId, Long controllerId, int masterEpoch,
                           String masterAddress, String haMasterAddress, String haConnection, boolean isolated) {
    public static final String PREFIX = "BROKER STATE ";

    /** Whether it finished joining (RUNNING) and is not fenced. */
    public boolean running() {
        return "RUNNING".equals(state) && !isolated;
    }

    /** Whether it acts as the set's master (RUNNING, role SYNC_MASTER or ASYNC_MASTER, NameServer id 0). */
    public boolean master() {
        return running() && role.endsWith("MASTER") && brokerId == 0;
    }

    /** Whether it acts as a slave (RUNNING, role SLAVE). */
    public boolean slave() {
        return running() && "SLAVE".equals(role);
    }

    /**
     * {@code BROKER STATE state=RUNNING role=SLAVE brokerId=2 controllerId=2 masterEpoch=1
     * masterAddress=127.0.0.1:P haMasterAddress=127.0.0.1:P+1 haConnection=127.0.0.1:P+1 isolated=false}.
     */
    public String toLine() {
        return PREFIX + "state=" + state + " role=" + role + " brokerId=" + brokerId + " controllerId="
            + (controllerId == null ? "-" : controllerId) + " masterEpoch=" + masterEpoch + " masterAddress="
            + (masterAddress == null || masterAddress.isEmpty() ? "-" : masterAddress) + " haMasterAddress="
            + (haMasterAddress == null || haMasterAddress.isEmpty() ? "-" : haMasterAddress) + " haConnection="
            + (haConnection == null || haConnection.isEmpty() ? "-" : haConnection) + " isolated=" + isolated;
    }

    /** The state a {@link #toLine} line describes; null when {@code line} is not one. */
    public static ReplicaState parse(String line) {
        if (line == null || !line.startsWith(PREFIX)) {
            return null;
        }
        Map<String, String> fields = new LinkedHashMap<>();
        for (String part : line.substring(PREFIX.length()).trim().split("\\s+")) {
            int eq = part.indexOf('=');
            if (eq > 0) {
                fields.put(part.substring(0, eq), part.substring(eq + 1));
            }
        }
        try {
            String controllerId = fields.get("controllerId");
            String masterAddress = fields.get("masterAddress");
            String haMasterAddress = fields.get("haMasterAddress");
            String haConnection = fields.get("haConnection");
            return new ReplicaState(fields.get("state"), fields.get("role"), Long.parseLong(fields.get("brokerId")),
                controllerId == null || controllerId.equals("-") ? null : Long.valueOf(controllerId),
                Integer.parseInt(fields.get("masterEpoch")),
                masterAddress == null || masterAddress.equals("-") ? "" : masterAddress,
                haMasterAddress == null || haMasterAddress.equals("-") ? "" : haMasterAddress,
                haConnection == null || haConnection.equals("-") ? "" : haConnection,
                Boolean.parseBoolean(fields.get("isolated")));
        } catch (RuntimeException e) {
            return null;
        }
    }
}
