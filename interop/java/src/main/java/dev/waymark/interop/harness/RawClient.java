package dev.waymark.interop.harness;

import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyRemotingClient;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * The real {@code NettyRemotingClient}, for requests the scenarios send themselves
 * (registration checks, the differential test). One instance per user; close it.
 */
public final class RawClient implements AutoCloseable {
    /** GET_BROKER_CLUSTER_INFO. */
    public static final int GET_BROKER_CLUSTER_INFO = 106;
    /** GET_ROUTEINFO_BY_TOPIC. */
    public static final int GET_ROUTEINFO_BY_TOPIC = 105;

    private final NettyRemotingClient client;

    public RawClient() {
        this(null, null);
    }

    /**
     * {@code tls}: TLS on every connection ({@code NettyClientConfig.useTLS}), with the client
     * SslContext Java builds from this JVM's {@code TlsSystemConfig} when the client is made;
     * null keeps the release's default. {@code hook}: an {@code RPCHook} run on every request
     * (e.g. {@code AclClientRPCHook}, which signs); null for none.
     */
    public RawClient(Boolean tls, RPCHook hook) {
        NettyClientConfig config = new NettyClientConfig();
        config.setClientWorkerThreads(1);
        config.setClientCallbackExecutorThreads(1);
        if (tls != null) {
            config.setUseTLS(tls);
        }
        this.client = new NettyRemotingClient(config);
        if (hook != null) {
            this.client.registerRPCHook(hook);
        }
        this.client.start();
    }

    /** {@code invokeSync}; any transport failure is rethrown unchecked. */
    public RemotingCommand invoke(String addr, RemotingCommand request, long timeoutMillis) {
        try {
            return client.invokeSync(addr, request, timeoutMillis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (Exception e) {
            throw new IllegalStateException(addr + ": " + e, e);
        }
    }

    /** {@code invokeOneway}. */
    public void oneway(String addr, RemotingCommand request, long timeoutMillis) {
        try {
            client.invokeOneway(addr, request, timeoutMillis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (Exception e) {
            throw new IllegalStateException(addr + ": " + e, e);
        }
    }

    /** GET_BROKER_CLUSTER_INFO from {@code namesrv}. */
    public ClusterView clusterInfo(String namesrv) {
        RemotingCommand response = invoke(namesrv, RemotingCommand.createRequestCommand(GET_BROKER_CLUSTER_INFO,
            null), 3000);
        if (response.getCode() != 0 || response.getBody() == null) {
            throw new IllegalStateException("cluster info from " + namesrv + ": code " + response.getCode()
                + " " + response.getRemark());
        }
        return Routes.clusterInfo(response.getBody());
    }

    /** GET_ROUTEINFO_BY_TOPIC from {@code namesrv}; {@code null} when TOPIC_NOT_EXIST. */
    public RouteView route(String namesrv, String topic) {
        RemotingCommand request = RemotingCommand.createRequestCommand(GET_ROUTEINFO_BY_TOPIC, null);
        request.addExtField("topic", topic);
        RemotingCommand response = invoke(namesrv, request, 3000);
        if (response.getCode() == 17) {
            return null;
        }
        if (response.getCode() != 0 || response.getBody() == null) {
            throw new IllegalStateException("route of " + topic + " from " + namesrv + ": code "
                + response.getCode() + " " + response.getRemark());
        }
        return Routes.route(response.getBody());
    }

    @Override
    public void close() {
        client.shutdown();
    }
}
