package dev.warden.lock.memory.internal;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/** The one endpoint of the in-memory backend: {@code memory://<store>}, naming the store clients share. */
public final class Endpoints {

    private static final Pattern STORE = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    private Endpoints() {
    }

    /** Every problem with the endpoints, as messages; empty when they are fine. */
    public static List<String> problems(List<String> endpoints) {
        List<String> problems = new ArrayList<>();
        if (endpoints.size() != 1) {
            problems.add("the memory backend takes exactly one endpoint, memory://<store> (got " + endpoints.size() + ")");
        }
        for (String endpoint : endpoints) {
            try {
                storeName(endpoint);
            } catch (IllegalArgumentException e) {
                problems.add(e.getMessage());
            }
        }
        return problems;
    }

    /** The store an endpoint names. */
    static String storeName(String endpoint) {
        String name = null;
        try {
            URI uri = new URI(endpoint);
            if ("memory".equals(uri.getScheme()) && (uri.getPath() == null || uri.getPath().isEmpty()) && uri.getQuery() == null) {
                name = uri.getAuthority();
            }
        } catch (URISyntaxException e) {
            // Reported below.
        }
        if (name == null || !STORE.matcher(name).matches()) {
            throw new IllegalArgumentException("'" + endpoint + "' is not a memory endpoint: write memory://<store>, the store"
                    + " name 1-64 of A-Z a-z 0-9 . _ -");
        }
        return name;
    }
}
