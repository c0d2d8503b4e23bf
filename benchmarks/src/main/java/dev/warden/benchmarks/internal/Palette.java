package dev.warden.benchmarks.internal;

import dev.warden.benchmarks.Result;

import java.awt.Color;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The colour of each implementation in one scenario: cool colours for Warden, warm ones for the
 * alternatives, greys for the server's limits, so a reader sees which side a bar is on before reading
 * the legend. Given per scenario, so the colours differ within a chart, and an implementation has the
 * same colour in the throughput and the latency picture of that scenario.
 */
final class Palette {

    private static final Map<Role, Color[]> COLOURS = new EnumMap<>(Map.of(
            Role.WARDEN, colours("#1f4e9c", "#2ca02c", "#17a2b8", "#6a8fd8", "#0b6e4f", "#7fbf3f", "#08306b",
                    "#41b6c4", "#4a7a2a", "#9ecae1", "#005f73", "#a1d99b"),
            Role.PEER, colours("#e6550d", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#fdae6b",
                    "#a50f15", "#c49c94", "#756bb1"),
            Role.LIMIT, colours("#7f7f7f", "#b5b5b5", "#4d4d4d")));

    private Palette() {
    }

    /** A colour for each implementation among {@code rows}, in order of first appearance per role. */
    static Map<String, Color> of(List<Result> rows) {
        Map<String, Color> colours = new LinkedHashMap<>();
        Map<Role, Integer> used = new EnumMap<>(Role.class);
        for (Result r : rows) {
            if (!colours.containsKey(r.implementation())) {
                Role role = Role.of(r.implementation());
                Color[] choice = COLOURS.get(role);
                int i = used.merge(role, 1, Integer::sum) - 1;
                colours.put(r.implementation(), choice[i % choice.length]);
            }
        }
        return colours;
    }

    private static Color[] colours(String... hex) {
        Color[] colours = new Color[hex.length];
        for (int i = 0; i < hex.length; i++) {
            colours[i] = Color.decode(hex[i]);
        }
        return colours;
    }
}
