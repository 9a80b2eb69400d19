package dev.waymark.interop.harness;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Options;
import org.apache.commons.cli.PosixParser;
import org.apache.rocketmq.acl.common.AclUtils;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.srvutil.ServerUtil;
import org.apache.rocketmq.tools.command.SubCommand;

/**
 * The real mqadmin sub-commands of the profile's release, executed in this JVM the way
 * {@code MQAdminStartup.main0} executes them (same option parsing, {@code -n} exported as
 * {@code rocketmq.namesrv.addr}), with {@code System.out} captured. Calls are serialised.
 */
public final class Mqadmin {
    private static final Map<String, String> COMMANDS = Map.ofEntries(
        Map.entry("clusterList", "org.apache.rocketmq.tools.command.cluster.ClusterListSubCommand"),
        Map.entry("topicRoute", "org.apache.rocketmq.tools.command.topic.TopicRouteSubCommand"),
        Map.entry("topicList", "org.apache.rocketmq.tools.command.topic.TopicListSubCommand"),
        Map.entry("topicClusterList", "org.apache.rocketmq.tools.command.topic.TopicClusterSubCommand"),
        Map.entry("updateTopic", "org.apache.rocketmq.tools.command.topic.UpdateTopicSubCommand"),
        Map.entry("deleteTopic", "org.apache.rocketmq.tools.command.topic.DeleteTopicSubCommand"),
        Map.entry("updateKvConfig", "org.apache.rocketmq.tools.command.namesrv.UpdateKvConfigCommand"),
        Map.entry("deleteKvConfig", "org.apache.rocketmq.tools.command.namesrv.DeleteKvConfigCommand"),
        Map.entry("getNamesrvConfig", "org.apache.rocketmq.tools.command.namesrv.GetNamesrvConfigCommand"),
        Map.entry("updateNamesrvConfig", "org.apache.rocketmq.tools.command.namesrv.UpdateNamesrvConfigCommand"),
        Map.entry("wipeWritePerm", "org.apache.rocketmq.tools.command.namesrv.WipeWritePermSubCommand"),
        Map.entry("addWritePerm", "org.apache.rocketmq.tools.command.namesrv.AddWritePermSubCommand"),
        // The controller commands (5.x), which take the controller's address with -a.
        Map.entry("getControllerMetaData", "org.apache.rocketmq.tools.command.controller.GetControllerMetaDataSubCommand"),
        Map.entry("getSyncStateSet", "org.apache.rocketmq.tools.command.ha.GetSyncStateSetSubCommand"),
        Map.entry("electMaster", "org.apache.rocketmq.tools.command.controller.ReElectMasterSubCommand"),
        Map.entry("cleanBrokerMetadata", "org.apache.rocketmq.tools.command.controller.CleanControllerBrokerMetaSubCommand"),
        Map.entry("getControllerConfig", "org.apache.rocketmq.tools.command.controller.GetControllerConfigSubCommand"),
        Map.entry("updateControllerConfig",
            "org.apache.rocketmq.tools.command.controller.UpdateControllerConfigSubCommand"));

    private Mqadmin() {
    }

    /** What one command printed, and the exception it ended with (null = success). */
    public record Result(String command, String out, Throwable error) {
        public boolean ok() {
            return error == null;
        }

        /** The exception chain's messages, for assertions on refusals. */
        public String errorText() {
            StringBuilder text = new StringBuilder();
            for (Throwable t = error; t != null; t = t.getCause()) {
                text.append(t).append('\n');
            }
            return text.toString();
        }

        @Override
        public String toString() {
            return "mqadmin " + command + (ok() ? " -> ok" : " -> FAILED " + errorText()) + "\n" + out;
        }
    }

    /** {@code mqadmin <args>}; {@code args[0]} is the sub-command name. */
    public static Result run(String... args) {
        return execute(null, false, args);
    }

    /**
     * {@code mqadmin <args>} as installed in {@code rocketmqHome}: the sub-command gets the RPC
     * hook {@code MQAdminStartup.main0} builds, {@code AclUtils.getAclRPCHook(home +
     * "/conf/tools.yml")} (an {@code AclClientRPCHook} signing every request with the file's
     * {@code accessKey}/{@code secretKey}; none when the file is missing or incomplete). main0
     * takes the home from {@code -Drocketmq.home.dir} / {@code ROCKETMQ_HOME}, read once per JVM
     * ({@code MixAll.ROCKETMQ_HOME_DIR}), hence the explicit directory here. The result's
     * output is stdout followed by stderr (where sub-commands such as wipeWritePerm print the
     * exception of a NameServer that refused), as a terminal would show both.
     */
    public static Result runWithHome(Path rocketmqHome, String... args) {
        RPCHook hook = AclUtils.getAclRPCHook(rocketmqHome.toAbsolutePath() + MixAll.ACL_CONF_TOOLS_FILE);
        return execute(hook, true, args);
    }

    private static synchronized Result execute(RPCHook hook, boolean withStderr, String... args) {
        String name = args[0];
        String className = COMMANDS.get(name);
        if (className == null) {
            throw new IllegalArgumentException("sub-command " + name + " is not wired into the harness");
        }
        SubCommand command;
        try {
            command = (SubCommand) Class.forName(className).getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("mqadmin " + name + " is not in this release", e);
        }
        String[] subArgs = Arrays.copyOfRange(args, 1, args.length);
        Options options = ServerUtil.buildCommandlineOptions(new Options());
        CommandLine line = ServerUtil.parseCmdLine("mqadmin " + name, subArgs,
            command.buildCommandlineOptions(options), new PosixParser());
        if (line == null) {
            throw new IllegalArgumentException("mqadmin " + String.join(" ", args) + ": bad arguments");
        }
        String previous = System.getProperty(MixAll.NAMESRV_ADDR_PROPERTY);
        if (line.hasOption('n')) {
            System.setProperty(MixAll.NAMESRV_ADDR_PROPERTY, line.getOptionValue('n'));
        }
        PrintStream stdout = System.out;
        PrintStream stderr = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        ByteArrayOutputStream capturedErr = new ByteArrayOutputStream();
        Throwable error = null;
        try (PrintStream capture = new PrintStream(captured, true, StandardCharsets.UTF_8);
             PrintStream captureErr = new PrintStream(capturedErr, true, StandardCharsets.UTF_8)) {
            System.setOut(capture);
            if (withStderr) {
                System.setErr(captureErr);
            }
            command.execute(line, options, hook);
        } catch (Throwable t) {
            error = t;
        } finally {
            System.setOut(stdout);
            System.setErr(stderr);
            if (previous == null) {
                System.clearProperty(MixAll.NAMESRV_ADDR_PROPERTY);
            } else {
                System.setProperty(MixAll.NAMESRV_ADDR_PROPERTY, previous);
            }
        }
        return new Result(String.join(" ", args), captured.toString(StandardCharsets.UTF_8)
            + capturedErr.toString(StandardCharsets.UTF_8), error);
    }
}
