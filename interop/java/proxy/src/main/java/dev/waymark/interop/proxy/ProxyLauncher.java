package dev.waymark.interop.proxy;

import org.apache.rocketmq.proxy.ProxyStartup;

/**
 * The real {@code ProxyStartup} with its own arguments ({@code -pm cluster -pc rmq-proxy.json
 * ...}), which also stops when its stdin ends: the harness holds a pipe to it, so a proxy
 * whose test JVM died does not outlive it.
 */
public final class ProxyLauncher {
    private ProxyLauncher() {
    }

    public static void main(String[] args) {
        Thread stdin = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // Nothing to read; only the end matters.
                }
            } catch (java.io.IOException e) {
                // A broken stdin counts as closed.
            }
            System.exit(0);
        }, "proxy-launcher-stdin");
        stdin.setDaemon(true);
        stdin.start();
        ProxyStartup.main(args);
    }
}
