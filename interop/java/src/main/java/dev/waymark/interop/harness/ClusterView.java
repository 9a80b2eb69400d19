package dev.waymark.interop.harness;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/** GET_BROKER_CLUSTER_INFO's ClusterInfo, independent of the RocketMQ release. */
public record ClusterView(Map<String, BrokerGroup> brokers, Map<String, Set<String>> clusters) {
    public ClusterView {
        brokers = brokers == null ? Map.of() : new TreeMap<>(brokers);
        Map<String, Set<String>> c = new TreeMap<>();
        if (clusters != null) {
            clusters.forEach((k, v) -> c.put(k, v == null ? Set.of() : new TreeSet<>(v)));
        }
        clusters = c;
    }

    /** The id → address map of broker group {@code brokerName}, empty when unknown. */
    public Map<Long, String> addrsOf(String brokerName) {
        BrokerGroup group = brokers.get(brokerName);
        return group == null ? Map.of() : group.addrs();
    }

    /** Whether {@code brokerName} is registered with {@code id → addr}. */
    public boolean has(String brokerName, long id, String addr) {
        return addr.equals(addrsOf(brokerName).get(id));
    }
}
