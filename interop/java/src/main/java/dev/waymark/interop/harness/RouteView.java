package dev.waymark.interop.harness;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** A topic route (TopicRouteData), independent of the RocketMQ release. */
public record RouteView(List<BrokerGroup> brokers, List<QueueView> queues) {
    public RouteView {
        brokers = brokers.stream().sorted(Comparator.comparing(BrokerGroup::brokerName)).toList();
        queues = queues.stream().sorted(Comparator.comparing(QueueView::brokerName)).toList();
    }

    public Optional<QueueView> queue(String brokerName) {
        return queues.stream().filter(q -> q.brokerName().equals(brokerName)).findFirst();
    }

    public Map<Long, String> addrsOf(String brokerName) {
        return brokers.stream().filter(b -> b.brokerName().equals(brokerName)).findFirst()
            .map(BrokerGroup::addrs).orElse(Map.of());
    }
}
