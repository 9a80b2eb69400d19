package dev.waymark.interop.vectors;

/**
 * One body vector: bytes a Java class produced, plus the type and dialect written to the
 * sibling {@code .meta} file (e.g. {@code TopicRouteData standard}).
 *
 * @param name      file stem, {@code <code>_<name>_<tag>_<nnn>}
 * @param extension {@code json} or {@code bin}
 * @param type      Java class name without package
 * @param dialect   {@code default}, {@code standard}, {@code json} or {@code compressed}
 * @param bytes     exactly what the Java code returned
 */
public record Body(String name, String extension, String type, String dialect, byte[] bytes) {
}
