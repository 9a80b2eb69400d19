package dev.waymark.interop.harness;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * Command-line entry point: the profile's Java NameServer (the control) on a free loopback
 * port, for tools outside this Maven project. Arguments are {@code key=value} NamesrvConfig /
 * NettyServerConfig options. Prints {@code NAMESRV READY <addr>}; stops on SIGTERM or end of
 * stdin (unless {@code --ignore-stdin}).
 */
public final class NamesrvLauncher {
    private NamesrvLauncher() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> settings = new LinkedHashMap<>();
        boolean watchStdin = true;
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (arg.equals("--ignore-stdin")) {
                watchStdin = false;
            } else if (eq > 0 && !arg.startsWith("-")) {
                settings.put(arg.substring(0, eq), arg.substring(eq + 1));
            } else {
                System.err.println("usage: NamesrvLauncher [--ignore-stdin] [key=value ...]");
                System.exit(2);
            }
        }
        JavaNameServer namesrv = JavaNameServer.start(settings);
        CountDownLatch done = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            namesrv.stop();
            done.countDown();
        }, "namesrv-launcher-shutdown"));
        System.out.println("NAMESRV READY " + namesrv.addr());
        System.out.flush();
        if (watchStdin) {
            Thread watcher = new Thread(() -> {
                try {
                    while (System.in.read() >= 0) {
                        // Only the end of input matters.
                    }
                } catch (java.io.IOException e) {
                    // A broken stdin counts as closed.
                }
                namesrv.stop();
                done.countDown();
            }, "namesrv-launcher-stdin");
            watcher.setDaemon(true);
            watcher.start();
        }
        done.await();
        System.exit(0);
    }
}
