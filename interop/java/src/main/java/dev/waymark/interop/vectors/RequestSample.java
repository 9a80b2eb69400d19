package dev.waymark.interop.vectors;

import org.apache.rocketmq.remoting.CommandCustomHeader;

/**
 * A realistic request of one NameServer request code, as a Java broker, client or
 * mqadmin of this release builds it.
 *
 * @param code   request code
 * @param name   snake-case Java constant name, e.g. {@code get_routeinfo_by_topic}
 * @param header the real custom-header object, or null when the request has no header class
 * @param body   body bytes or null
 * @param oneway whether the sender marks it one-way
 * @param note   what the values stand for, for the vector's description
 */
public record RequestSample(int code, String name, CommandCustomHeader header, byte[] body, boolean oneway,
                            String note) {
}
