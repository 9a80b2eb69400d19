package dev.waymark.interop.harness;

import java.lang.reflect.Field;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;
import org.apache.rocketmq.store.DefaultMessageStore;
import org.apache.rocketmq.store.config.MessageStoreConfig;

/** 4.x broker construction. */
final class Brokers {
    private Brokers() {
    }

    /** {@code p}: the broker's properties (4.x brokers have no AuthConfig; nothing else is read from them). */
    static BrokerController create(Properties p, BrokerConfig broker, NettyServerConfig server,
        NettyClientConfig client, MessageStoreConfig store) {
        return new BrokerController(broker, server, client, store);
    }

    /**
     * 4.x brokers have no per-broker heartbeat timeout (the NameServer keeps them 120 s), and
     * their schedulers are private: freezing is a 5.x scenario.
     */
    static boolean canFreeze() {
        return false;
    }

    /**
     * The HA master address the slave's HA client was pointed at (null: none yet). 4.x has
     * no getter: {@code HAService.haClient.masterAddress} by reflection.
     */
    static String haMasterAddress(BrokerController controller) {
        try {
            Object haService = ((DefaultMessageStore) controller.getMessageStore()).getHaService();
            Field clientField = haService.getClass().getDeclaredField("haClient");
            clientField.setAccessible(true);
            Object client = clientField.get(haService);
            Field addrField = client.getClass().getDeclaredField("masterAddress");
            addrField.setAccessible(true);
            Object ref = addrField.get(client);
            return ((AtomicReference<?>) ref).get() == null ? null : ((AtomicReference<?>) ref).get().toString();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read the 4.x HA client's master address", e);
        }
    }

    /** 4.x brokers have no controller mode (AutoSwitch HA came with 5.0). */
    static boolean hasControllerMode() {
        return false;
    }

    static ReplicaState replicaState(BrokerController controller) {
        return null;
    }

    static void freeze(BrokerController controller) {
        throw new UnsupportedOperationException("4.x brokers cannot be frozen by the harness");
    }
}
