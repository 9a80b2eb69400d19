package dev.waymark.interop.harness;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.client.ClientConfig;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

/** What every real client of the tests shares: unique names, loopback, a fast route poll. */
public final class LoopbackClients {
    private static final AtomicLong SEQ = new AtomicLong();

    private LoopbackClients() {
    }

    /** A name no other client or topic of this JVM uses. */
    public static String unique(String prefix) {
        return prefix + "_" + ProcessHandle.current().pid() + "_" + SEQ.incrementAndGet();
    }

    /**
     * Every client gets its own instance name (4.x clients would otherwise share one
     * MQClientInstance per JVM, with the first client's NameServer list), a loopback client
     * IP and a 1 s route poll, so route changes (a failover) reach it quickly.
     */
    public static <T extends ClientConfig> T configure(T client, String namesrv) {
        client.setNamesrvAddr(namesrv);
        client.setInstanceName(unique("inst"));
        client.setClientIP("127.0.0.1");
        client.setPollNameServerInterval(1000);
        client.setHeartbeatBrokerInterval(5000);
        return client;
    }

    /** A started admin client, shut down by {@code closer}. */
    public static DefaultMQAdminExt admin(Closer closer, String namesrv) throws Exception {
        DefaultMQAdminExt admin = configure(new DefaultMQAdminExt(), namesrv);
        admin.setAdminExtGroup(unique("admin"));
        admin.start();
        closer.add(admin::shutdown);
        return admin;
    }
}
