package dev.waymark.interop.vectors;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.apache.rocketmq.remoting.exception.RemotingCommandException;
import org.apache.rocketmq.remoting.netty.NettyDecoder;
import org.apache.rocketmq.remoting.netty.NettyEncoder;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * Bytes in and out through RocketMQ's own Netty handlers, exactly as on a socket.
 *
 * <p>Both 4.9.8 and 5.x {@code NettyEncoder} call {@code RemotingCommand.fastEncodeHeader(ByteBuf)}
 * and then append the body; {@code NettyDecoder} is a {@code LengthFieldBasedFrameDecoder}
 * that strips the length word and calls {@code RemotingCommand.decode(ByteBuf)}.
 */
public final class Wire {
    private Wire() {
    }

    /** The whole frame, length prefix included, as {@code NettyEncoder} writes it. */
    public static byte[] encode(RemotingCommand command) {
        EmbeddedChannel channel = new EmbeddedChannel(new NettyEncoder());
        try {
            channel.writeOutbound(command);
            ByteBuf out = channel.readOutbound();
            if (out == null) {
                throw new IllegalStateException("NettyEncoder wrote nothing for " + command);
            }
            try {
                return ByteBufUtil.getBytes(out);
            } finally {
                out.release();
            }
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    /**
     * Decodes one whole frame (length prefix included) through {@code NettyDecoder}.
     * Returns null when Java rejects it (the decoder then closes the channel).
     */
    public static RemotingCommand decodeNetty(byte[] frame) {
        EmbeddedChannel channel = new EmbeddedChannel(new NettyDecoder());
        try {
            channel.writeInbound(Unpooled.wrappedBuffer(frame));
            return channel.readInbound();
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    /**
     * Decodes one whole frame with {@code RemotingCommand.decode(ByteBuffer)} after skipping
     * the 4-byte length word, as {@code NettyDecoder} does. (The buffer is copied because
     * 4.9.8's {@code decode(ByteBuffer)} measures the frame by {@code limit()}.)
     */
    public static RemotingCommand decodeDirect(byte[] frame) throws RemotingCommandException {
        if (frame.length < 4) {
            throw new IllegalArgumentException("a frame has at least 4 bytes, got " + frame.length);
        }
        int length = ByteBuffer.wrap(frame, 0, 4).getInt();
        if (length != frame.length - 4) {
            throw new IllegalArgumentException(
                "length word " + length + " does not match the " + (frame.length - 4) + " bytes after it");
        }
        return RemotingCommand.decode(ByteBuffer.wrap(Arrays.copyOfRange(frame, 4, frame.length)));
    }
}
