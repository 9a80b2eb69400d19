package dev.waymark.interop.vectors;

/**
 * Fixed values shared by every vector, so that runs are repeatable and the reference frames
 * equal the byte dumps of rmq-wire's {@code tests/wire/common/mod.rs}.
 */
public final class Samples {
    private Samples() {
    }

    public static final String CLUSTER = "DefaultCluster";
    public static final String BROKER_A = "broker-a";
    public static final String BROKER_B = "broker-b";
    public static final String MASTER_ADDR = "127.0.0.1:10911";
    public static final String HA_ADDR = "127.0.0.1:10912";
    public static final String SLAVE_ADDR = "127.0.0.1:10921";
    public static final String B_MASTER_ADDR = "127.0.0.2:10911";
    public static final String TOPIC = "TopicTest";
    public static final String ORDER_NAMESPACE = "ORDER_TOPIC_CONFIG";
    public static final String ORDER_TOPIC = "TopicOrder";
    public static final String ORDER_CONF = "broker-a:4;broker-b:4";

    /** DataVersion timestamp used everywhere (2023-11-14T22:13:20Z). */
    public static final long TIMESTAMP = 1_700_000_000_000L;

    /**
     * The version the reference frames carry on 5.x (Java 5.3.3's), so that they equal the byte
     * dumps of rmq-wire's {@code tests/wire/common/mod.rs} whichever 5.x release wrote them.
     */
    public static final int REFERENCE_VERSION = 479;

    /**
     * One character of each class fastjson escapes differently: slash (raw in the default
     * dialect, escaped in the standard one), Latin-1 and CJK (raw in the default dialect,
     * Unicode escapes in the standard one), quote and backslash, a named control, another C0
     * control, DEL and U+2028 (Unicode escapes in both).
     */
    public static final String ESCAPING_EXAMPLE = "a/b\u00e9\u4e2d\"\\\n\u0001\u007f\u2028";

    /**
     * Everything a JSON writer may treat specially: quotes, backslash, slash, every named
     * control escape, other C0 controls (NUL included), DEL, C1 controls, the two
     * JavaScript line separators, BMP and astral non-ASCII, and HTML-sensitive ASCII.
     */
    public static final String STRANGE = "q\"uote b\\ack s/lash \u00e9\u4e2d\ud83d\ude00 "
        + "\b\t\n\f\r\u0000\u0001\u001f\u007f\u0085\u009f\u2028\u2029 <tag>&'()";

    /** Like {@link #STRANGE} without NUL, for names that end up as map keys and topic names. */
    public static final String STRANGE_NAME = "n/\u00e9\u4e2d\ud83d\ude00\"\\\t\u0001\u007f\u2028<&>";
}
