package dev.waymark.interop.controller;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What differs from run to run (the controller's port, the stand-in brokers' ports, the
 * temporary directory), replaced by fixed names such as {@code <controller>}, so that the
 * vectors of two runs are byte for byte the same. Each placeholder has a meaning, written
 * into the files that use it.
 */
final class Placeholders {
    private record Rule(Pattern pattern, String replacement, String placeholder) {
    }

    private final List<Rule> rules = new ArrayList<>();
    private final Map<String, String> meanings = new TreeMap<>();

    /** Every occurrence of {@code literal} (not followed by a further digit) becomes {@code placeholder}. */
    void literal(String literal, String placeholder, String meaning) {
        rules.add(new Rule(Pattern.compile(Pattern.quote(literal) + "(?!\\d)"), Matcher.quoteReplacement(placeholder),
            placeholder));
        meanings.put(placeholder, meaning);
    }

    /** A properties line {@code key=<port>} becomes {@code key=<placeholder>}. */
    void propertyValue(int port, String placeholder, String meaning) {
        rules.add(new Rule(Pattern.compile("(?m)^([A-Za-z0-9_.]+)=" + port + "$"),
            "$1=" + Matcher.quoteReplacement(placeholder), placeholder));
        meanings.put(placeholder, meaning);
    }

    /** Every match of {@code regex} becomes {@code replacement} (groups allowed), which names {@code placeholder}. */
    void pattern(String regex, String replacement, String placeholder, String meaning) {
        rules.add(new Rule(Pattern.compile(regex), replacement, placeholder));
        meanings.put(placeholder, meaning);
    }

    String apply(String text) {
        if (text == null) {
            return null;
        }
        String out = text;
        for (Rule rule : rules) {
            out = rule.pattern().matcher(out).replaceAll(rule.replacement());
        }
        return out;
    }

    /** The placeholders that occur in {@code text}, with their meanings. */
    Map<String, String> usedIn(String text) {
        Map<String, String> used = new TreeMap<>();
        meanings.forEach((placeholder, meaning) -> {
            if (text.contains(placeholder)) {
                used.put(placeholder, meaning);
            }
        });
        return used;
    }
}
