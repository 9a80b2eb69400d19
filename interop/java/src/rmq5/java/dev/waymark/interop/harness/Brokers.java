package dev.waymark.interop.harness;

import java.util.concurrent.ScheduledExecutorService;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;
import org.apache.rocketmq.store.config.MessageStoreConfig;

/** 5.x broker construction, and the one thing the scenarios need beyond the public API. */
final class Brokers {
    private Brokers() {
    }

    static BrokerController create(BrokerConfig broker, NettyServerConfig server, NettyClientConfig client,
        MessageStoreConfig store) {
        return new Freezable(broker, server, client, store);
    }

    /** Whether {@link #freeze} can stop a broker's NameServer liveness signals. */
    static boolean canFreeze() {
        return true;
    }

    /**
     * Stops the broker's periodic registration and its lightweight heartbeats without
     * closing anything: to the NameServer it looks like a broker that hung (or whose host
     * vanished) with its TCP connection still open.
     */
    static void freeze(BrokerController controller) {
        ((Freezable) controller).freeze();
    }

    /** The HA master address the slave's HA client was pointed at (null: none yet). */
    static String haMasterAddress(BrokerController controller) {
        return controller.getMessageStore().getHaService().getHAClient().getHaMasterAddress();
    }

    private static final class Freezable extends BrokerController {
        Freezable(BrokerConfig broker, NettyServerConfig server, NettyClientConfig client, MessageStoreConfig store) {
            super(broker, server, client, store);
        }

        void freeze() {
            stop(scheduledExecutorService);
            stop(brokerHeartbeatExecutorService);
        }

        private static void stop(ScheduledExecutorService executor) {
            if (executor != null) {
                executor.shutdownNow();
            }
        }
    }
}
