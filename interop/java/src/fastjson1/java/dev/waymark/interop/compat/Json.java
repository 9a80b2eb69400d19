package dev.waymark.interop.compat;

import com.alibaba.fastjson.JSON;
import com.alibaba.fastjson.serializer.SerializerFeature;
import org.apache.rocketmq.remoting.protocol.RemotingSerializable;

/**
 * The JSON calls that differ between fastjson 1 (RocketMQ up to 5.3.x) and fastjson2
 * (RocketMQ 5.4 and later). Everything else goes through RocketMQ's own
 * {@code RemotingSerializable}.
 */
public final class Json {
    private Json() {
    }

    /** Name and version of the JSON library on the class path, e.g. {@code fastjson 1.2.83}. */
    public static String library() {
        return "fastjson " + JSON.VERSION;
    }

    /**
     * The "standard JSON" route body, exactly as the NameServer's route handler builds it
     * for clients of version 4.9.4 and later (4.9.8 {@code DefaultRequestProcessor} and
     * 5.3.3 {@code ClientRequestProcessor}).
     */
    public static byte[] standard(RemotingSerializable data) {
        return data.encode(SerializerFeature.BrowserCompatible, SerializerFeature.QuoteFieldNames,
            SerializerFeature.SkipTransientField, SerializerFeature.MapSortField);
    }
}
