package dev.waymark.interop.vectors;

import org.apache.rocketmq.common.MQVersion;

/** The RocketMQ release on the class path, read from the classes themselves. */
public final class Release {
    private Release() {
    }

    /** e.g. {@code 5.5.1}, from {@code MQVersion.CURRENT_VERSION}. */
    public static String version() {
        String desc = MQVersion.getVersionDesc(MQVersion.CURRENT_VERSION); // "V5_5_1"
        String version = desc.substring(1).replace('_', '.');
        String expected = System.getProperty("rocketmq.version");
        if (expected != null && !expected.equals(version)) {
            throw new IllegalStateException("the build asked for RocketMQ " + expected
                + " but MQVersion on the class path says " + version);
        }
        return version;
    }

    /** File-name tag, e.g. {@code v551}. */
    public static String tag() {
        return "v" + version().replace(".", "");
    }

    /** {@code MQVersion.CURRENT_VERSION}: what this release's peers put in {@code version}. */
    public static int current() {
        return MQVersion.CURRENT_VERSION;
    }

    public static boolean isV5() {
        return version().startsWith("5.");
    }

    /**
     * The {@code version} of the reference frames: 479 (5.3.3) for 5.x releases, so that
     * their bytes equal the dumps in rmq-wire's {@code tests/wire/common/mod.rs}; a 4.x release's
     * own number otherwise.
     */
    public static int referenceVersion() {
        return isV5() ? Samples.REFERENCE_VERSION : current();
    }
}
