package dev.waymark.interop.controller;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A small JSON writer for the controller vectors: objects with sorted keys, two-space
 * indentation, one member per line, so that the files diff well and come out byte for
 * byte the same whatever JSON library the profile ships. Values: {@code Map} (string
 * keys), {@code List}, {@code String}, {@code Number}, {@code Boolean}, {@code null}.
 */
final class JsonText {
    private JsonText() {
    }

    /** The document, ending with a newline. */
    static String write(Object value) {
        StringBuilder out = new StringBuilder();
        value(out, value, "");
        return out.append('\n').toString();
    }

    private static void value(StringBuilder out, Object value, String indent) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String s) {
            string(out, s);
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof Map<?, ?> map) {
            object(out, map, indent);
        } else if (value instanceof List<?> list) {
            array(out, list, indent);
        } else {
            throw new IllegalArgumentException("not a JSON value: " + value.getClass());
        }
    }

    private static void object(StringBuilder out, Map<?, ?> map, String indent) {
        if (map.isEmpty()) {
            out.append("{}");
            return;
        }
        Map<String, Object> sorted = new TreeMap<>();
        map.forEach((k, v) -> sorted.put((String) k, v));
        String inner = indent + "  ";
        out.append("{\n");
        int i = 0;
        for (Map.Entry<String, Object> member : sorted.entrySet()) {
            out.append(inner);
            string(out, member.getKey());
            out.append(": ");
            value(out, member.getValue(), inner);
            out.append(++i < sorted.size() ? ",\n" : "\n");
        }
        out.append(indent).append('}');
    }

    private static void array(StringBuilder out, List<?> list, String indent) {
        if (list.isEmpty()) {
            out.append("[]");
            return;
        }
        String inner = indent + "  ";
        out.append("[\n");
        for (int i = 0; i < list.size(); i++) {
            out.append(inner);
            value(out, list.get(i), inner);
            out.append(i + 1 < list.size() ? ",\n" : "\n");
        }
        out.append(indent).append(']');
    }

    /** A JSON string: quotes, backslashes and control characters escaped, the rest as is (UTF-8). */
    private static void string(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == '\u2028' || c == '\u2029') {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
