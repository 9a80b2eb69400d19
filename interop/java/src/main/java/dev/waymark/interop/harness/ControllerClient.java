package dev.waymark.interop.harness;

import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * The reads an AutoSwitch-HA scenario checks its broker set with, sent to whichever node of a
 * controller group serves as leader (the reads are leader-only): CONTROLLER_GET_REPLICA_INFO,
 * CONTROLLER_GET_SYNC_STATE_DATA, CONTROLLER_GET_NEXT_BROKER_ID; and any other request. The
 * answers are decoded with the release's own classes. Requests carry this release's version,
 * as a broker's or mqadmin's do.
 */
public final class ControllerClient implements AutoCloseable {
    private final RawClient client = new RawClient();
    private final Supplier<List<String>> nodes;

    /** {@code nodes}: the addresses of the group's nodes, asked again at every request (restarts). */
    public ControllerClient(Supplier<List<String>> nodes) {
        this.nodes = nodes;
    }

    /** The address of the node that serves as leader now, or null. */
    public String leader() {
        for (String addr : nodes.get()) {
            if (Controllers.serves(client, addr)) {
                return addr;
            }
        }
        return null;
    }

    /** {@code request} (two-way) to the serving leader; throws when no node serves. */
    public RemotingCommand call(RemotingCommand request) {
        String leader = leader();
        if (leader == null) {
            throw new IllegalStateException("no controller node of " + nodes.get() + " serves as leader");
        }
        return client.invoke(leader, request, 3000);
    }

    /** {@code request} to {@code addr} (two-way). */
    public RemotingCommand call(String addr, RemotingCommand request) {
        return client.invoke(addr, request, 3000);
    }

    /** A request of this release's version. */
    public static RemotingCommand request(int code, Map<String, String> fields) {
        RemotingCommand request = RemotingCommand.createRequestCommand(code, null);
        request.setVersion(MQVersion.CURRENT_VERSION);
        fields.forEach(request::addExtField);
        return request;
    }

    /** CONTROLLER_GET_REPLICA_INFO of {@code brokerName}; null when the controller does not know the set (2008). */
    public ReplicaInfo replicaInfo(String brokerName) {
        RemotingCommand response = call(request(ControllerCodes.GET_REPLICA_INFO, Map.of("brokerName", brokerName)));
        if (response.getCode() == ControllerCodes.BROKER_METADATA_NOT_EXIST) {
            return null;
        }
        check(response, "CONTROLLER_GET_REPLICA_INFO " + brokerName);
        Map<String, String> ext = response.getExtFields() == null ? Map.of() : response.getExtFields();
        String master = ext.get("masterBrokerId");
        return ControllerBodies.replicaInfo(master == null ? null : Long.valueOf(master), ext.get("masterAddress"),
            Integer.parseInt(ext.getOrDefault("masterEpoch", "0")), response.getBody());
    }

    /** CONTROLLER_GET_SYNC_STATE_DATA of {@code brokerName}; null when the answer does not name it. */
    public SyncStateData syncStateData(String brokerName) {
        RemotingCommand request = request(ControllerCodes.GET_SYNC_STATE_DATA, Map.of());
        request.setBody(("[\"" + brokerName + "\"]").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        RemotingCommand response = call(request);
        check(response, "CONTROLLER_GET_SYNC_STATE_DATA " + brokerName);
        return ControllerBodies.syncStateData(response.getBody(), brokerName);
    }

    /** CONTROLLER_GET_NEXT_BROKER_ID. */
    public long nextBrokerId(String cluster, String brokerName) {
        RemotingCommand response = call(request(ControllerCodes.GET_NEXT_BROKER_ID,
            Map.of("clusterName", cluster, "brokerName", brokerName)));
        check(response, "CONTROLLER_GET_NEXT_BROKER_ID " + brokerName);
        return Long.parseLong(response.getExtFields().get("nextBrokerId"));
    }

    private static void check(RemotingCommand response, String what) {
        if (response.getCode() != ControllerCodes.SUCCESS) {
            throw new IllegalStateException(what + ": code " + response.getCode() + " " + response.getRemark());
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
