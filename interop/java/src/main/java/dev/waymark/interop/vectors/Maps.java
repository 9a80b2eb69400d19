package dev.waymark.interop.vectors;

import java.util.LinkedHashMap;

/**
 * Insertion-ordered map literals. {@code Map.of} iterates in a per-JVM random order, which
 * would leak into {@code HashMap} chains (keys sharing a bucket keep insertion order) and
 * make vectors differ from run to run.
 */
public final class Maps {
    private Maps() {
    }

    public static <K, V> LinkedHashMap<K, V> of() {
        return new LinkedHashMap<>();
    }

    public static <K, V> LinkedHashMap<K, V> of(K k1, V v1) {
        LinkedHashMap<K, V> map = new LinkedHashMap<>();
        map.put(k1, v1);
        return map;
    }

    public static <K, V> LinkedHashMap<K, V> of(K k1, V v1, K k2, V v2) {
        LinkedHashMap<K, V> map = of(k1, v1);
        map.put(k2, v2);
        return map;
    }

    public static <K, V> LinkedHashMap<K, V> of(K k1, V v1, K k2, V v2, K k3, V v3) {
        LinkedHashMap<K, V> map = of(k1, v1, k2, v2);
        map.put(k3, v3);
        return map;
    }
}
