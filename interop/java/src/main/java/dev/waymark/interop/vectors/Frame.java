package dev.waymark.interop.vectors;

import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * One frame vector: a command built with the real Java classes, the file name it is
 * written under and the description that goes on its first line.
 *
 * <p>The bytes are produced on demand by {@link Wire#encode}, i.e. by the real
 * {@code NettyEncoder}, the path every Java peer uses on a socket.
 */
public record Frame(String name, String description, RemotingCommand command) {
}
