package dev.waymark.interop.harness;

/** RocketMQ 4.x has no controller and no controller bodies. */
final class ControllerBodies {
    private ControllerBodies() {
    }

    static ReplicaInfo replicaInfo(Long masterBrokerId, String masterAddress, int masterEpoch, byte[] body) {
        throw new UnsupportedOperationException("RocketMQ 4.x has no controller");
    }

    static SyncStateData syncStateData(byte[] body, String brokerName) {
        throw new UnsupportedOperationException("RocketMQ 4.x has no controller");
    }
}
