package dev.waymark.interop.diff;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Parses a response body as the JSON both servers write (fastjson's default dialect
 * included: bare numeric map keys such as {@code {0:"127.0.0.1:10911"}}) into a form in which
 * only what a reader can observe is compared. Written here rather than taken from the
 * profile's JSON library because fastjson 1 and 2 disagree on bare keys and number types,
 * and the comparison must be the same in every profile.
 *
 * <p>Kept distinct on purpose: a bare key from a quoted one (the two dialects differ exactly
 * there), a number from a string holding it, {@code 1} from {@code 1.0} (number text is
 * kept verbatim). Dropped on purpose: member order, and array order (see {@link #array}).
 */
final class CanonicalJson {
    private final String text;
    private final Set<String> dropMembers;
    private final boolean bareKeysAsStrings;
    private int pos;

    private CanonicalJson(String text, Set<String> dropMembers, boolean bareKeysAsStrings) {
        this.text = text;
        this.dropMembers = dropMembers;
        this.bareKeysAsStrings = bareKeysAsStrings;
    }

    /** The canonical form, or null when {@code text} is not one complete JSON value. */
    static String canonical(String text) {
        return canonical(text, Set.of(), false);
    }

    /**
     * As {@link #canonical(String)}, without the object members named in {@code dropMembers}
     * (at any depth) and, if {@code bareKeysAsStrings}, with {@code {0:"a"}} read as
     * {@code {"0":"a"}}: the two dialects' difference set aside.
     */
    static String canonical(String text, Set<String> dropMembers, boolean bareKeysAsStrings) {
        CanonicalJson parser = new CanonicalJson(text, dropMembers, bareKeysAsStrings);
        try {
            parser.ws();
            String value = parser.value();
            parser.ws();
            return parser.pos == text.length() ? value : null;
        } catch (RuntimeException e) {
            return null;
        }
    }

    private String value() {
        char c = peek();
        switch (c) {
            case '{':
                return object();
            case '[':
                return array();
            case '"':
                return quote(string());
            default:
                return literal();
        }
    }

    private String object() {
        expect('{');
        Map<String, String> members = new TreeMap<>();
        ws();
        if (peek() == '}') {
            pos++;
            return "{}";
        }
        while (true) {
            ws();
            boolean quoted = peek() == '"';
            String name = quoted ? string() : literal();
            String key = quoted || bareKeysAsStrings ? quote(name) : "bare:" + name;
            ws();
            expect(':');
            ws();
            String value = value();
            if (dropMembers.contains(name)) {
                // left out of the comparison
            } else if (members.put(key, value) != null) {
                throw new IllegalArgumentException("duplicate key " + key);
            }
            ws();
            if (peek() == ',') {
                pos++;
                continue;
            }
            expect('}');
            StringBuilder out = new StringBuilder("{");
            members.forEach((k, v) -> out.append(out.length() > 1 ? "," : "").append(k).append(':').append(v));
            return out.append('}').toString();
        }
    }

    /**
     * Elements are sorted: every array in a NameServer body (topic lists, broker names of a
     * cluster, broker and queue data of a route) comes from iterating a Java HashMap or
     * HashSet, so its order is the hash order of that JVM, not something Waymark can or
     * should reproduce.
     */
    private String array() {
        expect('[');
        List<String> items = new ArrayList<>();
        ws();
        if (peek() == ']') {
            pos++;
            return "[]";
        }
        while (true) {
            ws();
            items.add(value());
            ws();
            if (peek() == ',') {
                pos++;
                continue;
            }
            expect(']');
            items.sort(null);
            return "[" + String.join(",", items) + "]";
        }
    }

    private String string() {
        expect('"');
        StringBuilder out = new StringBuilder();
        while (true) {
            char c = text.charAt(pos++);
            if (c == '"') {
                return out.toString();
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            char e = text.charAt(pos++);
            switch (e) {
                case 'b' -> out.append('\b');
                case 't' -> out.append('\t');
                case 'n' -> out.append('\n');
                case 'f' -> out.append('\f');
                case 'r' -> out.append('\r');
                case 'u' -> {
                    out.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
                    pos += 4;
                }
                default -> out.append(e);
            }
        }
    }

    private String literal() {
        int start = pos;
        while (pos < text.length() && "{}[]:,\" \t\r\n".indexOf(text.charAt(pos)) < 0) {
            pos++;
        }
        if (start == pos) {
            throw new IllegalArgumentException("value expected at " + pos);
        }
        String token = text.substring(start, pos);
        if (!token.matches("true|false|null|-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?")) {
            throw new IllegalArgumentException("not a JSON literal: " + token);
        }
        return token;
    }

    private static String quote(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20 || c >= 0x7f) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }

    private void ws() {
        while (pos < text.length() && " \t\r\n".indexOf(text.charAt(pos)) >= 0) {
            pos++;
        }
    }

    private char peek() {
        return text.charAt(pos);
    }

    private void expect(char c) {
        if (text.charAt(pos) != c) {
            throw new IllegalArgumentException("expected " + c + " at " + pos);
        }
        pos++;
    }
}
