package dev.waymark.interop.vectors;

import java.util.ArrayList;
import java.util.List;

/** Collects body vectors under generated names. */
public final class BodySet {
    private final Names names;
    private final List<Body> bodies = new ArrayList<>();

    public BodySet(String tag) {
        this.names = new Names(tag);
    }

    /** A JSON body: {@code type} is the Java class, {@code dialect} e.g. {@code default}. */
    public BodySet json(String base, String type, String dialect, byte[] bytes) {
        bodies.add(new Body(names.next(base), "json", type, dialect, bytes));
        return this;
    }

    /** A binary body (the compressed RegisterBrokerBody). */
    public BodySet bin(String base, String type, String dialect, byte[] bytes) {
        bodies.add(new Body(names.next(base), "bin", type, dialect, bytes));
        return this;
    }

    public List<Body> list() {
        return bodies;
    }
}
