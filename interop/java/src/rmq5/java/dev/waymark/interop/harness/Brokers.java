package dev.waymark.interop.harness;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.Properties;
import java.util.concurrent.ScheduledExecutorService;
import org.apache.rocketmq.auth.config.AuthConfig;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.broker.controller.ReplicasManager;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;
import org.apache.rocketmq.store.config.MessageStoreConfig;
import org.apache.rocketmq.store.ha.HAClient;

/** 5.x broker construction, and the one thing the scenarios need beyond the public API. */
final class Brokers {
    private Brokers() {
    }

    static BrokerController create(Properties p, BrokerConfig broker, NettyServerConfig server,
        NettyClientConfig client, MessageStoreConfig store) {
        return new Freezable(broker, server, client, store, authConfig(p, broker, store));
    }

    /**
     * The broker's {@code AuthConfig} as {@code BrokerStartup} (5.x) builds it from the same
     * properties (e.g. {@code innerClientAuthenticationCredentials}, with which the broker signs
     * every request it sends, and {@code authenticationMetadataProvider}), its user store under
     * {@code <storePathRootDir>/config}; null (no AuthConfig, as before) unless the options name
     * one of its keys, so other scenarios' brokers are built as they always were.
     */
    private static AuthConfig authConfig(Properties p, BrokerConfig broker, MessageStoreConfig store) {
        boolean any = p.stringPropertyNames().stream().anyMatch(key -> Arrays.stream(AuthConfig.class.getMethods())
            .anyMatch(m -> m.getParameterCount() == 1 && m.getName().equalsIgnoreCase("set" + key)));
        if (!any) {
            return null;
        }
        AuthConfig auth = new AuthConfig();
        MixAll.properties2Object(p, auth);
        auth.setConfigName(broker.getBrokerName());
        auth.setClusterName(broker.getBrokerClusterName());
        auth.setAuthConfigPath(store.getStorePathRootDir() + File.separator + "config");
        return auth;
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

    /** Whether this release's brokers have a controller mode (5.x: yes). */
    static boolean hasControllerMode() {
        return true;
    }

    /**
     * A controller-mode broker's view of its broker set ({@code ReplicasManager}); null when
     * the broker is not in controller mode.
     */
    static ReplicaState replicaState(BrokerController controller) {
        ReplicasManager replicas = controller.getReplicasManager();
        if (replicas == null) {
            return null;
        }
        // getState() returns a package-private enum: only its name is used.
        Object state = replicas.getState();
        HAClient client = controller.getMessageStore().getHaService().getHAClient();
        return new ReplicaState(String.valueOf(state), String.valueOf(replicas.getBrokerRole()),
            controller.getBrokerConfig().getBrokerId(), replicas.getBrokerControllerId(), replicas.getMasterEpoch(),
            replicas.getMasterAddress(), client == null ? null : client.getHaMasterAddress(), haConnection(client),
            controller.isIsolated());
    }

    /**
     * The address the HA client's socket is connected to ({@code host:port}), or null: the
     * client keeps a connection until it breaks, whatever master address it is told later, so
     * this is whom a slave really replicates from. Read from its private {@code socketChannel}.
     */
    private static String haConnection(HAClient client) {
        if (client == null) {
            return null;
        }
        try {
            Field field = client.getClass().getDeclaredField("socketChannel");
            field.setAccessible(true);
            SocketChannel channel = (SocketChannel) field.get(client);
            if (channel == null || !channel.isConnected()) {
                return null;
            }
            SocketAddress remote = channel.getRemoteAddress();
            return remote instanceof InetSocketAddress inet
                ? inet.getAddress().getHostAddress() + ":" + inet.getPort() : String.valueOf(remote);
        } catch (ReflectiveOperationException | IOException | RuntimeException e) {
            return null;
        }
    }

    private static final class Freezable extends BrokerController {
        Freezable(BrokerConfig broker, NettyServerConfig server, NettyClientConfig client, MessageStoreConfig store,
            AuthConfig auth) {
            super(broker, server, client, store, auth);
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
