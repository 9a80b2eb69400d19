package dev.waymark.interop.harness;

import java.util.Properties;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.common.namesrv.NamesrvConfig;
import org.apache.rocketmq.namesrv.NamesrvController;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;

/** This release's NamesrvController, built as NamesrvStartup builds it from a -c file. */
final class JavaNamesrvs {
    private JavaNamesrvs() {
    }

    static NamesrvController create(Properties options) {
        NamesrvConfig config = new NamesrvConfig();
        NettyServerConfig server = new NettyServerConfig();
        MixAll.properties2Object(options, config);
        MixAll.properties2Object(options, server);
        return new NamesrvController(config, server);
    }
}
