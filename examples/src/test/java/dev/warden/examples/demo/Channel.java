package dev.warden.examples.demo;

import java.util.concurrent.ThreadLocalRandom;

/** Where a charge comes from, and what it costs there (in quota units). */
public enum Channel {
    WEB("web", 1, 3),
    MINI_PROGRAM("mini-program", 1, 2),
    OPENAPI("openapi", 2, 5);

    private final String label;
    private final int minPrice;
    private final int maxPrice;

    Channel(String label, int minPrice, int maxPrice) {
        this.label = label;
        this.minPrice = minPrice;
        this.maxPrice = maxPrice;
    }

    public String label() {
        return label;
    }

    /** The list price of one charge on this channel: a few units. */
    long listPrice() {
        return minPrice + ThreadLocalRandom.current().nextInt(maxPrice - minPrice + 1);
    }

    /** {@code 1–3 units}. */
    String priceRange() {
        return minPrice + "–" + maxPrice + " units";
    }
}
