package dev.waymark.interop.compat;

import com.alibaba.fastjson2.JSON;
import com.alibaba.fastjson2.JSONWriter;
import org.apache.rocketmq.remoting.protocol.RemotingSerializable;

/**
 * The JSON calls that differ between fastjson 1 (RocketMQ up to 5.3.x) and fastjson2
 * (RocketMQ 5.4 and later). Everything else goes through RocketMQ's own
 * {@code RemotingSerializable}.
 */
public final class Json {
    private Json() {
    }

    /** Name and version of the JSON library on the class path, e.g. {@code fastjson2 2.0.63}. */
    public static String library() {
        return "fastjson2 " + JSON.VERSION;
    }

    /**
     * The "standard JSON" route body, exactly as the 5.4/5.5 NameServer's
     * {@code ClientRequestProcessor} builds it for clients of version 4.9.4 and later.
     * (rocketmq-namesrv 5.5.1 is not published; this is the 5.5.0 call.)
     */
    public static byte[] standard(RemotingSerializable data) {
        return data.encode(JSONWriter.Feature.BrowserCompatible, JSONWriter.Feature.MapSortField);
    }
}
