package dev.waymark.interop.vectors;

import java.util.HashMap;
import java.util.Map;

/**
 * Vector file names: {@code <base>_<tag>_<nnn>}, where base starts with the request code
 * ({@code 105_get_routeinfo_by_topic_json}), tag names the release ({@code v551}) and
 * nnn counts vectors of the same base.
 */
public final class Names {
    private final String tag;
    private final Map<String, Integer> counters = new HashMap<>();

    public Names(String tag) {
        this.tag = tag;
    }

    public String next(String base) {
        int n = counters.merge(base, 1, Integer::sum);
        return String.format("%s_%s_%03d", base, tag, n);
    }
}
