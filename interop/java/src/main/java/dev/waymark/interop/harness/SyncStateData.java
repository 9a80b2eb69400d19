package dev.waymark.interop.harness;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * One broker set of a CONTROLLER_GET_SYNC_STATE_DATA answer ({@code BrokerReplicasInfo}):
 * master, epochs, and every registered replica, in sync or not, with whether the answering
 * controller takes it for alive.
 */
public record SyncStateData(String brokerName, Long masterBrokerId, String masterAddress, int masterEpoch,
                            int syncStateSetEpoch, List<Member> inSync, List<Member> notInSync) {
    /** A replica: controller id, address, alive. */
    public record Member(long id, String addr, boolean alive) {
    }

    public SyncStateData {
        inSync = inSync == null ? List.of() : List.copyOf(inSync);
        notInSync = notInSync == null ? List.of() : List.copyOf(notInSync);
        masterAddress = masterAddress == null ? "" : masterAddress;
    }

    /** The ids in the sync-state set. */
    public Set<Long> syncStateSet() {
        return inSync.stream().map(Member::id).collect(Collectors.toCollection(TreeSet::new));
    }

    /** Every registered id. */
    public Set<Long> replicas() {
        return Stream.concat(inSync.stream(), notInSync.stream()).map(Member::id)
            .collect(Collectors.toCollection(TreeSet::new));
    }

    /** The ids the controller takes for alive. */
    public Set<Long> alive() {
        return Stream.concat(inSync.stream(), notInSync.stream()).filter(Member::alive).map(Member::id)
            .collect(Collectors.toCollection(TreeSet::new));
    }

    /** Whether the set has a master (Java answers id -1 / an empty address when it has none). */
    public boolean hasMaster() {
        return masterBrokerId != null && masterBrokerId > 0 && !masterAddress.isEmpty();
    }
}
