package dev.waymark.interop.harness;

import java.util.Set;
import java.util.TreeSet;

/**
 * A CONTROLLER_GET_REPLICA_INFO answer: the set's master (id and address absent while it has
 * none), the master epoch, and the sync-state set with its epoch (the body).
 */
public record ReplicaInfo(Long masterBrokerId, String masterAddress, int masterEpoch, Set<Long> syncStateSet,
                          int syncStateSetEpoch) {
    public ReplicaInfo {
        syncStateSet = syncStateSet == null ? Set.of() : new TreeSet<>(syncStateSet);
        masterAddress = masterAddress == null ? "" : masterAddress;
    }

    /** Whether the set has a master. */
    public boolean hasMaster() {
        return masterBrokerId != null && !masterAddress.isEmpty();
    }
}
