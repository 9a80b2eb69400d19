package dev.waymark.interop.harness;

import java.util.List;
import org.apache.rocketmq.remoting.protocol.body.BrokerReplicasInfo;
import org.apache.rocketmq.remoting.protocol.body.SyncStateSet;

/** Controller answer bodies, decoded by this release's own classes (5.x). */
final class ControllerBodies {
    private ControllerBodies() {
    }

    /** A {@code SyncStateSet} body ({@code {"syncStateSet":[1,2],"syncStateSetEpoch":2}}). */
    static SyncStateSet syncStateSet(byte[] body) {
        return SyncStateSet.decode(body, SyncStateSet.class);
    }

    /** A GET_REPLICA_INFO answer: master fields from the header, the set from the body. */
    static ReplicaInfo replicaInfo(Long masterBrokerId, String masterAddress, int masterEpoch, byte[] body) {
        SyncStateSet set = body == null ? null : syncStateSet(body);
        return new ReplicaInfo(masterBrokerId, masterAddress, masterEpoch,
            set == null ? null : set.getSyncStateSet(), set == null ? 0 : set.getSyncStateSetEpoch());
    }

    /** One set of a {@code BrokerReplicasInfo} body; null when the body does not name it. */
    static SyncStateData syncStateData(byte[] body, String brokerName) {
        BrokerReplicasInfo info = BrokerReplicasInfo.decode(body, BrokerReplicasInfo.class);
        if (info == null || info.getReplicasInfoTable() == null) {
            return null;
        }
        BrokerReplicasInfo.ReplicasInfo set = info.getReplicasInfoTable().get(brokerName);
        if (set == null) {
            return null;
        }
        return new SyncStateData(brokerName, set.getMasterBrokerId(), set.getMasterAddress(), set.getMasterEpoch(),
            set.getSyncStateSetEpoch(), members(set.getInSyncReplicas()), members(set.getNotInSyncReplicas()));
    }

    private static List<SyncStateData.Member> members(List<BrokerReplicasInfo.ReplicaIdentity> replicas) {
        return replicas == null ? List.of() : replicas.stream()
            .map(r -> new SyncStateData.Member(r.getBrokerId(), r.getBrokerAddress(), Boolean.TRUE.equals(r.getAlive())))
            .toList();
    }
}
