package dev.waymark.interop.harness;

import java.util.Map;
import java.util.TreeMap;

/** A broker group as a NameServer reports it (BrokerData), independent of the RocketMQ release. */
public record BrokerGroup(String cluster, String brokerName, Map<Long, String> addrs) {
    public BrokerGroup {
        addrs = addrs == null ? Map.of() : new TreeMap<>(addrs);
    }
}
